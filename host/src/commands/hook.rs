//! `prove-it hook <event>`: read Claude Code's JSON, find the repository,
//! run the policy with the host's capabilities, print the answer.
//!
//! Whatever happens (bad input, git failure, a policy trap, a panic) the
//! process prints an answer and exits 0: Claude Code would let a stop through
//! silently on any other code.

use crate::agent::claude_code;
use crate::capability::{Capabilities, git};
use crate::selection::{self, Policy};
use crate::settings;
use anyhow::{Context, Result};
use prove_it_gate::abi::{Decision, Event, EventKind};
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Largest hook input read; Claude Code's are a few KiB.
const STDIN_BYTES: u64 = 16 << 20;

pub fn execute(kind: EventKind) -> Result<()> {
    let answer = match catch_unwind(AssertUnwindSafe(|| handle(kind))) {
        Ok(Ok(None)) => None,
        Ok(Ok(Some(decision))) => claude_code::answer(kind, &decision),
        Ok(Err(error)) => Some(claude_code::error_answer(kind, &format!("{error:#}"))),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Some(claude_code::error_answer(
                kind,
                &format!("internal error: {what}"),
            ))
        }
    };
    if let Some(answer) = answer {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{answer}").context("cannot write the hook answer")?;
    }
    Ok(())
}

/// `Ok(None)`: nothing to say (not a repository).
fn handle(kind: EventKind) -> Result<Option<Decision>> {
    let mut stdin = Vec::new();
    std::io::stdin()
        .take(STDIN_BYTES)
        .read_to_end(&mut stdin)
        .context("cannot read the hook input")?;
    let input = claude_code::parse(kind, &stdin)?;
    let cwd = match input.cwd.clone().filter(|p| !p.as_os_str().is_empty()) {
        Some(cwd) => cwd,
        None => std::env::current_dir()
            .context("the hook input has no `cwd` and the current directory is unreadable")?,
    };
    let Some(root) = git::discover(&cwd) else {
        return Ok(None);
    };
    let mut loaded = settings::from_env();
    if matches!(kind, EventKind::SessionStart | EventKind::Stop) {
        loaded.notes.extend(settings::version_mismatch());
    }
    let policy = selection::in_force(&root, &input.session_id, &mut loaded.notes);
    let event = Event {
        kind,
        source: input.source,
        stop_hook_active: input.stop_hook_active,
        claim: input.claim,
        repo: root.display().to_string(),
        settings: loaded.settings.clone(),
        notes: loaded.notes,
    };
    let state_dir = settings::state_dir();
    let caps = |namespace: Option<&str>| {
        Capabilities::new(
            root.clone(),
            &input.session_id,
            loaded.settings.clone(),
            &state_dir,
            namespace,
        )
    };
    // The host shows its own notes: no policy can hide them.
    decide(&policy, &event, caps).map(|d| Some(d.with_notes(&event.notes)))
}

/// Runs `policy`; when a custom policy fails, the default decides instead
/// and the user is told, so a broken module never leaves the repository
/// less protected than the default does.
pub fn decide<'a>(
    policy: &Policy,
    event: &Event,
    caps: impl Fn(Option<&str>) -> Capabilities + 'a,
) -> Result<Decision> {
    let default = Policy::default_policy();
    if policy.is_default() {
        return default.run(event, caps(None));
    }
    let mut notes = Vec::new();
    if event.kind == EventKind::SessionStart {
        // The default keeps its own baseline, so that a fallback is exact.
        if let Err(e) = default.run(event, caps(None)) {
            notes.push(format!(
                "prove-it: the default policy could not record its baseline: {e:#}"
            ));
        }
    }
    match policy.run(event, caps(policy.namespace())) {
        Ok(decision) => Ok(decision.with_notes(&notes)),
        Err(e) => {
            notes.push(format!(
                "prove-it: the policy {} failed: {e:#}. The default policy decided instead; check the module with `prove-it policy check`.",
                policy.label
            ));
            let fallback = default.run(event, caps(None))?;
            Ok(fallback.with_notes(&notes))
        }
    }
}
