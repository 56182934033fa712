//! `prove-it hook [--agent HOST] <event>`: read the agent host's JSON, find
//! the repositories the event covers, run the policy for each with the
//! host's capabilities, print one answer in that host's format.
//!
//! Whatever happens (bad input, git failure, a policy trap, a panic) the
//! process prints an answer and exits 0: every agent host lets a stop
//! through, silently, on some other code. The one exception is a host that
//! shows a warning only for exit 2 without blocking on it (Copilot CLI:
//! [`agent::Adapter::exit_warning`]).

use crate::agent::{self, Agent, HookEvent, Input};
use crate::capability::{Capabilities, git, ledger, state};
use crate::commands::trailer;
use crate::runtime::RunOptions;
use crate::selection::{self, Policy};
use crate::settings::{self, Dirs, Loaded};
use crate::verdicts;
use anyhow::{Context, Result};
use prove_it_gate::abi::{Action, Decision, Event, EventKind, Verdict};
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Largest hook input read; the hosts' are a few KiB.
const STDIN_BYTES: u64 = 16 << 20;

pub fn execute(agent: Agent, event: HookEvent) -> Result<ExitCode> {
    let loaded = settings::from_env();
    let agent = agent.running(loaded.under_copilot);
    let adapter = agent.adapter();
    let error = |text: String| {
        Decision::allow_with(agent::error_text(event.kind(), &text))
            .with_verdict(Verdict::GateError)
    };
    let decision = match catch_unwind(AssertUnwindSafe(|| handle(agent, event, loaded))) {
        Ok(Ok(decision)) => decision,
        Ok(Err(e)) => Some(error(format!("{e:#}"))),
        Err(panic) => Some(error(format!("internal error: {}", panic_text(&*panic)))),
    };
    let Some(decision) = decision else {
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(warning) = adapter.exit_warning(event, &decision) {
        errln!("{}", agent::cap(&warning));
        return Ok(ExitCode::from(2));
    }
    if let Some(answer) = adapter.answer(event, &decision) {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{answer}").context("cannot write the hook answer")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `Ok(None)`: nothing to say (no repository is covered).
fn handle(agent: Agent, event: HookEvent, mut loaded: Loaded) -> Result<Option<Decision>> {
    agent::check_event(agent, event)?;
    let (adapter, kind) = (agent.adapter(), event.kind());
    let mut stdin = Vec::new();
    std::io::stdin()
        .take(STDIN_BYTES)
        .read_to_end(&mut stdin)
        .context("cannot read the hook input")?;
    let input = adapter.parse(event, &stdin)?;
    let cwd = match input.cwd.clone().filter(|p| !p.as_os_str().is_empty()) {
        Some(cwd) => cwd,
        None => std::env::current_dir()
            .context("the hook input has no `cwd` and the current directory is unreadable")?,
    };
    if matches!(kind, EventKind::SessionStart | EventKind::Stop) {
        loaded.notes.extend(loaded.version_mismatch());
    }
    // The launcher has just downloaded this binary: said once, at the
    // session start it did it for.
    let installed = loaded
        .install_note
        .take()
        .filter(|_| kind == EventKind::SessionStart);
    let (roots, unsearched) = covered(kind, git::discover(&cwd), &loaded, &input.session_id);
    if roots.is_empty() {
        // Nothing to judge, unless the state dir could not be searched for
        // this session's repositories: that is said, not passed over.
        let said: Vec<String> = installed.into_iter().chain(unsearched).collect();
        return Ok((!said.is_empty()).then(|| Decision::allow_with(said.join("\n"))));
    }
    if kind == EventKind::TurnStart
        && adapter.block_restarts_turn()
        && is_block_reason(&roots, &input, &loaded)
    {
        // The agent sent back by the gate's own block: the same turn.
        return Ok(None);
    }
    if let Some(key) = &input.once
        && !first_to_judge(&roots, &input, &loaded, key)
    {
        // The host ran the gate's other hook for this same stop.
        return Ok(None);
    }
    loaded.notes.extend(installed);
    loaded.notes.extend(unsearched);
    let mut parts = Vec::with_capacity(roots.len());
    for root in &roots {
        let root = root.clone();
        // One repository's failure (even a panic) must not cost the others
        // their verdict: each ends in its own decision.
        let decision = match catch_unwind(AssertUnwindSafe(|| gate(kind, &input, &root, &loaded))) {
            Ok(Ok(decision)) => decision,
            Ok(Err(error)) => Decision::allow_with(agent::error_text(kind, &format!("{error:#}")))
                .with_verdict(Verdict::GateError),
            Err(panic) => Decision::allow_with(agent::error_text(
                kind,
                &format!("internal error: {}", panic_text(&*panic)),
            ))
            .with_verdict(Verdict::GateError),
        };
        let decision = if kind == EventKind::Stop {
            record(agent, &root, &input.session_id, &loaded, decision)
        } else {
            decision
        };
        parts.push((root, decision));
    }
    // The host shows its own notes: no policy can hide them.
    let decision = combine(parts).with_notes(&loaded.notes);
    if kind == EventKind::Stop && adapter.block_restarts_turn() && decision.action == Action::Block
    {
        return Ok(Some(note_block_reason(
            agent, event, &roots, &input, &loaded, decision,
        )));
    }
    Ok(Some(decision))
}

/// Whether this hook is the first to judge the stop named `key` (see
/// [`agent::Input::once`]): it claims the stop with a file of its own,
/// made only if it is not there. A claim that cannot be made is no reason
/// to leave a stop unjudged: this hook judges it then.
fn first_to_judge(roots: &[PathBuf], input: &Input, loaded: &Loaded, key: &str) -> bool {
    let Some(root) = roots.first() else {
        return true;
    };
    let dirs = loaded.dirs.outside(root, &mut Vec::new());
    let hash = reason_key(key);
    let claim = state::session_file(
        &dirs.state,
        root,
        &input.session_id,
        &format!("stop-{}", &hash[..16]),
    );
    let made = claim
        .parent()
        .map_or(Ok(()), crate::fs::private_dir)
        .map_err(|e| std::io::Error::other(format!("{e:#}")))
        .and_then(|()| {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&claim)
        });
    match made {
        Ok(_) => {
            // Only the last stop's claim is kept.
            let last = state::session_file(&dirs.state, root, &input.session_id, "stop-last");
            if let Ok(previous) = std::fs::read_to_string(&last)
                && previous != claim.display().to_string()
            {
                let _ = std::fs::remove_file(previous);
            }
            let _ = crate::fs::write_atomic(&last, claim.display().to_string().as_bytes());
            true
        }
        Err(e) => e.kind() != std::io::ErrorKind::AlreadyExists,
    }
}

/// The key under which a block's reason is remembered: only its hash.
fn reason_key(text: &str) -> String {
    blake3::hash(text.trim().as_bytes()).to_hex().to_string()
}

fn block_file(root: &Path, input: &Input, loaded: &Loaded) -> PathBuf {
    let dirs = loaded.dirs.outside(root, &mut Vec::new());
    state::session_file(&dirs.state, root, &input.session_id, "block")
}

/// Whether a turn start's prompt is the reason of this session's last
/// block, as the host was given it.
fn is_block_reason(roots: &[PathBuf], input: &Input, loaded: &Loaded) -> bool {
    let Some(prompt) = &input.prompt else {
        return false;
    };
    let key = reason_key(prompt);
    roots.iter().any(|root| {
        std::fs::read_to_string(block_file(root, input, loaded)).is_ok_and(|saved| saved == key)
    })
}

/// Remembers the reason of a block the host will send back as a turn
/// start (see [`agent::Adapter::block_restarts_turn`]). When it cannot be
/// remembered, the retry would count as a new turn and the cap could never
/// be met: the stop is then let through, loudly, with the reason shown.
fn note_block_reason(
    agent: Agent,
    event: HookEvent,
    roots: &[PathBuf],
    input: &Input,
    loaded: &Loaded,
    decision: Decision,
) -> Decision {
    let answered = agent.adapter().answer(event, &decision);
    let reason = answered
        .as_ref()
        // Hosts' own JSON says `reason`; the extensions' says `block`.
        .and_then(|a| a["reason"].as_str().or_else(|| a["block"].as_str()))
        .unwrap_or_default();
    let key = reason_key(reason);
    let failed = roots.iter().find_map(|root| {
        let file = block_file(root, input, loaded);
        file.parent()
            .map_or(Ok(()), crate::fs::private_dir)
            .and_then(|()| crate::fs::write_atomic(&file, key.as_bytes()))
            .err()
            .map(|e| format!("cannot write `{}`: {e:#}", file.display()))
    });
    let Some(why) = failed else {
        return decision;
    };
    let yielded = Decision::allow_with(format!(
        "prove-it: this turn ended UNVERIFIED: the gate could not remember its block ({why}), so it could not tell the retry from a new turn and does not block. Run `prove-it doctor` to see why. What it would have sent back:\n{}",
        decision.reason.unwrap_or_default()
    ))
    .with_verdict(Verdict::Yielded);
    // The records said "blocked"; the turn ends instead.
    roots.iter().fold(yielded, |said, root| {
        record(agent, root, &input.session_id, loaded, said)
    })
}

/// Keeps a stop's verdict for `prove-it status`. A verdict that cannot be
/// kept is said: a script that asks later would otherwise read an older one.
/// A stop with no verdict (a repository that is not armed, or a custom
/// policy's allow that states none) leaves no record and costs no write.
fn record(
    agent: Agent,
    root: &Path,
    session_id: &str,
    loaded: &Loaded,
    mut decision: Decision,
) -> Decision {
    // The verdict field is optional for a policy: a block is a block
    // whatever it says.
    if decision.verdict.is_none() && decision.action == Action::Block {
        decision.verdict = Some(Verdict::Blocked);
    }
    if decision.verdict.is_none() {
        return decision;
    }
    let dirs = loaded.dirs.outside(root, &mut Vec::new());
    let mut notes = Vec::new();
    let content_tree = trailer::content_for(&dirs.state, root, session_id, &decision)
        .unwrap_or_else(|e| {
            notes.push(format!(
                "prove-it: {e:#}; its commit will say `unverified`."
            ));
            None
        });
    if let Err(e) = verdicts::save(
        &dirs.state,
        root,
        session_id,
        &decision,
        content_tree,
        agent.name(),
    ) {
        notes.push(format!(
            "prove-it: {e:#}, so `prove-it status` cannot report this stop."
        ));
    }
    if loaded.settings.ledger
        && let Err(e) = ledger::append_verdict(&dirs.ledger, root, &decision)
    {
        notes.push(format!("prove-it: could not write the ledger: {e:#}"));
    }
    decision.with_notes(&notes)
}

/// The repositories an event covers: the one around `cwd`, and for a stop
/// or a prompt every other repository in which this session has state.
///
/// The stop's `cwd` follows the agent's last `cd`: into a submodule, a
/// nested repository, or out of the repository altogether. Gating only
/// the repository there would let the work in the one the session started
/// in end the turn unchecked. A session start covers only its own
/// repository: that is where the baseline is taken.
///
/// When the state dir cannot be searched, the second value is the warning
/// for the user: the repositories it would have named are then gated only
/// from their own `cwd`.
fn covered(
    kind: EventKind,
    here: Option<PathBuf>,
    loaded: &Loaded,
    session_id: &str,
) -> (Vec<PathBuf>, Option<String>) {
    let mut roots: Vec<PathBuf> = here.into_iter().collect();
    if kind == EventKind::SessionStart {
        return (roots, None);
    }
    match state::session_roots(&loaded.dirs.state, session_id) {
        Ok(found) => {
            for root in found {
                if !roots.contains(&root) {
                    roots.push(root);
                }
            }
            (roots, None)
        }
        Err(e) => (
            roots,
            Some(format!(
                "prove-it: {e:#}, so the repositories this session worked in are not known: only the one at the current directory was checked, and this turn may NOT be verified. Run `prove-it doctor` to see why."
            )),
        ),
    }
}

/// The policy's decision for one repository.
fn gate(kind: EventKind, input: &Input, root: &Path, loaded: &Loaded) -> Result<Decision> {
    let mut notes = Vec::new();
    let dirs = loaded.dirs.outside(root, &mut notes);
    let policy = selection::in_force(
        root,
        &input.session_id,
        &dirs.state,
        loaded.policy.as_deref(),
        &mut notes,
    );
    let turn_file = state::session_file(&dirs.state, root, &input.session_id, "turn");
    let turn = match (&input.turn, kind) {
        (Some(turn), _) => Some(turn.clone()),
        (None, EventKind::TurnStart) => {
            // A host without turn ids: the gate names the turn. Only a turn
            // start writes this file, so a stop still running from the last
            // turn cannot undo the new turn's reset (it saves its own state
            // after this start saved the reset).
            let id = new_turn_id();
            let written = turn_file
                .parent()
                .map_or(Ok(()), crate::fs::private_dir)
                .and_then(|()| crate::fs::write_atomic(&turn_file, id.as_bytes()));
            if let Err(e) = written {
                notes.push(format!(
                    "prove-it: could not mark the new turn ({e:#}): a stop still running from the last turn may leave its count in place."
                ));
            }
            Some(id)
        }
        (None, _) => std::fs::read_to_string(&turn_file).ok(),
    };
    let event = Event {
        kind,
        source: input.source.clone(),
        turn,
        may_be_retry: input.may_be_retry,
        claim: input.claim.clone(),
        repo: root.display().to_string(),
        settings: loaded.settings.clone(),
        notes: loaded.notes.iter().chain(&notes).cloned().collect(),
    };
    let run = Run {
        root,
        session_id: &input.session_id,
        loaded,
        dirs: &dirs,
        walk: Default::default(),
    };
    if kind == EventKind::SessionStart
        && matches!(
            input.source.as_deref(),
            None | Some("startup") | Some("clear")
        )
    {
        match run.capabilities(None).keep_base() {
            Ok(walk) => run.walk.set(walk),
            Err(e) => notes.push(format!(
                "prove-it: could not keep this session's starting point path by path ({e:#}), so `verify.sh` gets no PROVE_IT_CHANGED_FILES and checks everything."
            )),
        }
    }
    decide(&policy, &event, &run).map(|d| d.with_notes(&notes))
}

/// A new turn's name: unique for this session in practice (the time to the
/// nanosecond and this process).
fn new_turn_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}.{:09}-{}",
        now.as_secs(),
        now.subsec_nanos(),
        std::process::id()
    )
}

/// What a policy run needs besides its event: the session, the work tree,
/// the settings and the directories in force for it.
pub struct Run<'a> {
    pub root: &'a Path,
    pub session_id: &'a str,
    pub loaded: &'a Loaded,
    /// `loaded.dirs`, or what replaces them for this run.
    pub dirs: &'a Dirs,
    /// A look at the tree made a moment ago, for the first policy's first
    /// `tree_state` (see [`Capabilities::with_walk`]).
    pub walk: std::cell::Cell<Option<crate::capability::git::Walk>>,
}

impl Run<'_> {
    /// The capabilities of a policy whose state lives in `namespace`.
    fn capabilities(&self, namespace: Option<&str>) -> Capabilities {
        Capabilities::new(
            self.root.to_path_buf(),
            self.session_id,
            self.loaded.settings.clone(),
            self.dirs,
            namespace,
        )
        .with_walk(self.walk.take())
    }

    fn options(&self) -> RunOptions<'_> {
        RunOptions {
            cache_dir: &self.dirs.cache,
            timings: self.loaded.timings,
        }
    }
}

/// One decision from each repository's: blocked when any is blocked, and
/// with more than one repository, each part says which one it is about.
fn combine(parts: Vec<(PathBuf, Decision)>) -> Decision {
    if parts.len() == 1 {
        return parts
            .into_iter()
            .next()
            .map(|(_, decision)| decision)
            .expect("one part");
    }
    let mut reasons = Vec::new();
    let mut messages = Vec::new();
    let worst = parts
        .iter()
        .map(|(_, d)| d.verdict)
        .max_by_key(|v| weight(*v))
        .flatten();
    for (root, decision) in parts {
        let label = format!("prove-it: in `{}`:", root.display());
        if decision.action == Action::Block {
            let reason = decision.reason.unwrap_or_default();
            reasons.push(format!("{label}\n{reason}"));
        }
        if let Some(message) = decision.message {
            messages.push(format!("{label}\n{message}"));
        }
    }
    Decision {
        action: if reasons.is_empty() {
            Action::Allow
        } else {
            Action::Block
        },
        reason: (!reasons.is_empty()).then(|| reasons.join("\n\n")),
        message: (!messages.is_empty()).then(|| messages.join("\n")),
        verdict: worst,
        // Each repository's tree, attempts and time are in its own record.
        ..Decision::allow()
    }
}

/// How much a verdict weighs when several repositories answer one stop:
/// the answer shows the heaviest.
fn weight(verdict: Option<Verdict>) -> u8 {
    match verdict {
        None | Some(Verdict::Unchanged) => 0,
        Some(Verdict::Verified) => 1,
        Some(
            Verdict::Weakened | Verdict::Suspect | Verdict::BehaviourChanged | Verdict::NotJudged,
        ) => 2,
        Some(Verdict::Skipped) => 2,
        Some(Verdict::Yielded) => 3,
        Some(Verdict::Blocked) => 4,
        Some(Verdict::DisarmRefused) => 5,
        Some(Verdict::GateError) => 6,
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs `policy`; when a custom policy fails, the default decides instead
/// and the user is told, so a broken module never leaves the repository
/// less protected than the default does.
pub fn decide(policy: &Policy, event: &Event, run: &Run) -> Result<Decision> {
    let (caps, options) = (|ns| run.capabilities(ns), &run.options());
    let default = Policy::default_policy();
    if policy.is_default() {
        return default.run(event, caps(None), options);
    }
    let mut notes = Vec::new();
    if event.kind == EventKind::SessionStart {
        // The default keeps its own baseline, so that a fallback is exact.
        if let Err(e) = default.run(event, caps(None), options) {
            notes.push(format!(
                "prove-it: the default policy could not record its baseline: {e:#}"
            ));
        }
    }
    match policy.run(event, caps(policy.namespace()), options) {
        Ok(decision) => Ok(decision.with_notes(&notes)),
        Err(e) => {
            notes.push(format!(
                "prove-it: the policy {} failed: {e:#}. The default policy decided instead; check the module with `prove-it policy check`.",
                policy.label
            ));
            let fallback = default.run(event, caps(None), options)?;
            Ok(fallback.with_notes(&notes))
        }
    }
}
