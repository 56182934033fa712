//! Running verify.sh: root, arguments, timeout, huge output, odd scripts.

use crate::util::Sandbox;
use std::time::{Duration, Instant};

#[test]
fn runs_from_the_root_with_no_arguments() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo \"cwd=$(pwd) args=$#\"; exit 9");
    repo.write("sub/x.txt", "x");
    let out = repo.stop("s", false);
    let expected = format!(
        "cwd={} args=0",
        repo.root.canonicalize().expect("root").display()
    );
    out.assert_blocked_with(&expected);
    out.assert_blocked_with("exit 9");
}

#[test]
fn a_script_without_a_shebang_still_runs() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.write("verify.sh", "echo 'no shebang here'\nexit 4\n");
    repo.chmod("verify.sh", 0o755);
    repo.commit("arm");
    repo.start("s");
    repo.write("x", "work");
    repo.stop("s", false).assert_blocked_with("no shebang here");
}

/// Whether any process's command line contains `marker`.
fn process_alive(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .expect("proc")
        .flatten()
        .any(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(marker)
                })
                .unwrap_or(false)
        })
}

#[test]
fn a_hanging_verify_sh_is_cut_at_the_timeout_leaving_nothing_behind() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_TIMEOUT", "1");
    let repo = sb.repo("r");
    // A child in the background and a grandchild in the foreground.
    repo.arm("echo started\nsleep 4242.5 &\nsh -c 'sleep 4243.5'\necho never");
    repo.start("s");
    repo.write("x", "work");
    let began = Instant::now();
    let out = repo.stop("s", false);
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "took {:?}",
        began.elapsed()
    );
    out.assert_blocked_with("timed out after 1 s");
    out.assert_blocked_with("started");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !process_alive("sleep 4242.5"),
        "background child left running"
    );
    assert!(!process_alive("sleep 4243.5"), "grandchild left running");
}

#[test]
#[allow(clippy::zombie_processes)]
fn fifty_megabytes_of_output_keep_the_tail_in_bounded_memory() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("yes 'a line of noisy test output' | head -c 50000000\necho\necho 'FINAL: 1 failed'\nexit 1");
    repo.start("s");
    repo.write("x", "work");

    // The hook says its own peak memory (PROVE_IT_TIMINGS): measured from
    // here it would include this test process's size when it forked.
    let input = serde_json::json!({"session_id": "s", "cwd": repo.root, "stop_hook_active": false});
    let mut cmd = crate::util::prove_it(&repo.root, &repo.env, &["hook", "stop"]);
    cmd.env("PROVE_IT_TIMINGS", "1");
    let out = prove_it_test_support::measure(&mut cmd, input.to_string().as_bytes());
    let stdout = out.stdout;
    let answer: serde_json::Value = serde_json::from_str(&stdout).expect("JSON answer");
    let reason = answer["reason"].as_str().expect("blocked");
    assert!(reason.contains("FINAL: 1 failed"), "{reason}");
    assert!(reason.chars().count() <= 10_000);
    let timings: serde_json::Value = out
        .stderr
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .expect("the timings line");
    let peak_mib = timings["prove_it_timings"]["peak_kib"]
        .as_u64()
        .expect("peak memory (Linux)")
        / 1024;
    assert!(peak_mib < 64, "peak memory {peak_mib} MiB");
}

#[test]
fn processes_a_finished_verify_sh_left_running_are_stopped() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("sleep 4244.5 >/dev/null 2>&1 &\necho 'left a server running; 1 failed'\nexit 1");
    repo.start("s");
    repo.write("x", "work");
    repo.stop("s", false).assert_blocked_with("1 failed");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !process_alive("sleep 4244.5"),
        "a background process outlived verify.sh"
    );
}

/// Issue 14, defect 5: the agent host cancels a running hook (the person
/// interrupts, or the hook's timeout) by killing it. `verify.sh`'s process
/// group then ran on to its end in the background, holding CPU, ports and
/// locks, maybe writing into the tree. However the hook dies, the group goes.
#[test]
fn a_cancelled_hook_leaves_no_verify_sh_running() {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    for (signal, name) in [
        (libc::SIGTERM, "TERM"),
        (libc::SIGINT, "INT"),
        (libc::SIGHUP, "HUP"),
        (libc::SIGKILL, "KILL"),
    ] {
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        let started = sb.tmp.path().join("started");
        // Durations unique to this run mark its processes in /proc (those
        // of an earlier, failed run may still be there).
        let run = format!("{}{signal}", std::process::id());
        let (bg, fg) = (format!("4261.{run}"), format!("4262.{run}"));
        repo.arm(&format!(
            "sleep {bg} &\ntouch '{}'\nsh -c 'sleep {fg}'",
            started.display()
        ));
        repo.start("s");
        repo.write("x", "work");
        let input = serde_json::json!({
            "session_id": "s", "cwd": repo.root, "stop_hook_active": false,
        });
        let mut cmd = crate::util::hook_command(&repo.root, &repo.env, "stop");
        // A shell that starts a job in the background without job control
        // (as CI may run this suite) leaves it ignoring SIGINT, and the
        // hook would inherit that. The host an agent runs hooks from does
        // not; nor does this test.
        // SAFETY: signal() is async-signal-safe; nothing else runs here.
        unsafe {
            cmd.pre_exec(move || {
                libc::signal(signal, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut hook = cmd.spawn().expect("prove-it starts");
        hook.stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !started.exists() {
            assert!(Instant::now() < deadline, "verify.sh never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        assert!(process_alive(&bg) && process_alive(&fg), "{name}: running");
        // SAFETY: kill only sends a signal to the child we started.
        unsafe { libc::kill(hook.id() as libc::pid_t, signal) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while hook.try_wait().expect("the hook's status").is_none() {
            if Instant::now() > deadline {
                let _ = hook.kill();
                panic!("SIG{name} did not end the hook");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_alive(&bg) || process_alive(&fg) {
            assert!(
                Instant::now() < deadline,
                "SIG{name}: verify.sh's processes outlived the hook"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `verify.sh` is told what the session changed: `PROVE_IT_BASE` (HEAD at
/// the session's start) and `PROVE_IT_CHANGED_FILES` (a file listing every
/// path that differs from the start: edited, added, deleted, committed).
/// Paths the session never touched are not in it, even if they differed
/// from HEAD already when it began.
#[test]
fn verify_sh_is_given_the_paths_the_session_changed() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.write("kept.txt", "same\n");
    repo.write("edited.txt", "a\n");
    repo.write("gone.txt", "x\n");
    repo.commit("files");
    let seen = sb.tmp.path().join("seen");
    repo.arm(&format!(
        "printf '%s\\n' \"$PROVE_IT_BASE\" > '{seen}.base'\ncp \"$PROVE_IT_CHANGED_FILES\" '{seen}'\nexit 1",
        seen = seen.display()
    ));
    repo.write("dirty-before.txt", "untouched by the session\n");
    let base = repo.git(&["rev-parse", "HEAD"]);
    repo.start("s");
    repo.write("edited.txt", "b\n");
    std::fs::remove_file(repo.path("gone.txt")).expect("rm");
    repo.write("new.txt", "n\n");
    repo.write("committed.txt", "c\n");
    repo.git(&["add", "committed.txt"]);
    repo.git(&["commit", "-qm", "work"]);
    repo.stop("s", false).assert_blocked_with("exit 1");
    let listed = std::fs::read_to_string(&seen).expect("the list reached verify.sh");
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        ["committed.txt", "edited.txt", "gone.txt", "new.txt"]
    );
    let told = std::fs::read_to_string(seen.with_extension("base")).expect("base");
    assert_eq!(told.trim(), base.trim());
}

/// The list comes from the stop's own look at the tree, and the staged
/// part of it from the memo when HEAD and the index have not moved: a
/// later stop still lists what was staged earlier in the session.
#[test]
fn staged_paths_stay_listed_at_later_stops() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let seen = sb.tmp.path().join("seen");
    repo.arm(&format!(
        "cp \"$PROVE_IT_CHANGED_FILES\" '{}'\nexit 1",
        seen.display()
    ));
    repo.start("s");
    repo.write("staged.txt", "s\n");
    repo.git(&["add", "staged.txt"]);
    repo.stop("s", false).assert_blocked_with("exit 1");
    let listed = || std::fs::read_to_string(&seen).expect("the list reached verify.sh");
    assert_eq!(listed(), "staged.txt\n");
    std::fs::remove_file(&seen).expect("rm");
    repo.write("other.txt", "o\n");
    repo.stop("s", true).assert_blocked_with("exit 1");
    assert_eq!(listed(), "other.txt\nstaged.txt\n");
}

/// A `verify.sh` that scopes a check to the changed files runs it only on
/// what the session touched; run by hand (no variable) it checks everything.
#[test]
fn a_scoped_check_runs_only_on_what_the_session_touched() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.write("old.todo", "an old file the check would reject\n");
    repo.commit("old");
    repo.arm(
        "if [ -n \"$PROVE_IT_CHANGED_FILES\" ]; then files=$(cat \"$PROVE_IT_CHANGED_FILES\"); else files=$(git ls-files); fi\n\
         for f in $files; do case $f in *.todo) echo \"rejected: $f\"; exit 1;; esac; done\n\
         echo checked",
    );
    repo.start("s");
    repo.write("work.txt", "fine\n");
    repo.stop("s", false).assert_verified();
    repo.write("new.todo", "rejected\n");
    repo.stop("s", false)
        .assert_blocked_with("rejected: new.todo");
    let by_hand = std::process::Command::new(repo.path("verify.sh"))
        .current_dir(&repo.root)
        .output()
        .expect("verify.sh runs");
    assert!(!by_hand.status.success());
    let said = String::from_utf8_lossy(&by_hand.stdout);
    assert!(said.contains("rejected: old.todo"), "{said}");
}

/// A `verify.sh` that fails because a tool is not installed: the agent is
/// told what the machine lacks and that the code may be fine, beside the
/// output.
#[test]
fn a_missing_command_is_said_as_what_the_machine_lacks() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo checking; vitest-not-installed-here run");
    repo.start("s");
    repo.write("x", "work");
    let out = repo.stop("s", false);
    out.assert_blocked_with("vitest-not-installed-here: not found");
    out.assert_blocked_with(
        "this machine lacks the command `vitest-not-installed-here`: the code may be fine",
    );
}

/// `target/stack-tools/python/bin/python`, or a panic that says how to
/// get it.
fn stack_python() -> std::path::PathBuf {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/stack-tools/python/bin/python");
    assert!(
        python.exists(),
        "the stack tools are missing: run tests/install-stack-tools.sh"
    );
    python
}

/// Three failing tests with long reports, in colour, from each real
/// runner: the block names all three (the lines naming them are kept
/// above the last lines) and holds no terminal escape. A test module
/// that imports a module not installed is said to lack it.
#[test]
#[ignore = "slow suite: real test runners (./verify.sh --full)"]
fn real_runners_failures_reach_the_agent_by_name() {
    let python = stack_python();
    let long = (0..40)
        .map(|i| format!("    x{i} = {i}\n"))
        .collect::<String>();
    type Project = (
        &'static str,
        Vec<(String, String)>,
        String,
        Vec<&'static str>,
    );
    let projects: Vec<Project> = vec![
        (
            "pytest",
            (1..=3)
                .map(|i| {
                    (
                        format!("tests/test_{i}.py"),
                        format!("def test_fails_{i}():\n{long}    assert x{i} == -1\n"),
                    )
                })
                .chain([(
                    "tests/test_import.py".to_string(),
                    "import freezegun_not_installed\n".to_string(),
                )])
                .collect(),
            format!(
                "{} -m pytest -p no:cacheprovider --color=yes -o addopts= --continue-on-collection-errors tests",
                python.display()
            ),
            vec!["test_fails_1", "test_fails_2", "test_fails_3", "lacks the Python module `freezegun_not_installed`"],
        ),
        (
            "node --test",
            (1..=3)
                .map(|i| {
                    (
                        format!("test/t{i}.test.js"),
                        format!(
                            "const test = require('node:test');\nconst assert = require('node:assert');\ntest('fails {i}', () => {{\n{}  assert.strictEqual({i}, -1);\n}});\n",
                            (0..40).map(|j| format!("  const y{j} = {j};\n")).collect::<String>()
                        ),
                    )
                })
                .collect(),
            "FORCE_COLOR=1 node --test test/".to_string(),
            vec!["fails 1", "fails 2", "fails 3"],
        ),
        (
            "go test",
            std::iter::once(("go.mod".to_string(), "module example.com/r\n\ngo 1.19\n".to_string()))
                .chain((1..=3).map(|i| {
                    (
                        format!("r{i}_test.go"),
                        format!(
                            "package r\n\nimport \"testing\"\n\nfunc TestFails{i}(t *testing.T) {{\n\tfor j := 0; j < 30; j++ {{\n\t\tt.Log(\"line\", j)\n\t}}\n\tt.Fatal(\"no\")\n}}\n"
                        ),
                    )
                }))
                .collect(),
            "go test -count=1 ./...".to_string(),
            vec!["TestFails1", "TestFails2", "TestFails3"],
        ),
    ];
    for (runner, files, command, names) in projects {
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        repo.arm(&command);
        repo.start("s");
        for (path, text) in &files {
            repo.write(path, text);
        }
        let out = repo.stop("s", false);
        let reason = out.reason();
        for name in names {
            assert!(
                reason.contains(name),
                "{runner}: {name:?} missing:\n{reason}"
            );
        }
        assert!(!reason.contains('\x1b'), "{runner}: an escape:\n{reason:?}");
    }
}

/// The runner's count is added up over the whole output, not read off the
/// last lines: cargo prints one `test result:` line per test binary, and an
/// honest fix that made 23 tests run where 17 ran before is not "fewer".
#[test]
fn a_test_count_adds_up_every_binarys_summary_line() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    // Two test binaries, cargo's shape: the library's first, the
    // integration tests' last, thirty lines of output apart.
    repo.arm(
        "binary() { echo \"     Running $1\"; echo \"running $2 tests\"; i=0; while [ $i -lt 30 ]; do echo \"test t$i ... ok\"; i=$((i+1)); done; echo; echo \"test result: $3. $2 passed; $4 failed; 0 ignored\"; }\n\
         if [ -e broken ]; then binary unittests 6 ok 0; binary tests/it.rs 10 FAILED 1; exit 1; fi\n\
         binary tests/it.rs 17 ok 0; binary unittests 6 ok 0",
    );
    repo.start("s");
    repo.write("broken", "");
    let out = repo.stop("s", false);
    assert!(out.blocked(), "{out}");
    std::fs::remove_file(repo.path("broken")).expect("fix");
    repo.write("src.rs", "the fix and six more tests");
    let out = repo.stop("s", true);
    assert!(
        !out.message().contains("fewer tests ran"),
        "23 ran, 17 before:\n{out}"
    );
    // And fewer is still said when fewer ran.
    repo.arm("echo 'test result: ok. 5 passed; 0 failed'");
    repo.write("src.rs", "tests lost");
    let out = repo.stop("s", false);
    assert!(
        out.message()
            .contains("fewer tests ran than at an earlier stop of this session (5"),
        "{out}"
    );
}
