#!/usr/bin/env bash
# Builds prove-it (host and policy) in release and puts `prove-it` on PATH.
# Safe to run again: it rebuilds and replaces the binary.
#
#   PREFIX   where the binary goes (default: ~/.local, so ~/.local/bin/prove-it)
set -euo pipefail
cd "$(dirname "$0")"

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo is missing: install Rust from rustup (https://rustup.rs), then run ./install.sh again"
command -v git >/dev/null || die "git is missing: install git, then run ./install.sh again"
command -v rustup >/dev/null || die "rustup is missing: prove-it needs it to add the wasm32-wasip1 target"

say "adding the wasm32-wasip1 target (the policy is built for it)"
rustup target add wasm32-wasip1 >/dev/null

say "building prove-it in release (the first build takes a few minutes)"
cargo build --release --locked -p prove-it

prefix="${PREFIX:-$HOME/.local}"
mkdir -p "$prefix/bin"
install -m 0755 target/release/prove-it "$prefix/bin/prove-it"
say "installed $prefix/bin/prove-it ($("$prefix/bin/prove-it" --version))"

case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) say "add $prefix/bin to your PATH, e.g.: echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.bashrc" ;;
esac
