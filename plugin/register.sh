#!/usr/bin/env bash
# Registers this checkout's plugin with Claude Code: the marketplace
# `whynext`, then the plugin `prove-it@whynext`. Safe to run again: it
# refreshes both.
#
# Claude Code copies a directory marketplace whole, ignored build output
# included (gigabytes of target/), so what it is given is a clean snapshot
# of the files git tracks, in a stable place (never /tmp, which is cleared).
#
#   CLAUDE                     the claude program (default: claude on PATH)
#   PROVE_IT_MARKETPLACE_DIR   where the snapshot goes
#                              (default: ~/.local/share/prove-it/marketplace)
set -euo pipefail

say() { printf 'register.sh: %s\n' "$*"; }
die() { printf 'register.sh: %s\n' "$*" >&2; exit 1; }

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
claude="${CLAUDE:-claude}"
command -v "$claude" >/dev/null || die "Claude Code (\`$claude\`) was not found: install it, then run plugin/register.sh again"
command -v git >/dev/null || die "git is missing: install git, then run plugin/register.sh again"
dest="${PROVE_IT_MARKETPLACE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/prove-it/marketplace}"

say "copying the plugin's tracked files to $dest"
rm -rf "$dest.new"
mkdir -p "$dest.new"
cd "$src"
while IFS= read -r -d '' file; do
  [ -e "$file" ] || [ -L "$file" ] || continue # deleted in the work tree
  mkdir -p "$dest.new/$(dirname "$file")"
  cp -P "$file" "$dest.new/$file"
done < <(git ls-files -z --cached --others --exclude-standard)
rm -rf "$dest"
mv "$dest.new" "$dest"

say "adding the marketplace whynext"
"$claude" plugin marketplace add "$dest"
"$claude" plugin marketplace update whynext
say "installing the plugin prove-it@whynext"
"$claude" plugin install prove-it@whynext
"$claude" plugin update prove-it@whynext
say "done: start a new Claude Code session, then run /prove-it:init in a repository"
