#!/usr/bin/env bash
# `cargo check` of prove-it for both macOS targets, from Linux: what can be
# proven here without Apple's SDK (the release workflow builds and links
# them on macOS runners). cargo-zigbuild gives build scripts that compile C
# (blake3's) zig as the C compiler for the target.
#
# Needs: release/tools.sh, and
#   rustup target add x86_64-apple-darwin aarch64-apple-darwin
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
unset RUSTFLAGS # host/link.sh's static flag is for Linux
if ! command -v zig >/dev/null; then
  PATH="$(python3 -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))'):$PATH"
fi
for target in x86_64-apple-darwin aarch64-apple-darwin; do
  echo "release/check-macos.sh: cargo check --target $target"
  cargo-zigbuild check --locked -p prove-it --target "$target"
done
