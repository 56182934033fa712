//! What counts as "this session changed the repository": the fingerprint
//! against the session's baseline, on every kind of change and repository.

use crate::util::{Sandbox, git};
use prove_it_test_support::age;
use std::time::Duration;

/// Starts session `s`, applies `change`, and asserts the stop is gated.
fn gated_after(change: impl FnOnce(&crate::util::Repo)) {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.commit("a failing tree to start from");
    repo.start("s");
    change(&repo);
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn edit_of_same_size_by_sed_is_work() {
    gated_after(|repo| repo.write("README.md", "jello\n"));
}

#[test]
fn staged_change_is_work() {
    gated_after(|repo| {
        repo.write("README.md", "staged\n");
        repo.git(&["add", "README.md"]);
        repo.write("README.md", "hello\n");
    });
}

/// Regression: git's rename detection reports a staged copy and a staged
/// rename of the same file alike ("COPY.md added"), so deleting the
/// original after the session started looked like no change at all.
#[test]
fn staged_copy_turned_into_a_rename_is_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.commit("a failing tree to start from");
    std::fs::copy(repo.path("README.md"), repo.path("COPY.md")).expect("cp");
    repo.git(&["add", "COPY.md"]);
    repo.start("s");
    repo.git(&["rm", "-q", "README.md"]);
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn deletion_is_work() {
    gated_after(|repo| std::fs::remove_file(repo.path("README.md")).expect("rm"));
}

#[test]
fn new_untracked_file_is_work() {
    gated_after(|repo| repo.write("generated/out.txt", "from a generator"));
}

#[test]
fn tracked_mode_change_is_work() {
    gated_after(|repo| repo.chmod("README.md", 0o755));
}

#[test]
fn untracked_mode_change_is_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.write("tool.sh", "echo hi");
    repo.start("s");
    repo.chmod("tool.sh", 0o755);
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn untracked_symlink_target_change_is_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    std::os::unix::fs::symlink("a", repo.path("link")).expect("symlink");
    repo.start("s");
    std::fs::remove_file(repo.path("link")).expect("rm");
    std::os::unix::fs::symlink("b", repo.path("link")).expect("symlink");
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn tracked_symlink_target_change_is_work() {
    gated_after(|repo| {
        std::os::unix::fs::symlink("README.md", repo.path("link")).expect("symlink");
        repo.commit("link");
    });
    gated_after(|repo| {
        std::os::unix::fs::symlink("README.md", repo.path("link")).expect("symlink");
        repo.commit("link");
        std::fs::remove_file(repo.path("link")).expect("rm");
        std::os::unix::fs::symlink("verify.sh", repo.path("link")).expect("symlink");
    });
}

#[test]
fn untracked_files_past_500_are_all_seen() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    for i in 0..600 {
        repo.write(&format!("many/f{i:03}.txt"), "same\n");
    }
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    repo.write("many/f555.txt", "diff\n");
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn ignored_files_are_not_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.write(".gitignore", "target/\n");
    repo.commit("ignore");
    repo.start("s");
    repo.write("target/debug/build.log", "noise");
    repo.stop("s", false).assert_quiet();
}

#[test]
fn returning_to_the_baseline_state_is_not_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.commit("failing");
    repo.start("s");
    repo.write("README.md", "changed\n");
    repo.write("scratch.txt", "tmp");
    repo.stop("s", false).assert_blocked_with("1 failed");
    repo.write("README.md", "hello\n");
    std::fs::remove_file(repo.path("scratch.txt")).expect("rm");
    repo.prompt("s");
    repo.stop("s", false).assert_quiet();
}

#[test]
fn unborn_repository_is_gated() {
    let sb = Sandbox::new();
    let repo = sb.unborn_repo("r");
    repo.write(
        "verify.sh",
        "#!/bin/sh\ntest -e broken && { echo 'it broke: FAILED'; exit 1; }\nexit 0\n",
    );
    repo.chmod("verify.sh", 0o755);
    repo.start("s").assert_quiet();
    repo.stop("s", false).assert_quiet();
    repo.write("broken", "x");
    repo.stop("s", false).assert_blocked_with("FAILED");
}

#[test]
fn detached_head_is_gated() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.git(&["checkout", "-q", "--detach"]);
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    repo.write("broken", "x");
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn switching_branches_is_a_change() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("broken", "x");
    repo.commit("broken on feature");
    repo.git(&["checkout", "-q", "main"]);
    repo.start("s");
    repo.git(&["checkout", "-q", "feature"]);
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn linked_worktree_is_gated_on_its_own() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    let wt_path = sb.tmp.path().join("wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "wt",
        wt_path.to_str().expect("utf-8"),
    ]);
    let wt = crate::util::Repo {
        root: wt_path,
        env: repo.env.clone(),
    };
    wt.start("s");
    repo.start("main-session");
    wt.write("broken", "x");
    wt.stop("s", false).assert_blocked_with("1 failed");
    repo.stop("main-session", false).assert_quiet();
}

#[test]
fn submodule_changes_are_work() {
    let sb = Sandbox::new();
    let sub = sb.repo("sub");
    sub.write("lib.txt", "v1\n");
    sub.commit("lib");
    let repo = sb.repo("r");
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        sub.root.to_str().expect("utf-8"),
        "vendor/sub",
    ]);
    repo.commit("add submodule");
    repo.arm("test -e vendor/sub/broken && { echo 'sub: 1 failed'; exit 1; }; exit 0");
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    repo.write("vendor/sub/broken", "x");
    repo.stop("s", false).assert_blocked_with("1 failed");
}

#[test]
fn changing_repo_a_does_not_gate_repo_b() {
    let sb = Sandbox::new();
    let a = sb.repo("a");
    let b = sb.repo("b");
    a.arm_counting();
    b.arm_counting();
    b.start("s");
    a.write("broken", "x");
    git(&a.root, &["add", "-A"]);
    b.stop("s", false).assert_quiet();
    assert_eq!(b.runs(), 0);
}

/// Big files' hashes are remembered between stops (so an unchanged 50 MB
/// file is not read at every stop), but never at the cost of a change.
#[test]
fn a_remembered_big_file_hash_never_hides_an_edit() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.commit("failing");
    let big = repo.path("big.bin");
    std::fs::write(&big, vec![b'a'; 2 << 20]).expect("write");
    age(&big, Duration::from_secs(3600));
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    let cache = crate::util::files_under(&sb.state_dir())
        .into_iter()
        .find(|f| f.ends_with("git-memo.json"))
        .expect("the big file's hash is remembered");
    let text = std::fs::read_to_string(sb.state_dir().join(cache)).expect("read");
    assert!(text.contains("big.bin"), "{text}");

    // Same size, new content, an mtime that is old again: still work.
    std::fs::write(&big, vec![b'b'; 2 << 20]).expect("write");
    age(&big, Duration::from_secs(7200));
    repo.stop("s", false).assert_blocked_with("1 failed");
}

/// `git update-index --assume-unchanged` (or `--skip-worktree`) makes git
/// look past a file; the gate does not: a file broken and then hidden so
/// is still a change (SPEC.md, "What the gate defends against").
#[test]
fn an_edit_hidden_by_an_index_flag_is_work() {
    for flag in ["--assume-unchanged", "--skip-worktree"] {
        gated_after(|repo| {
            repo.write("README.md", "jello\n");
            repo.git(&["update-index", flag, "README.md"]);
            assert_eq!(repo.git(&["status", "--porcelain"]), "", "git sees it");
        });
        gated_after(|repo| {
            std::fs::remove_file(repo.path("README.md")).expect("rm");
            repo.git(&["update-index", flag, "README.md"]);
        });
    }
}

/// Setting or clearing one of those flags is a change of its own, and so
/// is intent-to-add (`git add -N`), set or cleared.
#[test]
fn setting_or_clearing_an_index_flag_is_work() {
    for (set, clear) in [
        ("--assume-unchanged", "--no-assume-unchanged"),
        ("--skip-worktree", "--no-skip-worktree"),
    ] {
        gated_after(|repo| {
            repo.git(&["update-index", set, "README.md"]);
        });
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        repo.arm_counting();
        repo.write("broken", "x");
        repo.commit("a failing tree to start from");
        repo.git(&["update-index", set, "README.md"]);
        repo.start("s");
        repo.stop("s", false).assert_quiet();
        repo.git(&["update-index", clear, "README.md"]);
        repo.stop("s", false).assert_blocked_with("1 failed");
    }
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.commit("a failing tree to start from");
    repo.write("new.txt", "new\n");
    repo.start("s");
    repo.git(&["add", "-N", "new.txt"]);
    repo.stop("s", false).assert_blocked_with("1 failed");
    // Back to the session's start: not work.
    repo.prompt("s");
    repo.git(&["rm", "-q", "--cached", "new.txt"]);
    repo.stop("s", false).assert_quiet();
    // Cleared, having been set at the start: work.
    repo.git(&["add", "-N", "new.txt"]);
    repo.start("t");
    repo.git(&["rm", "-q", "--cached", "new.txt"]);
    repo.stop("t", false).assert_blocked_with("1 failed");
}

/// A sparse checkout's left-out files (skip-worktree set before the
/// session) are not work, and an edit to a file it keeps is.
#[test]
fn a_sparse_checkout_is_gated_as_before() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.write("kept/a.txt", "a\n");
    repo.write("left/b.txt", "b\n");
    repo.commit("a failing tree to start from");
    repo.git(&["sparse-checkout", "set", "--no-cone", "/*", "!/left/"]);
    assert!(!repo.path("left/b.txt").exists(), "not sparse");
    repo.start("s");
    repo.stop("s", false).assert_quiet();
    assert_eq!(repo.runs(), 0);
    repo.write("kept/a.txt", "edited\n");
    repo.stop("s", false).assert_blocked_with("1 failed");
}

/// [`gated_after`], with `README.md`'s stat data in the index older than
/// the index (not racy): git trusts it by its stat data alone.
fn gated_after_with_settled_readme(change: impl FnOnce(&crate::util::Repo)) {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    age(&repo.path("README.md"), Duration::from_secs(3600));
    repo.commit("a failing tree to start from");
    repo.start("s");
    change(&repo);
    repo.stop("s", false).assert_blocked_with("1 failed");
}

/// What git's configuration says to skip in its stat comparison
/// (`core.trustctime`, `core.checkStat`, `core.fileMode`) the gate checks
/// anyway: the agent can write that configuration.
#[test]
fn git_configuration_cannot_make_the_stat_comparison_look_away() {
    use std::os::unix::fs::MetadataExt;
    gated_after_with_settled_readme(|repo| {
        let path = repo.path("README.md");
        let before = std::fs::metadata(&path).expect("stat");
        repo.git(&["config", "core.trustctime", "false"]);
        repo.git(&["config", "core.checkStat", "minimal"]);
        std::fs::write(&path, "jello\n").expect("write");
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_modified(
            std::time::UNIX_EPOCH
                + Duration::new(before.mtime() as u64, before.mtime_nsec() as u32),
        )
        .expect("set mtime");
        assert_eq!(repo.git(&["status", "--porcelain"]), "", "git sees it");
    });
    gated_after_with_settled_readme(|repo| {
        repo.git(&["config", "core.fileMode", "false"]);
        repo.chmod("README.md", 0o755);
        assert_eq!(repo.git(&["status", "--porcelain"]), "", "git sees it");
    });
}

/// A same-size edit whose modification time is set back, made in the same
/// second the file last changed: git's seconds-only comparison sees the
/// same stat data (and `git status` nothing); the change time's
/// nanoseconds, which no user command sets, differ.
#[test]
fn a_same_size_edit_with_a_forged_time_in_the_same_second_is_work() {
    use std::os::unix::fs::MetadataExt;
    let old = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for attempt in 0.. {
        assert!(attempt < 20, "never landed in one second");
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        repo.arm_counting();
        repo.write("broken", "x");
        let path = repo.path("app.txt");
        let set_old = || {
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_modified(old).expect("set mtime");
        };
        std::fs::write(&path, "aaaa\n").expect("write");
        set_old();
        // The index keeps the file's stat data older than the index: not
        // racy, trusted by its stat data.
        repo.commit("a failing tree to start from");
        repo.start("s");
        let before = std::fs::metadata(&path).expect("stat");
        std::fs::write(&path, "bbbb\n").expect("write");
        set_old();
        let after = std::fs::metadata(&path).expect("stat");
        if after.ctime() != before.ctime() {
            continue;
        }
        assert_eq!(after.ino(), before.ino());
        assert_eq!(repo.git(&["status", "--porcelain"]), "", "git sees it");
        repo.stop("s", false).assert_blocked_with("1 failed");
        break;
    }
}

/// A new untracked file that fails the checks, hidden from `git status` by
/// one of git's ignore sources the agent can write, or by a setting that
/// stops git listing untracked files, is still a change: the fingerprint
/// holds git's whole resolved configuration and every ignore file.
#[test]
fn an_untracked_file_hidden_by_gits_ignore_configuration_is_work() {
    type Hide = fn(&crate::util::Repo, &std::path::Path);
    let hides: [(&str, Hide); 4] = [
        (".git/info/exclude", |repo, _| {
            let at = repo.path(".git/info/exclude");
            std::fs::create_dir_all(repo.path(".git/info")).expect("info");
            let mut text = std::fs::read_to_string(&at).unwrap_or_default();
            text.push_str("broken\n");
            std::fs::write(at, text).expect("exclude");
        }),
        ("core.excludesFile", |repo, home| {
            std::fs::write(home.join("ignored-by-me"), "broken\n").expect("write");
            let file = home.join("ignored-by-me").display().to_string();
            repo.git(&["config", "core.excludesFile", &file]);
        }),
        ("the user's default ignore file", |_, home| {
            let dir = home.join(".config/git");
            std::fs::create_dir_all(&dir).expect("dir");
            std::fs::write(dir.join("ignore"), "broken\n").expect("write");
        }),
        ("status.showUntrackedFiles", |repo, _| {
            repo.git(&["config", "status.showUntrackedFiles", "no"]);
        }),
    ];
    for (how, hide) in hides {
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        repo.arm_counting();
        repo.commit("a passing tree to start from");
        repo.start("s");
        repo.write("broken", "x");
        hide(&repo, &sb.tmp.path().join("home"));
        // As the gate's git sees it: with the sandbox's HOME.
        let status = prove_it_test_support::git_env(&mut std::process::Command::new("git"))
            .args(["status", "--porcelain"])
            .current_dir(&repo.root)
            .env("HOME", sb.tmp.path().join("home"))
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .expect("git status");
        assert_eq!(
            String::from_utf8_lossy(&status.stdout),
            "",
            "{how}: git sees it"
        );
        let stop = repo.stop("s", false);
        assert!(
            stop.blocked() && stop.reason().contains("1 failed"),
            "{how}: expected a block\n{stop}"
        );
    }
}
