#!/usr/bin/env bash
# Builds the release archive of `prove-it` for one target, exactly as a
# release publishes it:
#
#   release/build.sh TARGET OUTDIR
#
# writes OUTDIR/prove-it-VERSION-TARGET.tar.gz, which holds one folder
# prove-it-VERSION-TARGET/ with the binary `prove-it`, README.md and
# LICENSE, and OUTDIR/prove-it-VERSION-TARGET.tar.gz.sha256 (one line, in
# the format of `sha256sum`). The plugin's launcher (plugin/fetch.sh)
# downloads exactly these two files.
#
# Targets:
#   x86_64-unknown-linux-musl, aarch64-unknown-linux-musl
#       fully static: one file runs on any Linux. Built from any Linux
#       machine with cargo-zigbuild (`cargo install cargo-zigbuild`) and zig
#       (`pip install ziglang`, or zig on PATH): zig is the C compiler and
#       linker for every target, so no cross toolchain is needed.
#   x86_64-apple-darwin, aarch64-apple-darwin
#       built on macOS with its own compiler (either target from either Mac).
#
# The targets' Rust standard libraries: `rustup target add TARGET`.
set -euo pipefail

say() { printf 'release/build.sh: %s\n' "$*" >&2; }
die() { printf 'release/build.sh: %s\n' "$*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: release/build.sh TARGET OUTDIR (TARGET: x86_64-unknown-linux-musl, aarch64-unknown-linux-musl, x86_64-apple-darwin, aarch64-apple-darwin)"
target=$1
mkdir -p "$2"
out=$(cd "$2" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || die "no version in Cargo.toml's [workspace.package]"
name="prove-it-$version-$target"

# zig from the Python package ziglang (pip), when zig itself is not on PATH.
use_zig() {
  command -v cargo-zigbuild >/dev/null || die "cargo-zigbuild is missing: cargo install cargo-zigbuild --locked"
  if ! command -v zig >/dev/null; then
    zig_dir=$(python3 -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))' 2>/dev/null) ||
      die "zig is missing: pip install ziglang (or put zig on PATH)"
    PATH="$zig_dir:$PATH"
  fi
}

# The binary users download is stripped: symbols are a third of its size,
# and a panic is reported as text by the hook, not as a backtrace.
export CARGO_PROFILE_RELEASE_STRIP=symbols
flags=(--release --locked -p prove-it --target "$target")
case "$target" in
  *-unknown-linux-musl)
    use_zig
    say "building $name with cargo zigbuild"
    cargo zigbuild "${flags[@]}"
    ;;
  *-apple-darwin)
    [ "$(uname -s)" = Darwin ] || die "$target is built on macOS (the release workflow does); here try: cargo check --target $target"
    say "building $name"
    cargo build "${flags[@]}"
    ;;
  *) die "no release is made for $target" ;;
esac

bin="target/$target/release/prove-it"
[ -x "$bin" ] || die "the build left no $bin"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
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
