#!/bin/sh
# The action's step: the binary (this action's release, downloaded and
# checked by the plugin's own fetch.sh, or INPUT_BINARY), then `prove-it ci`.
# Its exit code is the verdict's: 0 verified, 1 not verified, 2 could not
# judge.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${INPUT_BINARY:-}
if [ -z "$bin" ]; then
  version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$here/../.claude-plugin/plugin.json" | head -n 1)
  data=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/prove-it
  if ! said=$(sh "$here/../plugin/fetch.sh" "$version" "$data"); then
    echo "::error title=prove-it::$said"
    exit 2
  fi
  echo "$said"
  bin=$data/bin/$version/prove-it
fi
cd "${INPUT_DIRECTORY:-.}" || exit 2
json=${INPUT_JSON:-prove-it.json}
set -- ci --json "$json" --annotations
[ -n "${INPUT_BASE:-}" ] && set -- "$@" --base "$INPUT_BASE"
"$bin" "$@"
code=$?
if [ -n "${GITHUB_OUTPUT:-}" ] && [ -f "$json" ]; then
  verdict=$(sed -n 's/^ *"verdict": *"\([^"]*\)".*/\1/p' "$json" | head -n 1)
  echo "verdict=$verdict" >> "$GITHUB_OUTPUT"
fi
exit "$code"
