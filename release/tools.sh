#!/usr/bin/env bash
# Installs what release/build.sh needs for the Linux archives, pinned, and
# does nothing for what is already there: the Rust standard libraries of
# the musl targets, zig (the Python package ziglang: the C compiler and linker for every
# target) and cargo-zigbuild. Also says whether qemu-user can run the
# aarch64 binary here (Debian: apt-get install qemu-user).
set -euo pipefail

zig_version=0.17.1
zigbuild_version=0.24.1

rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl >/dev/null
if ! python3 -c 'import ziglang' 2>/dev/null || [ "$(python3 -m ziglang version)" != "$zig_version" ]; then
  echo "release/tools.sh: installing zig $zig_version (pip: ziglang)"
  python3 -m pip install --quiet --disable-pip-version-check "ziglang==$zig_version"
fi
if ! cargo-zigbuild --version 2>/dev/null | grep -q " $zigbuild_version\$"; then
  echo "release/tools.sh: installing cargo-zigbuild $zigbuild_version"
  cargo install --quiet --locked cargo-zigbuild --version "$zigbuild_version"
fi
command -v qemu-aarch64 >/dev/null ||
  echo "release/tools.sh: qemu-aarch64 is missing, so the aarch64 binary cannot be run here (Debian: apt-get install qemu-user)" >&2
