//! `prove-it canary`: planted defects against a real `verify.sh`, in a
//! throwaway copy that must leave nothing behind.
//!
//! The fast tests use a plain repository (the whitespace defect, the exit
//! codes, Ctrl-C). The slow ones build a small real project for each of
//! Rust, Python, Node and Go, write its `verify.sh` with `prove-it init`,
//! and run the canary three times: every stack check commented out (only
//! the whitespace defect is caught), only the test runner switched on (the
//! failing test is caught, the lint and format defects are not), and every
//! check switched on (all caught, exit 0). The tools come from
//! `tests/install-stack-tools.sh` (CI runs it).

use crate::util::{BIN, Repo, Sandbox, prove_it};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `prove-it canary --json` in `repo`, with TMPDIR in the sandbox so that
/// leftovers can be seen; the exit code and the report.
fn canary(sandbox: &Sandbox, repo: &Repo, args: &[&str]) -> (i32, Value, String) {
    let out = canary_command(sandbox, repo, args)
        .output()
        .expect("prove-it canary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        format!("stdout:\n{stdout}\nstderr:\n{stderr}"),
    )
}

fn canary_command(sandbox: &Sandbox, repo: &Repo, args: &[&str]) -> Command {
    let mut all = vec!["canary"];
    all.extend_from_slice(args);
    let mut cmd = prove_it(&repo.root, &repo.env, &all);
    cmd.env("TMPDIR", temp_dir(sandbox));
    cmd
}

fn temp_dir(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.tmp.path().join("tmp");
    std::fs::create_dir_all(&dir).expect("tmp");
    dir
}

/// Whether the person's repository is exactly as it was: the same status,
/// one work tree, and no copy left in the temp dir.
fn assert_untouched(sandbox: &Sandbox, repo: &Repo, status_before: &str) {
    assert_eq!(
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
        status_before,
        "the canary changed the person's tree"
    );
    let worktrees = repo.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees.matches("worktree ").count(),
        1,
        "a worktree is left: {worktrees}"
    );
    let left: Vec<_> = std::fs::read_dir(temp_dir(sandbox))
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.is_empty(),
        "the copy is left in the temp dir: {left:?}"
    );
}

fn defects(report: &Value) -> Vec<(String, bool)> {
    report["defects"]
        .as_array()
        .unwrap_or_else(|| panic!("no defects in {report}"))
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap_or("?").to_string(),
                d["caught"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

fn kinds(pairs: &[(&str, bool)]) -> Vec<(String, bool)> {
    pairs.iter().map(|(k, c)| (k.to_string(), *c)).collect()
}

#[test]
fn the_whitespace_check_is_proven_and_the_persons_tree_is_left_as_it_was() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    let seen = sandbox.tmp.path().join("seen");
    let copied = sandbox.tmp.path().join("copied");
    // Run as is (no list), it records the copy's status; with a defect in,
    // the list the gate would give it.
    repo.arm(&format!(
        "set -e\nif [ -z \"${{PROVE_IT_CHANGED_FILES:-}}\" ]; then git status --porcelain --untracked-files=all > '{}'; else cat \"$PROVE_IT_CHANGED_FILES\" >> '{}'; fi\ngit diff --check",
        copied.display(),
        seen.display()
    ));
    // Uncommitted work of every kind: the copy must carry it.
    repo.write("staged.txt", "staged\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("README.md", "hello\nedited\n");
    repo.write("notes/untracked.txt", "new\n");
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);

    let (code, report, output) = canary(&sandbox, &repo, &["--json"]);
    assert_eq!(code, 0, "{output}");
    assert_eq!(defects(&report), kinds(&[("whitespace", true)]), "{output}");
    let whitespace = &report["defects"][0];
    assert_eq!(whitespace["file"], "README.md", "{output}");
    assert_eq!(whitespace["check"], "git diff --check");
    assert!(
        whitespace["tail"]
            .to_string()
            .contains("trailing whitespace"),
        "the failure is git diff --check's: {output}"
    );
    assert_eq!(report["baseline"]["outcome"], "passed");
    // The copy is the person's tree: staged, unstaged and untracked alike.
    assert_eq!(
        std::fs::read_to_string(&copied)
            .expect("the baseline ran")
            .trim(),
        before
    );
    // The gate's variables, as at a turn end: only what the turn changed.
    assert_eq!(
        std::fs::read_to_string(&seen).expect("verify.sh saw a list"),
        "README.md\n"
    );
    assert_untouched(&sandbox, &repo, &before);
    assert_eq!(
        std::fs::read_to_string(repo.path("README.md")).unwrap(),
        "hello\nedited\n"
    );
}

#[test]
fn a_verify_sh_that_cannot_fail_is_reported_with_what_it_means() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    repo.arm("echo 'all good'");
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let out = canary_command(&sandbox, &repo, &[]).output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("NOT CAUGHT"), "{stdout}");
    assert!(
        stdout.contains("Trailing whitespace in `README.md` does not fail verify.sh: it exited 0 with it in place; `git diff --check` would"),
        "{stdout}"
    );
    assert!(stdout.contains("0 of 1 planted defects"), "{stdout}");
    // Progress goes to stderr, one line per run.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[1/1] trailing whitespace in README.md"),
        "{stderr}"
    );
    assert_untouched(&sandbox, &repo, &before);

    let (code, report, output) = canary(&sandbox, &repo, &["--json", "--skip", "whitespace"]);
    assert_eq!(code, 1, "nothing planted proves nothing: {output}");
    assert_eq!(report["planted"], 0, "{output}");
}

#[test]
fn the_canary_says_why_it_cannot_judge_and_exits_2() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("r");
    let (code, _, output) = canary(&sandbox, &repo, &[]);
    assert_eq!(code, 2, "{output}");
    assert!(
        output.contains("no verify.sh") && output.contains("prove-it init"),
        "{output}"
    );

    // A verify.sh that fails before any defect: nothing can be learnt.
    repo.arm("echo 'FAIL: 3 tests'; exit 1");
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let (code, report, output) = canary(&sandbox, &repo, &["--json"]);
    assert_eq!(code, 2, "{output}");
    assert!(
        output.contains("does not pass in the throwaway copy"),
        "{output}"
    );
    assert!(output.contains("| FAIL: 3 tests"), "{output}");
    assert_eq!(report["baseline"]["outcome"], "failed", "{output}");
    assert_untouched(&sandbox, &repo, &before);

    let unborn = sandbox.unborn_repo("u");
    unborn.write("verify.sh", "#!/bin/sh\ngit diff --check\n");
    unborn.chmod("verify.sh", 0o755);
    let (code, _, output) = canary(&sandbox, &unborn, &[]);
    assert_eq!(code, 2, "{output}");
    assert!(output.contains("no commit yet"), "{output}");
}

/// Each run is bounded by PROVE_IT_TIMEOUT; a run that times out is not
/// counted as caught (no check was seen to catch the defect).
#[test]
fn a_run_that_times_out_is_not_counted_as_caught() {
    let mut sandbox = Sandbox::new();
    sandbox.set("PROVE_IT_TIMEOUT", "1");
    let repo = sandbox.repo("r");
    repo.arm("git diff --quiet && exit 0\nsleep 30");
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let began = Instant::now();
    let (code, report, output) = canary(&sandbox, &repo, &["--json"]);
    assert!(began.elapsed() < Duration::from_secs(20), "{output}");
    assert_eq!(code, 1, "{output}");
    let defect = &report["defects"][0];
    assert_eq!(defect["outcome"], "timed_out", "{output}");
    assert_eq!(defect["caught"], false, "{output}");
    assert!(
        defect["meaning"]
            .as_str()
            .is_some_and(|m| m.contains("ran out of time (1 s, PROVE_IT_TIMEOUT)")),
        "{output}"
    );
    assert_untouched(&sandbox, &repo, &before);
}

/// Waits until `path` exists.
fn wait_for(path: &Path) {
    let began = Instant::now();
    while !path.exists() {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A repository whose `verify.sh` passes as it is and, with a defect in,
/// runs `script` (`$STARTED`: a path it may make, outside the tree); the
/// path, and the repository's status before any canary.
fn hanging(sandbox: &Sandbox, script: &str) -> (Repo, PathBuf, String) {
    let repo = sandbox.repo("r");
    let started = sandbox.tmp.path().join("started");
    repo.arm(&format!(
        "git diff --quiet && exit 0\nSTARTED='{}'\n{script}",
        started.display()
    ));
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    (repo, started, before)
}

/// Starts a canary in `repo` and waits until its `verify.sh`, run with a
/// defect in, has made `started`.
fn canary_running(sandbox: &Sandbox, repo: &Repo, started: &Path) -> std::process::Child {
    let child = canary_command(sandbox, repo, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    wait_for(started);
    child
}

/// Whether `pid` runs (a zombie, killed but not yet reaped, does not).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    });
    exists && !zombie
}

#[test]
fn ctrl_c_stops_verify_sh_and_removes_the_copy() {
    let sandbox = Sandbox::new();
    // With the defect in, it says its pid and hangs (until killed).
    let (repo, started, before) = hanging(
        &sandbox,
        "echo $$ > \"$STARTED.tmp\"; mv \"$STARTED.tmp\" \"$STARTED\"\nsleep 60",
    );
    let child = canary_running(&sandbox, &repo, &started);
    let script: i32 = std::fs::read_to_string(&started)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(script));
    // SAFETY: sends SIGINT to the canary we started, as Ctrl-C would.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted; the throwaway copy is removed"),
        "{stderr}"
    );
    // SIGKILL is sent before the canary exits, but the kernel ends the
    // process when it next runs: on a busy machine that can be after the
    // canary's exit. A `verify.sh` left running sleeps 60 s.
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(script) {
        assert!(
            Instant::now() < deadline,
            "verify.sh is still running 5 s after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_untouched(&sandbox, &repo, &before);
}

#[test]
fn a_copy_left_by_a_killed_canary_is_removed_by_the_next() {
    let sandbox = Sandbox::new();
    // With the defect in, it hangs the first time only.
    let (repo, started, before) = hanging(
        &sandbox,
        "[ -e \"$STARTED\" ] && exit 1\ntouch \"$STARTED\"\nsleep 60",
    );
    let mut child = canary_running(&sandbox, &repo, &started);
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    assert_eq!(
        repo.git(&["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        2,
        "kill -9 leaves the copy (nothing can clean up in the killed process)"
    );
    let (code, _, output) = canary(&sandbox, &repo, &[]);
    assert_eq!(code, 0, "{output}");
    assert_untouched(&sandbox, &repo, &before);
}

// ---- the four stacks -------------------------------------------------

/// `target/stack-tools`, or a panic that says how to get it.
fn stack_tools() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/stack-tools");
    assert!(
        dir.join("python/bin/ruff").exists() && dir.join("node/node_modules/.bin/eslint").exists(),
        "the stack tools are missing: run tests/install-stack-tools.sh"
    );
    dir
}

/// A small real project of one stack, its verify.sh written by
/// `prove-it init` and committed.
fn project(sandbox: &Sandbox, name: &str, files: &[(&str, &str)]) -> Repo {
    let repo = sandbox.repo(name);
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit("the project");
    let out = prove_it(&repo.root, &repo.env, &["init"])
        .output()
        .expect("init runs");
    assert!(
        out.status.success(),
        "prove-it init: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    repo.commit("verify.sh");
    repo
}

/// Uncomments the lines of verify.sh that start with `# {command}` (left
/// uncommitted: the canary copies uncommitted changes).
fn switch_on(repo: &Repo, commands: &[&str]) {
    let text = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let on = commands
            .iter()
            .any(|c| line.strip_prefix("# ").is_some_and(|l| l.starts_with(c)));
        out.push_str(if on { &line[2..] } else { line });
        out.push('\n');
    }
    for c in commands {
        assert!(
            out.lines().any(|l| l.starts_with(c)),
            "init offers no `{c}`:\n{text}"
        );
    }
    repo.write("verify.sh", &out);
}

/// Puts `line` right after verify.sh's `cd` line.
fn after_cd(repo: &Repo, line: &str) {
    let text = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    let text = text.replacen(
        "cd \"$(git rev-parse --show-toplevel)\"\n",
        &format!("cd \"$(git rev-parse --show-toplevel)\"\n{line}\n"),
        1,
    );
    repo.write("verify.sh", &text);
}

/// The three runs: everything off (only the whitespace defect is caught),
/// the test runner alone (it catches the `runner_catches` kinds), then
/// everything on (all caught). `planted` is every kind, in order.
fn three_runs(
    sandbox: &Sandbox,
    repo: &Repo,
    test_runner: &str,
    failure: &str,
    all: &[&str],
    planted: &[&str],
    runner_catches: &[&str],
) {
    let expect = |caught: &dyn Fn(&str) -> bool| -> Vec<(String, bool)> {
        planted.iter().map(|k| (k.to_string(), caught(k))).collect()
    };
    let off = expect(&|k| k == "whitespace");
    let runner_only = expect(&|k| k == "whitespace" || runner_catches.contains(&k));
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let (code, report, output) = canary(sandbox, repo, &["--json"]);
    assert_eq!(defects(&report), off, "{output}");
    assert_eq!(code, 1, "{output}");
    let test = report["defects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "test")
        .expect("a test defect");
    assert!(
        test["meaning"]
            .as_str()
            .is_some_and(|m| m.contains("a test runner that runs that file would")),
        "{output}"
    );
    assert_untouched(sandbox, repo, &before);

    switch_on(repo, &[test_runner]);
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let (code, report, output) = canary(sandbox, repo, &["--json"]);
    assert_eq!(defects(&report), runner_only, "{output}");
    assert_eq!(code, 1, "{output}");
    let test = report["defects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "test")
        .unwrap();
    assert!(
        test["tail"].to_string().contains(failure),
        "the test runner ran the planted test ({failure}): {output}"
    );
    assert_untouched(sandbox, repo, &before);

    switch_on(repo, all);
    let before = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let (code, report, output) = canary(sandbox, repo, &["--json"]);
    assert_eq!(defects(&report), expect(&|_| true), "{output}");
    assert_eq!(code, 0, "{output}");
    // Each check says what failed: the planted file is named in what it
    // printed (a test runner names the test instead).
    for defect in report["defects"].as_array().unwrap() {
        let file = defect["file"].as_str().unwrap_or_default();
        let name = file.rsplit('/').next().unwrap_or(file);
        assert!(
            defect["kind"] == "test" || defect["tail"].to_string().contains(name),
            "the check that caught the {} defect does not name `{file}`: {output}",
            defect["kind"]
        );
    }
    assert_eq!(report["all_caught"], true);
    assert_untouched(sandbox, repo, &before);
}

#[test]
#[ignore = "slow suite: cargo builds in the canary's copies (./verify.sh --full)"]
fn rust_checks_are_proven_to_fail() {
    let mut sandbox = Sandbox::new();
    // The outer build's flags (static linking) are not the project's.
    sandbox.set("RUSTFLAGS", "").set("RUST_BACKTRACE", "0");
    let repo = project(
        &sandbox,
        "adder",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n",
            ),
            (".gitignore", "/target\n"),
        ],
    );
    three_runs(
        &sandbox,
        &repo,
        "cargo test",
        "prove_it_canary::planted_failing_test",
        &["cargo clippy", "cargo fmt"],
        &["whitespace", "test", "type", "lint", "format"],
        // It compiles: the type error is caught too.
        &["test", "type"],
    );
}

#[test]
#[ignore = "slow suite: pytest, mypy and ruff in the canary's copies (./verify.sh --full)"]
fn python_checks_are_proven_to_fail() {
    let tools = stack_tools();
    let sandbox = Sandbox::new();
    let repo = project(
        &sandbox,
        "calc",
        &[
            // Configured as real projects are: `init` offers the type
            // checker and the linter because the project names them, and
            // ruff fixes what it can (`fix = true`).
            (
                "pyproject.toml",
                "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.mypy]\nstrict = true\n\n[tool.ruff]\nfix = true\n",
            ),
            ("calc/__init__.py", ""),
            (
                "calc/ops.py",
                "def add(a: int, b: int) -> int:\n    return a + b\n",
            ),
            (
                "tests/test_ops.py",
                "from calc.ops import add\n\n\ndef test_add() -> None:\n    assert add(2, 2) == 4\n",
            ),
            (
                ".gitignore",
                ".venv\n__pycache__/\n.mypy_cache/\n.ruff_cache/\n.pytest_cache/\n",
            ),
        ],
    );
    // The project's virtualenv, ignored, as a Python project has it: the
    // canary links it into its copy.
    std::os::unix::fs::symlink(tools.join("python"), repo.path(".venv")).expect("venv");
    after_cd(&repo, "PATH=\"$PWD/.venv/bin:$PATH\"");
    repo.commit("venv on PATH");
    three_runs(
        &sandbox,
        &repo,
        "python -m pytest",
        "FAILED tests/test_prove_it_canary.py",
        &["python -m mypy", "ruff check"],
        &["whitespace", "test", "type", "lint"],
        &["test"],
    );

    // The same linter run as the project's config says, fixing: ruff
    // removes the planted defect in the copy and exits 0. The report says
    // that, not that no linter is switched on.
    let text = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    assert!(text.contains("\nruff check --no-fix .\n"), "{text}");
    repo.write(
        "verify.sh",
        &text.replace("\nruff check --no-fix .\n", "\nruff check .\n"),
    );
    let (lint, output) = the_lint_defect_not_caught(&sandbox, &repo);
    assert_eq!(lint["rewritten"], true, "{output}");
    let meaning = lint["meaning"].as_str().unwrap_or_default();
    assert!(
        meaning.contains("verify.sh rewrote") && !meaning.contains("no linter"),
        "{meaning}"
    );
}

/// The canary's run whose lint defect is not caught (exit 1): that
/// defect's record, and all the canary said.
fn the_lint_defect_not_caught(sandbox: &Sandbox, repo: &Repo) -> (Value, String) {
    let (code, report, output) = canary(sandbox, repo, &["--json"]);
    assert_eq!(code, 1, "{output}");
    let lint = report["defects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "lint")
        .expect("a lint defect")
        .clone();
    assert_eq!(lint["caught"], false, "{output}");
    (lint, output)
}

/// The Node fixtures' linter configuration, source and test.
const NODE_ESLINT: (&str, &str) = (
    "eslint.config.js",
    "export default [{ rules: { \"no-debugger\": \"error\" } }];\n",
);
const NODE_ADD: (&str, &str) = (
    "src/add.js",
    "/**\n * @param {number} a\n * @param {number} b\n */\nexport function add(a, b) {\n  return a + b;\n}\n",
);
const NODE_ADD_TEST: (&str, &str) = (
    "test/add.test.js",
    "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\nimport { add } from \"../src/add.js\";\n\ntest(\"adds\", () => {\n  assert.equal(add(2, 2), 4);\n});\n",
);

#[test]
#[ignore = "slow suite: node --test, tsc and eslint in the canary's copies (./verify.sh --full)"]
fn node_checks_are_proven_to_fail() {
    let tools = stack_tools();
    let sandbox = Sandbox::new();
    let repo = project(
        &sandbox,
        "calc",
        &[
            (
                "package.json",
                r#"{"name": "calc", "version": "1.0.0", "type": "module", "scripts": {"test": "node --test", "lint": "eslint ."}}"#,
            ),
            (
                "tsconfig.json",
                r#"{"compilerOptions": {"allowJs": true, "checkJs": true, "noEmit": true, "strict": true, "module": "nodenext", "target": "es2022", "types": []}, "include": ["src"]}"#,
            ),
            NODE_ESLINT,
            NODE_ADD,
            NODE_ADD_TEST,
            (".gitignore", "node_modules\n"),
        ],
    );
    std::os::unix::fs::symlink(tools.join("node/node_modules"), repo.path("node_modules"))
        .expect("node_modules");
    three_runs(
        &sandbox,
        &repo,
        "npm test",
        "prove-it-canary.test.js",
        &["npx tsc", "npm run lint"],
        &["whitespace", "test", "type", "lint"],
        &["test"],
    );
}

/// A project with its build output tracked in `lib/` beside `src/` (as
/// unjs/defu has it): the canary plants where tsconfig's `include` and the
/// lint script look (`src/`), never in `lib/` or a declaration file; a
/// defect that a check already in verify.sh lets through is said as that
/// check not covering the file, and no check is advised that is on.
#[test]
#[ignore = "slow suite: tsc and eslint in the canary's copies (./verify.sh --full)"]
fn a_project_with_build_output_beside_src_is_planted_where_its_checks_look() {
    let tools = stack_tools();
    let sandbox = Sandbox::new();
    let repo = project(
        &sandbox,
        "lib",
        &[
            (
                "package.json",
                r#"{"name": "lib", "version": "1.0.0", "type": "module", "main": "./lib/add.cjs", "scripts": {"test": "node --test", "lint": "eslint src"}}"#,
            ),
            (
                "tsconfig.json",
                "{\n  // what tsc checks\n  \"compilerOptions\": {\"allowJs\": true, \"checkJs\": true, \"noEmit\": true, \"strict\": true, \"module\": \"nodenext\", \"target\": \"es2022\", \"types\": [],},\n  \"include\": [\"src\"],\n}\n",
            ),
            NODE_ESLINT,
            ("lib/add.cjs", "module.exports.add = (a, b) => a + b;\n"),
            (
                "lib/add.d.cts",
                "export declare function add(a: number, b: number): number;\n",
            ),
            NODE_ADD,
            NODE_ADD_TEST,
            (".gitignore", "node_modules\n"),
        ],
    );
    std::os::unix::fs::symlink(tools.join("node/node_modules"), repo.path("node_modules"))
        .expect("node_modules");
    switch_on(&repo, &["npm test", "npx tsc", "npm run lint"]);
    let (code, report, output) = canary(&sandbox, &repo, &["--json"]);
    assert_eq!(code, 0, "{output}");
    for defect in report["defects"].as_array().unwrap() {
        if matches!(defect["kind"].as_str(), Some("type" | "lint")) {
            assert!(
                defect["file"]
                    .as_str()
                    .is_some_and(|f| f.starts_with("src/")),
                "{} planted outside what the checks cover: {output}",
                defect["kind"]
            );
        }
    }

    // The linter runs, but on lib/ only: said as such, nothing advised.
    let text = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    repo.write(
        "verify.sh",
        &text.replace("\nnpm run lint", "\nnpx eslint lib"),
    );
    let (lint, output) = the_lint_defect_not_caught(&sandbox, &repo);
    assert!(
        lint["meaning"].as_str().is_some_and(|m| m
            .contains("although it runs `npx eslint lib`: that check does not cover `src/add.js`")),
        "{output}"
    );
    let out = canary_command(&sandbox, &repo, &[])
        .output()
        .expect("canary");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        !said.contains("Switch a check on") && said.contains("already run"),
        "{said}"
    );
}

#[test]
#[ignore = "slow suite: go test, go vet and gofmt in the canary's copies (./verify.sh --full)"]
fn go_checks_are_proven_to_fail() {
    let go = Command::new("go").arg("version").output();
    assert!(
        go.is_ok_and(|o| o.status.success()),
        "go is missing: run tests/install-stack-tools.sh"
    );
    let sandbox = Sandbox::new();
    let repo = project(
        &sandbox,
        "calc",
        &[
            ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
            (
                "calc.go",
                "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
            ),
            (
                "calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
            ),
        ],
    );
    three_runs(
        &sandbox,
        &repo,
        "go test",
        "--- FAIL: TestProveItCanary",
        &["go vet", "gofmt -l ."],
        &["whitespace", "test", "type", "lint", "format"],
        // It compiles: the type error is caught too.
        &["test", "type"],
    );
}

#[test]
fn canary_is_a_command_with_help() {
    let out = Command::new(BIN)
        .args(["canary", "--help"])
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for needle in ["--json", "--skip", "PROVE_IT_TIMEOUT", "Exit codes"] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}
