//! The contract's rules, one test each (see SPEC.md).

use crate::util::Sandbox;

#[test]
fn failing_check_blocks_with_attempt_tail_and_warning() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s").assert_quiet();
    repo.write("broken", "x");
    let out = repo.stop("s", false);
    out.assert_blocked_with("attempt 1 of 3");
    out.assert_blocked_with("1 failed, 41 passed");
    out.assert_blocked_with("violation, not a fix");
}

#[test]
fn passing_check_opens_with_a_receipt() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_verified();
    assert_eq!(repo.runs(), 1);
}

#[test]
fn read_only_session_is_untouched_even_on_a_failing_tree() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "already failing before the session");
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    assert_eq!(repo.runs(), 0, "a read-only session never runs verify.sh");
}

#[test]
fn passed_tree_state_is_not_verified_again() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_verified();
    // Nothing new to check: nothing said.
    repo.prompt("s");
    repo.stop("s", false).assert_quiet();
    assert_eq!(repo.runs(), 1);
    // Another session on the same repo at the same state: remembered too.
    repo.start("other");
    repo.write("src.txt", "more work");
    repo.stop("other", false).assert_verified();
    repo.write("src.txt", "work");
    repo.stop("other", false).assert_quiet();
    assert_eq!(repo.runs(), 2);
}

#[test]
fn without_verify_sh_the_hook_is_quiet() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.start("s").assert_quiet();
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_quiet();
}

#[test]
fn outside_a_git_repository_the_hook_is_quiet() {
    let sb = Sandbox::new();
    let dir = sb.tmp.path().join("plain");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("verify.sh"), "#!/bin/sh\nexit 1\n").expect("write");
    let input = serde_json::json!({"session_id": "s", "cwd": dir, "stop_hook_active": false});
    crate::util::run_hook(&dir, &sb.env, "stop", input.to_string().as_bytes()).assert_quiet();
}

#[test]
fn verify_sh_created_during_the_session_arms_the_gate() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.start("s");
    repo.write("verify.sh", "#!/bin/sh\necho nope; exit 3\n");
    repo.chmod("verify.sh", 0o755);
    repo.stop("s", false).assert_blocked_with("exit 3");
}

#[test]
fn max_blocks_then_a_loud_yield_and_the_next_turn_is_gated_again() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_MAX_BLOCKS", "2");
    let repo = sb.failing_session("s");
    let first = repo.stop("s", false);
    first.assert_blocked_with("attempt 1 of 2");
    assert!(!first.reason().contains("last block"), "{first}");
    repo.stop("s", true)
        .assert_blocked_with("attempt 2 of 2).\nThis is the last block");
    let out = repo.stop("s", true);
    out.assert_yielded_saying("without passing verification");
    out.assert_yielded_saying("after 2 blocked attempts (PROVE_IT_MAX_BLOCKS=2)");
    repo.prompt("s").assert_quiet();
    repo.stop("s", false).assert_blocked_with("attempt 1 of 2");
}

#[test]
fn max_blocks_zero_warns_without_blocking() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_MAX_BLOCKS", "0");
    let repo = sb.failing_session("s");
    repo.stop("s", false).assert_yielded_saying("only warns");
}

#[test]
fn skip_lets_the_turn_end_and_says_so() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_SKIP", "1");
    let repo = sb.failing_session("s");
    repo.stop("s", false)
        .assert_allowed_saying("PROVE_IT_SKIP=1");
    assert_eq!(repo.runs(), 0);
}

/// Trap 3, one level up: a `verify.sh` rewritten to pass is a weakened
/// check. Its session-start version, replayed, fails: the pass is reported
/// as weakened, with the diff to read, never as verified.
#[test]
fn a_pass_through_a_rewritten_verify_sh_is_reported() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 1");
    repo.start("s");
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
    let out = repo.stop("s", false);
    out.assert_allowed_saying("WEAKENED");
    assert!(out.message().contains("-- verify.sh`"), "{out}");
    let (code, status) = repo.status_json();
    assert_eq!(
        (code, status["verdict"].as_str()),
        (1, Some("weakened")),
        "{status}"
    );
    assert_eq!(
        status["checks"]["files"][0]["path"], "verify.sh",
        "{status}"
    );
}

#[test]
fn resume_and_compact_never_move_the_baseline() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    repo.start_from("s", "resume").assert_quiet();
    repo.start_from("s", "compact").assert_quiet();
    repo.stop("s", false).assert_blocked_with("attempt 1 of 3");
}

#[test]
fn cwd_in_a_subfolder_gates_the_whole_repository() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("deep/er/file.txt", "x");
    repo.commit("sub");
    let sub = repo.path("deep/er");
    let hook = |event: &str, extra: serde_json::Value| {
        let mut input = serde_json::json!({"session_id": "s", "cwd": sub, "source": "startup"});
        input
            .as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        crate::util::run_hook(&sub, &repo.env, event, input.to_string().as_bytes())
    };
    hook("session-start", serde_json::json!({})).assert_quiet();
    repo.write("broken", "x");
    hook("stop", serde_json::json!({"stop_hook_active": false})).assert_blocked_with("1 failed");
}

#[test]
fn bad_settings_are_reported_and_defaults_apply() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_MAX_BLOCKS", "lots");
    let repo = sb.failing_session("s");
    let out = repo.stop("s", false);
    out.assert_blocked_with("attempt 1 of 3");
    assert!(out.message().contains("PROVE_IT_MAX_BLOCKS=lots"), "{out}");
}

/// A read-only stop concludes what the records already say: it rewrites no
/// record (issue #24: every stop wrote and renamed two verdict files).
#[test]
fn a_stop_that_changes_no_verdict_writes_no_record() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    let records = || -> Vec<(String, u64, i64)> {
        crate::util::files_under(&sb.state_dir())
            .into_iter()
            .filter(|f| f.ends_with("verdict.json"))
            .map(|f| {
                let meta = std::fs::metadata(sb.state_dir().join(&f)).expect("meta");
                (f, meta.ino(), meta.mtime_nsec())
            })
            .collect()
    };
    let before = records();
    assert_eq!(before.len(), 2, "{before:?}");
    repo.stop("s", false).assert_quiet();
    assert_eq!(records(), before, "a read-only stop rewrote a record");
    // A new verdict is written.
    repo.write("work.txt", "x");
    repo.stop("s", false).assert_verified();
    assert!(records().iter().all(|r| !before.contains(r)));
}

/// `prove-it status` after each verdict: a script can tell them apart
/// (`--json`), and only a verified or unchanged tree, still the one
/// judged, exits 0.
#[test]
fn status_tells_every_verdict_apart_and_exits_0_only_when_proven() {
    let status = |repo: &crate::util::Repo, extra: &[&str]| -> (i32, serde_json::Value) {
        let mut args = vec!["status", "--json"];
        args.extend_from_slice(extra);
        let out = crate::util::prove_it(&repo.root, &repo.env, &args)
            .output()
            .expect("status");
        let json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"));
        (out.status.code().expect("exit code"), json)
    };
    let expect = |repo: &crate::util::Repo, verdict: Option<&str>, code: i32| {
        let (got, json) = status(repo, &[]);
        assert_eq!(json["verdict"].as_str(), verdict, "{json}");
        assert_eq!(got, code, "{json}");
        assert_eq!(json["proven"], code == 0, "{json}");
    };

    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_MAX_BLOCKS", "1");
    let repo = sb.repo("r");
    repo.arm_counting();
    expect(&repo, None, 2); // nothing judged here yet
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    expect(&repo, Some("unchanged"), 0);
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_verified();
    expect(&repo, Some("verified"), 0);
    repo.write("src.txt", "more work, not yet judged");
    let (code, json) = status(&repo, &[]);
    assert_eq!(
        (code, json["tree_unchanged_since"].as_bool()),
        (1, Some(false)),
        "{json}"
    );
    repo.write("broken", "x");
    repo.stop("s", false).assert_blocked_with("1 failed");
    expect(&repo, Some("blocked"), 1);
    repo.stop("s", true)
        .assert_yielded_saying("without passing verification");
    expect(&repo, Some("yielded"), 1);
    // One session's verdict, by its id, while another's is the last.
    repo.prompt("s");
    std::fs::remove_file(repo.path("verify.sh")).expect("rm");
    repo.stop("s", false).assert_blocked_with("deleted");
    expect(&repo, Some("disarm_refused"), 1);
    let (_, json) = status(&repo, &["--session", "s"]);
    assert_eq!(json["verdict"], "disarm_refused", "{json}");
    let (code, _) = status(&repo, &["--session", "never-seen"]);
    assert_eq!(code, 2);

    // A repository that is not armed is never judged: nothing recorded.
    let sb = Sandbox::new();
    let repo = sb.repo("unarmed");
    repo.start("s");
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_quiet();
    expect(&repo, None, 2);

    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_SKIP", "1");
    let repo = sb.failing_session("s");
    repo.stop("s", false).assert_allowed_saying("skipped");
    expect(&repo, Some("skipped"), 1);

    // A repository whose git state cannot be read: a gate error.
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    std::fs::write(repo.path(".git/HEAD"), "garbage").expect("break HEAD");
    let out = repo.stop("s", false);
    assert!(out.message().contains("gate error"), "{out}");
    expect(&repo, Some("gate_error"), 1);
}

/// `prove-it status --help` names every verdict status can print. The
/// match has no catch-all: a new verdict does not compile until it is
/// named here, and then fails until the help names it.
#[test]
fn status_help_names_every_verdict() {
    use prove_it_gate::abi::Verdict;
    let name = |v: Verdict| match v {
        Verdict::Verified => "verified",
        Verdict::Weakened => "weakened",
        Verdict::Suspect => "suspect",
        Verdict::BehaviourChanged => "behaviour changed",
        Verdict::NotJudged => "not judged",
        Verdict::Unchanged => "unchanged",
        Verdict::Blocked => "blocked",
        Verdict::DisarmRefused => "disarm refused",
        Verdict::Yielded => "yielded unverified",
        Verdict::Skipped => "skipped",
        Verdict::GateError => "gate error",
    };
    let sb = Sandbox::new();
    let out = crate::util::prove_it(sb.tmp.path(), &sb.env, &["status", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for verdict in [
        Verdict::Verified,
        Verdict::Weakened,
        Verdict::Suspect,
        Verdict::BehaviourChanged,
        Verdict::NotJudged,
        Verdict::Unchanged,
        Verdict::Blocked,
        Verdict::DisarmRefused,
        Verdict::Yielded,
        Verdict::Skipped,
        Verdict::GateError,
    ] {
        assert!(
            help.contains(name(verdict)),
            "{:?} missing:\n{help}",
            name(verdict)
        );
    }
}
