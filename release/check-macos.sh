#!/usr/bin/env bash
# `cargo check` of prove-it for both macOS targets, from Linux: what can be
# proven here without Apple's SDK (the release workflow builds and links
# them on macOS runners). cargo-zigbuild gives build scripts that compile C
# (blake3's) zig as the C compiler for the target. Both targets are checked
# in one cargo invocation, in the release profile, so the build scripts and
# proc macros are built once, and are ./install.sh's when it has run.
#
# Needs: release/tools.sh, and
#   rustup target add x86_64-apple-darwin aarch64-apple-darwin
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
unset RUSTFLAGS # host/link.sh's static flag is for Linux
tools=${PROVE_IT_RELEASE_TOOLS:-target/release-tools}
case "$tools" in /*) ;; *) tools=$PWD/$tools ;; esac
[ ! -x "$tools/bin/cargo-zigbuild" ] || PATH="$tools/bin:$PATH"
if ! command -v zig >/dev/null; then
  PATH="$(python3 -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))'):$PATH"
fi
echo "release/check-macos.sh: cargo check --release --target x86_64-apple-darwin --target aarch64-apple-darwin"
cargo-zigbuild check --release --locked -p prove-it --target x86_64-apple-darwin --target aarch64-apple-darwin
