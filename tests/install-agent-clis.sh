#!/usr/bin/env bash
# Installs the pinned Codex CLI, Gemini CLI, Copilot CLI, Qwen Code, pi and
# OpenCode that the adapter tests drive, into target/codex-cli,
# target/gemini-cli, target/copilot-cli, target/qwen-code, target/pi-cli and
# target/opencode-cli (nothing global), with Node 22 for pi (it needs
# 22.19 or later) in target/node22, and the package OpenCode installs into
# every config folder at its start (it waits about a minute for it
# offline) in target/opencode-plugin, for the tests to put there first.
# Does nothing for a CLI that is already there at its pinned version.
set -euo pipefail
cd "$(dirname "$0")/.."

codex_version=0.171.0
gemini_version=0.61.0
copilot_version=1.0.102
qwen_version=0.24.4
pi_version=1.6.0
opencode_version=1.18.33

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

# pi runs on this Node, not the system's.
if ! target/node22/node_modules/node/bin/node --version 2>/dev/null | grep -q '^v22\.'; then
  echo "installing node@22 into target/node22"
  npm install --prefix target/node22 --no-audit --no-fund --loglevel=error --save-exact node@22
fi
target/node22/node_modules/node/bin/node --version
PATH="$PWD/target/node22/node_modules/node/bin:$PATH" install target/pi-cli @earendil-works/pi-coding-agent "$pi_version" node_modules/.bin/pi
install target/opencode-cli opencode-ai "$opencode_version" node_modules/.bin/opencode
if [ ! -f target/opencode-plugin/node_modules/@opencode-ai/plugin/package.json ] \
  || ! grep -q "\"version\": \"$opencode_version\"" target/opencode-plugin/node_modules/@opencode-ai/plugin/package.json; then
  echo "installing @opencode-ai/plugin $opencode_version into target/opencode-plugin"
  npm install --prefix target/opencode-plugin --no-audit --no-fund --loglevel=error --save-exact "@opencode-ai/plugin@$opencode_version"
fi
