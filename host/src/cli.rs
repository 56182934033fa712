//! The command line (clap types only; the work is in `commands/`).

use clap::{Parser, Subcommand, ValueEnum};
use prove_it_gate::abi::EventKind;
use std::ffi::OsString;
use std::path::PathBuf;

/// Parses the command line. The hook's own form, exactly `hook <event>`, is
/// read before clap builds its whole command tree, which costs about
/// 0.15 ms at every turn end; everything else (help included) is clap's.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match hook_event(&args) {
        Some(event) => Cli {
            command: Command::Hook { event },
        },
        None => Cli::parse_from(args),
    }
}

/// The event of `prove-it hook <event>`, named as clap names it.
fn hook_event(args: &[OsString]) -> Option<HookEvent> {
    match args {
        [_, hook, event] if hook == "hook" => HookEvent::from_str(event.to_str()?, false).ok(),
        _ => None,
    }
}

/// prove-it: a coding agent may not end its turn until the repository's
/// `verify.sh` passes.
///
/// Claude Code runs `prove-it hook ...` from the plugin's hooks; you rarely
/// run it by hand. Settings are environment variables: PROVE_IT_SKIP,
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
    /// Answer one Claude Code hook event (JSON on stdin, answer on stdout).
    ///
    /// Always exits 0: a block or a warning is in the JSON it prints, and
    /// its own errors become a warning the user sees, never a silent pass.
    Hook {
        /// The hook event being answered.
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
    /// Write, check and try policy modules.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Say whether this repository is gated, and if not, why.
    ///
    /// Checks the repository, verify.sh, the host and plugin versions, the
    /// policy, the settings, and where state and the ledger live. Exits 1
    /// when the gate would not protect the repository.
    Doctor {
        /// A folder inside the repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Print the last verdict the gate reached here; exit 0 only if proven.
    ///
    /// For scripts and CI after a headless run, e.g.
    /// `claude -p "..." && prove-it status`. Prints the last stop's verdict
    /// in this repository (or of one session): verified, unchanged, blocked,
    /// disarm refused, yielded unverified, skipped or gate error, with its
    /// time, session and tree.
    ///
    /// Exit codes: 0 verified or unchanged, and the tree is still the one
    /// judged; 1 any other verdict, or the tree has changed since; 2 no
    /// verdict recorded, or the repository cannot be read.
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

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HookEvent {
    /// SessionStart: record the tree state this session starts from.
    SessionStart,
    /// UserPromptSubmit: a new turn; reset the gate's attempt count.
    UserPromptSubmit,
    /// Stop: run `verify.sh` if this session changed the tree; block on failure.
    Stop,
}

impl From<HookEvent> for EventKind {
    fn from(event: HookEvent) -> Self {
        match event {
            HookEvent::SessionStart => EventKind::SessionStart,
            HookEvent::UserPromptSubmit => EventKind::UserPromptSubmit,
            HookEvent::Stop => EventKind::Stop,
        }
    }
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
        for name in ["session-start", "user-prompt-submit", "stop"] {
            let line = args(&["prove-it", "hook", name]);
            let fast = hook_event(&line).expect("a hook event");
            let Command::Hook { event } = Cli::try_parse_from(&line).expect("clap").command else {
                panic!("clap did not read a hook command");
            };
            assert_eq!(format!("{fast:?}"), format!("{event:?}"));
        }
        for other in [
            &["prove-it", "hook"][..],
            &["prove-it", "hook", "Stop"],
            &["prove-it", "hook", "stop", "extra"],
            &["prove-it", "hook", "--help"],
            &["prove-it", "doctor", "stop"],
        ] {
            assert!(hook_event(&args(other)).is_none(), "{other:?}");
        }
    }
}
