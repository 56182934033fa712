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
    let out = repo.stop("s", false);
    out.assert_blocked_with("attempt 1 of 1");
    // The last block says what the next failing stop will do.
    out.assert_blocked_with("the turn ends UNVERIFIED");
    let out = repo.stop("s", true);
    // At least as loud as a block: Claude Code's own "stopped" headline.
    out.assert_yielded_saying("this turn ended without passing verification");
    out.assert_yielded_saying("1 failed, 41 passed");
    out.assert_yielded_saying("after 1 blocked attempt (");
}

/// Issue 14, defect 1: the stop's `cwd` follows the agent's last `cd`. In a
/// nested repository (here one without `verify.sh`), or outside any
/// repository, the failing work in the session's own repository used to
/// end the turn without a word.
#[test]
fn a_cd_into_a_nested_repository_still_gates_the_session_repository() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    let nested = repo.path("vendor/lib");
    std::fs::create_dir_all(&nested).expect("nested dir");
    crate::util::git(&nested, &["init", "-q", "-b", "main"]);
    let out = repo.stop_in("s", &nested);
    out.assert_blocked_with("1 failed");
    out.assert_blocked_with(&format!("in `{}`", repo.root.display()));
    // Outside every repository, too.
    let outside = sb.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).expect("dir");
    repo.stop_in("s", &outside).assert_blocked_with("1 failed");
    // Another session, never started here, is not gated here from outside.
    repo.stop_in("other", &outside).assert_quiet();
}

/// Issue 14, defect 1, with both repositories armed: each says which
/// repository its verdict is about.
#[test]
fn a_stop_covering_two_repositories_names_each() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    let inner = sb.repo("r/inner");
    inner.arm("echo inner fails; exit 3");
    let out = repo.stop_in("s", &inner.root);
    out.assert_blocked_with("1 failed");
    out.assert_blocked_with("inner fails");
    out.assert_blocked_with(&format!("in `{}`", repo.root.display()));
}

/// Issue 14, defect 2: `GIT_WORK_TREE` (or `GIT_DIR`, `GIT_INDEX_FILE`) in
/// the environment pointed the fingerprint at another directory, which
/// never changes, while `verify.sh` ran in the repository: a silent pass.
#[test]
fn repository_variables_in_the_environment_do_not_hide_work() {
    let mut sb = Sandbox::new();
    let other = sb.repo("other");
    for (var, value) in [
        ("GIT_WORK_TREE", other.root.display().to_string()),
        ("GIT_DIR", other.path(".git").display().to_string()),
        (
            "GIT_INDEX_FILE",
            other.path(".git/index").display().to_string(),
        ),
    ] {
        sb.set(var, &value);
    }
    let repo = sb.repo("r");
    // verify.sh's own git commands must see this repository too.
    repo.arm("test \"$(git rev-parse --show-toplevel)\" = \"$(pwd -P)\" || { echo wrong repository; exit 1; }\nif [ -e broken ]; then echo 'test result: 1 failed'; exit 1; fi");
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_verified();
    repo.write("broken", "x");
    repo.stop("s", false).assert_blocked_with("1 failed");
}

/// Issue 14, defect 3: a relative `PROVE_IT_STATE_DIR` put state inside the
/// work tree: every write changed the tree, so a read-only session was
/// blocked and a passed state never matched.
#[test]
fn a_relative_state_dir_is_refused_and_the_default_used() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_STATE_DIR", ".prove-it-state");
    let repo = sb.repo("r");
    repo.arm("exit 1");
    repo.start("s");
    let out = repo.stop("s", false);
    assert!(!out.blocked(), "a read-only session is not blocked\n{out}");
    out.assert_allowed_saying("not an absolute path");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "nothing written in the tree"
    );
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_blocked_with("exit 1");
}

/// Issue 14, defect 3: an absolute state dir inside the work tree is as
/// bad as a relative one.
#[test]
fn a_state_dir_inside_the_work_tree_is_refused() {
    let mut sb = Sandbox::new();
    let root = sb.tmp.path().join("r");
    sb.set(
        "PROVE_IT_STATE_DIR",
        &root.join(".state").display().to_string(),
    );
    let repo = sb.repo("r");
    repo.arm("exit 1");
    repo.start("s");
    let out = repo.stop("s", false);
    assert!(!out.blocked(), "a read-only session is not blocked\n{out}");
    out.assert_allowed_saying("inside the work tree");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_blocked_with("exit 1");
}

/// Issue 14, defect 4: one repository reached by two spellings (a symlink;
/// macOS `/tmp` and `/private/tmp`) had two states: a session started
/// through one and stopped through the other lost its baseline, and a
/// read-only session was blocked.
#[test]
fn one_repository_two_spellings_one_state() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo always fails; exit 1");
    let link = sb.tmp.path().join("link");
    std::os::unix::fs::symlink(&repo.root, &link).expect("symlink");
    repo.start_in("s", &link).assert_quiet();
    repo.stop_in("s", &repo.root).assert_quiet();
    repo.stop_in("s", &link).assert_quiet();
    repo.write("src.txt", "work");
    let out = repo.stop_in("s", &repo.root);
    out.assert_blocked_with("always fails");
    assert!(
        out.json
            .as_ref()
            .and_then(|j| j.get("systemMessage"))
            .is_none(),
        "no baseline note\n{out}"
    );
}

/// Issue 14, defect 6: with the state dir unusable, `verify.sh` ran and
/// failed, then saving failed and the answer became "the gate could not
/// check this turn": a known failure thrown away. It must still block,
/// with the state problem beside it, and not loop: the retry yields loudly.
#[test]
fn a_known_failure_still_blocks_when_state_cannot_be_saved() {
    let mut sb = Sandbox::new();
    sb.unsavable_state();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    repo.write("broken", "x");
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed");
    assert!(out.message().contains("cannot save session state"), "{out}");
    assert!(
        out.message()
            .contains("`prove-it status` cannot report this stop"),
        "{out}"
    );
    // Its state cannot be read either: said, and judged as unknown.
    assert!(
        out.message().contains("saved state cannot be used"),
        "{out}"
    );
    let retry = repo.stop("s", true);
    retry.assert_allowed_saying("this turn ended without passing verification");
    retry.assert_allowed_saying("1 failed, 41 passed");
    retry.assert_allowed_saying("could not save its state");
}
