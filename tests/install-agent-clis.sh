#!/usr/bin/env bash
# Installs the pinned Codex CLI, Gemini CLI, Copilot CLI and Qwen Code that
# the adapter tests drive, into target/codex-cli, target/gemini-cli,
# target/copilot-cli and target/qwen-code (nothing global). Does nothing for
# a CLI that is already there at its pinned version.
set -euo pipefail
cd "$(dirname "$0")/.."

codex_version=0.171.0
gemini_version=0.61.0
copilot_version=1.0.102
qwen_version=0.24.4

command -v npm >/dev/null || { echo "install-agent-clis.sh: npm is missing: install Node.js (20 or later) and npm, then run it again" >&2; exit 1; }

# install DIR PACKAGE VERSION BIN: BIN is the path, inside DIR, that must
# print VERSION afterwards.
install() {
  dir=$1 package=$2 version=$3 bin=$1/$4
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$version"; then
    return 0
  fi
  echo "installing $package $version into $dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version"
  "$bin" --version
}

install target/codex-cli @openai/codex "$codex_version" node_modules/.bin/codex
install target/gemini-cli @google/gemini-cli "$gemini_version" node_modules/.bin/gemini
install target/copilot-cli @github/copilot "$copilot_version" node_modules/.bin/copilot
install target/qwen-code @qwen-code/qwen-code "$qwen_version" node_modules/.bin/qwen
