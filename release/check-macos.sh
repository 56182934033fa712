#!/usr/bin/env bash
# `cargo check` of prove-it for macOS, from Linux: what can be proven here
# without Apple's SDK (the release workflow builds and links both targets
# on macOS runners).
#
#   release/check-macos.sh [TARGET...]   (default: aarch64-apple-darwin)
#
# One target is enough for CI: what differs between the two Macs is the
# CPU, and Cranelift's and wasmtime's code for each CPU is built for Linux
# anyway (x86_64 by ./install.sh, aarch64 by the release archives); what
# is macOS's own (libc, the file system, signals) is the same in both.
# cargo-zigbuild gives build scripts that compile C (blake3's) zig as the
# C compiler for the target. Several targets are checked in one cargo
# invocation, in the release profile, so the build scripts and proc macros
# are built once, and are ./install.sh's when it has run.
#
# Needs: release/tools.sh, and `rustup target add TARGET`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
unset RUSTFLAGS # host/link.sh's static flag is for Linux
tools=${PROVE_IT_RELEASE_TOOLS:-target/release-tools}
case "$tools" in /*) ;; *) tools=$PWD/$tools ;; esac
[ ! -x "$tools/bin/cargo-zigbuild" ] || PATH="$tools/bin:$PATH"
if ! command -v zig >/dev/null; then
  PATH="$(python3 -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))'):$PATH"
fi
[ $# -gt 0 ] || set -- aarch64-apple-darwin
targets=()
for target in "$@"; do
  case "$target" in
    *-apple-darwin) targets+=(--target "$target") ;;
    *) printf 'release/check-macos.sh: %s is not a macOS target (x86_64-apple-darwin, aarch64-apple-darwin)\n' "$target" >&2; exit 2 ;;
  esac
done
echo "release/check-macos.sh: cargo check --release ${targets[*]}"
cargo-zigbuild check --release --locked -p prove-it "${targets[@]}"
