#!/usr/bin/env bash
# Installs the pinned Claude Code CLI that the plugin tests drive, into
# target/claude-code (nothing global). Does nothing when it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.1.328
dir=target/claude-code
bin="$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^$version "; then
  exit 0
fi
command -v npm >/dev/null || { echo "install-claude-code.sh: npm is missing: install Node.js and npm, then run it again" >&2; exit 1; }
echo "installing Claude Code $version into $dir"
mkdir -p "$dir"
# The package wants Node 22 and skips its postinstall on older Node; the
# native binary it carries runs regardless.
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version"
"$bin" --version
