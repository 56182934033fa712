#!/usr/bin/env bash
# Replays the last N commits of a local clone that touch its tests, each as
# an agent's session judged by prove-it, and prints the verdict table
# (BENCHMARKS.md, "The alarm on projects nobody tuned it on"). Run by hand;
# not part of CI (it runs a project's own tests, many times).
#
#   bench/replay-history.sh CLONE N 'VERIFY COMMAND' ['SETUP COMMAND']
#
# For each commit, from its parent: a work dir at the parent, a verify.sh
# holding VERIFY COMMAND committed there ("arm"), ./verify.sh run once (the
# start: green or red), a session start, the commit's changes applied as
# the agent's edits, a stop, and `prove-it status --json`'s verdict.
# SETUP COMMAND runs in the work dir before the first commit, and again
# whenever a manifest it installs from changed (package.json, a lockfile,
# pyproject.toml, setup.py, setup.cfg, requirements*.txt, go.mod): say
# `python3 -m venv .venv && .venv/bin/pip install -e . pytest`, an editable
# install of the work dir, as a person has it. The work dir is reused, so
# what SETUP installs stays; it is made from the clone, which is only read.
#
# Environment: PROVE_IT (the binary; default: target/release/prove-it),
# PATHS (git pathspecs a commit must touch; default: the usual test folders
# and file names), KEEP=1 keeps the work dir and the state (the reports
# and logs are always kept).
# Output: one row per commit (commit, start, verdict, what the stop said
# first), then the counts, and how many passing stops planted a failing
# test or mutants (the differential); every stop's whole answer is kept in
# $OUT/reports (OUT is printed at the end).
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
clone=$(cd "$1" && pwd)
n=$2
verify_command=$3
setup_command=${4:-}
here=$(cd "$(dirname "$0")/.." && pwd)
prove_it=${PROVE_IT:-$here/target/release/prove-it}
[ -x "$prove_it" ] || { echo "replay-history.sh: no prove-it at $prove_it (run ./install.sh, or set PROVE_IT)" >&2; exit 2; }
read -r -a paths <<< "${PATHS:-:(glob)**/test/** :(glob)**/tests/** :(glob)**/__tests__/** :(glob)**/spec/** :(glob)**/test_*.py :(glob)**/*_test.py :(glob)**/*_test.go :(glob)**/*.test.* :(glob)**/*.spec.*}"

out=$(mktemp -d "${TMPDIR:-/tmp}/replay-history.XXXXXX")
work=$out/work
mkdir -p "$out/reports"
export PROVE_IT_STATE_DIR=$out/state PROVE_IT_LEDGER_DIR=$out/ledger HOME=$out/home
mkdir -p "$HOME"
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$work" "$out/state"; }
trap cleanup EXIT

git clone -q --no-hardlinks "$clone" "$work"
cd "$work"
git config user.email bench@example.invalid
git config user.name bench
git config commit.gpgsign false
mapfile -t commits < <(git -C "$clone" log --first-parent --no-merges --format=%H -n "$n" -- "${paths[@]}")
[ ${#commits[@]} -gt 0 ] || { echo "replay-history.sh: no commit touches ${paths[*]}" >&2; exit 1; }

hook() { # EVENT JSON
  printf '%s' "$2" | "$prove_it" hook "$1" > "$out/last-hook.json" 2>> "$out/hook-stderr.log" || true
}

first=1
installed=
printf '%-12s %-6s %-18s %s\n' commit start verdict said
for commit in "${commits[@]}"; do
  short=${commit:0:12}
  git checkout -q -f --detach "$commit^" 2>/dev/null || { printf '%-12s %-6s %-18s %s\n' "$short" - skipped "no parent"; continue; }
  git clean -q -fdx -e .venv -e venv -e node_modules
  manifests=$({ cat package.json package-lock.json pyproject.toml setup.py setup.cfg requirements*.txt go.mod 2>/dev/null || true; } | cksum)
  if [ -n "$setup_command" ] && { [ $first = 1 ] || [ "$manifests" != "$installed" ]; }; then
    sh -c "$setup_command" > "$out/setup.log" 2>&1 || echo "replay-history.sh: the setup failed at ${short}'s parent: $out/setup.log" >&2
    installed=$manifests
  fi
  first=0
  printf '#!/bin/sh\n%s\n' "$verify_command" > verify.sh
  chmod +x verify.sh
  git add verify.sh && git commit -q -m arm --no-verify
  if ./verify.sh > "$out/start.log" 2>&1; then start=green; else start=red; fi
  session=s-$short
  hook session-start "{\"session_id\":\"$session\",\"cwd\":\"$work\",\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}"
  if ! git diff --binary "$commit^" "$commit" -- . ':(exclude)verify.sh' | git apply --whitespace=nowarn 2>> "$out/apply.log"; then
    printf '%-12s %-6s %-18s %s\n' "$short" "$start" skipped "the diff does not apply on the parent with verify.sh"
    continue
  fi
  hook stop "{\"session_id\":\"$session\",\"cwd\":\"$work\",\"hook_event_name\":\"Stop\",\"stop_hook_active\":false,\"last_assistant_message\":\"Done.\"}"
  status=$("$prove_it" status --json 2>/dev/null || true)
  verdict=$(printf '%s' "$status" | python3 -c 'import json,sys
try: print(json.load(sys.stdin).get("verdict") or "none")
except Exception: print("unreadable")')
  said=$(printf '%s' "$status" | python3 -c 'import json,sys
try: print((json.load(sys.stdin).get("said") or "").splitlines()[0][:90])
except Exception: print("")')
  printf '%-12s %-6s %-18s %s\n' "$short" "$start" "$verdict" "$said"
  printf '%s %s %s\n' "$short" "$start" "$verdict" >> "$out/verdicts"
  cp "$out/last-hook.json" "$out/reports/$short.json"
done

echo
# Judged: the stop passed, so the changes to the checks were judged. A
# blocked stop (the commit's own tests fail here) judged nothing.
judged=$(awk '$3 ~ /^(verified|weakened|behaviour_changed|suspect|not_judged)$/' "$out/verdicts" 2>/dev/null | wc -l)
echo "judged: $judged of ${#commits[@]} commits (the others: blocked, the commit's own tests failing here, or skipped)"
for start in green red; do
  printf '%s starts:' "$start"
  awk -v s="$start" '$2 == s { c[$3]++ } END { for (v in c) printf " %s %d,", v, c[v] }' "$out/verdicts" 2>/dev/null
  echo
done
echo "the differential: $(grep -l 'planted' "$out"/reports/*.json 2>/dev/null | wc -l) stops planted a failing test, $(grep -l 'mutant' "$out"/reports/*.json 2>/dev/null | wc -l) tried mutants"
echo "reports and logs: $out"
