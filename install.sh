#!/usr/bin/env bash
# Builds prove-it (host and policy) in release, puts `prove-it` on PATH, and
# when Claude Code (`claude`) is installed, registers this checkout's plugin
# with it. Safe to run again: it rebuilds, replaces and refreshes.
#
#   PREFIX   where the binary goes (default: ~/.local, so ~/.local/bin/prove-it)
#   CLAUDE   the claude program (default: claude on PATH)
set -euo pipefail
cd "$(dirname "$0")"

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo is missing: install Rust from rustup (https://rustup.rs), then run ./install.sh again"
command -v git >/dev/null || die "git is missing: install git, then run ./install.sh again"
command -v rustup >/dev/null || die "rustup is missing: prove-it needs it to add the wasm32-wasip1 target"

say "adding the wasm32-wasip1 target (the policy is built for it)"
rustup target add wasm32-wasip1 >/dev/null
host_triple=$(rustc -vV | sed -n 's/^host: //p')
case "$host_triple" in
  x86_64-*-linux-* | aarch64-*-linux-*)
    # host/link.sh says why: one static file, as a release publishes it.
    musl="${host_triple%%-*}-unknown-linux-musl"
    say "adding the $musl target (prove-it is built as one static file)"
    rustup target add "$musl" >/dev/null || say "could not add $musl; prove-it will be linked dynamically"
    ;;
esac

# shellcheck source=host/link.sh
. host/link.sh
if [ "$link_mode" = static ]; then
  say "building prove-it in release, linked statically (the first build takes a few minutes)"
else
  say "$link_note"
  say "building prove-it in release (the first build takes a few minutes)"
fi
cargo build --release --locked -p prove-it ${target_args[@]+"${target_args[@]}"}

prefix="${PREFIX:-$HOME/.local}"
mkdir -p "$prefix/bin"
install -m 0755 "$target_root/release/prove-it" "$prefix/bin/prove-it"
say "installed $prefix/bin/prove-it ($("$prefix/bin/prove-it" --version), linked $link_mode)"

case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) say "add $prefix/bin to your PATH, e.g.: echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.bashrc" ;;
esac

claude="${CLAUDE:-claude}"
if command -v "$claude" >/dev/null; then
  say "registering the plugin with Claude Code"
  CLAUDE="$claude" bash plugin/register.sh
else
  say "Claude Code (\`claude\`) was not found, so the plugin was not registered. After installing it, run: plugin/register.sh"
fi
say "done. In a repository: prove-it init (or /prove-it:init in Claude Code), then prove-it doctor"
