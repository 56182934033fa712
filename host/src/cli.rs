//! The command line (clap types only; the work is in `commands/`).

use crate::agent::{Agent, HookEvent};
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// Parses the command line. The hook's own forms, exactly `hook <event>`
/// and `hook --agent <host> <event>`, are read before clap builds its whole
/// command tree, which costs about 0.15 ms at every turn end; everything
/// else (help included) is clap's.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match hook_event(&args) {
        Some((agent, event)) => Cli {
            command: Command::Hook { agent, event },
        },
        None => Cli::parse_from(args),
    }
}

/// The host and event of a hook command line, named as clap names them.
fn hook_event(args: &[OsString]) -> Option<(Agent, HookEvent)> {
    let event = |e: &OsString| HookEvent::from_str(e.to_str()?, false).ok();
    match args {
        [_, hook, e] if hook == "hook" => Some((Agent::ClaudeCode, event(e)?)),
        [_, hook, flag, a, e] if hook == "hook" && flag == "--agent" => {
            Some((Agent::from_str(a.to_str()?, false).ok()?, event(e)?))
        }
        _ => None,
    }
}

/// prove-it: a coding agent may not end its turn until the repository's
/// `verify.sh` passes.
///
/// Claude Code (through the plugin), Codex CLI, Gemini CLI, Copilot CLI
/// and Qwen Code (through `prove-it setup`) run `prove-it hook ...` at each
/// turn end; you rarely run it by hand. Settings are environment variables: PROVE_IT_SKIP,
/// PROVE_IT_MAX_BLOCKS, PROVE_IT_TIMEOUT, PROVE_IT_LEDGER, PROVE_IT_LEDGER_DIR,
/// PROVE_IT_STATE_DIR, PROVE_IT_CACHE_DIR (see SPEC.md).
#[derive(Debug, Parser)]
#[command(name = "prove-it", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Answer one agent host's hook event (JSON on stdin, answer on stdout).
    ///
    /// Exits 0: a block or a warning is in the JSON it prints, and its own
    /// errors become a warning the user sees, never a silent pass. For
    /// Copilot CLI, which shows a Stop hook's warning only on exit 2 (and
    /// does not block on it), a warning is its stderr and the exit is 2.
    /// The plugin (Claude Code) and `prove-it setup` (Codex, Gemini,
    /// Copilot, Qwen) write these command lines; each host sends only its
    /// own events. Run by Copilot CLI (COPILOT_CLI=1), a Claude Code hook
    /// answers as Copilot.
    Hook {
        /// The agent host that runs the hook.
        #[arg(long, value_enum, default_value = "claude-code")]
        agent: Agent,
        /// The hook event being answered, as the host names it.
        #[arg(value_enum)]
        event: HookEvent,
    },
    /// Set up this repository: write verify.sh, show it pass, show the gate refuse.
    ///
    /// Detects the stack(s) from the files at the repository root and writes
    /// `verify.sh` with one active check, `git diff --check`; the stack's
    /// tests, type checks and linters are there, commented out, to switch on
    /// one at a time. Runs it to show it pass, then runs a temp copy with
    /// `exit 1` appended to show the gate refusing a turn. Never overwrites
    /// an existing `verify.sh`.
    Init {
        /// A folder inside the repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Prove that verify.sh can fail: plant known defects, one at a time.
    ///
    /// In a throwaway copy of the work tree (a `git worktree` of HEAD plus
    /// your uncommitted changes and untracked files, in a temp dir; your
    /// own tree is not touched, and the copy is removed at the end, on
    /// Ctrl-C too), it runs ./verify.sh once as it is, then with one
    /// planted defect at a time: trailing whitespace; and for Rust, Python,
    /// Node/TypeScript and Go, a failing test, a type error, a lint
    /// violation and (Rust, Go) unformatted code. A defect verify.sh lets
    /// through is a check that cannot fail. Each run is bounded by
    /// PROVE_IT_TIMEOUT.
    ///
    /// Exit codes: 0 every planted defect made verify.sh fail; 1 some did
    /// not; 2 the canary could not judge (no verify.sh, no commit, or
    /// verify.sh fails in the copy before any defect is planted).
    Canary {
        /// A folder inside the repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Print one JSON object (a record per planted defect) instead of
        /// the table.
        #[arg(long)]
        json: bool,
        /// Do not plant these kinds (comma-separated), for checks you have
        /// chosen not to run.
        #[arg(long, value_enum, value_delimiter = ',', value_name = "KIND")]
        skip: Vec<crate::commands::canary::Kind>,
    },
    /// Gate Codex CLI, Gemini CLI, Copilot CLI, Qwen Code, pi or OpenCode here, or add the commit trailer.
    ///
    /// Writes the gate's hooks into the repository's own hook file
    /// (`.codex/hooks.json`, `.gemini/settings.json`,
    /// `.github/hooks/prove-it.json`, `.qwen/settings.json`), or with
    /// `--user` into yours (`~/.codex/hooks.json`, `~/.gemini/settings.json`,
    /// `~/.copilot/hooks/prove-it.json`, `~/.qwen/settings.json`), keeping
    /// every other hook there. For Codex it also records the hooks as
    /// trusted in `~/.codex/config.toml` (Codex skips untrusted hooks
    /// without a word), and the repository as trusted when the hooks are the
    /// repository's. For Copilot it says what `copilot -p` needs to run a
    /// repository's hooks. Claude Code needs no setup: its plugin carries
    /// its hooks.
    ///
    /// pi and OpenCode have no hook files: setup writes a small file of
    /// prove-it's own that runs the gate, pi's extension
    /// (`.pi/extensions/prove-it.ts`, or `~/.pi/agent/extensions/` with
    /// `--user`) or OpenCode's plugin (`.opencode/plugins/prove-it.js`, or
    /// `~/.config/opencode/plugins/`). pi loads a project's extension only
    /// in a project it trusts; setup says what that takes.
    ///
    /// `prove-it setup trailer` wires git's `prepare-commit-msg` and
    /// `commit-msg` hooks here (keeping the ones there, which run first) so
    /// each commit gets a `Prove-It: <verdict> tree=<oid>` line from the
    /// gate's verdict on exactly its tree, or `Prove-It: unverified`;
    /// `prove-it ci` reads it and judges for itself.
    Setup {
        /// The agent host to wire.
        #[arg(value_enum)]
        agent: SetupAgent,
        /// A folder inside the repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Wire it for every repository you open, in your own config.
        #[arg(long)]
        user: bool,
    },
    /// Read the ledger: what a month of caught claims says about your agent.
    ///
    /// With PROVE_IT_LEDGER=1 the gate records each caught claim and each
    /// stop that ran verify.sh or ended unproven. This reads a period of it
    /// back: claims caught, how many turns then passed and after how many
    /// blocks, turns that ended unverified, the failures that recur, and
    /// verify.sh's time against the one-minute rule of thumb, with weekly
    /// counts as a chart. Lines that are not rows are skipped and counted.
    Ledger {
        /// How many days back from now.
        #[arg(long, default_value = "30", value_name = "N")]
        days: u32,
        /// Only this repository (a folder inside it).
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// Print the figures as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Write, check and try policy modules.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Say whether this repository is gated, and if not, why.
    ///
    /// Checks the repository, verify.sh, the host and plugin versions, each
    /// agent host's wiring, the policy, the settings, and where state and
    /// the ledger live; then runs verify.sh once and says whether a turn
    /// ending now would pass or be blocked (and whether it is slow). Exits 1
    /// when the gate would not protect the repository (a failing verify.sh
    /// is the gate working, not a failure of it).
    Doctor {
        /// A folder inside the repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Do not run verify.sh (by default doctor runs it once, to say
        /// what a turn ending now would meet).
        #[arg(long)]
        no_run: bool,
    },
    /// Judge a pull request in CI, where the agent cannot reach: the base's checks decide.
    ///
    /// In a checkout of the pull request (the head checked out, the base's
    /// history fetched): reads what counts as a check, and the policy,
    /// from the base commit (the merge base of --base and HEAD), never from
    /// the pull request; runs ./verify.sh on the files checked out; when
    /// the pull request changed checks, replays the base's checks against
    /// its code in a throwaway copy (with the control run), as the hook
    /// does. Reads a `Prove-It:` trailer on the pull request's last commit
    /// and says whether it matches; it never changes the outcome. No state:
    /// nothing of an earlier run or of the agent's machine plays a part.
    ///
    /// The base defaults to the CI's own: GitHub Actions' event
    /// (pull_request.base.sha, merge_group.base_sha) or GITHUB_BASE_REF;
    /// GitLab's CI_MERGE_REQUEST_DIFF_BASE_SHA. The summary defaults to
    /// GITHUB_STEP_SUMMARY. Each run of verify.sh is bounded by
    /// PROVE_IT_TIMEOUT.
    ///
    /// Exit codes: 0 verified (or verified with checks changed, the base's
    /// passing too); 1 not verified (weakened, suspect, behaviour changed,
    /// failed, disarmed, refused); 2 could not judge (no base given, the
    /// base not in a shallow clone, or the base has no verify.sh: no
    /// baseline).
    Ci(crate::commands::ci::Options),
    /// Add the `Prove-It:` trailer to a commit message (run by the git hooks
    /// `prove-it setup trailer` writes).
    ///
    /// Names the gate's verdict whose content tree is the commit's tree
    /// (`--tree`, from `git write-tree`), or says `unverified`. Never fails
    /// the commit: a problem is said on stderr and the commit has no
    /// trailer.
    Trailer {
        /// The git hook that runs it.
        #[arg(value_enum)]
        hook: crate::commands::trailer::TrailerHook,
        /// The tree the commit will have.
        #[arg(long, value_name = "OID", allow_hyphen_values = true)]
        tree: String,
        /// The commit message file, then git's other hook arguments.
        #[arg(required = true, num_args = 1..)]
        args: Vec<PathBuf>,
    },
    /// Print the last verdict the gate reached here; exit 0 only if proven.
    ///
    /// For scripts and CI after a headless run, e.g.
    /// `claude -p "..." && prove-it status`. Prints the last stop's verdict
    /// in this repository (or of one session): verified, unchanged,
    /// weakened (passed only with checks the session changed), suspect (the
    /// code may special-case the tests), behaviour changed (tests now expect
    /// something else: read them), not judged (passed, but whether the
    /// changed checks made it pass could not be found out), blocked, disarm
    /// refused, yielded unverified, skipped or gate error, with its time,
    /// session and tree.
    ///
    /// Exit codes: 0 verified or unchanged, and the tree is still the one
    /// judged; 1 any other verdict (weakened, suspect, behaviour changed
    /// and not judged included), or the tree has changed since; 2 no
    /// verdict recorded, or
    /// the repository cannot be read.
    Status {
        /// A folder inside the repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// The verdict of this session (its id) rather than the last one.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The hosts `prove-it setup` wires.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SetupAgent {
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Qwen Code.
    Qwen,
    /// pi (an extension of prove-it's).
    Pi,
    /// OpenCode (a plugin of prove-it's).
    Opencode,
    /// Not an agent host: the `Prove-It:` commit trailer (git hooks).
    Trailer,
}

impl SetupAgent {
    /// The agent host, `None` for the trailer.
    pub fn agent(self) -> Option<Agent> {
        match self {
            SetupAgent::Codex => Some(Agent::Codex),
            SetupAgent::Gemini => Some(Agent::Gemini),
            SetupAgent::Copilot => Some(Agent::Copilot),
            SetupAgent::Qwen => Some(Agent::Qwen),
            SetupAgent::Pi => Some(Agent::Pi),
            SetupAgent::Opencode => Some(Agent::Opencode),
            SetupAgent::Trailer => None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Create a Rust crate that builds into a working policy module.
    ///
    /// It starts from the default rules (`decide_with(.., Rules::DEFAULT)`);
    /// build it with `cargo build --release --target wasm32-wasip1`.
    New {
        /// The crate (and folder) name.
        name: String,
        /// Use this local `gate-wasm/` folder instead of the released crate.
        #[arg(long, value_name = "DIR")]
        gate_path: Option<PathBuf>,
    },
    /// Say whether a module is a valid policy this prove-it can run.
    ///
    /// Loads and links it, checks its ABI version, and lists its imports and
    /// exports. Exits 1 when it is not usable, saying why.
    Check {
        /// A `.wasm` file, or a built-in policy: `default`, `strict`.
        file: String,
    },
    /// Dry-run a policy on the repository here and print its decision.
    ///
    /// Uses throwaway state (so there is no baseline: the tree counts as
    /// changed) and the real capabilities: `verify.sh` may run.
    Run {
        /// A `.wasm` file, or a built-in policy: `default`, `strict`.
        file: String,
        /// The event to send.
        #[arg(long, value_enum, default_value = "stop")]
        event: HookEvent,
        /// The agent's claim in a Stop event.
        #[arg(long, default_value = "All tests pass.")]
        claim: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// The short cut reads each hook event exactly as clap does, and
    /// leaves every other command line to clap.
    #[test]
    fn hook_short_cut_agrees_with_clap() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        let mut lines = Vec::new();
        for name in ["session-start", "user-prompt-submit", "stop"] {
            lines.push(args(&["prove-it", "hook", name]));
        }
        for (agent, name) in [
            ("codex", "stop"),
            ("gemini", "before-agent"),
            ("gemini", "after-agent"),
        ] {
            lines.push(args(&["prove-it", "hook", "--agent", agent, name]));
        }
        for line in lines {
            let fast = hook_event(&line).expect("a hook event");
            let Command::Hook { agent, event } = Cli::try_parse_from(&line).expect("clap").command
            else {
                panic!("clap did not read a hook command");
            };
            assert_eq!(fast, (agent, event));
        }
        for other in [
            &["prove-it", "hook"][..],
            &["prove-it", "hook", "Stop"],
            &["prove-it", "hook", "stop", "extra"],
            &["prove-it", "hook", "--agent", "nobody", "stop"],
            &["prove-it", "hook", "--help"],
            &["prove-it", "doctor", "stop"],
        ] {
            assert!(hook_event(&args(other)).is_none(), "{other:?}");
        }
    }
}
