//! The four silent failures of a naive Stop hook, each pinned.

use crate::util::Sandbox;

/// Trap 1: reading `stop_hook_active` as "let it through" turns the gate off
/// after one block; ignoring it blocks forever. The gate counts itself.
#[test]
fn trap1_block_once_then_never() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    repo.stop("s", false).assert_blocked_with("attempt 1 of 3");
    // The retry arrives with stop_hook_active=true and must still be gated.
    repo.stop("s", true).assert_blocked_with("attempt 2 of 3");
    repo.stop("s", true).assert_blocked_with("attempt 3 of 3");
    // ...and the gate does not block forever.
    assert!(!repo.stop("s", true).blocked());
}

/// Trap 2: judging work by a dirty tree lets a turn that commits through.
#[test]
fn trap2_commit_hides_work() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    repo.commit("agent work");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the tree is clean"
    );
    repo.stop("s", false).assert_blocked_with("1 failed");
}

/// Trap 3: the cheapest escape is deleting verify.sh.
#[test]
fn trap3_deleting_verify_sh_is_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 1");
    repo.start("s");
    std::fs::remove_file(repo.path("verify.sh")).expect("rm");
    repo.stop("s", false).assert_blocked_with("deleted");
}

/// Trap 3: ...or `chmod -x verify.sh`.
#[test]
fn trap3_chmod_minus_x_is_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 1");
    repo.start("s");
    repo.chmod("verify.sh", 0o644);
    repo.stop("s", false)
        .assert_blocked_with("chmod +x verify.sh");
}

/// Trap 3, committed: deleting it in a commit is still a disarm.
#[test]
fn trap3_committed_deletion_is_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 1");
    repo.start("s");
    repo.git(&["rm", "-q", "verify.sh"]);
    repo.commit("remove the gate");
    repo.stop("s", false).assert_blocked_with("deleted");
}

/// Trap 4: when the gate yields after its budget, its last word is a
/// warning the user sees, never silence.
#[test]
fn trap4_silent_give_up() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_MAX_BLOCKS", "1");
    let repo = sb.failing_session("s");
    repo.stop("s", false).assert_blocked_with("attempt 1 of 1");
    let out = repo.stop("s", true);
    out.assert_allowed_saying("this turn ended without passing verification");
    out.assert_allowed_saying("1 failed, 41 passed");
}
