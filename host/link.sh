# How prove-it is built and linked. Sourced (not run) by install.sh,
# bench.sh, verify.sh and release/build.sh, so what is installed, what is
# measured, what is tested and what a release publishes are one build.
#
# On Linux, prove-it is built for the musl target of this machine's CPU
# (x86_64-unknown-linux-musl or aarch64-unknown-linux-musl): one static
# file, not position-independent, the very build of the release archives.
# The hook is a new process at every stop, so how it starts counts. In one
# alternating loop (BENCHMARKS.md, session 11) a read-only stop on 200
# files took 5.4 ms built this way, 6.1 ms as a static non-PIE glibc
# binary and 6.9 ms as a static-PIE glibc one (the 33,000 relocations a
# PIE applies at each start); loading libc as a shared library costs
# another 0.7 to 1.0 ms. The price of no PIE: the binary's own code is not
# at a random address (its heap, stack and the policy's memory still are).
#
# The target's standard library comes from rustup (`rustup target add
# x86_64-unknown-linux-musl`; ./install.sh does it). Without it, or on
# other systems, prove-it is linked dynamically, and says so.
#
# The C code compiled for the target is blake3's SIMD kernels and
# wasmtime's helpers.c; neither uses a C library type, so the system C
# compiler builds it (cc-rs would ask for a `x86_64-linux-musl-gcc`).
# tests/build.rs::c_code_for_the_target_is_only_what_link_sh_names fails
# when another crate brings C code.
#
# Sets:
#   link_mode     static or dynamic
#   link_note     why it is dynamic (empty when static)
#   link_target   the musl target (empty when dynamic)
#   target_args   extra cargo arguments (an array)
#   target_root   the folder cargo builds into: add /release or /debug
# and, when static, the target's C compiler and archiver and RUSTFLAGS'
# relocation model. With an explicit `--target`, RUSTFLAGS reach only
# prove-it and its libraries, not build scripts and proc macros.

host_triple=$(rustc -vV | sed -n 's/^host: //p')
link_mode=dynamic
link_note=
link_target=
target_args=()
target_root=${CARGO_TARGET_DIR:-target}
case "$host_triple" in
  x86_64-*-linux-* | aarch64-*-linux-*)
    musl="${host_triple%%-*}-unknown-linux-musl"
    if [ -d "$(rustc --print sysroot)/lib/rustlib/$musl/lib" ]; then
      link_mode=static
      link_target=$musl
      target_args=(--target "$musl")
      target_root="${CARGO_TARGET_DIR:-target}/$musl"
      env_target=$(printf '%s' "$musl" | tr '-' '_')
      export "CC_$env_target=${CC:-cc}" "AR_$env_target=${AR:-ar}"
      # Once: sourced twice (a script run from a shell that sourced it),
      # a repeated flag would be new RUSTFLAGS, and a rebuild of everything.
      case " ${RUSTFLAGS:-} " in
        *" -C relocation-model=static "*) ;;
        *) export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C relocation-model=static" ;;
      esac
    else
      link_note="the Rust standard library for $musl is not installed, so prove-it is linked dynamically: each stop costs 1 to 2 ms more. Run: rustup target add $musl (./install.sh does)."
    fi
    ;;
  *)
    link_note="static linking is only set up for Linux on x86_64 and aarch64; prove-it is linked dynamically on $host_triple."
    ;;
esac
