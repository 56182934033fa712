#!/usr/bin/env bash
# The repo gates itself: this is the proof prove-it demands of its own
# changes, and it follows prove-it's own advice (about 20 s warm, offline).
#
#   ./verify.sh          the fast gate: formatting; lints with warnings denied
#                        (the policy as the wasm32-wasip1 module it ships as,
#                        then the host and every test); every test that needs
#                        no network and no agent CLI; whitespace.
#   ./verify.sh --full   the same, plus the slow suite: real Claude Code,
#                        Codex, Gemini, Copilot, Qwen, pi and OpenCode
#                        sessions (the plugin downloading its host among
#                        them), the release archives run here (aarch64
#                        under qemu-user), a fresh `policy new` crate
#                        build, the soak, the canary on real Rust, Python,
#                        Node and Go projects.
#                        It installs the pinned agent CLIs (npm), the
#                        stack tools (tests/install-stack-tools.sh: pytest,
#                        mypy, ruff, tsc, eslint; Go from the system's
#                        packages) and the release tools. The tests run on
#                        the release build ./install.sh makes, which is
#                        also this machine's release archive (CI builds it
#                        once for all three). The other CPU's archive is
#                        built into target/release-archives in the
#                        background while every other test runs (its log:
#                        target/release-archives.log), then the archives'
#                        own tests run; PROVE_IT_RELEASE_DIR names a folder
#                        that has them (or will: a `.building` file there
#                        means wait for `.done`). CI runs this (.ci/run).
#
# The slow tests are marked `#[ignore = "slow suite: ..."]`; the fast gate
# counts them on its last line, so none is skipped without a word.
set -euo pipefail
cd "$(dirname "$0")"

full=false
case "${1:-}" in
  "") ;;
  --full) full=true ;;
  -h | --help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) printf 'verify.sh: unknown argument `%s`: use --full, or nothing (--help says more)\n' "$1" >&2; exit 2 ;;
esac

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all --check

step "clippy (policy modules, wasm32-wasip1)"
cargo clippy -p prove-it-gate -p prove-it-default -p prove-it-strict --target wasm32-wasip1 --locked -- -D warnings

# From here on, one build graph: clippy, the tests, ./install.sh and the
# benchmark all build for the host triple, linked as host/link.sh says
# (statically on Linux with glibc), so the tests drive the kind of binary
# users run and nothing is compiled twice for two link settings.
# shellcheck source=host/link.sh
. host/link.sh
[ -z "$link_note" ] || printf 'verify.sh: %s\n' "$link_note"
# The fast gate's debug builds link with the LLVM linker rustup ships
# (rust-lld, through its gcc-ld shim), as Rust itself does for the glibc
# target: relinking prove-it after a one-line change takes 0.5 s instead
# of 2.3 s, paid twice (the binary and its unit tests). Release builds
# keep the system linker, which links what a release publishes.
if ! $full && [ "$link_mode" = static ]; then
  gcc_ld="$(rustc --print sysroot)/lib/rustlib/$host_triple/bin/gcc-ld"
  case "$gcc_ld" in
    *" "*) ;; # RUSTFLAGS are split at spaces
    *) [ ! -x "$gcc_ld/ld.lld" ] || export RUSTFLAGS="$RUSTFLAGS -C link-arg=-fuse-ld=lld -C link-arg=-B$gcc_ld" ;;
  esac
fi

# The policy crates are wasm modules (checked above); built for the host
# triple, statically linked, their cdylib would only be dropped with a warning.
host_crates=(--workspace --exclude prove-it-default --exclude prove-it-strict)

# --full lints the release build, whose build scripts and proc macros
# ./install.sh has built (CI runs it first), as the tests below run on it.
profile=()
! $full || profile=(--release)
step "clippy (host and tests)"
cargo clippy "${host_crates[@]}" --all-targets --locked ${profile[@]+"${profile[@]}"} ${target_args[@]+"${target_args[@]}"} -- -D warnings

log=$(mktemp)
archives=
shm=
# A background build still running when this script ends is stopped with
# everything it started (it runs in a process group of its own).
trap 'rm -f "$log"; [ -z "$shm" ] || rm -rf "$shm"; [ -z "$archives" ] || kill -- -"$archives" 2>/dev/null || true' EXIT
tests() { # cargo test's own arguments and then, after --, the harness's
  cargo test "${host_crates[@]}" --locked ${target_args[@]+"${target_args[@]}"} "$@" 2>&1 | tee -a "$log"
}
if $full; then
  step "agent CLIs and stack tools (pinned)"
  tests/install-claude-code.sh
  tests/install-agent-clis.sh
  tests/install-stack-tools.sh
  if [ -z "${PROVE_IT_RELEASE_DIR:-}" ]; then
    # This machine's own archive is this script's release build, packaged
    # once the tests have built it; the other CPU's is built beside them.
    native=${link_target:-x86_64-unknown-linux-musl}
    case "$native" in
      x86_64-*) other=aarch64-unknown-linux-musl ;;
      *) other=x86_64-unknown-linux-musl ;;
    esac
    step "the $other release archive (release/build.sh), in the background: target/release-archives.log"
    release/tools.sh
    # In a target dir of its own (cargo locks a build dir while it builds),
    # and niced, so the tests below come first and it takes the CPU the
    # tests leave idle.
    set -m
    (
      export CARGO_TARGET_DIR="$PWD/target/release-build"
      nice -n 10 release/build.sh "$other" target/release-archives
    ) >target/release-archives.log 2>&1 &
    archives=$!
    set +m
    export PROVE_IT_RELEASE_DIR="$PWD/target/release-archives"
  fi
  # The tests whose names hold `release::` or `release_archive::` need the
  # release archives.
  step "tests (all but the release archives', the slow suite too; on the release build)"
  tests --release -- --include-ignored --skip release:: --skip release_archive::
  if [ -n "$archives" ]; then
    step "the $native release archive (release/build.sh: the tests' release build, packaged)"
    release/build.sh "$native" target/release-archives
    step "waiting for the $other release archive"
    if ! wait "$archives"; then
      archives=
      cat target/release-archives.log
      printf 'verify.sh: the release archives did not build (above)\n' >&2
      exit 1
    fi
    archives=
    tail -n 2 target/release-archives.log
  elif [ -e "$PROVE_IT_RELEASE_DIR/.building" ]; then
    # Being built by whoever set PROVE_IT_RELEASE_DIR (.ci/run), which
    # marks the end with .done or .failed.
    step "waiting for the release archives (built by the caller)"
    while [ ! -e "$PROVE_IT_RELEASE_DIR/.done" ] && [ ! -e "$PROVE_IT_RELEASE_DIR/.failed" ]; do
      sleep 5
    done
    if [ -e "$PROVE_IT_RELEASE_DIR/.failed" ]; then
      printf 'verify.sh: the release archives did not build (target/release-archives.log)\n' >&2
      exit 1
    fi
  fi
  step "tests of the release archives"
  tests --release -- --include-ignored release:: release_archive::
else
  step "tests (fast; ./verify.sh --full adds the slow suite)"
  # Most fast tests wait on the processes they start (a verify.sh cut at
  # its timeout, a download, a hook), so twice as many test threads as
  # cores keep the cores busy: 23 s instead of 31 s on two cores.
  cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
  export RUST_TEST_THREADS="${RUST_TEST_THREADS:-$((cores * 2))}"
  # The tests make and delete hundreds of repositories: on a disk the
  # kernel's inode bookkeeping took as much CPU as the tests themselves
  # (12 s of system time against 4 s on tmpfs). So their temp dirs go to
  # memory where there is a tmpfs; the fast tests write a few MB there.
  if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    shm=$(mktemp -d /dev/shm/prove-it-tests.XXXXXX)
    export TMPDIR="$shm"
  fi
  tests
fi
# One total for the whole suite, on a line of its own.
total=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) {
               if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1); if ($(i) ~ /^ignored;?$/) n += $(i-1) } }
     END { printf "tests: %d passed, %d failed", p, f; if (n) printf " (%d slow ones not run: ./verify.sh --full runs them)", n }' "$log")

step "git diff --check"
git diff --check

printf '\nverify.sh: all checks passed\n%s\n' "$total"
