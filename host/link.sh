# How prove-it is linked. Sourced (not run) by install.sh, bench.sh and
# verify.sh, so what is installed, what is measured and what is tested are
# linked the same way.
#
# On Linux with glibc, prove-it is linked statically, as a static PIE (so
# address randomisation stays on). The hook is a new process at every stop,
# and loading libc, libm and libgcc_s as shared libraries costs 0.7 to
# 1.0 ms of each start on the benchmark machine, a fifth of a read-only stop
# (BENCHMARKS.md). Static linking needs the C library's static archive,
# libc.a (Debian and Ubuntu: libc6-dev; Fedora: glibc-static). Without it,
# or on other systems, prove-it is linked dynamically, and says so.
#
# Sets:
#   link_mode     static or dynamic
#   link_note     why it is dynamic (empty when static)
#   target_args   extra cargo arguments (an array)
#   target_root   the folder cargo builds into: add /release or /debug
# and, when static, adds the static flag to RUSTFLAGS. With an explicit
# `--target`, RUSTFLAGS reach only prove-it and its libraries, not build
# scripts and proc macros (which cannot be linked statically).

host_triple=$(rustc -vV | sed -n 's/^host: //p')
link_mode=dynamic
link_note=
target_args=()
target_root=${CARGO_TARGET_DIR:-target}
case "$host_triple" in
  *-linux-gnu*)
    # The C compiler (rustc links with `cc`) prints the archive's full path when it
    # has one, and just the name when it does not.
    libc_a=$("${CC:-cc}" -print-file-name=libc.a 2>/dev/null || true)
    if [ "${libc_a#/}" != "$libc_a" ] && [ -f "$libc_a" ]; then
      link_mode=static
      target_args=(--target "$host_triple")
      target_root="${CARGO_TARGET_DIR:-target}/$host_triple"
      # Once: sourced twice (a script run from a shell that sourced it),
      # a repeated flag would be new RUSTFLAGS, and a rebuild of everything.
      case " ${RUSTFLAGS:-} " in
        *" -C target-feature=+crt-static "*) ;;
        *) export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static" ;;
      esac
    else
      link_note="libc.a (the C library's static archive) was not found, so prove-it is linked dynamically: each stop costs 0.7 to 1.0 ms more. Install libc6-dev (Debian, Ubuntu) or glibc-static (Fedora) for the static build."
    fi
    ;;
  *)
    link_note="static linking is only set up for Linux with glibc; prove-it is linked dynamically on $host_triple."
    ;;
esac
