//! The default gate policy: the rules of the contract as a plain function of
//! facts to a decision.
//!
//! It owns the meaning of the session state it saves (baseline, armed at
//! start, attempts). It must not assume any fact it did not ask the host for,
//! and every failure to learn a fact ends in a message the user sees.

use crate::abi::{
    Action, Decision, Event, EventKind, Fingerprint, Host, LedgerEntry, SessionRead, SessionWrite,
    Settings, TreeState, Verdict, VerifyFacts, VerifyOutcome, VerifyRun,
};
use serde::{Deserialize, Serialize};

/// What the ledger says was demanded of the agent.
pub const EVIDENCE_DEMANDED: &str = "verify.sh exit 0";

/// Lines of output quoted in a yield warning (the block reason quotes all).
const WARNING_TAIL_LINES: usize = 5;

/// What the policy remembers about one session in one repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Tree fingerprint when the session started; `None`: unknown (state lost
    /// or the session started before prove-it), so the tree counts as changed.
    pub baseline: Option<String>,
    /// Whether an executable `verify.sh` existed at session start.
    pub armed_at_start: Option<bool>,
    /// Content hash of `verify.sh` at session start.
    pub verify_hash_at_start: Option<String>,
    /// Blocks in the current turn (reset when a new turn starts).
    pub attempts: u32,
    /// The host's id of the turn `attempts` counts, when it gives one.
    #[serde(default)]
    pub turn: Option<String>,
    /// The person was told this session has no baseline: said once, not at
    /// every stop.
    #[serde(default)]
    pub no_baseline_said: bool,
}

/// Why a stop was caught.
enum Caught {
    /// `verify.sh` ran and did not pass.
    Verify(VerifyRun),
    /// The repo was armed at start and is not now.
    Disarmed { deleted: bool },
    /// `verify.sh` changed during the session (strict rules only).
    ChangedVerify,
}

/// What a policy built on these rules may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Refuse (not only report) a pass through a `verify.sh` that changed
    /// or appeared during the session.
    pub block_changed_verify: bool,
}

impl Rules {
    /// The default policy: the contract as written.
    pub const DEFAULT: Rules = Rules {
        block_changed_verify: false,
    };
    /// The `strict` policy: a changed `verify.sh` must be restored before
    /// the turn can end (for repos where the checks are never the task).
    pub const STRICT: Rules = Rules {
        block_changed_verify: true,
    };
}

/// The default policy's entry point.
pub fn decide(event: &Event, host: &mut impl Host) -> Decision {
    decide_with(event, host, Rules::DEFAULT)
}

/// The contract's rules, with the choices in `rules`.
///
/// `event.notes` are not repeated here: the host shows them itself, so that
/// no policy can hide them.
pub fn decide_with(event: &Event, host: &mut impl Host, rules: Rules) -> Decision {
    let result = match event.kind {
        EventKind::SessionStart => session_start(event, host),
        EventKind::TurnStart => turn_start(event, host),
        EventKind::Stop => stop(event, host, rules),
    };
    result.unwrap_or_else(|error| {
        let (what, so) = match event.kind {
            EventKind::SessionStart => (
                "could not record this session's baseline",
                "this session is NOT gated as it should be",
            ),
            EventKind::TurnStart => (
                "could not reset the attempt count",
                "the next stop may yield sooner",
            ),
            EventKind::Stop => ("could not check this turn", "this turn was NOT verified"),
        };
        Decision::allow_with(format!(
            "prove-it: gate error: the gate {what} ({error}), so {so}. Run `prove-it doctor` in the repository."
        ))
        .with_verdict(Verdict::GateError)
    })
}

fn session_start(event: &Event, host: &mut impl Host) -> Result<Decision, String> {
    let (saved, problem) = load(host.session_read()?);
    if let Some(problem) = problem {
        // Never re-take a baseline over lost state: work done before this
        // start would vanish. Unknown baseline = "changed" at the next stop.
        save(host, &Session::default())?;
        return Ok(Decision::allow_with(problem));
    }
    if saved.is_some() {
        // resume / compact / a second start of the same session: the
        // baseline stays where the session first began.
        return Ok(Decision::allow());
    }
    let fresh = matches!(
        event.source.as_deref(),
        None | Some("startup") | Some("clear")
    );
    if !fresh {
        // A resumed session we never saw start: its baseline is unknown,
        // which the stop treats as changed (and says so).
        return Ok(Decision::allow());
    }
    let facts = host.verify_facts()?;
    let tree = host.tree_state()?;
    save(
        host,
        &Session {
            baseline: Some(tree.fingerprint),
            armed_at_start: Some(facts.armed()),
            verify_hash_at_start: facts.hash,
            attempts: 0,
            turn: event.turn.clone(),
            no_baseline_said: false,
        },
    )?;
    Ok(Decision::allow())
}

fn turn_start(event: &Event, host: &mut impl Host) -> Result<Decision, String> {
    let (saved, problem) = load(host.session_read()?);
    if let Some(mut session) = saved
        && (session.attempts != 0 || session.turn != event.turn)
    {
        session.attempts = 0;
        session.turn = event.turn.clone();
        save(host, &session)?;
    }
    Ok(problem.map_or_else(Decision::allow, Decision::allow_with))
}

fn stop(event: &Event, host: &mut impl Host, rules: Rules) -> Result<Decision, String> {
    let settings = &event.settings;
    let mut notes = Vec::new();
    // State that cannot be read is reported and counts as an unknown
    // baseline: the gate still judges the tree rather than giving up.
    let read = host.session_read().unwrap_or_else(|e| SessionRead {
        value: None,
        problem: Some(e),
    });
    let (saved, problem) = load(read);
    let problem_known = problem.is_some();
    notes.extend(problem);

    let facts = host.verify_facts()?;
    let armed_at_start = saved.as_ref().and_then(|s| s.armed_at_start);
    if !facts.armed() && armed_at_start != Some(true) {
        // Not armed now and not at start: nothing to run, nothing disarmed.
        return Ok(notes_only(notes));
    }

    let tree = host.tree_state()?;
    let mut session = saved.unwrap_or_default();
    match &session.baseline {
        // Read-only session (or the work was undone): never touched.
        Some(baseline) if *baseline == tree.fingerprint => {
            return Ok(notes_only(notes)
                .with_verdict(Verdict::Unchanged)
                .about(&tree));
        }
        Some(_) => {}
        // Said once per session, and only when no better cause is known
        // (unreadable state says so itself).
        None if problem_known || session.no_baseline_said => {}
        None => {
            notes.push(
                "prove-it: this session has no baseline (prove-it was not active when it started, or its state was removed), so the tree counts as changed."
                    .to_string(),
            );
        }
    }
    if session.baseline.is_none() {
        session.no_baseline_said = true;
    }
    // Attempts count per turn, and only a new turn resets them: a host's
    // "continuing after a block" flag is not trusted to (Gemini CLI clears
    // it after a retry that used a tool, and the cap would never be met).
    if event.turn.is_some() && session.turn != event.turn {
        session.attempts = 0;
        session.turn = event.turn.clone();
    }

    let caught = if armed_at_start == Some(true) && !facts.armed() {
        Caught::Disarmed {
            deleted: !facts.exists,
        }
    } else {
        let key = Fingerprint {
            fingerprint: tree.fingerprint.clone(),
        };
        match host.passed_check(&key) {
            // Passed before: verified, with nothing new to say.
            Ok(true) => {
                return Ok(notes_only(notes)
                    .with_verdict(Verdict::Verified)
                    .about(&tree));
            }
            Ok(false) => {}
            // Not knowing costs one run of `verify.sh`, never a pass.
            Err(e) => notes.push(format!(
                "prove-it: could not tell whether this state passed before ({e}), so it is checked."
            )),
        }
        if settings.skip {
            if let Err(e) = save(host, &session) {
                notes.push(format!("prove-it: {e}."));
            }
            notes.push(
                "prove-it: skipped: PROVE_IT_SKIP=1 is set, so `./verify.sh` was not run: this turn ended WITHOUT verification."
                    .to_string(),
            );
            return Ok(notes_only(notes)
                .with_verdict(Verdict::Skipped)
                .about(&tree));
        }
        let changed_verify = changed_verify_note(&session, &facts);
        if rules.block_changed_verify && changed_verify.is_some() {
            Caught::ChangedVerify
        } else {
            let run = host.run_verify()?;
            if run.outcome == VerifyOutcome::Passed {
                if let Err(e) = host.passed_record(&key) {
                    notes.push(format!(
                        "prove-it: could not remember this passed state: {e}"
                    ));
                }
                let blocked_before = session.attempts;
                session.attempts = 0;
                if let Err(e) = save(host, &session) {
                    notes.push(format!("prove-it: {e}."));
                }
                notes.extend(changed_verify);
                notes.push(receipt(&run, blocked_before));
                return Ok(notes_only(notes)
                    .with_verdict(Verdict::Verified)
                    .after(blocked_before, Some(run.duration_ms))
                    .about(&tree));
            }
            Caught::Verify(run)
        }
    };

    if session.attempts == 0 && settings.ledger {
        let entry = ledger_entry(event, &caught);
        if let Err(e) = host.ledger_append(&entry) {
            notes.push(format!("prove-it: could not write the ledger: {e}"));
        }
    }
    let attempts_before = session.attempts;
    let decision = if settings.max_blocks == 0 {
        // Warn only: every stop is its own stretch (the host never continues).
        session.attempts = 1;
        Decision::allow_with(unverified_warning(
            &caught,
            settings,
            "PROVE_IT_MAX_BLOCKS=0, so the gate only warns",
        ))
        .with_verdict(Verdict::Yielded)
    } else if session.attempts < settings.max_blocks {
        session.attempts += 1;
        let verdict = match caught {
            Caught::Disarmed { .. } => Verdict::DisarmRefused,
            _ => Verdict::Blocked,
        };
        Decision::block(block_reason(
            &caught,
            &tree,
            session.attempts,
            settings.max_blocks,
        ))
        .with_verdict(verdict)
    } else {
        let why = format!(
            "the gate gave up after {} (PROVE_IT_MAX_BLOCKS={})",
            blocked_attempts(settings.max_blocks),
            settings.max_blocks
        );
        Decision::allow_with(unverified_warning(&caught, settings, &why))
            .with_verdict(Verdict::Yielded)
    };
    let ran = match &caught {
        Caught::Verify(run) => Some(run.duration_ms),
        _ => None,
    };
    let decision = decision.after(attempts_before, ran);
    let decision = match save(host, &session) {
        Ok(()) => decision,
        Err(e) => unsaved(decision, &caught, event, settings, attempts_before, &e),
    };
    Ok(decision.with_notes(&notes).about(&tree))
}

/// The decision on a caught stop whose session state could not be saved.
///
/// The failure is known, so it is never thrown away: the stop is still
/// blocked with its output. But the gate can no longer count its attempts
/// (the count it read will be read again), so it leans on the host: it
/// blocks a stop the host says cannot be a retry (`may_be_retry` false)
/// and yields, loudly, on any other. A host that cannot tell says "may be",
/// so an uncountable gate never blocks forever. The state problem is said
/// beside the verdict.
fn unsaved(
    decision: Decision,
    caught: &Caught,
    event: &Event,
    settings: &Settings,
    attempts_before: u32,
    error: &str,
) -> Decision {
    let problem = format!(
        "prove-it: {error}. The gate cannot count its attempts while its state cannot be saved: it blocks a failing stop once, then lets the retry end with a warning. Run `prove-it doctor` to see why."
    );
    let retry = event.may_be_retry || attempts_before >= settings.max_blocks;
    let ran = (decision.attempts.unwrap_or(0), decision.verify_ms);
    let decision = if decision.action == Action::Block && retry {
        Decision::allow_with(unverified_warning(
            caught,
            settings,
            "the gate could not save its state, so it cannot count attempts and does not block a retry",
        ))
        .with_verdict(Verdict::Yielded)
        .after(ran.0, ran.1)
    } else {
        decision
    };
    decision.with_notes(&[problem])
}

/// Reads saved session state; unreadable state becomes a problem to report
/// and an unknown baseline, never "nothing to do".
fn load(read: SessionRead) -> (Option<Session>, Option<String>) {
    let lost = |why: &str| {
        format!(
            "prove-it: this session's saved state was unreadable ({why}); it was set aside and the tree counts as changed."
        )
    };
    let problem = read.problem.map(|p| lost(&p));
    match read.value.map(serde_json::from_value::<Session>) {
        None => (None, problem),
        Some(Ok(session)) => (Some(session), problem),
        Some(Err(e)) => (Some(Session::default()), Some(lost(&e.to_string()))),
    }
}

fn save(host: &mut impl Host, session: &Session) -> Result<(), String> {
    let value = serde_json::to_value(session).map_err(|e| e.to_string())?;
    host.session_write(&SessionWrite { value })
        .map_err(|e| format!("cannot save session state: {e}"))
}

fn changed_verify_note(session: &Session, facts: &VerifyFacts) -> Option<String> {
    // Only when the start is known: an unknown start is already reported.
    session.armed_at_start?;
    if facts.hash == session.verify_hash_at_start {
        return None;
    }
    let how = if session.verify_hash_at_start.is_none() {
        "was created"
    } else {
        "changed"
    };
    Some(format!(
        "prove-it: `./verify.sh` passed, but `verify.sh` {how} during this session. Read `git diff -- verify.sh` to judge whether that was the work or a weakened check."
    ))
}

fn what_failed(caught: &Caught) -> String {
    match caught {
        Caught::Disarmed { deleted: true } => {
            "`verify.sh` was deleted during this session".to_string()
        }
        Caught::Disarmed { deleted: false } => {
            "`verify.sh` is no longer executable (it was when this session started)".to_string()
        }
        Caught::ChangedVerify => {
            "`verify.sh` changed during this session, and this repository's policy (strict) does not accept a pass through a changed check".to_string()
        }
        Caught::Verify(run) => match run.outcome {
            VerifyOutcome::TimedOut => {
                format!("`./verify.sh` timed out after {} s", run.timeout_secs)
            }
            VerifyOutcome::CouldNotStart => format!(
                "`./verify.sh` could not start ({})",
                run.detail.as_deref().unwrap_or("unknown error")
            ),
            VerifyOutcome::Failed | VerifyOutcome::Passed => {
                let took = seconds(run.duration_ms);
                match (run.exit_code, &run.detail) {
                    (Some(code), _) => format!("`./verify.sh` failed (exit {code}, after {took})"),
                    (None, Some(detail)) => {
                        format!("`./verify.sh` failed ({detail}, after {took})")
                    }
                    (None, None) => format!("`./verify.sh` failed (after {took})"),
                }
            }
        },
    }
}

/// The reason the gate gives the agent when `run` failed, exactly as a
/// block says it (`prove-it init` shows it in its demo).
pub fn failed_run_reason(run: &VerifyRun, attempt: u32, max: u32) -> String {
    let tree = TreeState {
        head: None,
        fingerprint: String::new(),
    };
    block_reason(&Caught::Verify(run.clone()), &tree, attempt, max)
}

/// The one line a passing stop leaves for the person.
fn receipt(run: &VerifyRun, blocked_before: u32) -> String {
    let mut text = format!(
        "prove-it: verified: ./verify.sh exit 0 in {}",
        seconds(run.duration_ms)
    );
    if blocked_before > 0 {
        text.push_str(&format!(", after {}", blocked_attempts(blocked_before)));
    }
    text
}

/// `1 blocked attempt`, `3 blocked attempts`.
fn blocked_attempts(n: u32) -> String {
    format!("{n} blocked attempt{}", if n == 1 { "" } else { "s" })
}

/// `1234` ms as `1.2 s`.
fn seconds(ms: u64) -> String {
    format!("{}.{} s", ms / 1000, (ms % 1000) / 100)
}

fn block_reason(caught: &Caught, tree: &TreeState, attempt: u32, max: u32) -> String {
    let mut reason = format!(
        "prove-it: this turn cannot end yet: {} (attempt {attempt} of {max}).\n",
        what_failed(caught)
    );
    if attempt >= max {
        reason.push_str(
            "This is the last block: if the next stop fails too, the turn ends UNVERIFIED and the user is warned.\n",
        );
    }
    match caught {
        Caught::Verify(run) => {
            if !run.tail.is_empty() {
                match run.tail.len() {
                    1 => reason.push_str("The last line of its output:\n"),
                    n => reason.push_str(&format!("Last {n} lines of its output:\n")),
                }
                for line in &run.tail {
                    reason.push_str("    ");
                    reason.push_str(line);
                    reason.push('\n');
                }
            }
            reason.push_str(
                "Fix the cause, then end your turn again: the gate re-runs `./verify.sh`.\n",
            );
        }
        Caught::ChangedVerify => {
            reason.push_str(
                "Restore it (`git diff -- verify.sh` shows the change; `git checkout HEAD -- verify.sh` undoes it), or ask the user to change it themselves, then end your turn again.\n",
            );
        }
        Caught::Disarmed { deleted } => {
            let fix = match (deleted, &tree.head) {
                (true, Some(_)) => "restore it (`git checkout HEAD -- verify.sh`)",
                (true, None) => "restore it",
                (false, _) => "restore it with `chmod +x verify.sh`",
            };
            reason.push_str(&format!(
                "The repository was armed when this session started; {fix}, make it pass, then end your turn again.\n"
            ));
        }
    }
    reason.push_str(
        "Weakening, skipping or deleting the checks in `verify.sh` to get past the gate is a violation, not a fix.",
    );
    reason
}

fn unverified_warning(caught: &Caught, settings: &Settings, why: &str) -> String {
    let mut text = format!(
        "prove-it: WARNING: this turn ended without passing verification: {}; {why}. Nothing was proven.",
        what_failed(caught)
    );
    if let Caught::Verify(run) = caught {
        let start = run.tail.len().saturating_sub(WARNING_TAIL_LINES);
        for line in &run.tail[start..] {
            text.push_str("\n    ");
            text.push_str(line);
        }
    }
    if settings.max_blocks > 0 {
        text.push_str("\nThe next turn is gated again.");
    }
    text
}

fn ledger_entry(event: &Event, caught: &Caught) -> LedgerEntry {
    let (exit_code, actual) = match caught {
        Caught::Disarmed { .. } | Caught::ChangedVerify => {
            (None, vec![what_failed(caught).replace('`', "")])
        }
        Caught::Verify(run) => {
            let mut actual = failing_lines(&run.tail);
            if run.outcome == VerifyOutcome::TimedOut {
                actual.push(format!("timed out after {} s", run.timeout_secs));
            }
            (run.exit_code, actual)
        }
    };
    LedgerEntry {
        claim: event.claim.clone().unwrap_or_default(),
        evidence_demanded: EVIDENCE_DEMANDED.to_string(),
        exit_code,
        actual,
    }
}

/// The lines of the output that say what failed; failing that, its last lines.
pub fn failing_lines(tail: &[String]) -> Vec<String> {
    const MARKERS: [&str; 5] = ["fail", "error", "panic", "assert", "not ok"];
    let marked: Vec<String> = tail
        .iter()
        .filter(|line| {
            let lower = line.to_lowercase();
            MARKERS.iter().any(|m| lower.contains(m))
        })
        .cloned()
        .collect();
    if !marked.is_empty() {
        return marked;
    }
    let lines: Vec<&String> = tail.iter().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(3);
    lines[start..].iter().map(|l| (*l).clone()).collect()
}

fn notes_only(notes: Vec<String>) -> Decision {
    Decision::allow().with_notes(&notes)
}

#[cfg(test)]
mod tests;
