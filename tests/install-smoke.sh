#!/usr/bin/env bash
# CI's check of ./install.sh, the README's first command: run it twice
# (idempotent) into a throwaway HOME and PREFIX with the pinned Claude Code on
# PATH, check what it installed, and check its message when cargo is missing.
# It builds in release, so it is not part of ./verify.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok: $what"; else failed=$((failed + 1)); echo "FAILED: $what"; fi
}

tests/install-claude-code.sh >/dev/null
mkdir -p "$tmp/home" "$tmp/claude-bin"
ln -s "$PWD/target/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude" "$tmp/claude-bin/claude"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

# Keep the real toolchain while HOME points elsewhere.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
install_into() {
  env HOME="$tmp/home" PREFIX="$tmp/prefix" PATH="$tmp/claude-bin:$PATH" \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 ./install.sh
}

check "install.sh runs" install_into >"$tmp/first.log" 2>&1 || cat "$tmp/first.log"
check "install.sh runs again (idempotent)" install_into >"$tmp/second.log" 2>&1 || cat "$tmp/second.log"
check "prove-it $version is installed" grep -q "prove-it $version" <("$tmp/prefix/bin/prove-it" --version)
plugin="$tmp/home/.claude/plugins/cache/whynext/prove-it/$version"
check "the plugin is installed in Claude Code" test -f "$plugin/plugin/hooks.json"
check "the installed plugin holds no build output" test ! -e "$plugin/target"
check "progress is shown" grep -q "registering the plugin with Claude Code" "$tmp/second.log"
# host/link.sh decides how it is linked (statically on Linux with glibc,
# when libc.a is there); a dynamic binary names its loader (INTERP).
link_mode=$(. host/link.sh && echo "$link_mode")
check "it says how prove-it is linked ($link_mode)" grep -q "linked $link_mode" "$tmp/second.log"
if [ "$link_mode" = static ]; then
  check "the installed prove-it is linked statically" \
    bash -c '! readelf -lW "$1" | grep -q INTERP' _ "$tmp/prefix/bin/prove-it"
fi

# Each missing tool: install.sh stops before building and says what to
# install. PATH holds only the tools named (and what the script itself needs).
without() { # tool, the tools present...
  local missing=$1; shift
  local bin="$tmp/without-$missing"
  mkdir -p "$bin"
  for tool in bash dirname "$@"; do ln -sf "$(command -v "$tool")" "$bin/$tool"; done
  set +e
  env HOME="$tmp/home" PATH="$bin" ./install.sh >"$tmp/no-$missing.log" 2>&1
  local status=$?
  set -e
  check "without $missing it fails" test "$status" -ne 0
  check "without $missing it says what to install" grep -q "$missing is missing" "$tmp/no-$missing.log"
}
without cargo git rustup
without git cargo rustup
without rustup cargo git

echo "install-smoke: $passed passed, $failed failed"
test "$failed" -eq 0
