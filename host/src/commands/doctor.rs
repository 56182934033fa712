//! `prove-it doctor`: one screen saying whether this repository is gated,
//! and if not, why and what to run. Exits non-zero when the gate would not
//! protect the repository.

use super::{claude_code, sandbox, setup};
use crate::agent::Agent;
use crate::capability::{checks, git, ledger, verify};
use crate::settings::Loaded;
use crate::{selection, settings, verdicts};
use anyhow::Result;
use prove_it_gate::abi::{ABI_VERSION, VerifyOutcome};
use prove_it_gate::policy::failed_run_reason;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    Ok,
    Info,
    Warn,
    /// The gate would not protect this repository.
    Fail,
}

#[derive(Default)]
struct Report {
    rows: Vec<(Mark, &'static str, String)>,
}

impl Report {
    fn row(&mut self, mark: Mark, what: &'static str, text: impl Into<String>) {
        self.rows.push((mark, what, text.into()));
    }

    fn print(&self) {
        for (mark, what, text) in &self.rows {
            let mark = match mark {
                Mark::Ok => "ok",
                Mark::Info => "info",
                Mark::Warn => "warn",
                Mark::Fail => "FAIL",
            };
            outln!("  {mark:<5} {what:<11} {text}");
        }
    }

    fn failures(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|(m, _, _)| *m == Mark::Fail)
            .map(|(_, w, _)| *w)
            .collect()
    }
}

/// One row per agent host that `prove-it setup` wires: whether the gate is
/// wired here (or in the person's config), and if so whether the host
/// would really run it. Wiring that would not run fails: the person meant
/// that host to be gated, and it would not be.
fn agent_rows(report: &mut Report, root: &Path, loaded: &Loaded) -> Vec<&'static str> {
    let mut runs = Vec::new();
    for agent in Agent::ALL {
        if agent == Agent::ClaudeCode {
            continue;
        }
        let what = agent.name();
        let wiring = setup::check(agent, root, loaded);
        match (wiring.file, wiring.problem) {
            (None, _) => report.row(
                Mark::Info,
                what,
                format!(
                    "not set up: run `prove-it setup {}` to gate {} here",
                    agent.name(),
                    agent.adapter().title()
                ),
            ),
            (Some(file), None) => {
                runs.push(agent.adapter().title());
                report.row(Mark::Ok, what, format!("wired in `{}`", file.display()));
                if let Some(caveat) = setup::trust_caveat(agent, &file, root, loaded) {
                    report.row(Mark::Warn, what, caveat);
                }
                // Wired is not run: a host can skip what it was given (pi,
                // an untrusted project) and say nothing.
                let state = loaded.dirs.outside(root, &mut Vec::new()).state;
                if !verdicts::recorded_by(&state, root, agent.name()) {
                    report.row(
                        Mark::Info,
                        what,
                        format!(
                            "wired, but no verdict of {}'s is recorded here yet: after its first turn here, `prove-it status` should show one; if it does not, {} did not run the gate",
                            agent.adapter().title(),
                            agent.adapter().title()
                        ),
                    );
                }
            }
            (Some(file), Some(problem)) => report.row(
                Mark::Fail,
                what,
                format!("wired in `{}`, but {problem}", file.display()),
            ),
        }
    }
    runs
}

/// Whether the agent hosts' sandboxes keep the gate's state, program and
/// plugin out of the agent's shell (SPEC.md, "What the gate defends
/// against"). A warning, not a failure: the gate runs either way, and CI
/// judges what was pushed where the agent cannot reach.
fn sandbox_rows(report: &mut Report, root: &Path, loaded: &Loaded) {
    let guarded = sandbox::Guarded::new(loaded);
    let mut findings = vec![sandbox::claude_code(root, loaded, &guarded)];
    if setup::check(Agent::Codex, root, loaded).file.is_some() {
        findings.push(sandbox::codex(root, loaded, &guarded));
    }
    for finding in findings {
        match finding {
            Ok(text) => report.row(Mark::Ok, "sandbox", text),
            Err(text) => report.row(Mark::Warn, "sandbox", text),
        }
    }
}

/// A `verify.sh` slower than this is said: the gate waits for it at every
/// turn end that changed the tree.
const SLOW: std::time::Duration = std::time::Duration::from_secs(60);

/// "What would happen if the turn ended now?": `verify.sh` run once, as a
/// stop runs it, and the answer the gate would give.
fn now_row(report: &mut Report, root: &Path, loaded: &Loaded) {
    if !verify::verify_facts(root).is_ok_and(|f| f.armed()) {
        return;
    }
    errln!("prove-it doctor: running ./verify.sh as a stop would (--no-run skips this)...");
    let timeout = std::time::Duration::from_secs(loaded.settings.timeout_secs);
    let run = verify::run(root, timeout);
    let took = std::time::Duration::from_millis(run.duration_ms);
    if run.outcome == VerifyOutcome::Passed {
        report.row(
            Mark::Ok,
            "now",
            format!(
                "a turn that changed the tree would pass: ./verify.sh exit 0 in {:.1} s",
                took.as_secs_f64()
            ),
        );
    } else {
        let reason = failed_run_reason(&run, 1, loaded.settings.max_blocks.max(1));
        let indented = reason
            .lines()
            .collect::<Vec<_>>()
            .join("\n                    ");
        report.row(
            Mark::Warn,
            "now",
            format!("a turn that changed the tree would be blocked; the agent would be told:\n                    {indented}"),
        );
    }
    if took > SLOW {
        report.row(
            Mark::Warn,
            "speed",
            format!(
                "./verify.sh took {:.0} s: every turn end that changed the tree waits that long. Under a minute is the rule of thumb: run the slow checks only on what changed (PROVE_IT_CHANGED_FILES, SPEC.md), or in CI.",
                took.as_secs_f64()
            ),
        );
    }
}

/// The ledger's last week of `verify.sh` runs here, when some took over a
/// minute (nothing is said when the ledger is off or has none).
fn slow_in_ledger(report: &mut Report, root: &Path, loaded: &Loaded) {
    let file = ledger::path(&loaded.dirs.ledger);
    let Ok(text) = std::fs::read_to_string(&file) else {
        return;
    };
    let week = super::ledger::summarize(
        &text,
        &file,
        7,
        Some(root.to_path_buf()),
        std::time::SystemTime::now(),
    );
    if week.verify.over_a_minute > 0 {
        report.row(
            Mark::Warn,
            "speed",
            format!(
                "in the ledger, {} of the last week's {} runs of ./verify.sh here took over a minute (slowest {:.0} s)",
                week.verify.over_a_minute,
                week.verify.runs,
                week.verify.slowest_ms.unwrap_or(0) as f64 / 1000.0
            ),
        );
    }
}

pub fn execute(dir: &Path, run_verify: bool) -> Result<ExitCode> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    outln!("prove-it doctor: {}", dir.display());
    let mut report = Report::default();

    match git::discover(&dir) {
        None => report.row(
            Mark::Fail,
            "repository",
            "not inside a git repository: run `git init` (the gate judges git state)",
        ),
        Some(root) => {
            match git::tree_state(&root, &mut git::Memo::default()) {
                Ok(_) => report.row(
                    Mark::Ok,
                    "repository",
                    format!("{} (git work tree)", root.display()),
                ),
                Err(e) => report.row(
                    Mark::Fail,
                    "repository",
                    format!("{}: {e:#}", root.display()),
                ),
            }
            verify_row(&mut report, &root);
            checks_row(&mut report, &root);
        }
    }

    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let loaded = settings::from_env();
    // Which binary the plugin's launcher chose, and why (SPEC.md, "Which
    // prove-it binary runs").
    let source = match loaded.bin_source.as_deref() {
        Some("PROVE_IT_BIN") => "chosen by PROVE_IT_BIN",
        Some("downloaded") => "the prebuilt binary the plugin downloaded",
        Some("PATH") => "found on PATH",
        Some("built") => "built from source (found in ~/.local/bin, ~/.cargo/bin or the plugin)",
        Some(_) => "chosen by the plugin's launcher",
        None => "run directly, not through the plugin's launcher",
    };
    report.row(
        Mark::Ok,
        "host",
        format!("prove-it {} at {exe}: {source}", settings::HOST_VERSION),
    );
    let root = git::discover(&dir);
    // The agent hosts that would run the gate here.
    let mut hosts = Vec::new();
    if claude_rows(&mut report, root.as_deref(), &loaded) {
        hosts.push(Agent::ClaudeCode.adapter().title());
    }
    if let Some(root) = &root {
        hosts.extend(agent_rows(&mut report, root, &loaded));
        sandbox_rows(&mut report, root, &loaded);
        let dirs = loaded.dirs.outside(root, &mut Vec::new());
        match crate::commands::trailer::wiring(root, &dirs.state) {
            None => report.row(
                Mark::Info,
                "trailer",
                "off (`prove-it setup trailer`: each commit names the gate's verdict on its tree, for `prove-it ci` to compare)",
            ),
            Some(Ok(text)) => report.row(Mark::Ok, "trailer", text),
            Some(Err(text)) => report.row(Mark::Warn, "trailer", text),
        }
    }
    policy_row(&mut report, &dir, &loaded);

    let s = &loaded.settings;
    report.row(
        Mark::Info,
        "settings",
        format!(
            "PROVE_IT_MAX_BLOCKS={}, PROVE_IT_TIMEOUT={} s",
            s.max_blocks, s.timeout_secs
        ),
    );
    for note in &loaded.notes {
        report.row(
            Mark::Warn,
            "settings",
            note.trim_start_matches("prove-it: "),
        );
    }
    if s.skip {
        report.row(
            Mark::Fail,
            "skip",
            "PROVE_IT_SKIP=1 is set: every turn ends without verification (unset it)",
        );
    }
    if s.max_blocks == 0 {
        report.row(
            Mark::Fail,
            "blocks",
            "PROVE_IT_MAX_BLOCKS=0: the gate only warns, it never blocks",
        );
    }
    if let Some(root) = git::discover(&dir) {
        if run_verify {
            now_row(&mut report, &root, &loaded);
        }
        slow_in_ledger(&mut report, &root, &loaded);
    }
    state_row(&mut report, &loaded.dirs.state);
    let ledger_file = ledger::path(&loaded.dirs.ledger);
    if s.ledger {
        report.row(
            Mark::Info,
            "ledger",
            format!("on: {}", ledger_file.display()),
        );
    } else {
        report.row(
            Mark::Info,
            "ledger",
            format!(
                "off (PROVE_IT_LEDGER=1 records caught claims in {})",
                ledger_file.display()
            ),
        );
    }

    report.print();
    let failures = report.failures();
    if failures.is_empty() && !hosts.is_empty() {
        outln!(
            "result: gated in {}. A turn that changes this repository cannot end until ./verify.sh passes.",
            hosts.join(", ")
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !failures.is_empty() {
        outln!(
            "result: NOT gated (see {}). Fix the FAIL lines above.",
            failures.join(", ")
        );
    }
    if hosts.is_empty() {
        if failures.is_empty() {
            outln!("result: not gated: no agent host runs prove-it here.");
        } else {
            outln!("No agent host runs prove-it here either.");
        }
        outln!("  Claude Code: {PLUGIN_INSTALL},");
        outln!("               or wire the hooks by hand (README.md, \"Without the plugin\")");
        for agent in Agent::ALL {
            if agent != Agent::ClaudeCode {
                outln!(
                    "  {}: `prove-it setup {}`",
                    agent.adapter().title(),
                    agent.name()
                );
            }
        }
    }
    Ok(ExitCode::FAILURE)
}

/// What counts as a check here (SPEC.md, "Weakened checks"): the list a
/// session starting now would pin, and the tracked files it names.
fn checks_row(report: &mut Report, root: &Path) {
    let inventory = match checks::inventory(root) {
        Ok(inventory) => inventory,
        Err(e) => {
            report.row(
                Mark::Warn,
                "checks",
                format!("cannot tell which files are checks: {e:#}"),
            );
            return;
        }
    };
    report.row(Mark::Info, "checks", inventory.origin);
    if inventory.uncommitted {
        report.row(
            Mark::Warn,
            "checks",
            format!(
                "`{}` in the work tree is not the committed one: sessions pin the committed list; commit it for it to count",
                checks::list::FILE
            ),
        );
    }
    for problem in inventory.problems {
        report.row(
            Mark::Warn,
            "checks",
            format!("`{}` {problem}", checks::list::FILE),
        );
    }
    for derived in &inventory.derived {
        report.row(
            Mark::Info,
            "checks",
            format!("`{}`: {}", derived.line, derived.why),
        );
    }
    for (kind, count, some) in inventory.kinds {
        if count == 0 {
            continue;
        }
        let more = if count > some.len() { ", ..." } else { "" };
        let names: Vec<String> = some.iter().map(|p| format!("`{p}`")).collect();
        report.row(
            Mark::Info,
            "checks",
            format!("{count} {kind}: {}{more}", names.join(", ")),
        );
    }
    let keys: Vec<String> = inventory
        .git_keys
        .iter()
        .map(|k| format!("`{k}`"))
        .collect();
    report.row(
        Mark::Info,
        "checks",
        format!(
            "git's configuration: {}, `.git/info/attributes`, `.git/info/exclude`, and the attributes and excludes files git reads",
            keys.join(", ")
        ),
    );
}

/// The policy a session started here would pin, and whether it loads.
fn policy_row(report: &mut Report, dir: &Path, loaded: &Loaded) {
    let root = git::discover(dir).unwrap_or_else(|| dir.to_path_buf());
    let policy = match selection::chosen(&root, loaded.policy.as_deref()) {
        Ok(policy) => policy,
        Err(e) => {
            report.row(
                Mark::Warn,
                "policy",
                format!("{e}; sessions fall back to the default policy"),
            );
            selection::Policy::default_policy()
        }
    };
    match policy.check(&loaded.dirs.cache) {
        Ok(_) => report.row(
            Mark::Ok,
            "policy",
            format!(
                "{}, ABI {ABI_VERSION}, {} KiB, loads",
                policy.label,
                policy.size() / 1024
            ),
        ),
        Err(e) if policy.is_default() => report.row(
            Mark::Fail,
            "policy",
            format!("the default policy does not load: {e:#}"),
        ),
        Err(e) => report.row(
            Mark::Warn,
            "policy",
            format!(
                "{} does not load ({e:#}); the default policy would decide instead",
                policy.label
            ),
        ),
    }
}

fn verify_row(report: &mut Report, root: &Path) {
    match verify::verify_facts(root) {
        Ok(facts) if facts.armed() => report.row(Mark::Ok, "verify.sh", "present and executable"),
        Ok(facts) if facts.exists => report.row(
            Mark::Fail,
            "verify.sh",
            "present but not executable: run `chmod +x verify.sh`",
        ),
        Ok(_) => report.row(
            Mark::Fail,
            "verify.sh",
            "missing at the repository root: run `prove-it init` to write one",
        ),
        Err(e) => report.row(Mark::Fail, "verify.sh", format!("{e:#}")),
    }
}

/// The state dir must be writable: without it every stop is a gate error
/// (the gate cannot keep a baseline, count attempts or record verdicts).
fn state_row(report: &mut Report, state: &Path) {
    let probe = state.join(format!(".doctor-probe-{}", std::process::id()));
    let written = crate::fs::private_dir(state).and_then(|()| {
        std::fs::write(&probe, b"probe")
            .map_err(anyhow::Error::from)
            .and_then(|()| std::fs::remove_file(&probe).map_err(anyhow::Error::from))
    });
    match written {
        Ok(()) => report.row(Mark::Info, "state", state.display().to_string()),
        Err(e) => report.row(
            Mark::Fail,
            "state",
            format!(
                "{} cannot be written ({e:#}): every stop would be a gate error. Fix its permissions, or set PROVE_IT_STATE_DIR to a folder you own.",
                state.display()
            ),
        ),
    }
}

/// Claude Code's rows: the plugin, and hooks wired by hand in a settings
/// file. True when Claude Code would run the gate in this repository.
fn claude_rows(report: &mut Report, root: Option<&Path>, loaded: &Loaded) -> bool {
    if let Some(version) = &loaded.plugin_version {
        match loaded.version_mismatch() {
            None => report.row(
                Mark::Ok,
                "launcher",
                format!("run through the plugin's launcher ({version}, same as the host)"),
            ),
            Some(message) => report.row(
                Mark::Warn,
                "launcher",
                message.trim_start_matches("prove-it: "),
            ),
        }
    }
    let Some(root) = root else {
        return false;
    };
    let layers = claude_code::settings(root, loaded);
    let mut runs = false;
    let plugin_on = match claude_code::plugin(root, loaded, &layers) {
        claude_code::Plugin::NotInstalled => {
            report.row(
                Mark::Info,
                "plugin",
                format!("not installed in Claude Code: {PLUGIN_INSTALL}"),
            );
            false
        }
        claude_code::Plugin::Disabled { versions, by } => {
            let why = match by {
                Some(file) => format!(
                    "`{}` sets enabledPlugins \"{}\" to false",
                    file.display(),
                    claude_code::PLUGIN
                ),
                None => "no settings file enables it".to_string(),
            };
            report.row(
                Mark::Info,
                "plugin",
                format!(
                    "installed ({}) but not enabled here: {why}. Run `claude plugin enable {}` here",
                    versions.join(", "),
                    claude_code::PLUGIN
                ),
            );
            false
        }
        claude_code::Plugin::Enabled { versions, by } => {
            if versions.iter().any(|v| v == settings::HOST_VERSION) {
                report.row(
                    Mark::Ok,
                    "plugin",
                    format!(
                        "installed ({}) and enabled here by `{}`",
                        versions.join(", "),
                        by.display()
                    ),
                );
            } else {
                report.row(
                    Mark::Warn,
                    "plugin",
                    format!(
                        "installed ({}) and enabled here, but the host is {}: reinstall one to match",
                        versions.join(", "),
                        settings::HOST_VERSION
                    ),
                );
            }
            true
        }
    };
    runs |= plugin_on;
    let wired = claude_code::hand_wired(&layers);
    if wired.is_empty() {
        report.row(
            Mark::Info,
            "hooks",
            "none wired by hand in Claude Code's settings (README.md, \"Without the plugin\", shows how)",
        );
    }
    for hooks in &wired {
        let file = hooks.file.display();
        let missing: Vec<&str> = claude_code::EVENTS
            .into_iter()
            .filter(|e| !hooks.events.contains(e))
            .collect();
        let Some(program) = &hooks.program else {
            report.row(
                Mark::Fail,
                "hooks",
                format!(
                    "wired by hand in `{file}`, but with no Stop hook: a turn would end unverified; add it as README.md shows"
                ),
            );
            continue;
        };
        if claude_code::find_program(program, root, loaded).is_none() {
            report.row(
                Mark::Fail,
                "hooks",
                format!(
                    "wired by hand in `{file}`, but its Stop hook runs `{program}`, which is not there (not on PATH): run ./install.sh, or name prove-it by its full path"
                ),
            );
            continue;
        }
        runs = true;
        if missing.is_empty() {
            report.row(Mark::Ok, "hooks", format!("wired by hand in `{file}`"));
        } else {
            report.row(
                Mark::Warn,
                "hooks",
                format!(
                    "wired by hand in `{file}`, but with no {} hook: add it as README.md shows",
                    missing.join(", ")
                ),
            );
        }
    }
    if plugin_on && wired.iter().any(|h| h.program.is_some()) {
        report.row(
            Mark::Warn,
            "hooks",
            "both the plugin and hooks wired by hand run the gate: each stop runs ./verify.sh twice; remove one",
        );
    }
    if let Some(file) = claude_code::all_hooks_off(&layers) {
        if runs {
            report.row(
                Mark::Fail,
                "hooks",
                format!(
                    "`{}` sets disableAllHooks: Claude Code runs no hook, prove-it's included",
                    file.display()
                ),
            );
        }
        runs = false;
    }
    runs
}

/// How to install the plugin, as README.md says.
const PLUGIN_INSTALL: &str = "`/plugin marketplace add Why-Next/prove-it`, then `/plugin install prove-it@whynext` (or run ./install.sh in a checkout)";
