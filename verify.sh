#!/usr/bin/env bash
# The repo gates itself: this is the proof prove-it demands of its own
# changes. Formatting, lints with warnings denied (host, and the policy as the
# wasm32-wasip1 module it ships as), every test, and whitespace.
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all --check

step "clippy (host and tests)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "clippy (policy module, wasm32-wasip1)"
cargo clippy -p prove-it-gate --target wasm32-wasip1 --features default-module --locked -- -D warnings

step "tests"
# The plugin tests drive the real Claude Code CLI (pinned; installed once).
tests/install-claude-code.sh
# Linked as ./install.sh links it (statically on Linux with glibc), so the
# tests drive the kind of binary users run.
# shellcheck source=host/link.sh
. host/link.sh
[ -z "$link_note" ] || printf 'verify.sh: %s\n' "$link_note"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked ${target_args[@]+"${target_args[@]}"} 2>&1 | tee "$log"
# One total for the whole suite, on a line of its own.
total=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed", p, f }' "$log")

step "git diff --check"
git diff --check

printf '\nverify.sh: all checks passed\n%s\n' "$total"
