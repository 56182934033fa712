//! Bad input, hostile ids, concurrent sessions, lost state: always an answer
//! the user sees, never a crash or a silent pass, and no state lost.

use crate::util::{Repo, Sandbox, files_under, prove_it, run_hook};
use std::os::unix::fs::PermissionsExt;

#[test]
fn malformed_stdin_is_reported_not_crashed() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 1");
    for (event, input) in [
        ("stop", &b"this is not json"[..]),
        ("stop", b""),
        ("stop", b"{\"cwd\": \"/\"}"),
        ("session-start", b"[1, 2, 3]"),
        ("user-prompt-submit", b"{\"session_id\": 42}"),
        ("stop", b"{\"session_id\": \"\"}"),
        ("stop", &[0xff, 0xfe, 0x00][..]),
    ] {
        let out = run_hook(&repo.root, &repo.env, event, input);
        assert!(out.message().contains("prove-it: gate error"), "{out}");
        if event == "stop" {
            assert!(out.message().contains("NOT verified"), "{out}");
        }
    }
}

#[test]
fn hostile_session_id_never_becomes_a_path() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    for id in [
        "../../x",
        "/etc/passwd",
        "..",
        "a/b\\c\0d",
        &"y".repeat(5000),
    ] {
        repo.start(id).assert_quiet();
        repo.write("broken", "x");
        repo.stop(id, false).assert_blocked_with("1 failed");
        std::fs::remove_file(repo.path("broken")).expect("rm");
    }
    assert!(!sb.tmp.path().join("x").exists());
    assert!(!sb.state_dir().parent().expect("parent").join("x").exists());
    for file in files_under(&sb.state_dir()) {
        let name = file.rsplit('/').next().expect("name");
        assert!(
            name == "repo"
                || name == "git-memo.json"
                || name == "last-verdict.json"
                || name
                    .trim_end_matches(".json")
                    .trim_end_matches(".pin")
                    .trim_end_matches(".verdict")
                    .trim_end_matches(".base")
                    .trim_end_matches(".checks")
                    .trim_end_matches(".changed")
                    .trim_end_matches(".turn")
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit()),
            "unexpected state file {file}"
        );
    }
}

#[test]
fn two_sessions_stopping_at_once_keep_their_own_state() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("one");
    repo.start("two");
    repo.write("broken", "x");
    for round in 1..=3 {
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| repo.stop("one", round > 1));
            let b = s.spawn(|| repo.stop("two", round > 1));
            (a.join().expect("one"), b.join().expect("two"))
        });
        a.assert_blocked_with(&format!("attempt {round} of 3"));
        b.assert_blocked_with(&format!("attempt {round} of 3"));
    }
    for file in files_under(&sb.state_dir())
        .iter()
        .filter(|f| f.ends_with(".json"))
    {
        let text = std::fs::read_to_string(sb.state_dir().join(file)).expect("read");
        serde_json::from_str::<serde_json::Value>(&text).expect("whole JSON");
    }
}

#[test]
fn corrupt_state_is_reported_kept_aside_and_gated() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    let session = files_under(&sb.state_dir())
        .into_iter()
        .find(|f| {
            f.contains("/sessions/")
                && f.ends_with(".json")
                && !f.ends_with(".pin.json")
                && !f.ends_with(".base.json")
                && !f.ends_with(".checks.json")
        })
        .expect("a session file");
    std::fs::write(sb.state_dir().join(&session), "{ torn").expect("corrupt it");
    repo.write("broken", "x");
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed");
    assert!(
        out.message().contains("saved state cannot be used"),
        "{out}"
    );
    // The known cause, not a guess at another one.
    assert!(!out.message().contains("no baseline"), "{out}");
    assert!(
        sb.state_dir().join(format!("{session}.corrupt")).exists(),
        "kept for a person to read"
    );
    // Said once: the retry is blocked without repeating it.
    let again = repo.stop("s", true);
    again.assert_blocked_with("attempt 2 of 3");
    assert!(again.field("systemMessage").is_none(), "{again}");
}

#[test]
fn missing_state_counts_as_changed_and_is_reported() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    repo.commit("failing");
    // No SessionStart was ever seen for this session.
    let out = repo.stop("never-started", false);
    out.assert_blocked_with("1 failed");
    assert!(out.message().contains("no baseline"), "{out}");
}

#[test]
fn state_lives_outside_the_work_tree_privately() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    repo.write("src.txt", "work");
    repo.stop("s", false).assert_verified();
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? src.txt");
    let mode = std::fs::metadata(sb.state_dir())
        .expect("state dir")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    for file in files_under(&sb.state_dir()) {
        let mode = std::fs::metadata(sb.state_dir().join(&file))
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{file} is readable by others");
    }
}

#[test]
fn a_broken_repository_is_reported_not_passed() {
    let sb = Sandbox::new();
    let dir = sb.tmp.path().join("broken-repo");
    std::fs::create_dir_all(dir.join(".git")).expect("dir");
    std::fs::write(dir.join("verify.sh"), "#!/bin/sh\nexit 1\n").expect("write");
    std::fs::set_permissions(
        dir.join("verify.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    let input = serde_json::json!({"session_id": "s", "cwd": dir, "stop_hook_active": false});
    let out = run_hook(&dir, &sb.env, "stop", input.to_string().as_bytes());
    assert!(out.message().contains("NOT verified"), "{out}");
}

/// Input past the 16 MiB read cap is cut there, so it is not JSON: the
/// gate says so rather than waiting for the rest or passing.
#[test]
fn oversized_input_is_refused_with_a_message() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 1");
    let mut input = br#"{"session_id":"s","cwd":"."#.to_vec();
    input.extend(std::iter::repeat_n(b'a', 17 << 20));
    input.extend(br#""}"#);
    let out = run_hook(&repo.root, &repo.env, "stop", &input);
    out.assert_allowed_saying("NOT verified");
}

/// A stop outside every repository covers the repositories its session
/// has state in. When the state dir cannot be searched for them, that is
/// said: before, such a stop was quiet.
#[test]
fn a_state_dir_that_cannot_be_searched_is_reported() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.state_dir()).expect("state dir");
    // A file where the folder of repositories belongs: even root cannot
    // list it.
    std::fs::write(sb.state_dir().join("repos"), "").expect("a file");
    let dir = sb.tmp.path().join("plain");
    std::fs::create_dir_all(&dir).expect("dir");
    let input = serde_json::json!({"session_id": "s", "cwd": dir, "stop_hook_active": false});
    let out = run_hook(&dir, &sb.env, "stop", input.to_string().as_bytes());
    out.assert_allowed_saying("may NOT be verified");
}

/// The session files under `state` (relative paths) not in `before`.
fn new_session_files(state: &std::path::Path, before: &[String]) -> Vec<String> {
    files_under(state)
        .into_iter()
        .filter(|f| f.contains("/sessions/") && !before.contains(f))
        .collect()
}

/// The agent starts a session of its own at the broken tree and copies that
/// session's files over the real one's: the copies name another session,
/// so the real session's stop treats its state as unknown, says so, and is
/// gated; never a quiet stop on the broken tree.
#[test]
fn state_copied_from_another_session_is_not_a_baseline() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.commit("a passing tree");
    repo.start("s");
    let real = new_session_files(&sb.state_dir(), &[]);
    assert!(real.len() >= 3, "{real:?}");
    repo.write("broken", "x");
    repo.start("evil");
    let evil = new_session_files(&sb.state_dir(), &real);
    let key = |f: &str| {
        let name = f.rsplit('/').next().expect("name");
        name.split('.').next().expect("key").to_string()
    };
    let (real_key, evil_key) = (key(&real[0]), key(&evil[0]));
    for file in &evil {
        let to = file.replace(&evil_key, &real_key);
        std::fs::copy(sb.state_dir().join(file), sb.state_dir().join(&to)).expect("copy");
    }
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed");
    assert!(
        out.message().contains("it belongs to session `evil`"),
        "{out}"
    );
    let (code, _) = repo.status_json();
    assert_ne!(code, 0);
}

/// The same from another repository with the same commits (so the same
/// fingerprint): its session's files, copied into this repository's state
/// folder, name the other repository.
#[test]
fn state_copied_from_another_repository_is_not_a_baseline() {
    let sb = Sandbox::new();
    let [repo, other] = ["r", "o"].map(|name| {
        let repo = sb.repo(name);
        // Not `arm_counting`: its script names the repository's own path.
        repo.arm("if [ -e broken ]; then echo 'test result: 1 failed'; exit 1; fi");
        repo.commit("a passing tree");
        repo
    });
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]),
        other.git(&["rev-parse", "HEAD"])
    );
    repo.start("s");
    let real = new_session_files(&sb.state_dir(), &[]);
    other.write("broken", "x");
    other.start("s");
    let copied = new_session_files(&sb.state_dir(), &real);
    let dir = |f: &str| f.split("/sessions/").next().expect("dir").to_string();
    let (real_dir, other_dir) = (dir(&real[0]), dir(&copied[0]));
    for file in &copied {
        let to = file.replace(&other_dir, &real_dir);
        std::fs::copy(sb.state_dir().join(file), sb.state_dir().join(&to)).expect("copy");
    }
    repo.write("broken", "x");
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed");
    assert!(
        out.message().contains("it belongs to session `s` in"),
        "{out}"
    );
    assert!(out.message().contains("/o`"), "{out}");
    // Nor is the other repository's verdict record this one's.
    other.stop("s", false).assert_blocked_with("1 failed");
    let last = |d: &str| sb.state_dir().join(d).join("last-verdict.json");
    std::fs::copy(last(&other_dir), last(&real_dir)).expect("copy");
    let (code, status) = repo.status_json();
    assert_ne!(code, 0, "{status}");
    assert!(
        status["error"]
            .as_str()
            .is_some_and(|e| e.contains("not this one's")),
        "{status}"
    );
}

/// Every command that prints, with its standard output (then both
/// outputs) a pipe whose reader is already gone, as `prove-it doctor |
/// head -1` leaves it: no panic, and the exit code it has with a reader.
#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo checking; exit 0");
    repo.start("s");
    repo.write("work.txt", "x\n");
    repo.stop("s", false).assert_verified();
    let fresh = sb.repo("fresh");
    let commands: &[(&Repo, &[&str])] = &[
        (&repo, &["doctor", "--no-run"]),
        (&repo, &["doctor"]),
        (&repo, &["status"]),
        (&repo, &["status", "--json"]),
        (&repo, &["ledger"]),
        (&repo, &["ledger", "--json"]),
        (&repo, &["canary"]),
        (&repo, &["canary", "--json"]),
        (&repo, &["policy", "new", "mine"]),
        (&repo, &["setup", "codex"]),
        (&repo, &["ci", "--base", "HEAD"]),
        (&repo, &["setup", "trailer"]),
        (&fresh, &["init"]),
        (&repo, &["--help"]),
        (&repo, &["status", "--help"]),
        (&repo, &["--version"]),
    ];
    for (at, args) in commands {
        // Each command once with a reader (in a copy of the state where
        // it writes any), so the closed pipe is compared with its own code.
        let with_reader = prove_it(&at.root, &at.env, args).output().expect("run");
        for both in [false, true] {
            if args == &["policy", "new", "mine"] {
                let _ = std::fs::remove_dir_all(at.root.join("mine"));
            }
            if args == &["init"] {
                let _ = std::fs::remove_file(at.root.join("verify.sh"));
            }
            let mut cmd = prove_it(&at.root, &at.env, args);
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            if both {
                cmd.stderr(writer.try_clone().expect("pipe"));
            } else {
                cmd.stderr(std::process::Stdio::piped());
            }
            let out = cmd.stdout(writer).output().expect("run");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains("panicked") && out.status.code() != Some(101),
                "`prove-it {}` (stderr closed too: {both}) panicked: {:?} {stderr}",
                args.join(" "),
                out.status
            );
            assert_eq!(
                out.status.code(),
                with_reader.status.code(),
                "`prove-it {}` (stderr closed too: {both}): {stderr}",
                args.join(" ")
            );
        }
    }
}
