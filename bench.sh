#!/usr/bin/env bash
# The benchmark (BENCHMARKS.md), run on prove-it built and linked as
# ./install.sh builds it (host/link.sh). Arguments go to the benchmark:
#
#   ./bench.sh            the full run (a few minutes once built)
#   ./bench.sh --quick    a small smoke run (what CI does)
#   ./bench.sh --scale    the scale table, 1,000 to 300,000 files (long;
#                         --scale=1000,30000 measures just those sizes)
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=host/link.sh
. host/link.sh
[ -z "$link_note" ] || printf 'bench.sh: %s\n' "$link_note"
exec cargo bench --locked --bench gate ${target_args[@]+"${target_args[@]}"} -- "$@"
