//! The contract inside the real Claude Code CLI: the plugin installed through
//! the marketplace flow, a scripted agent on loopback that edits with the
//! Bash tool and claims it is done, and assertions on Claude Code's own
//! stream-json hook events and on what the agent was told.

use crate::claude::{ClaudeHome, ScriptedModel, Session, Step};
use crate::util::{Repo, Sandbox};
use serde_json::Value;
use std::time::{Duration, Instant};

const CLAIM: &str = "All tests pass. Ready to merge.";

/// One world: an isolated Claude Code home with the plugin, and a repo whose
/// verify.sh fails while `broken` exists (and counts its runs).
struct World {
    home: ClaudeHome,
    _sb: Sandbox,
    repo: Repo,
}

impl World {
    fn new() -> Self {
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        repo.arm_counting();
        World {
            home: ClaudeHome::with_plugin_installed(),
            _sb: sb,
            repo,
        }
    }

    fn turn(&self, model: &ScriptedModel, env: &[(&str, &str)], resume: bool) -> Session {
        let session = self
            .home
            .session(&self.repo.root, model, "make the change", env, resume);
        assert!(session.status.success(), "{}", session.dump());
        session
    }
}

/// The Stop answers that blocked, and those that only spoke to the user.
fn blocks(session: &Session) -> Vec<Value> {
    session
        .stop_answers()
        .into_iter()
        .filter(|a| a["decision"] == "block")
        .collect()
}

fn reasons(session: &Session) -> String {
    blocks(session)
        .iter()
        .map(|a| a["reason"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn user_messages(session: &Session) -> String {
    session
        .stop_answers()
        .iter()
        .filter_map(|a| a["systemMessage"].as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_false_completion_is_caught_sent_back_and_then_fixed() {
    let world = World::new();
    let model = ScriptedModel::start(vec![
        Step::Bash("echo oops > broken"),
        Step::Say(CLAIM),
        Step::Bash("rm broken"),
        Step::Say("Fixed: verify.sh passes."),
    ]);
    let session = world.turn(&model, &[], false);
    assert_eq!(blocks(&session).len(), 1, "{}", session.dump());
    assert!(reasons(&session).contains("1 failed, 41 passed"));
    assert_eq!(
        session.hook_responses("Stop").len(),
        2,
        "blocked once, then let through"
    );
    // The agent was sent back with the failing lines.
    let told = model.told();
    assert!(
        told.contains("1 failed, 41 passed") && told.contains("attempt 1 of 3"),
        "{told}"
    );
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn work_hidden_in_a_commit_is_still_gated() {
    let world = World::new();
    let model = ScriptedModel::start(vec![
        Step::Bash("echo oops > broken && git add -A && git commit -qm 'agent work'"),
        Step::Say(CLAIM),
        Step::Bash("git rm -q broken && git commit -qm fix"),
        Step::Say("Fixed and committed."),
    ]);
    let session = world.turn(&model, &[], false);
    assert_eq!(blocks(&session).len(), 1, "{}", session.dump());
    assert_eq!(
        world.repo.git(&["status", "--porcelain"]),
        "",
        "the work was committed"
    );
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_new_untracked_file_is_work() {
    let world = World::new();
    let model = ScriptedModel::start(vec![
        Step::Bash("mkdir -p gen && echo x > gen/out.txt && touch broken"),
        Step::Say(CLAIM),
    ]);
    let session = world.turn(&model, &[("PROVE_IT_MAX_BLOCKS", "1")], false);
    assert_eq!(blocks(&session).len(), 1, "{}", session.dump());
}

/// The agent breaks a tracked file and hides the edit from `git status`
/// with an index flag: still work, still gated.
#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn an_edit_hidden_by_assume_unchanged_is_still_gated() {
    let world = World::new();
    world.repo.write("app.txt", "fine\n");
    world.repo.arm(
        "if grep -q oops app.txt; then echo 'test result: 1 failed, 41 passed'; exit 1; fi\necho ok",
    );
    let model = ScriptedModel::start(vec![
        Step::Bash("echo oops > app.txt && git update-index --assume-unchanged app.txt"),
        Step::Say(CLAIM),
    ]);
    let session = world.turn(&model, &[("PROVE_IT_MAX_BLOCKS", "1")], false);
    assert_eq!(
        world.repo.git(&["status", "--porcelain"]),
        "",
        "the edit was hidden from git status"
    );
    assert_eq!(blocks(&session).len(), 1, "{}", session.dump());
    assert!(reasons(&session).contains("1 failed, 41 passed"));
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_read_only_session_in_a_failing_repo_is_untouched() {
    let world = World::new();
    world.repo.write("broken", "failing before the session");
    world.repo.commit("already failing");
    let model = ScriptedModel::start(vec![
        Step::Bash("ls && git log --oneline | head -3"),
        Step::Say("I only looked around."),
    ]);
    let session = world.turn(&model, &[], false);
    let stops = session.hook_responses("Stop");
    assert_eq!(stops.len(), 1, "{}", session.dump());
    assert_eq!(stops[0]["stdout"], "", "a read-only stop is a quiet allow");
    assert_eq!(world.repo.runs(), 0, "verify.sh never ran");
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn deleting_verify_sh_during_the_session_is_refused() {
    let world = World::new();
    let model = ScriptedModel::start(vec![Step::Bash("rm verify.sh"), Step::Say(CLAIM)]);
    let session = world.turn(&model, &[("PROVE_IT_MAX_BLOCKS", "1")], false);
    assert!(
        reasons(&session).contains("was deleted during this session"),
        "{}",
        session.dump()
    );
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn chmod_minus_x_during_the_session_is_refused() {
    let world = World::new();
    let model = ScriptedModel::start(vec![Step::Bash("chmod -x verify.sh"), Step::Say(CLAIM)]);
    let session = world.turn(&model, &[("PROVE_IT_MAX_BLOCKS", "1")], false);
    assert!(
        reasons(&session).contains("chmod +x verify.sh"),
        "{}",
        session.dump()
    );
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_stubborn_agent_is_blocked_max_times_then_warned_and_gated_again_next_turn() {
    let world = World::new();
    let env = [("PROVE_IT_MAX_BLOCKS", "2")];
    let model = ScriptedModel::start(vec![
        Step::Bash("touch broken"),
        Step::Say(CLAIM),
        Step::Say("Really, all tests pass."),
        Step::Say("I am done."),
        // The next turn.
        Step::Say("Still done."),
        Step::Say("Done, I said."),
        Step::Say("Giving up."),
    ]);
    let first = world.turn(&model, &env, false);
    assert_eq!(
        blocks(&first).len(),
        2,
        "exactly PROVE_IT_MAX_BLOCKS blocks\n{}",
        first.dump()
    );
    assert!(reasons(&first).contains("attempt 2 of 2"));
    // The yield is Claude Code's loud stop, with the warning as its reason:
    // the result says so too, for a program reading the run.
    let last = first.stop_answers().pop().expect("an answer");
    assert_eq!(last["continue"], false, "{}", first.dump());
    assert!(
        last["stopReason"]
            .as_str()
            .is_some_and(|r| r.contains("this turn ended without passing verification")),
        "the user is told\n{}",
        first.dump()
    );
    assert_eq!(first.terminal_reason(), "stop_hook_prevented");

    let second = world.turn(&model, &env, true);
    let again = reasons(&second);
    assert!(
        again.contains("attempt 1 of 2"),
        "the next turn is gated again\n{}",
        second.dump()
    );
}

/// Trap 3 one level up: `verify.sh` rewritten to pass is a weakened check,
/// said as loudly as a yield, never a plain receipt.
#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_pass_through_a_rewritten_verify_sh_is_reported() {
    let world = World::new();
    let model = ScriptedModel::start(vec![
        Step::Bash("touch broken && printf '#!/bin/sh\\nexit 0\\n' > verify.sh"),
        Step::Say(CLAIM),
    ]);
    let session = world.turn(&model, &[], false);
    assert!(blocks(&session).is_empty(), "{}", session.dump());
    let last = session.stop_answers().pop().expect("an answer");
    assert_eq!(last["continue"], false, "{}", session.dump());
    let said = last["stopReason"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("prove-it: WEAKENED") && said.contains("-- verify.sh`"),
        "{}",
        session.dump()
    );
    assert_eq!(session.terminal_reason(), "stop_hook_prevented");
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn skip_lets_the_turn_end_and_says_so() {
    let world = World::new();
    let model = ScriptedModel::start(vec![Step::Bash("touch broken"), Step::Say(CLAIM)]);
    let session = world.turn(&model, &[("PROVE_IT_SKIP", "1")], false);
    assert!(blocks(&session).is_empty(), "{}", session.dump());
    assert!(
        user_messages(&session).contains("PROVE_IT_SKIP=1"),
        "{}",
        session.dump()
    );
    assert_eq!(world.repo.runs(), 0);
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn the_ledger_gets_exactly_one_row_with_the_agents_claim() {
    let world = World::new();
    let model = ScriptedModel::start(vec![
        Step::Bash("touch broken"),
        Step::Say(CLAIM),
        Step::Say("Now really fixed."),
        Step::Bash("rm broken"),
        Step::Say("Fixed."),
    ]);
    world.turn(&model, &[("PROVE_IT_LEDGER", "1")], false);
    let ledger = world.home.dir.path().join("ledger/ledger.jsonl");
    let text = std::fs::read_to_string(&ledger).expect("ledger written");
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    let claims: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "caught").collect();
    assert_eq!(claims.len(), 1, "{text}");
    assert_eq!(claims[0]["claim"], CLAIM);
    // And each block as a verdict, numbered by the blocks before it.
    let blocks: Vec<&Value> = rows.iter().filter(|r| r["verdict"] == "blocked").collect();
    assert_eq!(blocks.len(), 2, "{text}");
    assert_eq!(
        (blocks[0]["attempts"].clone(), blocks[1]["attempts"].clone()),
        (0.into(), 1.into())
    );
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_tree_that_already_passed_is_not_verified_again_in_a_later_turn() {
    let world = World::new();
    let model = ScriptedModel::start(vec![
        Step::Bash("echo feature > feature.txt"),
        Step::Say("Added the feature."),
        // The next turn changes nothing.
        Step::Say("Nothing more to do."),
    ]);
    world.turn(&model, &[], false);
    assert_eq!(world.repo.runs(), 1);
    let second = world.turn(&model, &[], true);
    assert!(blocks(&second).is_empty(), "{}", second.dump());
    assert_eq!(
        world.repo.runs(),
        1,
        "the passed state was not verified again"
    );
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_hanging_verify_sh_is_cut_at_the_timeout_and_the_agent_is_told() {
    let world = World::new();
    world
        .repo
        .arm("if [ -e hang ]; then echo 'waiting forever'; sleep 600; fi");
    let model = ScriptedModel::start(vec![
        Step::Bash("touch hang"),
        Step::Say(CLAIM),
        Step::Bash("rm hang"),
        Step::Say("Removed the hang."),
    ]);
    let began = Instant::now();
    let session = world.turn(&model, &[("PROVE_IT_TIMEOUT", "2")], false);
    assert!(
        began.elapsed() < Duration::from_secs(120),
        "took {:?}",
        began.elapsed()
    );
    assert!(
        reasons(&session).contains("timed out after 2 s"),
        "{}",
        session.dump()
    );
    assert!(
        model.told().contains("timed out after 2 s"),
        "the agent was told"
    );
}
