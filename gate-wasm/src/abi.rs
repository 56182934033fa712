//! The one contract between the `prove-it` host and a policy module.
//!
//! Everything that crosses the boundary is JSON (serde_json) in the guest's
//! linear memory. Both sides use these types; nothing else defines the ABI.
//!
//! # Exports a policy module must have
//! - `memory`: its linear memory.
//! - `prove_it_abi_version() -> i32`: must return [`ABI_VERSION`]; the host
//!   refuses a module that returns anything else, before calling it.
//! - `prove_it_alloc(len: i32) -> i32`: returns a pointer to `len` writable
//!   bytes that the guest owns. The host calls it to hand over JSON.
//! - `prove_it_decide(ptr: i32, len: i32) -> i64`: `ptr/len` hold an [`Event`]
//!   (allocated by `prove_it_alloc`; the guest now owns and frees it). Returns a
//!   packed slice (see [`pack`]) holding a [`Decision`]. The host reads it and
//!   drops the instance, so the guest need not free it.
//! - `_initialize()` (optional): called once before anything else when present
//!   (Rust `cdylib` reactors export it).
//!
//! # Imports the host offers (module [`IMPORT_MODULE`])
//! Every import has the signature `(req_ptr: i32, req_len: i32) -> i64`:
//! the guest passes a JSON request it owns (the host only reads it); the host
//! allocates the reply with the guest's `prove_it_alloc`, writes JSON there and
//! returns it packed. The guest owns and frees the reply. A reply is always a
//! [`Reply`]: `{"Ok": value}` or `{"Err": "message"}`.
//!
//! | import | request | `Ok` value |
//! |---|---|---|
//! | `tree_state` | `{}` | [`TreeState`] |
//! | `verify_facts` | `{}` | [`VerifyFacts`] |
//! | `run_verify` | `{}` | [`VerifyRun`] |
//! | `session_read` | `{}` | [`SessionRead`] |
//! | `session_write` | [`SessionWrite`] | `null` |
//! | `passed_check` | [`Fingerprint`] | `bool` |
//! | `passed_record` | [`Fingerprint`] | `null` |
//! | `ledger_append` | [`LedgerEntry`] | `bool` (false: the ledger is off) |
//! | `check_changes` | `{}` | [`CheckChanges`] (ABI 3) |
//! | `replay_checks` | [`ReplayRequest`] (ABI 4; `{}` before) | [`Replay`] (ABI 3) |
//!
//! WASI (`wasi_snapshot_preview1`) is linked only so that a Rust `std` module
//! loads: it has no preopened directories, no environment, no arguments, empty
//! stdin, a frozen clock and a captured, size-capped stderr.

use serde::{Deserialize, Serialize};

/// Version of this contract. Bumped on any incompatible change.
pub const ABI_VERSION: i32 = 5;

/// The oldest version the host still runs. Each version since 2 only adds
/// (ABI 3: two imports, the `weakened` verdict, [`Decision::checks`]; ABI
/// 4: the `suspect` and `behaviour_changed` verdicts,
/// [`CheckChanges::suspect`], [`ReplayRequest`] and [`Replay::start`]; ABI
/// 5: the `not_judged` verdict and [`VerifyRun::notes`]), so a module
/// built for an older version runs unchanged; one built for 5 needs a
/// host that speaks 5.
pub const ABI_VERSION_MIN: i32 = 2;

/// The import module name all host capabilities live in.
pub const IMPORT_MODULE: &str = "prove_it";

/// Names of the guest exports the host calls.
pub mod export {
    pub const ABI_VERSION: &str = "prove_it_abi_version";
    pub const ALLOC: &str = "prove_it_alloc";
    pub const DECIDE: &str = "prove_it_decide";
    pub const INITIALIZE: &str = "_initialize";
    pub const MEMORY: &str = "memory";
}

/// Names of the host imports, one per capability function.
pub mod import {
    pub const TREE_STATE: &str = "tree_state";
    pub const VERIFY_FACTS: &str = "verify_facts";
    pub const RUN_VERIFY: &str = "run_verify";
    pub const SESSION_READ: &str = "session_read";
    pub const SESSION_WRITE: &str = "session_write";
    pub const PASSED_CHECK: &str = "passed_check";
    pub const PASSED_RECORD: &str = "passed_record";
    pub const LEDGER_APPEND: &str = "ledger_append";
    pub const CHECK_CHANGES: &str = "check_changes";
    pub const REPLAY_CHECKS: &str = "replay_checks";
}

/// Packs a guest slice into the `i64` that exports and imports return:
/// pointer in the high 32 bits, length in the low 32 bits.
pub fn pack(ptr: u32, len: u32) -> i64 {
    ((u64::from(ptr) << 32) | u64::from(len)) as i64
}

/// Inverse of [`pack`]: `(ptr, len)`.
pub fn unpack(packed: i64) -> (u32, u32) {
    let v = packed as u64;
    ((v >> 32) as u32, v as u32)
}

/// What every import answers: `{"Ok": value}` or `{"Err": "message"}`.
pub type Reply<T> = Result<T, String>;

/// Which hook event the policy is asked about (host-neutral).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A session starts, resumes or is compacted.
    SessionStart,
    /// A new turn begins (the person sent a prompt). The host says so only
    /// for a real new turn, never for an agent sent back by a block.
    TurnStart,
    /// The agent wants to end its turn.
    Stop,
}

/// The event handed to `prove_it_decide`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    /// For `session_start`: `startup`, `resume`, `clear`, `compact` or `fork`.
    #[serde(default)]
    pub source: Option<String>,
    /// The turn's name, the same for every retry of one turn: Codex's
    /// `turn_id`, Claude Code's and Qwen's `prompt_id`, or one the host
    /// gives each turn at its start (`None` before any turn start was
    /// seen). A stop whose `turn` differs from the one the policy saw last
    /// is in a new turn; a turn start that names that same turn is not.
    #[serde(default)]
    pub turn: Option<String>,
    /// For `stop`: true unless the host can rule out that this stop follows
    /// a block in the same turn. Hosts' own flags differ (Gemini CLI clears
    /// its flag after any retry that used a tool), so a policy counts its
    /// own attempts per turn and reads this only when it cannot count.
    #[serde(default)]
    pub may_be_retry: bool,
    /// For `stop`: what the agent said last (its claim).
    #[serde(default)]
    pub claim: Option<String>,
    /// The repository's work tree root, for messages.
    pub repo: String,
    /// Settings the person chose (the policy has no environment of its own).
    pub settings: Settings,
    /// Problems the host already found (bad settings...), for the user.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The person's settings, read by the host from `PROVE_IT_*` variables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// `PROVE_IT_SKIP=1`: let the turn end without verifying, and say so.
    pub skip: bool,
    /// `PROVE_IT_MAX_BLOCKS`: blocks before the gate yields (0: warn only).
    pub max_blocks: u32,
    /// `PROVE_IT_LEDGER=1`: caught claims are appended to the ledger.
    pub ledger: bool,
    /// `PROVE_IT_TIMEOUT`: seconds `verify.sh` may run.
    pub timeout_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            skip: false,
            max_blocks: 3,
            ledger: false,
            timeout_secs: 300,
        }
    }
}

/// What the policy decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub action: Action,
    /// For `block`: what the agent is told (why it may not stop yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A message the user sees (a warning, a skip, a yield).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// For `stop`: what the gate concluded, for `prove-it status` and for
    /// how the answer is shown. Optional: a policy that leaves it out still
    /// works; the host records its blocks as blocked and nothing else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The tree fingerprint the verdict is about ([`TreeState`]), so that
    /// `prove-it status` can tell when the tree has changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// For `stop`: the blocks this turn had before this stop (for the
    /// ledger: "passed after 2 blocks"). Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// For `stop`: how long `verify.sh` ran for it, when it ran. Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_ms: Option<u64>,
    /// For `stop`: the checks the session changed, with their evidence,
    /// when the verdict is about them (`prove-it status --json` shows
    /// them). Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<CheckChanges>,
}

/// What a stop concluded. A person and a script can tell each apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// `verify.sh` passed on this tree (now, or earlier in the session).
    Verified,
    /// `verify.sh` passed, but only with checks the session changed: the
    /// checks as they were at its start fail against the code as it is.
    Weakened,
    /// `verify.sh` passed, but the code the session changed holds lines
    /// that only make sense to fool a test ([`CheckChanges::suspect`]).
    Suspect,
    /// `verify.sh` passed; the checks as they were at the session's start
    /// fail against the code as it is, but passed on the code as it was:
    /// the session changed behaviour the checks pinned, and the checks
    /// with it. Not proven until a person has read the change.
    BehaviourChanged,
    /// `verify.sh` passed, but the session changed its checks and the
    /// gate could not find out whether the checks as they were at its
    /// start pass too (the replay could not run, or had no answer): not
    /// proven.
    NotJudged,
    /// The session did not change the repository: nothing to check.
    Unchanged,
    /// The stop was refused (`verify.sh` failed): the agent goes back.
    Blocked,
    /// The stop was refused because `verify.sh` was removed or disarmed.
    DisarmRefused,
    /// The turn ended without passing verification (the gate gave up).
    Yielded,
    /// `PROVE_IT_SKIP=1`: `verify.sh` was not run.
    Skipped,
    /// The gate itself failed: the turn was not verified.
    GateError,
}

impl Verdict {
    /// Whether the tree this verdict is about may be trusted: only a
    /// verified or an unchanged one.
    pub fn proven(self) -> bool {
        matches!(self, Verdict::Verified | Verdict::Unchanged)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Let the turn end (with `message` shown to the user, if any).
    Allow,
    /// Send the agent back to work with `reason`.
    Block,
}

impl Decision {
    pub fn allow() -> Self {
        Decision {
            action: Action::Allow,
            reason: None,
            message: None,
            verdict: None,
            tree: None,
            attempts: None,
            verify_ms: None,
            checks: None,
        }
    }
    pub fn allow_with(message: impl Into<String>) -> Self {
        Decision {
            message: Some(message.into()),
            ..Decision::allow()
        }
    }
    pub fn block(reason: impl Into<String>) -> Self {
        Decision {
            action: Action::Block,
            reason: Some(reason.into()),
            message: None,
            verdict: Some(Verdict::Blocked),
            ..Decision::allow()
        }
    }
    pub fn with_verdict(mut self, verdict: Verdict) -> Self {
        self.verdict = Some(verdict);
        self
    }
    /// Records, for the ledger, the blocks before this stop in its turn and
    /// how long `verify.sh` ran.
    pub fn after(mut self, attempts: u32, verify_ms: Option<u64>) -> Self {
        self.attempts = Some(attempts);
        self.verify_ms = verify_ms;
        self
    }
    pub fn about(mut self, tree: &TreeState) -> Self {
        self.tree = Some(tree.fingerprint.clone());
        self
    }
    /// Puts `notes` for the user in front of the decision's own message.
    pub fn with_notes(mut self, notes: &[String]) -> Self {
        if notes.is_empty() {
            return self;
        }
        let mut parts = notes.to_vec();
        parts.extend(self.message.take());
        self.message = Some(parts.join("\n"));
        self
    }
}

/// `tree_state`: the state of HEAD, index and work tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeState {
    /// The commit HEAD points to; `None` in a repository with no commits.
    pub head: Option<String>,
    /// A hash of the full tree state: HEAD, staged and unstaged edits,
    /// deletions, untracked (not ignored) files, modes, symlink targets. The
    /// same state always gives the same fingerprint (lowercase hex).
    pub fingerprint: String,
}

/// `verify_facts`: the `verify.sh` at the repository root, now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyFacts {
    pub exists: bool,
    pub executable: bool,
    /// Content hash (lowercase hex) when it exists.
    pub hash: Option<String>,
}

impl VerifyFacts {
    /// An executable `verify.sh` is what arms the gate.
    pub fn armed(&self) -> bool {
        self.exists && self.executable
    }
}

/// `run_verify`: one run of `./verify.sh` from the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyRun {
    pub outcome: VerifyOutcome,
    /// Exit code when it exited on its own.
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The last lines (at most 20) of its combined stdout and stderr.
    pub tail: Vec<String>,
    /// The timeout that applied, in seconds.
    pub timeout_secs: u64,
    /// Why it could not start, or which signal ended it.
    #[serde(default)]
    pub detail: Option<String>,
    /// What the host did before the run so that no cache answered for
    /// code it was not built from (a file whose modification time was set
    /// back given a current one), one line each for the person.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How many tests ran by the runners' own summary lines, added up over
    /// the whole output (cargo prints one per test binary, most of them
    /// long gone from `tail`); `None` when no line said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_ran: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyOutcome {
    Passed,
    Failed,
    TimedOut,
    CouldNotStart,
}

/// `session_read`: the policy's own JSON for this session and repository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRead {
    /// `None` when nothing was saved yet (or it was unreadable).
    pub value: Option<serde_json::Value>,
    /// Set when saved state existed but could not be read (kept aside).
    #[serde(default)]
    pub problem: Option<String>,
}

/// `session_write` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionWrite {
    pub value: serde_json::Value,
}

/// `passed_check` / `passed_record` request: a tree fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub fingerprint: String,
}

/// `ledger_append` request: one caught false completion. The host adds
/// `ts` and `repo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub claim: String,
    pub evidence_demanded: String,
    pub exit_code: Option<i32>,
    pub actual: Vec<String>,
}

/// `check_changes`: what the session changed in its checks, compared with
/// its start (SPEC.md, "Weakened checks"). What counts as a check was
/// pinned when the session started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckChanges {
    /// Each check that differs from the session's start.
    pub files: Vec<CheckChange>,
    /// Evidence in files that are not checks (lint suppressions added to
    /// the code, a file an index flag hides from `git diff`), one line
    /// each, naming the file.
    #[serde(default)]
    pub code: Vec<String>,
    /// Lines added to the code (not the checks) that only make sense to
    /// fool a test: an exit with status 0, an exception hook replaced, the
    /// test runner detected, a test's own input and expected output
    /// written in... One line each, naming the file (SPEC.md, "Cheats in
    /// the code").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspect: Vec<String>,
    /// Where the list of checks in force comes from (the committed
    /// `.prove-it/checks`, or the built-in defaults, and what `verify.sh`
    /// adds).
    #[serde(default)]
    pub origin: String,
    /// The commit HEAD was at when the session began, for
    /// `git diff BASE -- PATHS`.
    #[serde(default)]
    pub base: Option<String>,
    /// Why the answer is partial (the session's start is not known, a
    /// file too large to keep...); `files` holds what could be told.
    #[serde(default)]
    pub problem: Option<String>,
    /// What git-run checks read from outside the tree (`git config`
    /// keys, `.git/info/attributes`...), each that differs from the
    /// session's start.
    #[serde(default)]
    pub git_config: Vec<GitConfigChange>,
    /// Environments inside the tree (`.venv`, `node_modules`) that
    /// changed during the session with no tracked dependency list or
    /// lockfile changed with them, one line each (ABI 5): the checks ran
    /// with what a fresh checkout does not install.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
}

/// One difference in git's configuration of the checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitConfigChange {
    /// The key (`` `git config core.whitespace` ``) or file
    /// (`` `.git/info/attributes` ``), quoted for the person.
    pub what: String,
    /// The old and new value, or the lines added and removed.
    #[serde(default)]
    pub evidence: Vec<String>,
}

impl CheckChanges {
    /// Whether the session's changes to its checks could have made
    /// `verify.sh` pass: anything but added tests, in new files or as whole
    /// new tests in a file ([`CheckChange::tests_added_only`]) (adding a
    /// test never weakens; adding configuration or a hook, or changing
    /// git's configuration of the checks, can).
    pub fn replay_needed(&self) -> bool {
        !self.git_config.is_empty()
            || self.files.iter().any(|f| {
                let added = f.change == FileChange::Added
                    && matches!(f.kind, CheckKind::Test | CheckKind::Inline);
                let added_to = f.change == FileChange::Modified
                    && f.kind == CheckKind::Test
                    && f.tests_added_only
                    && f.evidence.is_empty();
                !(added || added_to)
            })
    }
}

/// One check the session changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckChange {
    /// Relative to the repository root, `/`-separated.
    pub path: String,
    pub kind: CheckKind,
    pub change: FileChange,
    /// Static evidence, one line each (skip markers added, tests or
    /// assertions removed, runner options...); empty when nothing stands out.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The tests this file gained, by name. Optional (a host may leave it
    /// empty), as are the two fields below.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_added: Vec<String>,
    /// The tests of the session's start whose lines changed, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_modified: Vec<String>,
    /// A test file that only gained whole new tests: no line of it was
    /// removed or changed, each addition is a complete test of a new name
    /// between other definitions, and no evidence stands out. It never
    /// weakens the checks, as an added test file never does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tests_added_only: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A test file (test folders, snapshots, test data).
    #[default]
    Test,
    /// Runner, linter or type-checker configuration, a hook, `verify.sh`.
    Config,
    /// Check sections of a file that is also the project's manifest.
    Section,
    /// The test parts of a source file (Rust `#[cfg(test)]`, doc tests).
    Inline,
}

impl CheckKind {
    /// The words a person reads for it, the same at a stop, in `status`
    /// and in CI.
    pub fn said(self) -> &'static str {
        match self {
            CheckKind::Test => "test",
            CheckKind::Config => "configuration",
            CheckKind::Section => "check sections",
            CheckKind::Inline => "inline tests",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    Added,
    #[default]
    Modified,
    Deleted,
}

/// `replay_checks` request. A module built for ABI 3 sends `{}`: the
/// defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayRequest {
    /// When the replay fails and the control passes, also run the
    /// session-start checks on the session-start code, in the same copy
    /// ([`Replay::start`]): did they pass before the session changed
    /// anything?
    #[serde(default)]
    pub start: bool,
}

/// `replay_checks`: the checks as they were at the session's start, run
/// against the code as it is now, in a throwaway copy of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// `verify.sh`'s run in the copy, with the same timeout and
    /// environment as the gate's own.
    pub run: VerifyRun,
    /// What was put back in the copy, one line each.
    pub restored: Vec<String>,
    /// When `run` did not pass: the checks as they are now, run in the
    /// same copy. If they fail too, the copy lacks something the checks
    /// need, and the replay proves nothing either way.
    #[serde(default)]
    pub control: Option<VerifyRun>,
    /// Asked for ([`ReplayRequest::start`]): the session-start checks on
    /// the session-start code, the tree as it was when the session began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<VerifyRun>,
    /// Why `start` was asked for and not run (a file that already differed
    /// at the start was not kept, so that tree cannot be rebuilt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_problem: Option<String>,
    /// When `run` passed: both sets of checks asked the same question, a
    /// failing test planted where the session-start checks look, in the
    /// copy of the code as it is now. `None`: nothing could be planted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differential: Option<Differential>,
}

/// The session-start checks and the checks as the session left them, each
/// run with the same failing test planted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Differential {
    /// What was planted, in words: "a failing test in `tests/test_calc.py`".
    pub planted: String,
    /// The session-start checks with it.
    pub start: VerifyRun,
    /// The checks as the session left them with it; `None` when the
    /// start's checks let it through (nothing to compare).
    #[serde(default)]
    pub now: Option<VerifyRun>,
    /// Mutants of the code the changed tests import, each one the
    /// session-start checks failed on (killed), with the session's checks'
    /// run on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutants: Vec<MutantRun>,
}

/// One mutant of the code, and what each set of checks did with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutantRun {
    /// `src/calc.py:2: \`a + b\` -> \`a - b\``.
    pub mutant: String,
    /// The session-start checks with it (they failed: it is killed).
    pub start: VerifyRun,
    /// The checks as the session left them with it.
    pub now: VerifyRun,
}

/// The capabilities a policy may use. In a module these are the imports
/// (see [`crate::guest`]); on the host target the host implements it directly,
/// and tests implement it with fakes.
///
/// A capability a host does not implement answers that it is not
/// available: the policy sees an error it must report, never a made-up
/// fact.
pub trait Host {
    fn tree_state(&mut self) -> Reply<TreeState> {
        unavailable(import::TREE_STATE)
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        unavailable(import::VERIFY_FACTS)
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        unavailable(import::RUN_VERIFY)
    }
    fn session_read(&mut self) -> Reply<SessionRead> {
        unavailable(import::SESSION_READ)
    }
    fn session_write(&mut self, _: &SessionWrite) -> Reply<()> {
        unavailable(import::SESSION_WRITE)
    }
    fn passed_check(&mut self, _: &Fingerprint) -> Reply<bool> {
        unavailable(import::PASSED_CHECK)
    }
    fn passed_record(&mut self, _: &Fingerprint) -> Reply<()> {
        unavailable(import::PASSED_RECORD)
    }
    fn ledger_append(&mut self, _: &LedgerEntry) -> Reply<bool> {
        unavailable(import::LEDGER_APPEND)
    }
    fn check_changes(&mut self) -> Reply<CheckChanges> {
        unavailable(import::CHECK_CHANGES)
    }
    fn replay_checks(&mut self, request: &ReplayRequest) -> Reply<Replay> {
        let _ = request;
        unavailable(import::REPLAY_CHECKS)
    }
}

fn unavailable<T>(name: &str) -> Reply<T> {
    Err(format!("`{name}` is not available"))
}
