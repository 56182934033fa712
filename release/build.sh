#!/usr/bin/env bash
# Builds the release archive of `prove-it` for each target given, exactly
# as a release publishes it:
#
#   release/build.sh TARGET [TARGET...] OUTDIR
#
# writes, for each TARGET, OUTDIR/prove-it-VERSION-TARGET.tar.gz, which holds one folder
# prove-it-VERSION-TARGET/ with the binary `prove-it`, README.md and
# LICENSE, and OUTDIR/prove-it-VERSION-TARGET.tar.gz.sha256 (one line, in
# the format of `sha256sum`). The plugin's launcher (plugin/fetch.sh)
# downloads exactly these two files.
#
# Targets:
#   x86_64-unknown-linux-musl, aarch64-unknown-linux-musl
#       fully static: one file runs on any Linux. The target of the build
#       machine's own CPU is built exactly as ./install.sh builds it
#       (host/link.sh), so the binary the tests and the benchmark run is
#       the one published, and CI builds it once. The other is built with
#       cargo-zigbuild and zig (release/tools.sh installs both; or have
#       them on PATH): zig is its C compiler and linker, so no cross
#       toolchain is needed. Both are linked the same way (static, not
#       position-independent: host/link.sh says why).
#   x86_64-apple-darwin, aarch64-apple-darwin
#       built on macOS with its own compiler (either target from either Mac).
#
# The targets' Rust standard libraries: `rustup target add TARGET`.
set -euo pipefail

say() { printf 'release/build.sh: %s\n' "$*" >&2; }
die() { printf 'release/build.sh: %s\n' "$*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: release/build.sh TARGET [TARGET...] OUTDIR (TARGET: x86_64-unknown-linux-musl, aarch64-unknown-linux-musl, x86_64-apple-darwin, aarch64-apple-darwin)"
targets=("${@:1:$#-1}")
mkdir -p "${!#}"
out=$(cd "${!#}" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || die "no version in Cargo.toml's [workspace.package]"
for target in "${targets[@]}"; do
  case "$target" in
    *-unknown-linux-musl | *-apple-darwin) ;;
    *) die "no release is made for $target" ;;
  esac
done

# cargo-zigbuild and zig from release/tools.sh's folder, else from PATH.
use_zig() {
  tools=${PROVE_IT_RELEASE_TOOLS:-target/release-tools}
  case "$tools" in /*) ;; *) tools=$PWD/$tools ;; esac
  [ ! -x "$tools/bin/cargo-zigbuild" ] || PATH="$tools/bin:$PATH"
  command -v cargo-zigbuild >/dev/null || die "cargo-zigbuild is missing: run release/tools.sh"
  if ! command -v zig >/dev/null; then
    zig_dir=$(python3 -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))' 2>/dev/null) ||
      die "zig is missing: run release/tools.sh (or put zig on PATH)"
    PATH="$zig_dir:$PATH"
  fi
}

# A release is built from this script alone: no flags from the caller.
unset RUSTFLAGS
case "${targets[*]}" in
  *-unknown-linux-musl*-apple-darwin* | *-apple-darwin*-unknown-linux-musl*)
    die "Linux and macOS archives are built on their own machines: one kind of target at a time"
    ;;
esac
flags=(--release --locked -p prove-it)
case "${targets[0]}" in
  *-unknown-linux-musl)
    # shellcheck source=host/link.sh
    . host/link.sh
    others=()
    for target in "${targets[@]}"; do
      if [ "$target" = "$link_target" ]; then
        say "building prove-it-$version-$target as ./install.sh does (host/link.sh)"
        cargo build "${flags[@]}" --target "$target"
      else
        others+=(--target "$target")
      fi
    done
    if [ ${#others[@]} -gt 0 ]; then
      use_zig
      say "building ${others[*]} with cargo zigbuild"
      RUSTFLAGS="-C relocation-model=static" cargo zigbuild "${flags[@]}" "${others[@]}"
    fi
    ;;
  *-apple-darwin)
    [ "$(uname -s)" = Darwin ] || die "${targets[0]} is built on macOS (the release workflow does); here try: cargo check --target ${targets[0]}"
    say "building prove-it-$version-{$(IFS=,; echo "${targets[*]}")}"
    for target in "${targets[@]}"; do flags+=(--target "$target"); done
    cargo build "${flags[@]}"
    ;;
esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for target in "${targets[@]}"; do
  name="prove-it-$version-$target"
  bin="${CARGO_TARGET_DIR:-target}/$target/release/prove-it"
  [ -x "$bin" ] || die "the build left no $bin"
  mkdir "$stage/$name"
  cp "$bin" README.md LICENSE "$stage/$name/"
  tar -czf "$out/$name.tar.gz" -C "$stage" "$name"
  if command -v sha256sum >/dev/null; then
    (cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
  else
    (cd "$out" && shasum -a 256 "$name.tar.gz" >"$name.tar.gz.sha256")
  fi
  size=$(wc -c <"$out/$name.tar.gz" | tr -d ' ')
  say "wrote $out/$name.tar.gz ($((size / 1024)) KiB) and its .sha256"
done
