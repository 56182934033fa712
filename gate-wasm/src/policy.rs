//! The default gate policy: the rules of the contract as a plain function of
//! facts to a decision.
//!
//! It owns the meaning of the session state it saves (baseline, armed at
//! start, attempts). It must not assume any fact it did not ask the host for,
//! and every failure to learn a fact ends in a message the user sees.

use crate::abi::{
    Action, CheckChanges, Decision, Event, EventKind, Fingerprint, Host, LedgerEntry,
    ReplayRequest, SessionRead, SessionWrite, Settings, TreeState, Verdict, VerifyFacts,
    VerifyOutcome, VerifyRun,
};
use crate::lacking::lacking_in;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What the ledger says was demanded of the agent.
pub const EVIDENCE_DEMANDED: &str = "verify.sh exit 0";

/// Lines naming failing tests that a run's tail keeps at most (the host's
/// `verify::tail`).
const NAMED_FAILURES: usize = 8;

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
    /// What the session's changes to its checks said about the last tree
    /// that passed, so that a later stop on the same tree neither replays
    /// them again nor calls a weakened pass verified.
    #[serde(default)]
    pub checked: Option<Checked>,
    /// The most tests a failing run of `verify.sh` reported in this
    /// session, by the runner's own count: a later pass that ran fewer
    /// is said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_seen: Option<u64>,
    /// What the session-start checks did on the session-start code, once
    /// known (the code and checks there never change: found out once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_checks: Option<StartChecks>,
}

/// The session-start checks on the session-start code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartChecks {
    pub passed: bool,
    /// The tests that failed there, by the runner's own lines.
    #[serde(default)]
    pub failing: Vec<String>,
    /// What the run there said the machine lacks ([`crate::lacking`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacking: Vec<String>,
}

/// The checks judged for one passing tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checked {
    /// The tree fingerprint.
    pub tree: String,
    /// The checks as they were at the session's start failed on it.
    pub weakened: bool,
    /// The code the session changed may special-case the tests.
    #[serde(default)]
    pub suspect: bool,
    /// The session changed what tests expect: they passed at its start.
    #[serde(default)]
    pub behaviour: bool,
    /// For a weakened or suspect tree: what to say again at a later stop;
    /// for one not judged, why.
    #[serde(default)]
    pub summary: Option<String>,
    /// Whether the session's changes to its checks made it pass could not
    /// be judged (the replay could not run, or ran without an answer).
    #[serde(default)]
    pub not_judged: bool,
}

/// What the session's changes to its checks say about a pass.
enum Judged {
    /// Nothing that could have made it pass; maybe a note for the person.
    Plain(Option<String>),
    /// The session-start checks fail against the code as it is, or the
    /// code may special-case the tests.
    Weakened(Box<Weakening>),
    /// The session changed its checks, and whether that is what made it
    /// pass could not be found out: why, and what to read or run. A
    /// verdict the gate could not reach is never a pass.
    Unanswered(String),
}

/// Which alarm a pass raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alarm {
    /// The checks as they were at the session's start fail.
    Weakened,
    /// Lines added to the code only make sense to fool a test.
    Suspect,
    /// The checks as they were at the session's start fail against the
    /// code as it is, but passed on the code as it was: the session
    /// changed behaviour they pinned, and the checks with it.
    Behaviour,
}

/// A pass bought by changing the checks, or by code that fools them: what
/// the person and the agent are told.
struct Weakening {
    alarm: Alarm,
    /// The checks changed and their evidence, one line each.
    files: Vec<String>,
    /// What the replay of the session-start checks did.
    replay: String,
    /// Its last lines of output.
    tail: Vec<String>,
    /// `git diff BASE -- PATHS`.
    diff: String,
    changes: Option<CheckChanges>,
    /// What else the judgement found (checks changed that pass too...).
    note: Option<String>,
    /// How many tests the replay names as failing (0: it names none).
    tests: usize,
}

/// Why a stop was caught.
enum Caught {
    /// `verify.sh` ran and did not pass.
    Verify(VerifyRun),
    /// The repo was armed at start and is not now.
    Disarmed { deleted: bool },
    /// `verify.sh` changed during the session (strict rules only).
    ChangedVerify,
    /// `verify.sh` passed only with checks the session changed (strict
    /// rules only).
    Weakened(Box<Weakening>),
}

/// What a policy built on these rules may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Refuse (not only report) a pass through a `verify.sh` that changed
    /// or appeared during the session.
    pub block_changed_verify: bool,
    /// Refuse (not only report) a pass that the session's changes to its
    /// checks made possible.
    pub block_weakened: bool,
}

impl Rules {
    /// The default policy: the contract as written.
    pub const DEFAULT: Rules = Rules {
        block_changed_verify: false,
        block_weakened: false,
    };
    /// The `strict` policy: a changed `verify.sh` must be restored, and a
    /// pass bought by weakening the checks is refused, before the turn can
    /// end (for repos where the checks are never the task).
    pub const STRICT: Rules = Rules {
        block_changed_verify: true,
        block_weakened: true,
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
            checked: None,
            tests_seen: None,
            start_checks: None,
        },
    )?;
    Ok(Decision::allow())
}

fn turn_start(event: &Event, host: &mut impl Host) -> Result<Decision, String> {
    let (saved, problem) = load(host.session_read()?);
    // A turn start that names the turn being counted is not a new turn:
    // Claude Code fires one for a prompt the person queues while a stop
    // is being decided, with the running turn's id; that prompt's own turn
    // comes later, under a new id, and its first stop resets the count.
    let same_turn = event.turn.is_some() && saved.as_ref().is_some_and(|s| s.turn == event.turn);
    if let Some(mut session) = saved
        && !same_turn
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
        let passed_before = match host.passed_check(&key) {
            Ok(passed) => passed,
            // Not knowing costs one run of `verify.sh`, never a pass.
            Err(e) => {
                notes.push(format!(
                    "prove-it: could not tell whether this state passed before ({e}), so it is checked."
                ));
                false
            }
        };
        if passed_before {
            // Passed before: verified, with nothing new to say, unless the
            // session's changes to its checks are what made it pass.
            let judged = match session
                .checked
                .as_ref()
                .filter(|c| c.tree == tree.fingerprint)
            {
                Some(checked) if checked.not_judged => {
                    Judged::Unanswered(checked.summary.clone().unwrap_or_else(|| {
                        "prove-it: the session's changes to its checks could not be judged on this same tree earlier in this session.".to_string()
                    }))
                }
                Some(checked) if !checked.weakened && !checked.suspect && !checked.behaviour => {
                    Judged::Plain(None)
                }
                Some(checked) => Judged::Weakened(Box::new(Weakening::said_before(checked))),
                None => judge_checks(host, event, &mut session, &tree, &facts, &mut notes),
            };
            match judged {
                Judged::Plain(note) => {
                    notes.extend(note);
                    if let Err(e) = save(host, &session) {
                        notes.push(format!("prove-it: {e}."));
                    }
                    return Ok(notes_only(notes)
                        .with_verdict(Verdict::Verified)
                        .about(&tree));
                }
                Judged::Unanswered(why) => {
                    let blocked_before = session.attempts;
                    session.attempts = 0;
                    if let Err(e) = save(host, &session) {
                        notes.push(format!("prove-it: {e}."));
                    }
                    return Ok(not_judged(notes, why, None, blocked_before, &tree));
                }
                Judged::Weakened(weakening) if !rules.block_weakened => {
                    let blocked_before = session.attempts;
                    session.attempts = 0;
                    if let Err(e) = save(host, &session) {
                        notes.push(format!("prove-it: {e}."));
                    }
                    return Ok(weakened(
                        notes,
                        *weakening,
                        None,
                        blocked_before,
                        None,
                        &tree,
                    ));
                }
                Judged::Weakened(weakening) => Caught::Weakened(weakening),
            }
        } else if settings.skip {
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
        } else if rules.block_changed_verify && changed_verify_note(&session, &facts).is_some() {
            Caught::ChangedVerify
        } else {
            let run = host.run_verify()?;
            // What the host did so that no cache answered for old code.
            notes.extend(run.notes.iter().cloned());
            let counted = run.tests_ran.or_else(|| tests_ran(&run.tail));
            if run.outcome != VerifyOutcome::Passed {
                if let Some(n) = counted {
                    session.tests_seen = Some(session.tests_seen.map_or(n, |m| m.max(n)));
                }
                Caught::Verify(run)
            } else {
                let fewer = match (counted, session.tests_seen) {
                    (Some(now), Some(then)) if now < then => Some(format!(
                        "prove-it: note: fewer tests ran than at an earlier stop of this session ({now}, by the runner's own count; {then} then): read what stopped running."
                    )),
                    _ => None,
                };
                if let Err(e) = host.passed_record(&key) {
                    notes.push(format!(
                        "prove-it: could not remember this passed state: {e}"
                    ));
                }
                let judged =
                    match judge_checks(host, event, &mut session, &tree, &facts, &mut notes) {
                        Judged::Plain(note) => Judged::Plain(join_notes(note, fewer)),
                        Judged::Weakened(mut w) => {
                            w.note = join_notes(w.note.take(), fewer);
                            Judged::Weakened(w)
                        }
                        Judged::Unanswered(why) => {
                            Judged::Unanswered(join_notes(Some(why), fewer).unwrap_or_default())
                        }
                    };
                let blocked_before = session.attempts;
                match judged {
                    Judged::Weakened(weakening) if rules.block_weakened => {
                        Caught::Weakened(weakening)
                    }
                    judged => {
                        session.attempts = 0;
                        if let Err(e) = save(host, &session) {
                            notes.push(format!("prove-it: {e}."));
                        }
                        return Ok(match judged {
                            Judged::Plain(note) => {
                                // The receipt first: it is the verdict.
                                notes.push(receipt(&run, blocked_before));
                                notes.extend(note);
                                notes_only(notes)
                                    .with_verdict(Verdict::Verified)
                                    .after(blocked_before, Some(run.duration_ms))
                                    .about(&tree)
                            }
                            Judged::Weakened(weakening) => weakened(
                                notes,
                                *weakening,
                                Some(&run),
                                blocked_before,
                                Some(run.duration_ms),
                                &tree,
                            ),
                            Judged::Unanswered(why) => {
                                not_judged(notes, why, Some(&run), blocked_before, &tree)
                            }
                        });
                    }
                }
            }
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
        // A missing piece the same machine had when the session began
        // (its start tree passed here) is the session's doing, not the
        // machine's.
        let passed_here_at_start = match &caught {
            Caught::Verify(run) if !lacking_in(&run.tail).is_empty() => {
                session.start_checks.as_ref().is_some_and(|s| s.passed)
                    || session.baseline.as_ref().is_some_and(|b| {
                        host.passed_check(&Fingerprint {
                            fingerprint: b.clone(),
                        })
                        .unwrap_or(false)
                    })
            }
            _ => false,
        };
        Decision::block(block_reason(
            &caught,
            &tree,
            session.attempts,
            settings.max_blocks,
            passed_here_at_start,
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
            "prove-it: this session's saved state cannot be used ({why}); it was set aside and the tree counts as changed."
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
        Caught::Weakened(w) if w.alarm == Alarm::Suspect => {
            "`./verify.sh` passed, but the code this session changed may special-case the tests".to_string()
        }
        Caught::Weakened(w) if w.alarm == Alarm::Behaviour => format!(
            "`./verify.sh` passed, but the session changed what {} expected (they passed at its start), and this repository's policy (strict) does not accept a change to the checks",
            tests_said(w.tests)
        ),
        Caught::Weakened(_) => {
            "`./verify.sh` passed only with checks this session changed: the checks as they were at its start fail against the code as it is".to_string()
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
    block_reason(&Caught::Verify(run.clone()), &tree, attempt, max, false)
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

fn block_reason(
    caught: &Caught,
    tree: &TreeState,
    attempt: u32,
    max: u32,
    passed_here_at_start: bool,
) -> String {
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
            if passed_here_at_start {
                let lacks = lacking_in(&run.tail);
                if !lacks.is_empty() {
                    reason.push_str(&format!(
                        "The output says {} is missing; `./verify.sh` passed on this machine at the session's start, so this turn's changes removed or broke it.\n",
                        lacks.join(" and ")
                    ));
                }
            } else {
                reason.push_str(&lacking_said(&run.tail));
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
        Caught::Weakened(w) if w.alarm == Alarm::Behaviour => {
            reason.push_str(&w.details());
            reason.push_str(
                "Keep the behaviour those tests pin (restore them and make the code pass them), then end your turn again; or, if the task asked for this change, say so plainly in your last message and ask the user to accept it.\n",
            );
        }
        Caught::Weakened(w) if w.alarm == Alarm::Suspect => {
            reason.push_str(&w.details());
            reason.push_str(
                "Make the code right for every input, not for the tests' own: take these lines out, then end your turn again. If a line is honest (a program's own exit, a real edge case), say so plainly in your last message, so the person can judge it.\n",
            );
        }
        Caught::Weakened(w) => {
            reason.push_str(&w.details());
            reason.push_str(
                "Fix the code rather than the checks, then end your turn again. If the task asked for this new behaviour, say so plainly in your last message, so the person can judge the change to the checks.\n",
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
    let tail = match caught {
        Caught::Verify(run) => &run.tail[..],
        Caught::Weakened(w) => &w.tail[..],
        _ => &[],
    };
    for line in &tail[tail.len().saturating_sub(WARNING_TAIL_LINES)..] {
        text.push_str("\n    ");
        text.push_str(line);
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
        Caught::Weakened(w) => {
            let mut actual = vec![what_failed(caught).replace('`', "")];
            actual.extend(failing_lines(&w.tail));
            (None, actual)
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

/// How many tests a run ran, by its runner's own summary lines in `tail`
/// (unittest's `Ran N tests`, pytest's `N failed, M passed in`, cargo's
/// `test result:`, jest's and vitest's `Tests`, node's `# pass`/`# fail`),
/// added up over the summary lines there are; `None` when there is none.
/// Skipped tests are not counted: they did not run.
pub fn tests_ran(tail: &[String]) -> Option<u64> {
    let mut total: Option<u64> = None;
    let mut add = |n: u64| total = Some(total.unwrap_or(0) + n);
    for line in tail {
        let lower = line.trim().to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '|' | '=' | '(' | ')'))
            .filter(|w| !w.is_empty())
            .collect();
        let number = |w: &str| w.parse::<u64>().ok();
        // The number before each of `kinds`.
        let before = |kinds: &[&str]| -> u64 {
            words
                .windows(2)
                .filter(|w| kinds.contains(&w[1]))
                .filter_map(|w| number(w[0]))
                .sum()
        };
        if let Some(rest) = lower.strip_prefix("ran ") {
            if let Some(n) = rest.split_whitespace().next().and_then(number)
                && rest.contains(" test")
            {
                add(n);
            }
        } else if lower.starts_with("test result:")
            || lower.starts_with("tests:")
            || lower.starts_with("tests ")
        {
            add(before(&["passed", "failed"]));
        } else if words.contains(&"in")
            && words.iter().any(|w| matches!(*w, "passed" | "failed"))
            && !lower.contains("::")
        {
            add(before(&[
                "passed", "failed", "error", "errors", "xfailed", "xpassed",
            ]));
        } else if let [mark, kind, n] = words.as_slice()
            && matches!(*mark, "#" | "ℹ")
            && matches!(*kind, "pass" | "fail")
            && let Some(n) = number(n)
        {
            add(n);
        }
    }
    total
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

/// Judges a passing `tree` by what the session changed in its checks: the
/// host's list and static evidence, and, when a change could have made it
/// pass, the replay of the session-start checks against the code as it is.
/// Remembered in `session`, so the same tree is not replayed again.
fn judge_checks(
    host: &mut impl Host,
    event: &Event,
    session: &mut Session,
    tree: &TreeState,
    facts: &VerifyFacts,
    notes: &mut Vec<String>,
) -> Judged {
    let changed_verify = changed_verify_note(session, facts);
    let judged = judge(host, session, event.claim.as_deref(), changed_verify, notes);
    let alarm = match &judged {
        Judged::Weakened(w) => Some(w.alarm),
        Judged::Plain(_) | Judged::Unanswered(_) => None,
    };
    session.checked = Some(Checked {
        tree: tree.fingerprint.clone(),
        weakened: alarm == Some(Alarm::Weakened),
        suspect: alarm == Some(Alarm::Suspect),
        behaviour: alarm == Some(Alarm::Behaviour),
        summary: match &judged {
            Judged::Weakened(w) => Some(w.summary()),
            Judged::Unanswered(why) => Some(why.clone()),
            Judged::Plain(_) => None,
        },
        not_judged: matches!(judged, Judged::Unanswered(_)),
    });
    judged
}

/// What the session's changes say about a pass: [`judge_checks_changed`]
/// on its checks, then the code: lines that only make sense to fool a test
/// turn a plain pass into a suspect one. `claim` is the agent's last
/// message: one that says it fitted the code to the tests is a note.
fn judge(
    host: &mut impl Host,
    session: &mut Session,
    claim: Option<&str>,
    changed_verify: Option<String>,
    notes: &mut Vec<String>,
) -> Judged {
    let changes = match host.check_changes() {
        Ok(changes) => changes,
        Err(e) => {
            notes.extend(changed_verify);
            return Judged::Unanswered(format!(
                "prove-it: could not tell whether this session changed its checks ({e}); read `git diff` before you trust this pass."
            ));
        }
    };
    let admitted = admission(claim).map(|line| format!("prove-it: note: {line}."));
    let suspect = changes.suspect.clone();
    // An environment inside the tree that changed with nothing tracked to
    // say why: the checks ran with what a fresh checkout does not have.
    let environment = (!changes.environment.is_empty()).then(|| {
        let mut text = "prove-it: the checks ran with an environment this session changed and no tracked file accounts for:".to_string();
        for line in &changes.environment {
            text.push_str("\n  - ");
            text.push_str(line);
        }
        text.push_str("\nInstall it again from the tracked files (or commit the dependency change with its lockfile), then let the gate judge the tree again.");
        text
    });
    let copy = (!suspect.is_empty()).then(|| changes.clone());
    // Said after the verdict, never in place of its headline.
    let join = |note: Option<String>| join_notes(note, admitted.clone());
    match (
        judge_checks_changed(host, session, changes, changed_verify, notes),
        copy,
    ) {
        (Judged::Plain(note), None) if environment.is_some() => {
            Judged::Unanswered(join(join_notes(environment, note)).unwrap_or_default())
        }
        (Judged::Plain(note), None) => Judged::Plain(join(note)),
        (Judged::Unanswered(why), _) => Judged::Unanswered(join(Some(why)).unwrap_or_default()),
        (Judged::Weakened(mut w), _) => {
            w.note = join(join_notes(w.note.take(), environment));
            Judged::Weakened(w)
        }
        (Judged::Plain(note), Some(changes)) => {
            let mut files = vec!["In the code this session changed:".to_string()];
            files.extend(suspect.iter().map(|l| format!("  - {l}")));
            Judged::Weakened(Box::new(Weakening {
                alarm: Alarm::Suspect,
                files,
                replay: String::new(),
                tail: Vec::new(),
                diff: code_diff_command(&changes),
                changes: Some(changes),
                note: join(join_notes(note, environment)),
                tests: 0,
            }))
        }
    }
}

/// `1 test`, `3 tests`, `some tests` (the runner named none).
/// What the output says this machine lacks, as a line for the agent and
/// the person (empty when it says nothing of the kind).
fn lacking_said(tail: &[String]) -> String {
    let lacks = lacking_in(tail);
    if lacks.is_empty() {
        return String::new();
    }
    format!(
        "The output says this machine lacks {}: the code may be fine. Install it (or tell the user it is missing) rather than changing the code or the checks to get past it.\n",
        lacks.join(" and ")
    )
}

fn tests_said(n: usize) -> String {
    match n {
        0 => "some tests".to_string(),
        1 => "1 test".to_string(),
        n => format!("{n} tests"),
    }
}

/// Test names, quoted, the first 10 of them.
fn names_said(names: &[String]) -> String {
    let mut said = names
        .iter()
        .take(10)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 10 {
        said.push_str(&format!(" and {} more", names.len() - 10));
    }
    said
}

/// Two notes as one, each on its own lines.
fn join_notes(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}

/// Words in the agent's last message that say it fitted the code to the
/// tests (in one public run of an agent on impossible tasks, most such
/// cheats said so): the sentence, as a note.
fn admission(claim: Option<&str>) -> Option<String> {
    const FITTING: &[&str] = &[
        "hardcod",
        "hard-cod",
        "hard cod",
        "special-cas",
        "special cas",
        "tailored to the test",
        "fitted the code",
        "fit the code to the test",
        "detect the test",
        "detects the test",
        "detect pytest",
        "under pytest",
        "satisfy the test",
        "satisfies the test",
        "what the test expects",
        "what the tests expect",
    ];
    let claim = claim?;
    for sentence in claim.split(['.', '!', '\n']) {
        let lower = sentence.to_lowercase();
        if lower.contains("test") && FITTING.iter().any(|f| lower.contains(f)) {
            let text: String = sentence.trim().chars().take(160).collect();
            return Some(format!(
                "the agent's last message says it fitted the code to the tests: \"{text}\""
            ));
        }
    }
    None
}

/// `changed_verify` is the note for a `verify.sh` that changed during the
/// session: said whenever the checks the host found do not name it.
fn judge_checks_changed(
    host: &mut impl Host,
    session: &mut Session,
    changes: CheckChanges,
    changed_verify: Option<String>,
    notes: &mut Vec<String>,
) -> Judged {
    let code_note = (!changes.code.is_empty()).then(|| {
        let mut text = "prove-it: note: in the code:".to_string();
        for line in &changes.code {
            text.push_str("\n  ");
            text.push_str(line);
        }
        text
    });
    if !changes.files.iter().any(|f| f.path == "verify.sh") {
        notes.extend(changed_verify);
    }
    if changes.files.is_empty() && changes.git_config.is_empty() {
        return Judged::Plain(code_note);
    }
    let count = checks_count(&changes);
    if !changes.replay_needed() {
        let mut note = format!(
            "prove-it: checks changed: {count}, tests added only (adding tests never weakens the checks)."
        );
        let added: Vec<String> = changes
            .files
            .iter()
            .flat_map(|f| f.tests_added.iter().cloned())
            .collect();
        if !added.is_empty() {
            note.push_str(&format!("\n  tests added: {}", names_said(&added)));
        }
        if let Some(code) = code_note {
            note.push('\n');
            note.push_str(&code);
        }
        return Judged::Plain(Some(note));
    }
    // Whether the session-start checks passed at the start, when the gate
    // knows already: found out earlier in the session, or that very tree
    // passed before. Else the replay finds out, if it fails.
    let mut start = session.start_checks.clone();
    if start.is_none()
        && let Some(baseline) = &session.baseline
        && host
            .passed_check(&Fingerprint {
                fingerprint: baseline.clone(),
            })
            .unwrap_or(false)
    {
        start = Some(StartChecks {
            passed: true,
            ..StartChecks::default()
        });
    }
    let request = ReplayRequest {
        start: start.is_none(),
    };
    let replay = match host.replay_checks(&request) {
        Ok(replay) => replay,
        Err(e) => {
            return Judged::Unanswered(format!(
                "prove-it: checks changed: {count}, and the session-start checks could not be replayed ({e}): read `{}` to judge whether that was the work or a weakened check.",
                diff_command(&changes)
            ));
        }
    };
    let run = &replay.run;
    match run.outcome {
        VerifyOutcome::Passed => {
            // The start's checks caught a planted failing test, the
            // session's let it through: they can no longer fail.
            if let Some(d) = &replay.differential
                && d.start.outcome != VerifyOutcome::Passed
                && let Some(now) = d
                    .now
                    .as_ref()
                    .filter(|n| n.outcome == VerifyOutcome::Passed)
            {
                return Judged::Weakened(Box::new(Weakening {
                    alarm: Alarm::Weakened,
                    files: file_lines(&changes, true),
                    replay: format!(
                        "{} was planted in a copy of the code as it is now: the checks as they were at the session's start failed on it ({}), and the checks as the session left them passed with it (exit 0 in {}): they can no longer fail",
                        d.planted,
                        match d.start.exit_code {
                            Some(c) => format!("exit {c}"),
                            None => "no exit code".to_string(),
                        },
                        seconds(now.duration_ms)
                    ),
                    tail: d.start.tail.clone(),
                    diff: diff_command(&changes),
                    changes: Some(changes),
                    note: None,
                    tests: 0,
                }));
            }
            // A mutant of the code the start's checks failed on and the
            // session's passed with: the changed tests no longer check it.
            if let Some(d) = &replay.differential
                && let Some(m) = d
                    .mutants
                    .iter()
                    .find(|m| m.now.outcome == VerifyOutcome::Passed)
            {
                return Judged::Weakened(Box::new(Weakening {
                    alarm: Alarm::Weakened,
                    files: file_lines(&changes, true),
                    replay: format!(
                        "{} was planted in a copy of the code as it is now: the checks as they were at the session's start failed on it, and the checks as the session left them passed with it (exit 0 in {}): they no longer catch it",
                        m.mutant,
                        seconds(m.now.duration_ms)
                    ),
                    tail: failing_lines(&m.start.tail),
                    diff: diff_command(&changes),
                    changes: Some(changes),
                    note: None,
                    tests: 0,
                }));
            }
            let mut note = format!(
                "prove-it: checks changed: {count}; the session-start checks pass too (replayed in {}).",
                seconds(run.duration_ms)
            );
            if let Some(d) = &replay.differential {
                let spent = d.start.duration_ms
                    + d.now.as_ref().map_or(0, |n| n.duration_ms)
                    + d.mutants
                        .iter()
                        .map(|m| m.start.duration_ms + m.now.duration_ms)
                        .sum::<u64>();
                for m in &d.mutants {
                    note.push_str(&format!(
                        "\n  {} planted: both sets of checks failed on it.",
                        m.mutant
                    ));
                }
                note.push_str(&match &d.now {
                    Some(_) => format!(
                        "\n  {} planted: both sets of checks failed on it ({} more).",
                        d.planted,
                        seconds(spent)
                    ),
                    None => format!(
                        "\n  {} planted: the session-start checks passed with it too, so it tells nothing ({} more); `prove-it canary` shows what the checks catch.",
                        d.planted,
                        seconds(spent)
                    ),
                });
            }
            for line in file_lines(&changes, false) {
                note.push_str("\n  ");
                note.push_str(&line);
            }
            Judged::Plain(Some(note))
        }
        VerifyOutcome::CouldNotStart => Judged::Unanswered(format!(
            "prove-it: checks changed: {count}, and the session-start checks could not start in the copy ({}): read `{}` to judge them.",
            run.detail.as_deref().unwrap_or("no detail"),
            diff_command(&changes)
        )),
        // The checks as they are now fail in the copy too: it lacks
        // something they need, and the replay tells nothing.
        _ if replay
            .control
            .as_ref()
            .is_some_and(|c| c.outcome != VerifyOutcome::Passed) =>
        {
            Judged::Unanswered(format!(
                "prove-it: checks changed: {count}, and the session-start checks could not be judged: `./verify.sh` fails in the throwaway copy even as it is now (it lacks something the checks need: ignored folders such as build output are not copied). Read `{}` to judge the change.",
                diff_command(&changes)
            ))
        }
        VerifyOutcome::Failed | VerifyOutcome::TimedOut => {
            let outcome = match run.outcome {
                VerifyOutcome::TimedOut => format!("timed out after {} s", run.timeout_secs),
                _ => format!(
                    "failed ({}after {})",
                    run.exit_code
                        .map_or_else(String::new, |c| format!("exit {c}, ")),
                    seconds(run.duration_ms)
                ),
            };
            if start.is_none()
                && let Some(run) = &replay.start
            {
                start = Some(StartChecks {
                    passed: run.outcome == VerifyOutcome::Passed,
                    failing: failing_tests(&run.tail).into_iter().collect(),
                    lacking: lacking_in(&run.tail),
                });
                session.start_checks = start.clone();
            }
            // The session-start checks fail against the new code for want
            // of something this machine lacks, and failed for it on the
            // session-start code too: they cannot run here at all, so the
            // replay tells nothing. (Something the session's code asks
            // for that was not asked for before fails only now: judged.)
            let lacks = lacking_in(&run.tail);
            if let Some(s) = &start
                && !s.passed
                && !lacks.is_empty()
                && lacks.iter().all(|l| s.lacking.contains(l))
            {
                return Judged::Unanswered(format!(
                    "prove-it: checks changed: {count}, and the session-start checks could not be judged: they need {}, which this machine lacks (they failed for it at the session's start too); the code may be fine. Read `{}` to judge the change.",
                    lacks.join(" and "),
                    diff_command(&changes)
                ));
            }
            let failing = failing_tests(&run.tail);
            // Passing at the start, or failing there only on other tests:
            // what fails now is behaviour the session changed, not a
            // failure it hid; if only tests changed, and in ways that can
            // say what the code should do (a skip marker, a hook or a
            // runner option never does).
            // The tail keeps at most 8 lines naming failures: with that
            // many names at the start, some may be cut, and "other tests"
            // cannot be told.
            let changed_behaviour = can_express_behaviour(&changes)
                && start.as_ref().is_some_and(|s| {
                    s.passed
                        || (!s.failing.is_empty()
                            && s.failing.len() < NAMED_FAILURES
                            && !failing.is_empty()
                            && failing.iter().all(|t| !s.failing.contains(t)))
                });
            let unknown = match (&start, &replay.start_problem) {
                (None, Some(why)) => Some(format!(
                    "Whether these checks passed at the session's start is not known: {why}."
                )),
                _ => None,
            };
            let (alarm, replay_said) = match changed_behaviour {
                true if start.as_ref().is_some_and(|s| s.passed) => (
                    Alarm::Behaviour,
                    format!(
                        "`./verify.sh` with the checks as they were at the session's start passed on the code as it was then, and {outcome} against the code as it is now"
                    ),
                ),
                true => (
                    Alarm::Behaviour,
                    format!(
                        "`./verify.sh` with the checks as they were at the session's start failed on the code as it was then only on other tests ({}), and {outcome} against the code as it is now on tests that passed then ({})",
                        names_said(
                            &start
                                .as_ref()
                                .map(|s| s.failing.clone())
                                .unwrap_or_default()
                        ),
                        names_said(&failing.iter().cloned().collect::<Vec<_>>()),
                    ),
                ),
                false => (
                    Alarm::Weakened,
                    format!(
                        "`./verify.sh` with the checks as they were at the session's start {outcome}"
                    ),
                ),
            };
            // What the replay lacks is the machine's only when nothing
            // says these checks ran here before; else the session's code
            // no longer has what they need.
            let lack_note = match (&start, lacks.is_empty()) {
                (_, true) => None,
                (None, false) => Some(lacking_said(&run.tail).trim_end().to_string()),
                (Some(_), false) => Some(format!(
                    "They fail for want of {}, which they found here at the session's start: the code as it is now no longer has it.",
                    lacks.join(" and ")
                )),
            };
            Judged::Weakened(Box::new(Weakening {
                alarm,
                files: file_lines(&changes, true),
                replay: replay_said,
                tail: run.tail.clone(),
                diff: diff_command(&changes),
                changes: Some(changes),
                note: join_notes(
                    join_notes(unknown, lack_note),
                    // The inputs put back with the checks, said as the
                    // host said them: what the old checks ran with.
                    replay
                        .restored
                        .iter()
                        .find(|r| r.contains("the checks read"))
                        .map(|r| format!("Put back with them: {r}.")),
                ),
                tests: failing.len(),
            }))
        }
    }
}

/// Whether the session's changes to its checks could be a new behaviour
/// written down: tests modified or deleted, with no evidence of a skip,
/// a narrowed run, a hook, a suppression, a removed check or a check
/// turned into a link; no
/// configuration, `verify.sh` or git configuration changed.
fn can_express_behaviour(changes: &CheckChanges) -> bool {
    use crate::abi::CheckKind;
    const NEVER: &[&str] = &[
        "skip marker",
        "expected-failure marker",
        "tests narrowed",
        "hook",
        "runner option",
        "lint suppression",
        "build constraint",
        "check removed",
        "check commented out",
        "symbolic link",
    ];
    changes.git_config.is_empty()
        && changes.files.iter().all(|f| {
            matches!(f.kind, CheckKind::Test | CheckKind::Inline)
                && !f.evidence.iter().any(|e| {
                    // What the line says it found, not the code it quotes
                    // (a test line may well say `hook`).
                    let what = e.split('`').next().unwrap_or(e);
                    NEVER.iter().any(|n| what.contains(n))
                })
        })
}

/// The tests a run names as failing, by its runner's own lines: pytest's
/// `FAILED path::test`, unittest's `FAIL: test (module.Class)`, cargo's
/// `test name ... FAILED`, go's `--- FAIL: Test`, node's `not ok N -
/// name` and `✖ name`, jest's and vitest's `✕`/`×`, vitest's `FAIL  file >
/// name`, nextest's `FAIL [time] name`, mocha's `1) name`; each by its
/// [`test_identity`].
pub fn failing_tests(tail: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in tail {
        let t = line.trim();
        let name = if let Some(rest) = t
            .strip_prefix("FAILED ")
            .or_else(|| t.strip_prefix("ERROR "))
        {
            rest.split(" - ").next()
        } else if let Some(rest) = t
            .strip_prefix("FAIL: ")
            .or_else(|| t.strip_prefix("ERROR: "))
        {
            Some(rest)
        } else if let Some(rest) = t.strip_prefix("FAIL ") {
            let rest = rest.trim_start();
            match rest.strip_prefix('[') {
                // nextest: `FAIL [   0.003s] crate::tests::adds`.
                Some(timed) => timed.split_once(']').map(|(_, name)| name),
                // vitest: `FAIL  tests/calc.test.ts > adds`; jest's
                // `FAIL  tests/calc.test.js` names a file, not a test.
                None => rest.contains(" > ").then_some(rest),
            }
        } else if let Some((name, _)) = t.split_once(" FAILED")
            && name.contains("::")
            && !name.contains(' ')
        {
            // pytest -v: `tests/test_a.py::test_x FAILED [ 50%]`.
            Some(name)
        } else if let Some(rest) = t.strip_prefix("--- FAIL: ") {
            rest.split(" (").next()
        } else if let Some(rest) = t
            .strip_prefix("test ")
            .and_then(|r| r.strip_suffix(" ... FAILED"))
        {
            Some(rest)
        } else if let Some(rest) = t.strip_suffix(" --- FAILED") {
            Some(rest)
        } else if let Some(rest) = t
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            Some(rest)
        } else if let Some(rest) = t.strip_prefix("not ok ") {
            rest.split_once(" - ").map(|(_, name)| name)
        } else if let Some(rest) = ["✕ ", "× ", "✖ ", "✗ "]
            .iter()
            .find_map(|mark| t.strip_prefix(mark))
        {
            Some(rest)
        } else if let Some((n, rest)) = t.split_once(") ")
            && !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit())
        {
            // mocha: `1) adds` (and `1) suite` over `adds:` in its summary).
            Some(rest.trim_end_matches(':'))
        } else {
            None
        };
        // unittest's summary `FAILED (failures=1)` names no test.
        if let Some(name) = name
            .map(test_identity)
            .filter(|n| !n.is_empty() && !n.starts_with('('))
        {
            out.insert(name.to_string());
        }
    }
    out
}

/// A failing test's name without what changes from run to run: its time
/// (vitest's `works 6ms`, jest's `(3 ms)`, go's `(0.00s)`), pytest's
/// progress (`[ 50%]`) and a retry count (`(retry x2)`), so that the same
/// test failing at the start and now is one test.
pub fn test_identity(name: &str) -> &str {
    let mut name = name.trim();
    loop {
        let before = name;
        // A bracketed or parenthesised last part: a time, a percentage or
        // a retry count.
        if name.ends_with([')', ']'])
            && let Some(start) = name.rfind(['(', '['])
        {
            let inner = name[start + 1..name.len() - 1].trim();
            if is_time(inner)
                || inner.ends_with('%')
                || inner.starts_with("retry")
                || inner.starts_with("attempt")
            {
                name = name[..start].trim_end();
            }
        }
        // A bare time as the last word (`works 6ms`).
        if let Some((head, last)) = name.rsplit_once(' ')
            && is_time(last)
        {
            name = head.trim_end();
        }
        if name == before {
            return name;
        }
    }
}

/// `6ms`, `3 ms`, `0.00s`, `1.2 s`, `120µs`.
fn is_time(word: &str) -> bool {
    let word = word.replace(' ', "");
    let digits = word.trim_end_matches(|c: char| c.is_alphabetic() || c == 'µ');
    let unit = &word[digits.len()..];
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && matches!(unit, "ms" | "s" | "m" | "µs" | "us" | "ns" | "sec" | "secs")
}

/// `1 file`, `3 files`, `git's configuration`, `1 file and git's configuration`.
fn checks_count(changes: &CheckChanges) -> String {
    let n = changes.files.len();
    let files = format!("{n} file{}", if n == 1 { "" } else { "s" });
    match (n, changes.git_config.is_empty()) {
        (_, true) => files,
        (0, false) => "git's configuration".to_string(),
        (_, false) => format!("{files} and git's configuration"),
    }
}

/// One line per changed check, then its evidence; then the notes on the
/// code, and with `suspect` the code's suspect lines (a suspect pass
/// says those itself).
fn file_lines(changes: &CheckChanges, suspect: bool) -> Vec<String> {
    use crate::abi::FileChange;
    let mut lines = Vec::new();
    for f in &changes.files {
        let kind = f.kind.said();
        let change = match f.change {
            FileChange::Added => "added",
            FileChange::Modified => "modified",
            FileChange::Deleted => "deleted",
        };
        lines.push(format!("`{}` ({kind}, {change})", f.path));
        for e in &f.evidence {
            lines.push(format!("  - {e}"));
        }
        for (what, names) in [
            ("tests added", &f.tests_added),
            ("tests modified", &f.tests_modified),
        ] {
            if !names.is_empty() && f.change != FileChange::Deleted {
                lines.push(format!("  - {what}: {}", names_said(names)));
            }
        }
    }
    for g in &changes.git_config {
        lines.push(format!(
            "{} (git's configuration of the checks, changed)",
            g.what
        ));
        for e in &g.evidence {
            lines.push(format!("  - {e}"));
        }
    }
    if !changes.code.is_empty() {
        lines.push("In the code:".to_string());
    }
    for line in &changes.code {
        lines.push(format!("  - {line}"));
    }
    if suspect && !changes.suspect.is_empty() {
        lines.push("In the code, lines that only make sense to fool a test:".to_string());
    }
    for line in changes.suspect.iter().filter(|_| suspect) {
        lines.push(format!("  - {line}"));
    }
    lines
}

/// The command that shows the code lines a suspect pass names (each line
/// starts with its file, quoted).
fn code_diff_command(changes: &CheckChanges) -> String {
    let mut paths: Vec<&str> = changes
        .suspect
        .iter()
        .filter_map(|l| l.strip_prefix('`')?.split_once('`').map(|(p, _)| p))
        .collect();
    paths.dedup();
    let base = changes
        .base
        .as_deref()
        .map_or("HEAD", |b| &b[..b.len().min(12)]);
    format!("git diff {base} -- {}", paths.join(" "))
}

/// The command that shows the session's changes to its checks (git's
/// configuration has no diff: `git config --list --show-origin` shows
/// where each value comes from).
fn diff_command(changes: &CheckChanges) -> String {
    let paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    if paths.is_empty() {
        return "git config --list --show-origin".to_string();
    }
    let base = changes
        .base
        .as_deref()
        .map_or("HEAD", |b| &b[..b.len().min(12)]);
    format!("git diff {base} -- {}", paths.join(" "))
}

impl Weakening {
    /// What a remembered weakening says at a later stop of the same tree.
    fn said_before(checked: &Checked) -> Weakening {
        let (alarm, replay) = if checked.weakened {
            (
                Alarm::Weakened,
                "the session-start checks failed on this same tree earlier in this session",
            )
        } else if checked.behaviour {
            (
                Alarm::Behaviour,
                "the session-start checks passed at its start and failed on this same tree earlier in this session",
            )
        } else {
            (Alarm::Suspect, "")
        };
        Weakening {
            alarm,
            files: checked.summary.iter().cloned().collect(),
            replay: replay.to_string(),
            tail: Vec::new(),
            diff: String::new(),
            changes: None,
            note: None,
            tests: 0,
        }
    }

    /// The lines kept in the session for [`Weakening::said_before`].
    fn summary(&self) -> String {
        let mut text = String::new();
        for line in self.files.iter().take(12) {
            text.push_str(line);
            text.push('\n');
        }
        if !self.diff.is_empty() {
            text.push_str(&format!("Read the change: `{}`", self.diff));
        }
        text.trim_end().to_string()
    }

    /// The checks changed, the replay and its output, the diff to read.
    fn details(&self) -> String {
        let mut text = String::new();
        if !self.files.is_empty() {
            // A suspect pass's lines carry their own heading.
            let indent = match self.alarm {
                Alarm::Weakened | Alarm::Behaviour => {
                    text.push_str("Checks this session changed:\n");
                    "  "
                }
                Alarm::Suspect => "",
            };
            for line in &self.files {
                text.push_str(indent);
                text.push_str(line);
                text.push('\n');
            }
        }
        if !self.replay.is_empty() {
            text.push_str(&self.replay);
            if self.tail.is_empty() {
                text.push_str(".\n");
            } else {
                text.push_str(":\n");
                for line in &self.tail {
                    text.push_str("    ");
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
        if !self.diff.is_empty() {
            text.push_str(&format!("Read the change: `{}`\n", self.diff));
        }
        if let Some(note) = &self.note {
            text.push_str(note);
            text.push('\n');
        }
        text
    }
}

/// The default policy's answer to a weakened pass: the turn ends, with a
/// warning as loud as a yield, never the plain receipt.
fn weakened(
    mut notes: Vec<String>,
    weakening: Weakening,
    run: Option<&VerifyRun>,
    blocked_before: u32,
    verify_ms: Option<u64>,
    tree: &TreeState,
) -> Decision {
    let passed = run.map_or_else(
        || "passed earlier in this session".to_string(),
        |run| format!("exited 0 in {}", seconds(run.duration_ms)),
    );
    let (headline, close, verdict) = match weakening.alarm {
        Alarm::Weakened => (
            format!(
                "prove-it: WEAKENED: `./verify.sh` {passed}, but only with checks this session changed: the checks as they were at its start fail against the code as it is now. This turn is NOT verified.\n"
            ),
            "If the task asked for this new behaviour, the change to the checks may be right; otherwise the code, not the checks, needs the fix.",
            Verdict::Weakened,
        ),
        Alarm::Behaviour => (
            format!(
                "prove-it: behaviour changed: `./verify.sh` {passed}; the session changed what {} expected: they passed at its start, and fail against the code as it is now. Read them before you trust this turn: it is not proven.\n",
                tests_said(weakening.tests)
            ),
            "If the task asked for this new behaviour, the change is the work; otherwise the code, not the tests, needs the fix.",
            Verdict::BehaviourChanged,
        ),
        Alarm::Suspect => (
            format!(
                "prove-it: SUSPECT: `./verify.sh` {passed}, but the code this session changed may special-case the tests: the lines below only make sense to fool a test. This turn is NOT verified.\n"
            ),
            "If a line is honest (a program's own exit, a real edge case), read it and carry on; otherwise the code must be made right for every input, not for the tests' own.",
            Verdict::Suspect,
        ),
    };
    let mut text = headline;
    text.push_str(&weakening.details());
    text.push_str(close);
    notes.push(text);
    let mut decision = notes_only(notes)
        .with_verdict(verdict)
        .after(blocked_before, verify_ms)
        .about(tree);
    decision.checks = weakening.changes;
    decision
}

/// The default policy's answer to a pass whose changed checks could not
/// be judged: the turn ends, as loud as a weakened pass, and is not proven
/// (`why` says what could not be done and what to read).
fn not_judged(
    mut notes: Vec<String>,
    why: String,
    run: Option<&VerifyRun>,
    blocked_before: u32,
    tree: &TreeState,
) -> Decision {
    let passed = run.map_or_else(
        || "passed earlier in this session".to_string(),
        |run| format!("exited 0 in {}", seconds(run.duration_ms)),
    );
    notes.push(format!(
        "prove-it: NOT JUDGED: `./verify.sh` {passed}, but this session changed its checks, and whether the checks as they were at its start still pass could not be found out. This turn is NOT verified.\n{why}"
    ));
    notes_only(notes)
        .with_verdict(Verdict::NotJudged)
        .after(blocked_before, run.map(|r| r.duration_ms))
        .about(tree)
}

fn notes_only(notes: Vec<String>) -> Decision {
    Decision::allow().with_notes(&notes)
}

#[cfg(test)]
mod tests;
