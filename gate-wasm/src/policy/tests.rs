//! Unit tests of the default policy's rules against a fake host.

use super::*;
use crate::abi::{Action, Reply};
use std::collections::HashSet;

struct Fake {
    fingerprint: String,
    facts: VerifyFacts,
    verify_passes: bool,
    runs: u32,
    session: Option<serde_json::Value>,
    problem: Option<String>,
    passed: HashSet<String>,
    ledger: Vec<LedgerEntry>,
    tree_error: bool,
    /// What `check_changes` answers (`None`: nothing changed).
    checks: Option<CheckChanges>,
    /// Whether the replay of the session-start checks passes.
    replay_passes: bool,
    /// Whether the checks as they are now pass in the replay's copy.
    control_passes: bool,
    replays: u32,
    /// The last lines of `verify.sh`'s output.
    tail: Vec<String>,
    /// What the session-start checks did on the session-start code, when
    /// asked (`None`: not run).
    start_passes: Option<bool>,
    start_asked: bool,
    /// The failing start run's last lines.
    start_tail: Vec<String>,
    /// The failing replay's last lines.
    replay_tail: Vec<String>,
}

impl Fake {
    fn armed() -> Self {
        Fake {
            fingerprint: "aaaa".into(),
            facts: VerifyFacts {
                exists: true,
                executable: true,
                hash: Some("v1".into()),
            },
            verify_passes: false,
            runs: 0,
            session: None,
            problem: None,
            passed: HashSet::new(),
            ledger: Vec::new(),
            tree_error: false,
            checks: None,
            replay_passes: true,
            control_passes: true,
            replays: 0,
            tail: vec!["running 44 tests".into(), "3 failed, 41 passed".into()],
            start_passes: Some(false),
            start_asked: false,
            start_tail: vec!["FAILED tests/test_calc.py::test_add - assert 3 == 4".into()],
            replay_tail: vec!["FAILED tests/test_calc.py::test_add - assert 5 == 4".into()],
        }
    }
    fn session(&self) -> Session {
        serde_json::from_value(self.session.clone().expect("session saved")).expect("valid")
    }
}

impl Host for Fake {
    fn tree_state(&mut self) -> Reply<TreeState> {
        if self.tree_error {
            return Err("git exploded".into());
        }
        Ok(TreeState {
            head: Some("h".into()),
            fingerprint: self.fingerprint.clone(),
        })
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        Ok(self.facts.clone())
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        self.runs += 1;
        Ok(VerifyRun {
            outcome: if self.verify_passes {
                VerifyOutcome::Passed
            } else {
                VerifyOutcome::Failed
            },
            exit_code: Some(if self.verify_passes { 0 } else { 1 }),
            duration_ms: 5,
            tail: self.tail.clone(),
            timeout_secs: 300,
            detail: None,
            notes: Vec::new(),
            tests_ran: None,
        })
    }
    fn session_read(&mut self) -> Reply<SessionRead> {
        Ok(SessionRead {
            value: self.session.clone(),
            problem: self.problem.take(),
        })
    }
    fn session_write(&mut self, request: &SessionWrite) -> Reply<()> {
        self.session = Some(request.value.clone());
        Ok(())
    }
    fn passed_check(&mut self, request: &Fingerprint) -> Reply<bool> {
        Ok(self.passed.contains(&request.fingerprint))
    }
    fn passed_record(&mut self, request: &Fingerprint) -> Reply<()> {
        self.passed.insert(request.fingerprint.clone());
        Ok(())
    }
    fn ledger_append(&mut self, request: &LedgerEntry) -> Reply<bool> {
        self.ledger.push(request.clone());
        Ok(true)
    }
    fn check_changes(&mut self) -> Reply<CheckChanges> {
        Ok(self.checks.clone().unwrap_or_default())
    }
    fn replay_checks(&mut self, request: &crate::abi::ReplayRequest) -> Reply<crate::abi::Replay> {
        self.replays += 1;
        self.start_asked |= request.start;
        Ok(crate::abi::Replay {
            run: VerifyRun {
                outcome: if self.replay_passes {
                    VerifyOutcome::Passed
                } else {
                    VerifyOutcome::Failed
                },
                exit_code: Some(if self.replay_passes { 0 } else { 1 }),
                duration_ms: 7,
                tail: self.replay_tail.clone(),
                timeout_secs: 300,
                detail: None,
                notes: Vec::new(),
                tests_ran: None,
            },
            restored: vec!["`tests/test_calc.py` as at the start".into()],
            control: (!self.replay_passes).then(|| VerifyRun {
                outcome: if self.control_passes {
                    VerifyOutcome::Passed
                } else {
                    VerifyOutcome::Failed
                },
                exit_code: Some(if self.control_passes { 0 } else { 1 }),
                duration_ms: 7,
                tail: vec!["ModuleNotFoundError".into()],
                timeout_secs: 300,
                detail: None,
                notes: Vec::new(),
                tests_ran: None,
            }),
            start: self
                .start_passes
                .filter(|_| request.start && !self.replay_passes && self.control_passes)
                .map(|passes| VerifyRun {
                    outcome: if passes {
                        VerifyOutcome::Passed
                    } else {
                        VerifyOutcome::Failed
                    },
                    exit_code: Some(if passes { 0 } else { 1 }),
                    duration_ms: 9,
                    tail: match passes {
                        true => vec!["1 passed in 0.01s".into()],
                        false => self.start_tail.clone(),
                    },
                    timeout_secs: 300,
                    detail: None,
                    notes: Vec::new(),
                    tests_ran: None,
                }),
            start_problem: None,
            differential: None,
        })
    }
}

/// A session that skipped a test: one test file modified, with evidence.
fn skipped_test() -> CheckChanges {
    use crate::abi::{CheckChange, CheckKind, FileChange};
    CheckChanges {
        files: vec![CheckChange {
            path: "tests/test_calc.py".into(),
            kind: CheckKind::Test,
            change: FileChange::Modified,
            evidence: vec!["skip marker added: `@pytest.mark.skip`".into()],
            ..Default::default()
        }],
        base: Some("0123456789abcdef".into()),
        ..CheckChanges::default()
    }
}

fn event(kind: EventKind) -> Event {
    Event {
        kind,
        source: Some("startup".into()),
        turn: None,
        may_be_retry: false,
        claim: Some("All tests pass.".into()),
        repo: "/repo".into(),
        settings: Settings::default(),
        notes: Vec::new(),
    }
}

fn stop(active: bool) -> Event {
    Event {
        may_be_retry: active,
        ..event(EventKind::Stop)
    }
}

fn started() -> Fake {
    let mut host = Fake::armed();
    decide(&event(EventKind::SessionStart), &mut host);
    host
}

#[test]
fn read_only_session_is_untouched_even_when_verify_fails() {
    let mut host = started();
    let d = decide(&stop(false), &mut host);
    let tree = host.fingerprint.clone();
    assert_eq!(
        d,
        Decision::allow()
            .with_verdict(Verdict::Unchanged)
            .about(&TreeState {
                head: None,
                fingerprint: tree
            })
    );
    assert_eq!(host.runs, 0);
}

#[test]
fn changed_tree_with_failing_verify_blocks_with_attempt_and_tail() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Block);
    let reason = d.reason.expect("reason");
    assert!(reason.contains("attempt 1 of 3"), "{reason}");
    assert!(reason.contains("3 failed, 41 passed"), "{reason}");
    assert!(reason.contains("violation, not a fix"), "{reason}");
}

#[test]
fn passing_verify_opens_and_is_remembered() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    let first = decide(&stop(false), &mut host);
    assert_eq!(first.verdict, Some(Verdict::Verified));
    assert_eq!(first.tree.as_deref(), Some("bbbb"));
    assert_eq!(
        first.message.as_deref(),
        Some("prove-it: verified: ./verify.sh exit 0 in 0.0 s"),
        "a pass leaves a receipt"
    );
    // Passed before: verified, and nothing new to say.
    let again = decide(&stop(false), &mut host);
    assert_eq!(
        (again.verdict, again.message),
        (Some(Verdict::Verified), None)
    );
    assert_eq!(host.runs, 1, "a passed state is not re-run");
}

#[test]
fn trap1_blocks_max_times_then_yields_loudly_despite_the_retry_flag() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    for attempt in 1..=3 {
        let d = decide(&stop(attempt > 1), &mut host);
        assert_eq!(d.action, Action::Block, "attempt {attempt}");
        assert!(
            d.reason
                .expect("reason")
                .contains(&format!("attempt {attempt} of 3"))
        );
    }
    let d = decide(&stop(true), &mut host);
    assert_eq!(d.action, Action::Allow);
    let msg = d.message.expect("a yield is never silent");
    assert!(msg.contains("without passing verification"), "{msg}");
    // A new prompt resets the count: the next turn is gated again.
    decide(&event(EventKind::TurnStart), &mut host);
    assert_eq!(host.session().attempts, 0);
    assert_eq!(decide(&stop(false), &mut host).action, Action::Block);
}

/// Gemini CLI's trap: its retry flag is false again after a retry that
/// used a tool. Only a new turn resets the count, so the cap holds.
#[test]
fn a_cleared_retry_flag_does_not_reset_the_count() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    for attempt in 1..=3 {
        let d = decide(&stop(false), &mut host);
        assert!(
            d.reason
                .expect("a block")
                .contains(&format!("attempt {attempt} of 3"))
        );
    }
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Yielded));
}

/// Codex CLI names its turns: a stop in another turn starts counting anew,
/// even when no turn start reached the gate.
#[test]
fn a_stop_in_a_new_turn_counts_from_one() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let in_turn = |turn: &str| Event {
        turn: Some(turn.into()),
        ..stop(false)
    };
    for _ in 0..3 {
        assert_eq!(decide(&in_turn("t1"), &mut host).action, Action::Block);
    }
    assert_eq!(decide(&in_turn("t1"), &mut host).action, Action::Allow);
    let d = decide(&in_turn("t2"), &mut host);
    assert!(d.reason.expect("a block").contains("attempt 1 of 3"));
}

/// Claude Code fires a turn start for a prompt the person queues while a
/// stop is decided, naming the running turn: the count goes on, so the
/// last block announced is the last one.
#[test]
fn a_turn_start_naming_the_running_turn_keeps_the_count() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let in_turn = |kind: EventKind, turn: &str| Event {
        turn: Some(turn.into()),
        ..if kind == EventKind::Stop {
            stop(true)
        } else {
            event(kind)
        }
    };
    decide(&in_turn(EventKind::TurnStart, "p1"), &mut host);
    for attempt in 1..=3 {
        let d = decide(&in_turn(EventKind::Stop, "p1"), &mut host);
        assert!(
            d.reason
                .expect("a block")
                .contains(&format!("attempt {attempt} of 3"))
        );
        decide(&in_turn(EventKind::TurnStart, "p1"), &mut host);
    }
    let d = decide(&in_turn(EventKind::Stop, "p1"), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Yielded));
    // The queued prompt's own turn, under its own id, is gated anew.
    let d = decide(&in_turn(EventKind::Stop, "p2"), &mut host);
    assert!(d.reason.expect("a block").contains("attempt 1 of 3"));
    // And a turn start naming another turn resets the count.
    decide(&in_turn(EventKind::TurnStart, "p3"), &mut host);
    assert_eq!(host.session().attempts, 0);
}

#[test]
fn max_blocks_zero_only_warns() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let mut ev = stop(false);
    ev.settings.max_blocks = 0;
    let d = decide(&ev, &mut host);
    assert_eq!(d.action, Action::Allow);
    assert!(d.message.expect("warning").contains("only warns"));
}

#[test]
fn trap3_deleting_or_chmod_verify_is_refused() {
    for exists in [false, true] {
        let mut host = started();
        host.fingerprint = "bbbb".into();
        host.facts = VerifyFacts {
            exists,
            executable: false,
            hash: None,
        };
        let d = decide(&stop(false), &mut host);
        assert_eq!(d.action, Action::Block);
        let reason = d.reason.expect("reason");
        let expected = if exists {
            "chmod +x verify.sh"
        } else {
            "deleted"
        };
        assert!(reason.contains(expected), "{reason}");
        assert_eq!(host.runs, 0);
    }
}

#[test]
fn not_armed_at_start_nor_now_is_quiet() {
    let mut host = Fake::armed();
    host.facts = VerifyFacts {
        exists: false,
        executable: false,
        hash: None,
    };
    decide(&event(EventKind::SessionStart), &mut host);
    host.fingerprint = "bbbb".into();
    assert_eq!(decide(&stop(false), &mut host), Decision::allow());
}

#[test]
fn verify_created_during_session_arms_the_gate() {
    let mut host = Fake::armed();
    host.facts = VerifyFacts {
        exists: false,
        executable: false,
        hash: None,
    };
    decide(&event(EventKind::SessionStart), &mut host);
    host.fingerprint = "bbbb".into();
    host.facts = VerifyFacts {
        exists: true,
        executable: true,
        hash: Some("new".into()),
    };
    assert_eq!(decide(&stop(false), &mut host).action, Action::Block);
    host.verify_passes = true;
    let d = decide(&stop(true), &mut host);
    assert!(d.message.expect("reported").contains("was created"));
}

#[test]
fn pass_through_changed_verify_is_reported() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.facts.hash = Some("v2".into());
    host.verify_passes = true;
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Allow);
    assert!(
        d.message
            .expect("reported")
            .contains("git diff -- verify.sh")
    );
}

#[test]
fn resume_keeps_the_baseline() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let mut resume = event(EventKind::SessionStart);
    resume.source = Some("resume".into());
    decide(&resume, &mut host);
    decide(&event(EventKind::SessionStart), &mut host);
    assert_eq!(host.session().baseline.as_deref(), Some("aaaa"));
    assert_eq!(decide(&stop(false), &mut host).action, Action::Block);
}

#[test]
fn missing_state_counts_as_changed_and_is_reported() {
    let mut host = Fake::armed();
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Block);
    assert!(d.message.expect("reported").contains("no baseline"));
    // Said once, not at every stop.
    let again = decide(&stop(true), &mut host);
    assert_eq!(again.action, Action::Block);
    assert!(
        !again.message.unwrap_or_default().contains("no baseline"),
        "repeated"
    );
}

#[test]
fn corrupt_state_counts_as_changed_and_is_reported() {
    let mut host = started();
    host.session = Some(serde_json::json!({"baseline": 42}));
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Block);
    assert!(
        d.message
            .expect("reported")
            .contains("saved state cannot be used")
    );
}

#[test]
fn skip_lets_the_turn_end_and_says_so() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let mut ev = stop(false);
    ev.settings.skip = true;
    let d = decide(&ev, &mut host);
    assert_eq!(d.action, Action::Allow);
    assert!(d.message.expect("never silent").contains("PROVE_IT_SKIP"));
    assert_eq!(host.runs, 0);
}

#[test]
fn ledger_gets_one_row_per_caught_claim() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let mut ev = stop(false);
    ev.settings.ledger = true;
    decide(&ev, &mut host);
    ev.may_be_retry = true;
    decide(&ev, &mut host);
    decide(&ev, &mut host);
    assert_eq!(host.ledger.len(), 1);
    let row = &host.ledger[0];
    assert_eq!(row.claim, "All tests pass.");
    assert_eq!(row.actual, vec!["3 failed, 41 passed".to_string()]);
    assert_eq!(row.exit_code, Some(1));
}

#[test]
fn ledger_off_writes_nothing() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    decide(&stop(false), &mut host);
    assert!(host.ledger.is_empty());
}

#[test]
fn a_host_error_is_never_silent() {
    let mut host = started();
    host.tree_error = true;
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Allow);
    let msg = d.message.expect("visible");
    assert!(
        msg.contains("gate error") && msg.contains("git exploded") && msg.contains("NOT verified"),
        "{msg}"
    );
    assert_eq!(d.verdict, Some(Verdict::GateError));
}

#[test]
fn failing_lines_falls_back_to_the_last_lines() {
    let tail: Vec<String> = ["a", "", "b", "c", "d"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(failing_lines(&tail), vec!["b", "c", "d"]);
}

#[test]
fn strict_rules_refuse_a_pass_through_a_changed_verify_sh() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.facts.hash = Some("v2".into());
    host.verify_passes = true;
    let d = decide_with(&stop(false), &mut host, Rules::STRICT);
    assert_eq!(d.action, Action::Block);
    assert!(
        d.reason
            .expect("reason")
            .contains("git checkout HEAD -- verify.sh")
    );
    assert_eq!(host.runs, 0, "no need to run a check that is not accepted");
    // Restored: the strict policy lets it through like the default.
    host.facts.hash = Some("v1".into());
    let restored = decide_with(&stop(true), &mut host, Rules::STRICT);
    assert_eq!(
        (restored.action, restored.verdict),
        (Action::Allow, Some(Verdict::Verified))
    );
}

#[test]
fn a_pass_bought_by_weakening_the_checks_is_weakened_not_verified() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(skipped_test());
    host.replay_passes = false;
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Allow);
    assert_eq!(d.verdict, Some(Verdict::Weakened));
    let message = d.message.expect("a warning");
    for said in [
        "prove-it: WEAKENED",
        "NOT verified",
        "`tests/test_calc.py` (test, modified)",
        "skip marker added",
        "FAILED tests/test_calc.py::test_add",
        "git diff 0123456789ab -- tests/test_calc.py",
        "may be right",
    ] {
        assert!(message.contains(said), "{said}: {message}");
    }
    assert!(!message.contains("verified: ./verify.sh"), "{message}");
    assert_eq!(d.checks, Some(skipped_test()));
    assert_eq!(host.replays, 1);
    // The same tree later: not replayed again, and still weakened.
    let again = decide(&stop(false), &mut host);
    assert_eq!(again.verdict, Some(Verdict::Weakened));
    assert!(
        again
            .message
            .expect("said again")
            .contains("skip marker added")
    );
    assert_eq!((host.replays, host.runs), (1, 1));
}

#[test]
fn changed_checks_that_still_pass_at_their_start_are_a_note() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(skipped_test());
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Verified));
    let message = d.message.expect("receipt and note");
    assert!(
        message.starts_with("prove-it: verified: ./verify.sh exit 0"),
        "{message}"
    );
    assert!(
        message.contains("checks changed: 1 file; the session-start checks pass too"),
        "{message}"
    );
    assert!(!message.contains("WEAKENED"), "{message}");
}

#[test]
fn added_tests_alone_are_not_replayed() {
    use crate::abi::FileChange;
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    let mut added = skipped_test();
    added.files[0].change = FileChange::Added;
    host.checks = Some(added);
    host.replay_passes = false;
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Verified));
    assert_eq!(host.replays, 0);
    assert!(d.message.expect("note").contains("tests added only"));
}

#[test]
fn the_strict_policy_blocks_a_weakened_pass_then_yields() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(skipped_test());
    host.replay_passes = false;
    for attempt in 1..=3 {
        let d = decide_with(&stop(attempt > 1), &mut host, Rules::STRICT);
        assert_eq!(d.action, Action::Block, "attempt {attempt}");
        let reason = d.reason.expect("reason");
        assert!(
            reason.contains(&format!("attempt {attempt} of 3")),
            "{reason}"
        );
        assert!(
            reason.contains("Fix the code rather than the checks"),
            "{reason}"
        );
        assert!(reason.contains("say so plainly"), "{reason}");
        assert!(reason.contains("skip marker added"), "{reason}");
    }
    let d = decide_with(&stop(true), &mut host, Rules::STRICT);
    assert_eq!(d.action, Action::Allow);
    assert_eq!(d.verdict, Some(Verdict::Yielded));
    assert!(
        d.message
            .expect("warning")
            .contains("only with checks this session changed")
    );
    // One replay for the tree; the later stops remembered it.
    assert_eq!(host.replays, 1);
}

#[test]
fn a_copy_where_even_the_current_checks_fail_proves_nothing() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(skipped_test());
    host.replay_passes = false;
    host.control_passes = false;
    let d = decide(&stop(false), &mut host);
    // Nothing proven either way: not judged, never a pass.
    assert_eq!(d.verdict, Some(Verdict::NotJudged));
    assert_eq!(d.action, Action::Allow);
    let message = d.message.expect("a note");
    assert!(message.contains("NOT JUDGED"), "{message}");
    assert!(message.contains("could not be judged"), "{message}");
    assert!(!message.contains("WEAKENED"), "{message}");
    assert!(!message.contains("pass too"), "{message}");
    // A later stop on the same tree says it again, without a new replay.
    let replays = host.replays;
    let again = decide(&stop(false), &mut host);
    assert_eq!(
        again.verdict,
        Some(Verdict::NotJudged),
        "{:?}",
        again.message
    );
    assert_eq!(host.replays, replays);
}

fn suspect_code() -> CheckChanges {
    CheckChanges {
        suspect: vec![
            "`calc.py`: the test runner detected from the code: `if \"pytest\" in sys.modules:`"
                .into(),
        ],
        base: Some("0123456789abcdef".into()),
        ..CheckChanges::default()
    }
}

#[test]
fn a_pass_whose_code_fools_the_tests_is_suspect_not_verified() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(suspect_code());
    let d = decide(&stop(false), &mut host);
    assert_eq!(
        (d.action, d.verdict),
        (Action::Allow, Some(Verdict::Suspect))
    );
    let message = d.message.expect("a warning");
    for said in [
        "prove-it: SUSPECT",
        "NOT verified",
        "the test runner detected from the code",
        "git diff 0123456789ab -- calc.py",
    ] {
        assert!(message.contains(said), "{said}: {message}");
    }
    assert!(!message.contains("verified: ./verify.sh"), "{message}");
    assert_eq!(host.replays, 0, "no check changed: nothing to replay");
    // The same tree later: still suspect, with its lines.
    let again = decide(&stop(false), &mut host);
    assert_eq!(again.verdict, Some(Verdict::Suspect));
    assert!(
        again
            .message
            .expect("said")
            .contains("the test runner detected")
    );
    // Strict: refused, and the agent is told to fix the code.
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(suspect_code());
    let d = decide_with(&stop(false), &mut host, Rules::STRICT);
    assert_eq!(d.action, Action::Block);
    assert!(d.reason.expect("reason").contains("not for the tests' own"));
}

#[test]
fn the_runners_own_counts_are_read() {
    let count =
        |lines: &[&str]| tests_ran(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>());
    assert_eq!(count(&["Ran 42 tests in 0.010s", "", "OK"]), Some(42));
    assert_eq!(
        count(&["FAILED (failures=1)", "Ran 1 test in 0.001s"]),
        Some(1)
    );
    assert_eq!(
        count(&[
            "FAILED tests/test_a.py::test_x - assert 1 == 2",
            "==== 1 failed, 41 passed, 2 skipped in 0.12s ===="
        ]),
        Some(42)
    );
    assert_eq!(count(&["41 passed in 0.10s"]), Some(41));
    assert_eq!(
        count(&[
            "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s",
            "test result: FAILED. 3 passed; 1 failed; 0 ignored",
        ]),
        Some(16)
    );
    assert_eq!(
        count(&["Tests:       1 failed, 2 passed, 3 total"]),
        Some(3)
    );
    assert_eq!(count(&["      Tests  1 failed | 2 passed (3)"]), Some(3));
    assert_eq!(
        count(&["# tests 3", "# pass 2", "# fail 1", "# skipped 0"]),
        Some(3)
    );
    assert_eq!(count(&["ℹ tests 3", "ℹ pass 3", "ℹ fail 0"]), Some(3));
    assert_eq!(count(&["ok  \tgithub.com/x/y\t0.01s", "PASS"]), None);
}

#[test]
fn a_pass_that_ran_fewer_tests_than_a_failing_stop_is_said() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = false;
    host.tail = vec!["Ran 42 tests in 0.1s".into(), "FAILED (failures=1)".into()];
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Block);
    host.fingerprint = "cccc".into();
    host.verify_passes = true;
    host.tail = vec!["Ran 41 tests in 0.1s".into(), "OK".into()];
    let d = decide(&stop(true), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Verified));
    let message = d.message.expect("said");
    assert!(
        message.starts_with("prove-it: verified")
            && message.contains("fewer tests ran than at an earlier stop of this session (41"),
        "{message}"
    );
    // As many as before: nothing said.
    host.fingerprint = "dddd".into();
    host.tail = vec!["Ran 42 tests in 0.1s".into(), "OK".into()];
    let d = decide(&stop(false), &mut host);
    assert!(!d.message.unwrap_or_default().contains("fewer tests"));
}

#[test]
fn failing_tests_are_named_by_the_runners_own_lines() {
    let names = |lines: &[&str]| -> Vec<String> {
        failing_tests(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>())
            .into_iter()
            .collect()
    };
    assert_eq!(
        names(&[
            "FAIL: test_add (tests.test_calc.CalcTest.test_add)",
            "FAILED (failures=1)"
        ]),
        vec!["test_add (tests.test_calc.CalcTest.test_add)"]
    );
    assert_eq!(
        names(&[
            "FAILED tests/test_a.py::test_x - assert 1 == 2",
            "==== 1 failed in 0.1s ===="
        ]),
        vec!["tests/test_a.py::test_x"]
    );
    assert_eq!(
        names(&["--- FAIL: TestAdd (0.00s)", "FAIL"]),
        vec!["TestAdd"]
    );
    assert_eq!(names(&["test tests::adds ... FAILED"]), vec!["tests::adds"]);
    assert_eq!(
        names(&["greets --- FAILED", "---- greets stdout ----"]),
        vec!["greets"]
    );
    assert_eq!(names(&["not ok 1 - add", "# fail 1"]), vec!["add"]);
}

/// A test's identity never holds what changes from run to run (a time, a
/// progress percentage, a retry count): the same test failing at the start
/// and now is one test, for every runner read.
#[test]
fn a_failing_test_is_named_the_same_at_every_run() {
    let names = |lines: &[&str]| -> Vec<String> {
        failing_tests(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>())
            .into_iter()
            .collect()
    };
    for (a, b, name) in [
        // vitest
        (" × works 6ms", " × works 11ms", "works"),
        (
            " × tests/calc.test.ts > works 6ms (retry x2)",
            " × tests/calc.test.ts > works 1.2s",
            "tests/calc.test.ts > works",
        ),
        (
            " FAIL  tests/calc.test.ts > works",
            " FAIL  tests/calc.test.ts > works",
            "tests/calc.test.ts > works",
        ),
        // jest
        ("  ✕ adds (3 ms)", "  ✕ adds (12 ms)", "adds"),
        // node's spec reporter
        ("✖ adds (1.234ms)", "✖ adds (0.9ms)", "adds"),
        // go
        (
            "--- FAIL: TestAdd (0.00s)",
            "--- FAIL: TestAdd (0.13s)",
            "TestAdd",
        ),
        // pytest -v
        (
            "tests/test_a.py::test_x FAILED [ 50%]",
            "tests/test_a.py::test_x FAILED [100%]",
            "tests/test_a.py::test_x",
        ),
        // nextest
        (
            "        FAIL [   0.003s] calc::tests::adds",
            "        FAIL [   1.020s] calc::tests::adds",
            "calc::tests::adds",
        ),
        // mocha
        ("  1) adds", "  2) adds:", "adds"),
    ] {
        assert_eq!(names(&[a]), vec![name], "{a}");
        assert_eq!(names(&[b]), vec![name], "{b}");
    }
    // What is part of a name stays.
    assert_eq!(
        names(&["  ✕ adds (negative numbers)"]),
        vec!["adds (negative numbers)"]
    );
    // jest's file line and go's package line name no test.
    assert!(names(&["FAIL  tests/calc.test.js", "FAIL\tcalc\t0.002s"]).is_empty());
}

#[test]
fn a_replay_that_fails_only_on_tests_that_passed_at_the_start_is_a_behaviour_change() {
    let changed_expectation = || CheckChanges {
        files: vec![crate::abi::CheckChange {
            path: "tests/test_calc.py".into(),
            kind: crate::abi::CheckKind::Test,
            change: crate::abi::FileChange::Modified,
            evidence: vec!["assertion changed: `a` -> `b`".into()],
            ..Default::default()
        }],
        base: Some("0123456789abcdef".into()),
        ..CheckChanges::default()
    };
    // Passing at the start: the session changed what the test expects.
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(changed_expectation());
    host.replay_passes = false;
    host.start_passes = Some(true);
    let d = decide(&stop(false), &mut host);
    assert!(host.start_asked);
    assert_eq!(d.verdict, Some(Verdict::BehaviourChanged));
    let message = d.message.expect("said");
    assert!(
        message.starts_with("prove-it: behaviour changed") && message.contains("1 test expect"),
        "{message}"
    );
    assert!(!message.contains("WEAKENED"), "{message}");
    // Remembered: the same tree again is said again without a replay.
    let again = decide(&stop(false), &mut host);
    assert_eq!(again.verdict, Some(Verdict::BehaviourChanged));
    assert_eq!(host.replays, 1);

    // Failing at the start on the same test: the session hid a failure.
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(changed_expectation());
    host.replay_passes = false;
    host.start_passes = Some(false);
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Weakened));

    // A skip marker never says what the code should do: weakened, even
    // though the test passed at the start.
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    let mut skipped = changed_expectation();
    skipped.files[0].evidence = vec!["skip marker added: `@pytest.mark.skip`".into()];
    host.checks = Some(skipped);
    host.replay_passes = false;
    host.start_passes = Some(true);
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Weakened));
}

#[test]
fn with_as_many_failures_at_the_start_as_the_tail_names_other_tests_cannot_be_told() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(CheckChanges {
        files: vec![crate::abi::CheckChange {
            path: "tests/test_calc.py".into(),
            kind: crate::abi::CheckKind::Test,
            change: crate::abi::FileChange::Modified,
            evidence: vec!["assertion changed: `a` -> `b`".into()],
            ..Default::default()
        }],
        ..CheckChanges::default()
    });
    host.replay_passes = false;
    host.start_passes = Some(false);
    // Seven other tests failing at the start: the one failing now passed
    // there, a behaviour change.
    host.start_tail = (0..7)
        .map(|i| format!("FAILED tests/test_calc.py::test_{i} - boom"))
        .collect();
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::BehaviourChanged));
    // What it says of the start run is what that run did.
    let message = d.message.unwrap_or_default();
    assert!(
        !message.contains("passed on the code as it was then")
            && message.contains("failed on the code as it was then only on other tests"),
        "{message}"
    );
    // Eight: names may have been cut, so it stays weakened.
    let mut host2 = started();
    host2.fingerprint = "bbbb".into();
    host2.verify_passes = true;
    host2.checks = host.checks.clone();
    host2.replay_passes = false;
    host2.start_passes = Some(false);
    host2.start_tail = (0..8)
        .map(|i| format!("FAILED tests/test_calc.py::test_{i} - boom"))
        .collect();
    let d = decide(&stop(false), &mut host2);
    assert_eq!(d.verdict, Some(Verdict::Weakened));
}

/// What rules out "behaviour changed" is what an evidence line says it
/// found, never the code it quotes: an assertion on a function named
/// `useHook` is an assertion changed, not a hook.
#[test]
fn the_code_an_evidence_line_quotes_does_not_decide_its_kind() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(CheckChanges {
        files: vec![crate::abi::CheckChange {
            path: "test/hooks.test.js".into(),
            kind: crate::abi::CheckKind::Test,
            change: crate::abi::FileChange::Modified,
            evidence: vec![
                "assertion changed: `expect(useHook()).toBe(1)` -> `expect(useHook()).toBe(2)`"
                    .into(),
            ],
            ..Default::default()
        }],
        ..CheckChanges::default()
    });
    host.replay_passes = false;
    host.start_passes = Some(true);
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::BehaviourChanged));
}

/// A run that fails for want of a module or a command says so beside the
/// failure, to the agent and in a weakening's report.
#[test]
fn a_failure_for_want_of_a_module_says_the_machine_lacks_it() {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.tail = vec![
        "E   ModuleNotFoundError: No module named 'freezegun'".into(),
        "⋮".into(),
        "ERROR tests/test_time.py".into(),
        "1 error in 0.17s".into(),
    ];
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.action, Action::Block);
    let reason = d.reason.expect("reason");
    assert!(
        reason.contains("this machine lacks the Python module `freezegun`: the code may be fine"),
        "{reason}"
    );
    // The start tree passed on this machine: the session removed it.
    let mut host = started();
    host.passed.insert("aaaa".into());
    host.fingerprint = "bbbb".into();
    host.tail = vec!["E   ModuleNotFoundError: No module named 'calc'".into()];
    let reason = decide(&stop(false), &mut host).reason.expect("reason");
    assert!(
        reason.contains("The output says the Python module `calc` is missing; `./verify.sh` passed on this machine at the session's start"),
        "{reason}"
    );
    assert!(!reason.contains("the code may be fine"), "{reason}");

    // A plain failure says nothing of the kind.
    let mut host = started();
    host.fingerprint = "bbbb".into();
    let reason = decide(&stop(false), &mut host).reason.expect("reason");
    assert!(!reason.contains("lacks"), "{reason}");
}

/// A passing stop whose changed checks fail when replayed, with `tail`;
/// the session-start checks pass at the start or not.
fn replaying(tail: Vec<String>, start_passes: bool) -> Fake {
    let mut host = started();
    host.fingerprint = "bbbb".into();
    host.verify_passes = true;
    host.checks = Some(skipped_test());
    host.replay_passes = false;
    host.replay_tail = tail;
    host.start_passes = Some(start_passes);
    host
}

/// The session-start checks that cannot run here (they failed for the same
/// missing piece at the start too) prove nothing by failing now: not a
/// weakening. Failing for it only now, on the session's code, is judged:
/// the session's code asks for what was not asked for before.
#[test]
fn a_replay_that_fails_only_for_what_the_machine_lacks_is_not_a_weakening() {
    let lack = "pytest: error: unrecognized arguments: --cov=humanize".to_string();
    let mut host = replaying(vec![lack.clone()], false);
    host.start_tail = vec![lack.clone()];
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::NotJudged), "{:?}", d.message);
    let message = d.message.expect("said");
    assert!(
        message.contains(
            "could not be judged: they need the plugin that gives the option `--cov=humanize`"
        ) && message.contains("the code may be fine"),
        "{message}"
    );

    // Passing at the start, failing for it now: the session's doing.
    let mut host = replaying(
        vec!["E   ModuleNotFoundError: No module named 'calc'".into()],
        true,
    );
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Weakened));
    let message = d.message.expect("said");
    assert!(
        message.contains(
            "for want of the Python module `calc`, which they found here at the session's start"
        ) && !message.contains("the code may be fine"),
        "{message}"
    );

    // Failing at the start for another reason: judged too.
    let mut host = replaying(vec![lack], false);
    let d = decide(&stop(false), &mut host);
    assert_eq!(d.verdict, Some(Verdict::Weakened));
}
