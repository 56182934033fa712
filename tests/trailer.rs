//! The commit trailer (SPEC.md, "The commit trailer"): `prove-it setup
//! trailer` wires git's hooks, and each commit says which verdict of the
//! gate is about exactly its tree, or `unverified`. Real git commits
//! through the real hooks, under every way of committing that changes
//! what the commit holds.

use crate::util::{Repo, Sandbox, prove_it};
use std::process::Output;

/// A repository armed with a check that fails while `broken` exists, the
/// trailer set up, and session `s` started.
fn project(sb: &Sandbox) -> Repo {
    let repo = sb.repo("r");
    repo.arm("if [ -e broken ]; then echo 'FAIL: broken'; exit 1; fi\necho ok");
    repo.write("lib.txt", "v0\n");
    repo.commit("lib");
    let out = setup(&repo);
    assert!(out.status.success(), "{}", text(&out));
    repo.start("s");
    repo
}

fn setup(repo: &Repo) -> Output {
    prove_it(&repo.root, &repo.env, &["setup", "trailer"])
        .output()
        .expect("prove-it setup trailer")
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// git in `repo` with the sandbox's settings, so the hooks' prove-it uses
/// its state; no editor unless `editor` names one.
fn git_in(repo: &Repo, editor: Option<&str>, args: &[&str]) -> Output {
    repo.git_with_hooks(editor, args)
}

/// Commits with `args`, asserting it worked.
fn commit(repo: &Repo, args: &[&str]) -> Output {
    let mut line = vec!["commit", "-q"];
    line.extend(args);
    let out = git_in(repo, None, &line);
    assert!(out.status.success(), "git {line:?}: {}", text(&out));
    out
}

/// The `Prove-It:` lines of HEAD's message, and HEAD's tree.
fn trailers(repo: &Repo) -> (Vec<String>, String) {
    let message = repo.git(&["log", "-1", "--format=%B"]);
    let lines = message
        .lines()
        .filter(|l| l.starts_with("Prove-It:"))
        .map(str::to_string)
        .collect();
    (lines, repo.git(&["rev-parse", "HEAD^{tree}"]))
}

/// Asserts HEAD carries one trailer, `<word> tree=<its tree>`.
fn assert_trailer(repo: &Repo, word: &str) {
    let (lines, tree) = trailers(repo);
    let want = format!("Prove-It: {word} tree={tree}");
    assert!(
        lines.len() == 1 && lines[0].starts_with(&want),
        "want one `{want}...`, got {lines:?}\n{}",
        repo.git(&["log", "-1", "--format=%B"])
    );
}

#[test]
fn a_verified_tree_committed_with_add_or_commit_a_says_verified() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    repo.write("lib.txt", "v1\n");
    repo.stop("s", false).assert_verified();
    repo.git(&["add", "-A"]);
    commit(&repo, &["-m", "v1"]);
    assert_trailer(&repo, "verified");
    let (lines, _) = trailers(&repo);
    assert!(lines[0].contains(" session=s "), "{lines:?}");

    // `commit -a`: git's own temporary index.
    repo.write("lib.txt", "v2\n");
    repo.stop("s", false).assert_verified();
    commit(&repo, &["-a", "-m", "v2"]);
    assert_trailer(&repo, "verified");
}

#[test]
fn a_commit_whose_tree_no_verdict_is_about_says_unverified() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // Edited after the stop.
    repo.write("lib.txt", "v1\n");
    repo.stop("s", false).assert_verified();
    repo.write("lib.txt", "v1, edited after the stop\n");
    commit(&repo, &["-a", "-m", "after"]);
    assert_trailer(&repo, "unverified");

    // A partial commit: one of the two files verified together.
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.stop("s", false).assert_verified();
    repo.git(&["add", "a.txt"]);
    commit(&repo, &["-m", "only a"]);
    assert_trailer(&repo, "unverified");
    repo.git(&["add", "b.txt"]);
    commit(&repo, &["-m", "then b"]);
    assert_trailer(&repo, "verified");

    // The tree verified held a file the commit leaves untracked.
    repo.write("c.txt", "c\n");
    repo.write("d.txt", "d\n");
    repo.stop("s", false).assert_verified();
    repo.git(&["add", "c.txt"]);
    commit(&repo, &["-m", "c, not d"]);
    assert_trailer(&repo, "unverified");
}

#[test]
fn a_failing_tree_says_blocked_and_a_hidden_change_is_not_the_commit() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    repo.write("broken", "x");
    repo.stop("s", false).assert_blocked_with("FAIL: broken");
    repo.git(&["add", "-A"]);
    commit(&repo, &["-m", "broken"]);
    assert_trailer(&repo, "blocked");

    // assume-unchanged hides a file's change from `git add` and from the
    // commit: the tree verify.sh ran on is not the one committed.
    repo.git(&["rm", "-q", "broken"]);
    commit(&repo, &["-m", "fixed"]);
    repo.git(&["update-index", "--assume-unchanged", "lib.txt"]);
    repo.write("lib.txt", "v1, changed where git status does not look\n");
    repo.stop("s", false).assert_verified();
    commit(&repo, &["-a", "--allow-empty", "-m", "hidden"]);
    assert_trailer(&repo, "unverified");
}

#[test]
fn amend_no_verify_and_an_editor_each_give_one_true_trailer() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    repo.write("lib.txt", "v1\n");
    repo.stop("s", false).assert_verified();
    commit(&repo, &["-a", "-m", "v1"]);
    assert_trailer(&repo, "verified");

    // Amended with nothing new: still verified, still one trailer.
    commit(&repo, &["--amend", "--no-edit"]);
    assert_trailer(&repo, "verified");
    // Amended with a change no stop saw: the trailer is replaced.
    repo.write("lib.txt", "v1 and more\n");
    commit(&repo, &["--amend", "-a", "-m", "v1 amended"]);
    assert_trailer(&repo, "unverified");
    // And amended again after a stop verified it.
    repo.stop("s", false).assert_verified();
    commit(&repo, &["--amend", "--no-edit"]);
    assert_trailer(&repo, "verified");

    // --no-verify skips commit-msg, not prepare-commit-msg.
    repo.write("lib.txt", "v2\n");
    repo.stop("s", false).assert_verified();
    commit(&repo, &["-a", "--no-verify", "-m", "v2"]);
    assert_trailer(&repo, "verified");

    // An editor: the trailer comes after it, from commit-msg.
    repo.write("lib.txt", "v3\n");
    repo.stop("s", false).assert_verified();
    let editor = "f() { printf 'v3 by an editor\\n' > \"$1\"; }; f";
    let out = git_in(&repo, Some(editor), &["commit", "-q", "-a"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_trailer(&repo, "verified");
    assert!(repo.git(&["log", "-1", "--format=%s"]) == "v3 by an editor");

    // An editor that leaves the message empty still aborts the commit.
    repo.write("lib.txt", "v4\n");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let out = git_in(&repo, Some("true"), &["commit", "-q", "-a"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("empty commit message"),
        "{}",
        text(&out)
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
}

#[test]
fn a_rebase_onto_a_moved_base_does_not_keep_the_old_claim() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    repo.git(&["checkout", "-q", "-b", "work"]);
    repo.write("lib.txt", "v1\n");
    repo.stop("s", false).assert_verified();
    commit(&repo, &["-a", "-m", "work"]);
    assert_trailer(&repo, "verified");
    // main moves on; the rebased commit has a tree no stop judged.
    repo.git(&["checkout", "-q", "main"]);
    repo.write("other.txt", "o\n");
    repo.git(&["add", "other.txt"]);
    commit(&repo, &["-m", "main moves"]);
    repo.git(&["checkout", "-q", "work"]);
    let out = git_in(&repo, None, &["rebase", "-q", "main"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_trailer(&repo, "unverified");
}

#[test]
fn setup_keeps_the_hooks_that_were_there_and_says_each_line() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo ok");
    let hooks = repo.path(".git/hooks");
    std::fs::create_dir_all(&hooks).expect("hooks dir");
    let log = repo.root.with_extension("hook-log");
    repo.write(
        ".git/hooks/commit-msg",
        &format!(
            "#!/bin/sh\necho \"theirs $1\" >> '{}'\ngrep -q WIP \"$1\" && exit 1\nexit 0\n",
            log.display()
        ),
    );
    repo.chmod(".git/hooks/commit-msg", 0o755);
    repo.write("lib.txt", "v0\n");
    repo.commit("lib");
    let out = setup(&repo);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("prepare-commit-msg"), "{said}");
    assert!(
        said.contains("commit-msg.before-prove-it` now, and runs first"),
        "{said}"
    );
    // Run twice: the same hooks, theirs not moved over ours.
    let again = setup(&repo);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("(rewritten)"), "{}", text(&again));
    assert!(repo.path(".git/hooks/commit-msg.before-prove-it").exists());
    let doctor = |repo: &Repo| {
        let out = prove_it(&repo.root, &repo.env, &["doctor", "--no-run"])
            .output()
            .expect("doctor");
        text(&out)
            .lines()
            .find(|l| l.contains(" trailer "))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        doctor(&repo)
            .trim_start()
            .starts_with("ok    trailer     on:"),
        "{}",
        doctor(&repo)
    );

    repo.start("s");
    repo.write("lib.txt", "v1\n");
    repo.stop("s", false).assert_verified();
    let _ = std::fs::remove_file(&log);
    // Their hook runs (through an editor, so commit-msg is the one that
    // adds the trailer), and its refusal still stops the commit.
    let editor = "f() { printf 'WIP\\n' > \"$1\"; }; f";
    let out = git_in(&repo, Some(editor), &["commit", "-q", "-a"]);
    assert!(!out.status.success(), "{}", text(&out));
    let editor = "f() { printf 'v1\\n' > \"$1\"; }; f";
    let out = git_in(&repo, Some(editor), &["commit", "-q", "-a"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_trailer(&repo, "verified");
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(ran.lines().count(), 2, "{ran}");
}

#[test]
fn without_setup_no_content_tree_is_kept_and_a_moved_binary_is_said() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo ok");
    repo.write("lib.txt", "v0\n");
    repo.commit("lib");
    repo.start("s");
    repo.write("lib.txt", "v1\n");
    repo.stop("s", false).assert_verified();
    let (_, status) = repo.status_json();
    assert_eq!(status["verdict"], "verified", "{status}");
    let records = crate::util::files_under(&sb.state_dir())
        .into_iter()
        .filter(|f| f.ends_with("verdict.json"))
        .map(|f| std::fs::read_to_string(sb.state_dir().join(f)).expect("record"))
        .collect::<Vec<_>>();
    assert!(!records.is_empty());
    for record in &records {
        assert!(!record.contains("content_tree"), "{record}");
    }

    // A hook naming a binary that is gone says so; the commit goes on.
    let out = setup(&repo);
    assert!(out.status.success(), "{}", text(&out));
    let gone = sb.tmp.path().join("gone/prove-it").display().to_string();
    for name in ["prepare-commit-msg", "commit-msg"] {
        let hook = repo.path(&format!(".git/hooks/{name}"));
        let script = std::fs::read_to_string(&hook).expect("hook");
        let exe = script
            .lines()
            .find_map(|l| l.strip_prefix("if [ -x '"))
            .and_then(|l| l.split('\'').next())
            .expect("the binary's path")
            .to_string();
        std::fs::write(&hook, script.replace(&exe, &gone)).expect("hook");
    }
    let out = commit(&repo, &["-a", "-m", "v1"]);
    assert!(text(&out).contains("is gone, so this commit has no Prove-It trailer"));
    assert!(trailers(&repo).0.is_empty());
}

#[test]
fn a_hooks_path_in_the_work_tree_is_left_to_the_person() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.git(&["config", "core.hooksPath", ".husky"]);
    let out = setup(&repo);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("inside the repository"), "{said}");
    assert!(
        said.contains("trailer commit-msg --tree \"$(git write-tree 2>/dev/null)\" \"$@\" || :"),
        "{said}"
    );
    assert!(!repo.path(".husky").exists());
    // Until the person adds the lines, doctor says the commits get none.
    let out = prove_it(&repo.root, &repo.env, &["doctor", "--no-run"])
        .output()
        .expect("doctor");
    assert!(
        text(&out).contains("set up, but") && text(&out).contains(".husky/prepare-commit-msg"),
        "{}",
        text(&out)
    );
    let out = prove_it(&repo.root, &repo.env, &["setup", "trailer", "--user"])
        .output()
        .expect("setup");
    assert!(!out.status.success());
    assert!(
        text(&out).contains("one repository at a time"),
        "{}",
        text(&out)
    );
}

/// A pass whose changed checks could not be judged (the replay's copy
/// lacks an ignored folder the checks need) is no `verified` claim.
#[test]
fn a_pass_not_judged_is_not_claimed_as_verified() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.write(".gitignore", "generated/\n");
    repo.write("generated/data.txt", "built\n");
    repo.write("tests/check.txt", "expect 1\n");
    repo.arm("[ -f generated/data.txt ] || { echo 'generated/ is missing'; exit 1; }\necho ok");
    let out = setup(&repo);
    assert!(out.status.success(), "{}", text(&out));
    repo.start("s");
    repo.write("tests/check.txt", "expect 2\n");
    let out = repo.stop("s", false);
    assert!(out.message().contains("NOT JUDGED"), "{out}");
    commit(&repo, &["-a", "-m", "the check changed"]);
    assert_trailer(&repo, "not_judged");
}
