#!/usr/bin/env bash
# Installs what release/build.sh needs for the Linux archives, pinned, and
# does nothing for what is already there: the Rust standard libraries of
# the musl targets, and zig (the C compiler and linker for every target)
# and cargo-zigbuild, both as prebuilt wheels from the Python package index
# (nothing is compiled) into one virtual environment:
#
#   target/release-tools   (PROVE_IT_RELEASE_TOOLS names another folder)
#
# release/build.sh and release/check-macos.sh put its bin/ first on PATH.
# Also says whether qemu-user can run the aarch64 binary here (Debian:
# apt-get install qemu-user).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

zig_version=0.17.1
zigbuild_version=0.24.1

rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl >/dev/null
venv=${PROVE_IT_RELEASE_TOOLS:-target/release-tools}
if ! "$venv/bin/python" -m ziglang version 2>/dev/null | grep -qx "$zig_version" ||
  ! "$venv/bin/cargo-zigbuild" --version 2>/dev/null | grep -q " $zigbuild_version\$"; then
  echo "release/tools.sh: installing zig $zig_version and cargo-zigbuild $zigbuild_version (prebuilt wheels) into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "ziglang==$zig_version" "cargo-zigbuild==$zigbuild_version"
fi
command -v qemu-aarch64 >/dev/null ||
  echo "release/tools.sh: qemu-aarch64 is missing, so the aarch64 binary cannot be run here (Debian: apt-get install qemu-user)" >&2
