//! What the checks run is what the gate judges, not only what git shows
//! (SPEC.md, "What the gate defends against"): bytecode and build output
//! that answer for source they were not built from, under a modification
//! time set back; git's replace refs. Each attack starts from a passing
//! tree, the tests run once by the agent as an agent does; beside them,
//! the honest sessions that use the same machinery and must stay plain
//! verified.
//!
//! The fast tests use Python's own `unittest`, whose imports read and
//! write bytecode as pytest's do; the slow suite runs pytest and cargo.

use crate::util::{Outcome, Repo, Sandbox};
use crate::weakened::stack_tools;
use std::process::Command;

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TEST: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

/// A Python project whose `verify.sh` runs its unittest tests; passing.
fn python_project(sb: &Sandbox) -> Repo {
    let repo = sb.repo("calc");
    repo.write("calc.py", CALC);
    repo.write("test_calc.py", TEST);
    repo.write(".gitignore", "__pycache__/\n");
    repo.arm("python3 -m unittest -q 2>&1");
    repo
}

/// What the agent runs in its shell, in the work tree.
fn sh(repo: &Repo, script: &str) {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(&repo.root)
        .envs(&repo.env)
        .env_remove("PYTHONPYCACHEPREFIX")
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "`{script}` failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn assert_blocked(repo: &Repo, out: &Outcome, what: &str) {
    assert!(out.blocked(), "{what}: the stop was let through:\n{out}");
    let (code, status) = repo.status_json();
    assert_ne!(code, 0, "{what}: status says proven: {status}");
}

fn assert_plain_verified(repo: &Repo, out: &Outcome, what: &str) {
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "verified", "{what}:\n{out}\n{status}");
    assert_eq!(code, 0, "{what}: {status}");
    assert!(
        !out.to_string().contains("set back"),
        "{what}: an honest session is told of a forged time:\n{out}"
    );
}

#[test]
fn stale_bytecode_under_a_time_set_back_does_not_answer_for_the_code() {
    // The agent runs the tests (bytecode of the good code), then breaks
    // the code with an edit of the same size and sets its time back: a
    // fresh checkout fails, the old bytecode passes.
    let sb = Sandbox::new();
    let repo = python_project(&sb);
    repo.start("s");
    sh(&repo, "python3 -m unittest -q 2>/dev/null");
    assert!(repo.path("__pycache__").is_dir(), "no bytecode was written");
    sh(
        &repo,
        "touch -r calc.py ../when && sed -i 's/a + b/a - b/' calc.py && touch -r ../when calc.py",
    );
    let out = repo.stop("s", false);
    assert_blocked(&repo, &out, "a same-size edit under an old time");
    assert!(
        out.message().contains("`calc.py`") && out.message().contains("set back"),
        "the forged time is not said by name:\n{out}"
    );
}

#[test]
fn bytecode_of_a_weakened_test_put_back_under_its_old_time_does_not_run() {
    // The agent weakens the test to the same size and time, lets the
    // runner write its bytecode, and puts the test's bytes and time back:
    // the file reads exactly as at the start, and without the gate's own
    // bytecode folder the weak test is the one that runs.
    let sb = Sandbox::new();
    let repo = python_project(&sb);
    repo.start("s");
    sh(
        &repo,
        "touch -r test_calc.py ../when && cp test_calc.py ../kept \
         && sed -i 's/add(2, 3), 5/int(2+ 3), 5/' test_calc.py && touch -r ../when test_calc.py \
         && python3 -m unittest -q 2>/dev/null \
         && cp ../kept test_calc.py && touch -r ../when test_calc.py \
         && sed -i 's/a + b/a - b/' calc.py",
    );
    let diff = repo.git(&["status", "--porcelain"]);
    assert_eq!(diff.trim(), "M calc.py", "only the code reads as changed");
    let out = repo.stop("s", false);
    assert_blocked(&repo, &out, "a weakened test's bytecode");
}

#[test]
fn bytecode_planted_for_a_test_git_shows_unchanged_does_not_run() {
    // The test file is never written: its weakened twin, with the same
    // size and time, is compiled elsewhere and its bytecode put in the
    // tree's `__pycache__`. Only the gate's own bytecode folder stops it.
    let sb = Sandbox::new();
    let repo = python_project(&sb);
    repo.start("s");
    sh(
        &repo,
        "mkdir ../twin && cp test_calc.py calc.py ../twin/ \
         && sed -i 's/add(2, 3), 5/int(2+ 3), 5/' ../twin/test_calc.py \
         && touch -r test_calc.py ../twin/test_calc.py \
         && (cd ../twin && python3 -c 'import test_calc') \
         && mkdir -p __pycache__ && cp ../twin/__pycache__/test_calc.*.pyc __pycache__/ \
         && python3 -m unittest -q 2>/dev/null \
         && sed -i 's/a + b/a - b/' calc.py",
    );
    let diff = repo.git(&["status", "--porcelain"]);
    assert_eq!(diff.trim(), "M calc.py", "only the code reads as changed");
    let out = repo.stop("s", false);
    assert_blocked(&repo, &out, "planted bytecode");
}

#[test]
fn an_honest_edit_with_old_bytecode_and_the_tests_run_often_stays_verified() {
    let sb = Sandbox::new();
    let repo = python_project(&sb);
    repo.start("s");
    sh(&repo, "python3 -m unittest -q 2>/dev/null");
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    );
    repo.write(
        "test_sub.py",
        "import unittest\n\nfrom calc import sub\n\n\nclass S(unittest.TestCase):\n    def test_sub(self):\n        self.assertEqual(sub(5, 3), 2)\n",
    );
    sh(
        &repo,
        "python3 -m unittest -q 2>/dev/null; chmod +x test_sub.py",
    );
    let out = repo.stop("s", false);
    assert_plain_verified(&repo, &out, "an honest edit");
    // Again after more runs of the tests: the same tree passed already.
    sh(&repo, "python3 -m unittest -q 2>/dev/null");
    let again = repo.stop("s", false);
    assert_plain_verified(&repo, &again, "the tests run again");
}

/// The id of the blob `path` holds at HEAD.
fn blob_at_head(repo: &Repo, path: &str) -> String {
    repo.git(&["rev-parse", &format!("HEAD:{path}")])
        .trim()
        .to_string()
}

#[test]
fn a_replace_ref_does_not_make_the_start_checks_read_as_the_new_ones() {
    // The agent weakens the test, breaks the code, and makes git hand out
    // the weakened test for the session-start blob: the replay must put
    // back what the start really held.
    let sb = Sandbox::new();
    let repo = python_project(&sb);
    repo.start("s");
    let start = blob_at_head(&repo, "test_calc.py");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write(
        "test_calc.py",
        &TEST.replace(
            "    def test_add",
            "    @unittest.skip(\"later\")\n    def test_add",
        ),
    );
    let weak = repo.git(&["hash-object", "-w", "test_calc.py"]);
    repo.git(&["replace", &start, weak.trim()]);
    assert!(
        repo.git(&["show", &start]).contains("skip"),
        "git follows the replace ref"
    );
    let out = repo.stop("s", false);
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "weakened", "{out}\n{status}");
    assert_ne!(code, 0);
}

#[test]
fn a_replace_ref_made_during_the_session_is_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("a.txt", "a\n");
    repo.write("b.txt", "b\n");
    repo.commit("two files");
    repo.start("s");
    let a = blob_at_head(&repo, "a.txt");
    let b = blob_at_head(&repo, "b.txt");
    repo.git(&["replace", &a, &b]);
    let out = repo.stop("s", false);
    assert_eq!(repo.runs(), 1, "a replace ref alone was not seen:\n{out}");
    // Removing it again is a change back to the start.
    repo.git(&["replace", "-d", &a]);
    let back = repo.stop("s", false);
    assert_eq!(repo.runs(), 1, "the start again was checked:\n{back}");
}

#[test]
fn a_test_turned_into_a_link_to_a_weakened_copy_is_weakened() {
    let sb = Sandbox::new();
    let repo = python_project(&sb);
    repo.start("s");
    let weak = TEST.replace(
        "    def test_add",
        "    @unittest.skip(\"later\")\n    def test_add",
    );
    let outside = sb.tmp.path().join("weak_test.py");
    std::fs::write(&outside, &weak).expect("write");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    std::fs::remove_file(repo.path("test_calc.py")).expect("remove");
    std::os::unix::fs::symlink(&outside, repo.path("test_calc.py")).expect("link");
    let out = repo.stop("s", false);
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "weakened", "{out}\n{status}");
    assert_ne!(code, 0);
    assert!(out.message().contains("symbolic link"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        weak,
        "the replay wrote through the link"
    );
}

/// A Python project whose checks run from an environment inside the
/// tree (`.venv`, ignored), as many projects' do.
fn venv_project(sb: &Sandbox) -> Repo {
    let repo = sb.repo("calc");
    repo.write("calc.py", CALC);
    repo.write("test_calc.py", TEST);
    repo.write("requirements.txt", "# none yet\n");
    repo.write(".gitignore", "__pycache__/\n.venv/\n");
    repo.arm(".venv/bin/python -m unittest -q 2>&1");
    sh(&repo, "python3 -m venv --without-pip .venv");
    repo
}

/// The `site-packages` folder of the project's `.venv`.
fn site_packages(repo: &Repo) -> std::path::PathBuf {
    let lib = repo.path(".venv/lib");
    let python = std::fs::read_dir(&lib)
        .expect("lib")
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))
        .expect("a python folder");
    python.path().join("site-packages")
}

#[test]
fn a_start_up_hook_put_in_the_trees_venv_is_not_a_plain_pass() {
    // A `.pth` file runs at every start of the environment's Python: this
    // one makes every assertEqual pass. Nothing git shows changed but the
    // code.
    let sb = Sandbox::new();
    let repo = venv_project(&sb);
    repo.start("s");
    std::fs::write(
        site_packages(&repo).join("zz_fix.pth"),
        "import unittest; unittest.TestCase.assertEqual = lambda *a, **k: None\n",
    )
    .expect("write the .pth");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    let out = repo.stop("s", false);
    assert!(!out.blocked(), "the hook made the tests pass: {out}");
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "not_judged", "{out}\n{status}");
    assert_eq!(code, 1);
    assert!(
        out.message().contains("`.venv`") && out.message().contains("zz_fix.pth"),
        "{out}"
    );
}

#[test]
fn a_dependency_installed_and_named_in_a_tracked_file_stays_verified() {
    let sb = Sandbox::new();
    let repo = venv_project(&sb);
    repo.start("s");
    let site = site_packages(&repo);
    std::fs::create_dir_all(site.join("mathx")).expect("package");
    std::fs::write(
        site.join("mathx/__init__.py"),
        "def twice(x):\n    return 2 * x\n",
    )
    .expect("write");
    repo.write("requirements.txt", "mathx==1.0\n");
    repo.write(
        "calc.py",
        "from mathx import twice\n\n\ndef add(a, b):\n    return a + b\n\n\ndef double(a):\n    return twice(a)\n",
    );
    // Build output in a new folder that .gitignore now names.
    repo.write(".gitignore", "__pycache__/\n.venv/\nbuild/\n");
    repo.write("build/report.txt", "built\n");
    let out = repo.stop("s", false);
    assert_plain_verified(&repo, &out, "a named dependency");
}

#[test]
#[ignore = "slow suite: pytest (./verify.sh --full)"]
fn pytests_rewritten_bytecode_does_not_answer_for_a_time_set_back() {
    let tools = stack_tools();
    let sb = Sandbox::new();
    let repo = sb.repo("calc");
    repo.write("calc.py", CALC);
    repo.write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    );
    repo.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n");
    let pytest = tools.join("python/bin/python");
    repo.arm(&format!(
        "'{}' -m pytest -q -p no:cacheprovider 2>&1",
        pytest.display()
    ));
    repo.start("s");
    let run = format!(
        "'{}' -m pytest -q -p no:cacheprovider >/dev/null",
        pytest.display()
    );
    // The test weakened to the same size and time, run (pytest writes its
    // rewritten bytecode), put back; then the code broken under its old
    // time as well.
    sh(
        &repo,
        &format!(
            "touch -r tests/test_calc.py ../when && cp tests/test_calc.py ../kept \
             && sed -i 's/add(2, 3) == 5/int(2+ 3) == 5/' tests/test_calc.py \
             && touch -r ../when tests/test_calc.py && {run} \
             && cp ../kept tests/test_calc.py && touch -r ../when tests/test_calc.py \
             && touch -r calc.py ../code && sed -i 's/a + b/a - b/' calc.py \
             && touch -r ../code calc.py"
        ),
    );
    let out = repo.stop("s", false);
    assert_blocked(&repo, &out, "pytest's bytecode");
}

#[test]
#[ignore = "slow suite: cargo (./verify.sh --full)"]
fn cargos_build_output_does_not_answer_for_a_time_set_back() {
    let sb = Sandbox::new();
    let repo = sb.repo("calc");
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n",
    );
    // Committed, as cargo writes it: a verify.sh that wrote it would
    // change the tree it judged.
    repo.write(
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n",
    );
    repo.write(".gitignore", "/target\n");
    repo.arm("cargo test --quiet 2>&1");
    repo.start("s");
    sh(&repo, "cargo test --quiet >/dev/null 2>&1");
    sh(
        &repo,
        "touch -r src/lib.rs ../when && sed -i 's/a + b/a - b/' src/lib.rs && touch -r ../when src/lib.rs",
    );
    let out = repo.stop("s", false);
    assert_blocked(&repo, &out, "cargo's target/");
    assert!(out.message().contains("`src/lib.rs`"), "{out}");
}

/// A conftest.py that turns every failure into a pass.
const PASSING_CONFTEST: &str = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n        report.outcome = \"passed\"\n";

/// A pytest project, passing, whose `verify.sh` runs the stack tools'
/// pytest.
fn pytest_project(sb: &Sandbox) -> Repo {
    let tools = stack_tools();
    let repo = sb.repo("calc");
    repo.write("calc.py", CALC);
    repo.write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    );
    repo.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n");
    repo.arm(&format!(
        "'{}' -m pytest -q -p no:cacheprovider 2>&1",
        tools.join("python/bin/python").display()
    ));
    repo
}

#[test]
#[ignore = "slow suite: pytest (./verify.sh --full)"]
fn a_conftest_hidden_by_the_repositorys_exclude_file_is_a_check() {
    let sb = Sandbox::new();
    let repo = pytest_project(&sb);
    repo.start("s");
    repo.write("tests/conftest.py", PASSING_CONFTEST);
    sh(
        &repo,
        "mkdir -p .git/info && echo conftest.py >> .git/info/exclude",
    );
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "M calc.py");
    let out = repo.stop("s", false);
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "weakened", "{out}\n{status}");
    assert_ne!(code, 0);
    assert!(out.message().contains("tests/conftest.py"), "{out}");
    assert!(!out.message().contains("pass too"), "{out}");
}

#[test]
#[ignore = "slow suite: pytest (./verify.sh --full)"]
fn a_conftest_hidden_by_an_ignore_file_that_ignores_itself_is_a_check() {
    let sb = Sandbox::new();
    let repo = pytest_project(&sb);
    repo.start("s");
    repo.write("tests/conftest.py", PASSING_CONFTEST);
    repo.write("tests/.gitignore", ".gitignore\nconftest.py\n");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "M calc.py");
    let out = repo.stop("s", false);
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "weakened", "{out}\n{status}");
    assert_ne!(code, 0);
    assert!(out.message().contains("tests/conftest.py"), "{out}");
}

#[test]
#[ignore = "slow suite: pytest (./verify.sh --full)"]
fn an_ignored_conftest_that_was_there_at_the_start_is_not_the_sessions_doing() {
    // A person's own ignored conftest.py (local settings): no change.
    let sb = Sandbox::new();
    let repo = pytest_project(&sb);
    repo.write("tests/conftest.py", "import os\n");
    sh(
        &repo,
        "mkdir -p .git/info && echo conftest.py >> .git/info/exclude",
    );
    repo.start("s");
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    );
    let out = repo.stop("s", false);
    assert_plain_verified(&repo, &out, "an ignored conftest from before");
}

#[test]
fn an_ignore_file_that_hides_itself_is_work() {
    // Nothing git shows changes: only a `.gitignore` that ignores itself
    // appears (with what it hides). The stop must still judge the tree.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("tests/test_a.txt", "a\n");
    repo.commit("a test folder");
    repo.start("s");
    repo.write("tests/.gitignore", ".gitignore\nconftest.py\n");
    repo.write("tests/conftest.py", "x = 1\n");
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "");
    let out = repo.stop("s", false);
    // Run, and replayed: what it hides is an added check.
    assert!(
        repo.runs() >= 1,
        "the hidden ignore file was not seen:\n{out}"
    );
    assert!(out.message().contains("`tests/conftest.py`"), "{out}");
    // A folder ignored whole with its own `.gitignore` (as pytest's cache
    // writes it) changes nothing.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.start("s");
    repo.write(".pytest_cache/.gitignore", "*\n");
    repo.write(".pytest_cache/v/cache/nodeids", "[]\n");
    let out = repo.stop("s", false);
    assert_eq!(repo.runs(), 0, "a cache folder was taken for work:\n{out}");
}

#[test]
fn a_file_hidden_by_an_ignore_rule_the_session_added_is_named() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write(".gitignore", "*.tmp\n");
    repo.commit("ignore temp files");
    repo.start("s");
    // Hidden by a rule the session added: named.
    repo.write(".gitignore", "*.tmp\n*.log\n");
    repo.write("debug.log", "hidden\n");
    // Hidden by a rule that was there: the session's own business.
    repo.write("scratch.tmp", "noise\n");
    // By the repository's excludes file, changed in the session: named.
    sh(
        &repo,
        "mkdir -p .git/info && echo secret.txt >> .git/info/exclude",
    );
    repo.write("secret.txt", "hidden too\n");
    let out = repo.stop("s", false);
    let (code, status) = repo.status_json();
    assert_eq!(status["verdict"], "verified", "{out}\n{status}");
    assert_eq!(code, 0);
    let said = out.message();
    assert!(
        said.contains("`debug.log`: appeared during the session, ignored by `*.log`"),
        "{out}"
    );
    assert!(said.contains("`secret.txt`: appeared"), "{out}");
    assert!(!said.contains("scratch.tmp"), "{out}");
}

#[test]
fn an_ignored_file_the_checks_rewrite_under_tests_is_no_change_to_the_checks() {
    // A run that writes its log under `tests/` (ignored) at every run: the
    // log is no check, and no replay is made for it.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let runs = repo.runs_file();
    repo.write(".gitignore", "*.log\n");
    repo.write("tests/check.txt", "expect 1\n");
    repo.arm(&format!(
        "echo run >> '{}'\nmkdir -p tests && date +%s%N > tests/run.log",
        runs.display()
    ));
    sh(&repo, "./verify.sh");
    repo.start("s");
    repo.write("lib.txt", "work\n");
    let out = repo.stop("s", false);
    assert_plain_verified(&repo, &out, "a log rewritten under tests/");
    // The gate's own run and the agent's earlier one; no replay.
    assert_eq!(repo.runs(), 2, "{out}");
}
