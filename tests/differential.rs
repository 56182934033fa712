//! A check that can no longer fail is a disarm, proven by running: when a
//! session changed its checks and the session-start checks pass on the new
//! code, one failing test is planted where the start's checks look, and
//! both sets of checks run with it (SPEC.md, "Weakened checks"). What the
//! start's checks catch and the session's let through is WEAKENED; honest
//! changes to the checks fail on it too and stay verified.
//!
//! Each session starts from a passing tree (the code is right), so the
//! replay alone passes: only the planted test tells a disarm apart.

use crate::util::{Repo, Sandbox};

const PACKAGE: &str = "{\n  \"name\": \"calc\",\n  \"private\": true,\n  \"type\": \"module\",\n  \"scripts\": {\n    \"test\": \"node --test\"\n  }\n}\n";
const CODE: &str = "export const add = (a, b) => a + b;\n";
const TEST: &str = "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\nimport { add } from \"../src/calc.js\";\n\ntest(\"adds\", () => {\n  assert.equal(add(2, 3), 5);\n});\n";

fn project(sb: &Sandbox) -> Repo {
    let repo = sb.repo("calc");
    repo.write("package.json", PACKAGE);
    repo.write("src/calc.js", CODE);
    repo.write("test/calc.test.js", TEST);
    repo.arm("npm test --silent 2>&1");
    repo
}

/// The session rewrites the test script to `script`; the verdict and, for a
/// disarm, the words that say it.
fn session(script: &str) -> (String, String) {
    let sb = Sandbox::new();
    let repo = project(&sb);
    repo.start("s");
    repo.write(
        "package.json",
        &PACKAGE.replace("\"node --test\"", &format!("\"{script}\"")),
    );
    let out = repo.stop("s", false);
    let (_, status) = repo.status_json();
    (
        status["verdict"].as_str().unwrap_or("?").to_string(),
        out.to_string(),
    )
}

#[test]
fn a_runner_whose_status_is_laundered_is_weakened_by_a_planted_failure() {
    for script in [
        "node --test || echo failed",
        "node --test; echo done",
        "node --test & wait $! || true",
        "node --test | cat",
    ] {
        let (verdict, out) = session(script);
        assert_eq!(verdict, "weakened", "{script}:\n{out}");
        for said in [
            "a failing test in `test/calc.test.js` was planted",
            "the checks as the session left them passed with it",
        ] {
            assert!(out.contains(said), "{script}: {said:?} missing:\n{out}");
        }
    }
}

#[test]
fn honest_changes_to_the_runner_fail_on_the_planted_test_too() {
    for script in [
        "node --test --test-reporter=spec",
        "rm -rf coverage || true; node --test",
        "set -e; node --test",
    ] {
        let (verdict, out) = session(script);
        assert_eq!(verdict, "verified", "{script}:\n{out}");
        assert!(
            out.contains("planted: both sets of checks failed on it"),
            "{script}:\n{out}"
        );
    }
}

/// Honest changes to the tests themselves: each still fails on the planted
/// test, so each stays verified.
#[test]
fn honest_changes_to_the_tests_stay_verified() {
    let split = TEST.replace(
        "test(\"adds\", () => {\n  assert.equal(add(2, 3), 5);\n});\n",
        "test(\"adds positives\", () => {\n  assert.equal(add(2, 3), 5);\n});\n\ntest(\"adds zero\", () => {\n  assert.equal(add(0, 3), 3);\n});\n",
    );
    type Edit = Box<dyn Fn(&Repo)>;
    let sessions: Vec<(&str, Edit)> = vec![
        (
            "a test split in two",
            Box::new(move |r: &Repo| r.write("test/calc.test.js", &split)),
        ),
        (
            "a test moved to a folder the runner finds",
            Box::new(|r: &Repo| {
                std::fs::remove_file(r.path("test/calc.test.js")).expect("rm");
                r.write(
                    "test/unit/calc.test.js",
                    &TEST.replace("../src/calc.js", "../../src/calc.js"),
                );
            }),
        ),
        (
            "a test moved, and the runner pointed at its new folder",
            Box::new(|r: &Repo| {
                std::fs::remove_file(r.path("test/calc.test.js")).expect("rm");
                r.write(
                    "test/unit/calc.test.js",
                    &TEST.replace("../src/calc.js", "../../src/calc.js"),
                );
                r.write(
                    "package.json",
                    &PACKAGE.replace("\"node --test\"", "\"node --test test/unit/\""),
                );
            }),
        ),
    ];
    for (name, edit) in sessions {
        let sb = Sandbox::new();
        let repo = project(&sb);
        repo.start("s");
        edit(&repo);
        let out = repo.stop("s", false);
        let (_, status) = repo.status_json();
        assert_eq!(status["verdict"], "verified", "{name}:\n{out}");
        assert!(
            out.to_string()
                .contains("planted: both sets of checks failed on it"),
            "{name}:\n{out}"
        );
    }
}

/// vitest: a setup file that overrides a matcher so that it always passes
/// is a disarm; one that adds a matcher that can fail is not.
#[test]
#[ignore = "slow suite: vitest (./verify.sh --full)"]
fn a_matcher_made_to_always_pass_is_weakened_and_one_that_can_fail_is_not() {
    const TEST: &str = "import { test, expect } from \"vitest\";\nimport { add } from \"../src/calc.js\";\n\ntest(\"adds\", () => {\n  expect(add(2, 3)).toBe(5);\n});\n";
    let sessions = [
        (
            "toBe overridden to always pass",
            "import { expect } from \"vitest\";\nexpect.extend({ toBe: () => ({ pass: true, message: () => \"\" }) });\n",
            "weakened",
        ),
        (
            "a new matcher that can fail",
            "import { expect } from \"vitest\";\nexpect.extend({ toBeEven: (n) => ({ pass: n % 2 === 0, message: () => `${n} is odd` }) });\n",
            "verified",
        ),
    ];
    for (name, setup, verdict) in sessions {
        let sb = Sandbox::new();
        let repo = sb.repo("calc");
        repo.write(
            "package.json",
            &PACKAGE.replace("\"node --test\"", "\"vitest run\""),
        );
        repo.write("src/calc.js", CODE);
        repo.write("test/calc.test.js", TEST);
        repo.write(".gitignore", "node_modules\n");
        repo.arm("npm test --silent 2>&1");
        std::os::unix::fs::symlink(
            crate::weakened::stack_tools().join("node/node_modules"),
            repo.path("node_modules"),
        )
        .expect("node_modules");
        repo.start("s");
        repo.write("test/setup.js", setup);
        repo.write(
            "vitest.config.js",
            "export default { test: { setupFiles: [\"./test/setup.js\"] } };\n",
        );
        let out = repo.stop("s", false);
        let (_, status) = repo.status_json();
        assert_eq!(status["verdict"], verdict, "{name}:\n{out}");
    }
}

/// A test made to check nothing, with the code still right: the start's
/// test fails on a mutant of the code it imports, the session's passes
/// with it. Python's unittest, no tools beyond python3.
#[test]
fn a_test_made_to_check_nothing_is_weakened_by_a_mutant() {
    const CALC: &str = "def add(a, b):\n    return a + b\n";
    const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    let sessions = [
        ("the body emptied", "        pass\n", "weakened"),
        (
            "the assertion wrapped in try",
            "        try:\n            self.assertEqual(add(2, 3), 5)\n        except AssertionError:\n            pass\n",
            "weakened",
        ),
        (
            "the expectation loosened",
            "        self.assertTrue(add(2, 3))\n",
            "weakened",
        ),
        (
            "the test reformatted and a case added",
            "        self.assertEqual(\n            add(2, 3),\n            5,\n        )\n        self.assertEqual(add(0, 0), 0)\n",
            "verified",
        ),
    ];
    for (name, body, verdict) in sessions {
        let sb = Sandbox::new();
        let repo = sb.repo("calc");
        repo.write("calc.py", CALC);
        repo.write("tests/__init__.py", "");
        repo.write("tests/test_calc.py", TESTS);
        repo.write(".gitignore", "__pycache__/\n");
        repo.arm("python3 -m unittest discover -s tests -t . 2>&1");
        repo.start("s");
        repo.write(
            "tests/test_calc.py",
            &TESTS.replace("        self.assertEqual(add(2, 3), 5)\n", body),
        );
        let out = repo.stop("s", false);
        let (_, status) = repo.status_json();
        assert_eq!(status["verdict"], verdict, "{name}:\n{out}");
        if verdict == "weakened" {
            assert!(
                out.to_string().contains(
                    "a mutant of the code the changed tests import (`calc.py` line 2: `+` -> `-`)"
                ),
                "{name}:\n{out}"
            );
        }
    }
}

/// A linter's configuration loosened, with the code still clean: the start's
/// linter catches a planted lint defect and the session's lets it through.
/// Making the linter stricter stays verified.
#[test]
#[ignore = "slow suite: ruff (./verify.sh --full)"]
fn a_linter_loosened_is_weakened_by_a_planted_lint_defect() {
    let ruff = crate::weakened::stack_tools().join("python/bin/ruff");
    const PYPROJECT: &str =
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"F\"]\n";
    let sessions = [
        (
            "unused names ignored",
            PYPROJECT.replace(
                "select = [\"F\"]",
                "select = [\"F\"]\nignore = [\"F401\", \"F841\"]",
            ),
            "weakened",
        ),
        (
            "pycodestyle's errors added",
            PYPROJECT.replace("select = [\"F\"]", "select = [\"F\", \"E\"]"),
            "verified",
        ),
    ];
    for (name, pyproject, verdict) in sessions {
        let sb = Sandbox::new();
        let repo = sb.repo("calc");
        repo.write("pyproject.toml", PYPROJECT);
        repo.write("calc.py", "def add(a, b):\n    return a + b\n");
        repo.write("tests/__init__.py", "");
        repo.write(
            "tests/test_calc.py",
            "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        );
        repo.write(".gitignore", "__pycache__/\n.ruff_cache/\n");
        repo.arm(&format!(
            "{} check --no-cache . && python3 -m unittest discover -s tests -t . 2>&1",
            ruff.display()
        ));
        repo.start("s");
        repo.write("pyproject.toml", &pyproject);
        let out = repo.stop("s", false);
        let (_, status) = repo.status_json();
        assert_eq!(status["verdict"], verdict, "{name}:\n{out}");
        if verdict == "weakened" {
            assert!(
                out.to_string()
                    .contains("a type and lint defect appended to `calc.py`"),
                "{name}:\n{out}"
            );
        }
    }
}

/// A runner's configuration deleted and another's added is said on the
/// added one, in the report a person reads.
#[test]
fn a_runner_configuration_swapped_is_said_in_words() {
    let sb = Sandbox::new();
    let repo = sb.repo("calc");
    repo.write("package.json", PACKAGE);
    repo.write("src/calc.js", CODE);
    repo.write("test/calc.test.js", TEST);
    repo.write(".mocharc.yml", "spec: test/**/*.test.js\n");
    repo.arm("npm test --silent 2>&1");
    repo.start("s");
    std::fs::remove_file(repo.path(".mocharc.yml")).expect("rm");
    repo.write(
        "vitest.config.js",
        "export default { test: { include: [\"test/**/*.test.js\"] } };\n",
    );
    let out = repo.stop("s", false);
    assert!(
        out.to_string()
            .contains("test runner replaced: `mocha` -> `vitest`"),
        "{out}"
    );
}
