//! `prove-it ci` judges a pull request where the agent cannot reach
//! (SPEC.md, "In CI"). Real git throughout: a bare repository is the
//! remote, the agent works in one clone and pushes a branch, and CI is a
//! fresh clone with no state of the gate's. The base's checks and policy
//! decide; a claim in a trailer never changes the outcome.

use crate::util::{Repo, Sandbox, git, prove_it};
use serde_json::Value;
use std::path::{Path, PathBuf};

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
const TESTS: &str = "import unittest\nfrom calc import add, mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n";
/// `git diff --check` against the base the gate gives, then the tests;
/// `run.cfg` (configuration by the committed list) may set options.
const VERIFY: &str = "#!/bin/sh\nset -e\nif [ -f run.cfg ]; then . ./run.cfg; fi\n[ -n \"${SKIP_FAILURES:-}\" ] && exit 0\ngit diff --check \"${PROVE_IT_BASE:-HEAD}\" -- .\npython3 -m unittest discover -s tests -t . 2>&1\n";

/// The agent's side: a clone of the remote with the project on `main`,
/// working on the branch `pr`.
struct Project {
    sb: Sandbox,
    remote: PathBuf,
    dev: Repo,
}

impl Project {
    /// The project, armed (`verify` at the base; `None`: no `verify.sh`).
    fn new(verify: Option<&str>) -> Project {
        let sb = Sandbox::new();
        let remote = sb.tmp.path().join("remote.git");
        git(
            sb.tmp.path(),
            &["init", "-q", "--bare", "-b", "main", "remote.git"],
        );
        let dev = sb.repo("dev");
        dev.write("calc.py", CALC);
        dev.write("tests/__init__.py", "");
        dev.write("tests/test_calc.py", TESTS);
        dev.write(".prove-it/checks", "@defaults\n[config]\nrun.cfg\n");
        if let Some(verify) = verify {
            dev.write("verify.sh", verify);
            dev.chmod("verify.sh", 0o755);
        }
        dev.commit("the project");
        dev.git(&["remote", "add", "origin", &remote.display().to_string()]);
        dev.git(&["push", "-q", "origin", "main"]);
        dev.git(&["checkout", "-q", "-b", "pr"]);
        Project { sb, remote, dev }
    }

    /// The agent's work on `pr`, committed and pushed.
    fn work(&self, edit: impl FnOnce(&Repo), message: &str) {
        edit(&self.dev);
        self.dev.commit(message);
        self.dev.git(&["push", "-q", "-f", "origin", "pr"]);
    }

    /// CI's fresh clone of `branch` (with `args` for `git clone`).
    fn clone(&self, name: &str, branch: &str, args: &[&str]) -> Repo {
        let root = self.sb.tmp.path().join(name);
        let url = format!("file://{}", self.remote.display());
        let mut line = vec!["clone", "-q", "-b", branch];
        line.extend(args);
        line.extend([url.as_str(), name]);
        git(self.sb.tmp.path(), &line);
        Repo {
            root,
            env: self.sb.env.clone(),
        }
    }
}

/// One `prove-it ci` run.
struct Ci {
    code: i32,
    stdout: String,
    stderr: String,
    json: Value,
    summary: String,
}

impl Ci {
    fn verdict(&self) -> &str {
        self.json["verdict"].as_str().unwrap_or("?")
    }

    fn runs(&self) -> Vec<(String, String)> {
        self.json["runs"]
            .as_array()
            .map(|runs| {
                runs.iter()
                    .map(|r| {
                        (
                            r["what"].as_str().unwrap_or("?").to_string(),
                            r["outcome"].as_str().unwrap_or("?").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn assert(&self, verdict: &str, code: i32) {
        assert_eq!((self.verdict(), self.code), (verdict, code), "{self}");
    }
}

impl std::fmt::Display for Ci {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}\n--- json\n{:#}",
            self.code, self.stdout, self.stderr, self.json
        )
    }
}

/// `prove-it ci ARGS --json --summary --annotations` in `repo`, outputs
/// outside the checkout (a file in it would be an untracked change).
fn ci_with(repo: &Repo, env: &[(&str, &str)], args: &[&str]) -> Ci {
    let out_dir = repo.root.with_extension("out");
    std::fs::create_dir_all(&out_dir).expect("out dir");
    let json = out_dir.join("ci.json");
    let summary = out_dir.join("summary.md");
    let _ = std::fs::remove_file(&json);
    let _ = std::fs::remove_file(&summary);
    let mut line = vec!["ci"];
    line.extend(args);
    let (j, s) = (json.display().to_string(), summary.display().to_string());
    line.extend(["--json", &j, "--summary", &s, "--annotations"]);
    let mut cmd = prove_it(&repo.root, &repo.env, &line);
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("prove-it ci");
    let ci = Ci {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        json: std::fs::read(&json)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
    };
    assert!(!ci.json.is_null(), "no JSON written\n{ci}");
    assert!(
        ci.summary.starts_with("### prove-it: "),
        "no summary written\n{ci}"
    );
    ci
}

fn ci(repo: &Repo) -> Ci {
    ci_with(repo, &[], &["--base", "origin/main"])
}

fn replace(repo: &Repo, path: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(repo.path(path)).expect("read");
    assert!(text.contains(from), "`{from}` is not in {path}");
    repo.write(path, &text.replacen(from, to, 1));
}

/// The agent's bug: `add` subtracts.
fn break_add(repo: &Repo) {
    replace(repo, "calc.py", "a + b", "a - b");
}

/// A pull request made by `edit`, judged in a fresh clone.
fn judged(edit: impl FnOnce(&Repo)) -> (Project, Repo, Ci) {
    let project = Project::new(Some(VERIFY));
    project.work(edit, "the work");
    let clone = project.clone("ci", "pr", &[]);
    let out = ci(&clone);
    (project, clone, out)
}

#[test]
fn an_honest_change_is_verified_and_says_so() {
    let (_project, clone, out) =
        judged(|r| replace(r, "calc.py", "return a + b", "return sum((a, b))"));
    out.assert("verified", 0);
    assert_eq!(
        out.runs(),
        [("head".to_string(), "passed".to_string())],
        "{out}"
    );
    assert!(
        out.summary
            .contains("`./verify.sh` passes on this pull request (in "),
        "{out}"
    );
    assert!(
        out.summary.contains("with the checks as the base has them"),
        "{out}"
    );
    assert_eq!(out.json["claim"]["status"], "absent", "{out}");
    // The pull request's own tip, and its tree, as git names them.
    let head = clone.git(&["rev-parse", "HEAD"]);
    assert_eq!(out.json["head"]["commit"], head.trim(), "{out}");
}

#[test]
fn a_failing_pull_request_fails_with_its_failing_test_named() {
    let (_project, _clone, out) = judged(break_add);
    out.assert("failed", 1);
    assert!(
        out.summary
            .contains("`./verify.sh` fails on this pull request"),
        "{out}"
    );
    assert!(out.summary.contains("FAIL: test_add"), "{out}");
    assert_eq!(out.json["runs"][0]["exit_code"], 1, "{out}");
}

/// Each kind of weakening, on a pull request whose code is broken: the
/// head's own `verify.sh` passes, the base's checks fail against it, and
/// CI fails. A test or assertion removed or changed beside the code is
/// read by the gate's rules as a possible behaviour change (the base's
/// checks passed on the base's code): a quieter verdict, still exit 1.
#[test]
fn every_kind_of_weakening_fails_ci() {
    // name, the agent's move, a word of its evidence, the verdict.
    type Case = (&'static str, fn(&Repo), &'static str, &'static str);
    let cases: [Case; 7] = [
        (
            "skip marker",
            |r| {
                replace(
                    r,
                    "tests/test_calc.py",
                    "    def test_add",
                    "    @unittest.skip(\"later\")\n    def test_add",
                )
            },
            "skip marker added",
            "weakened",
        ),
        (
            "weaker assertion",
            |r| {
                replace(
                    r,
                    "tests/test_calc.py",
                    "self.assertEqual(add(2, 3), 5)",
                    "self.assertIsNotNone(add(2, 3))",
                )
            },
            "tests/test_calc.py",
            "behaviour_changed",
        ),
        (
            "deleted test",
            |r| {
                replace(
                    r,
                    "tests/test_calc.py",
                    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n",
                    "",
                )
            },
            "tests/test_calc.py",
            "behaviour_changed",
        ),
        (
            "deleted test file",
            |r| std::fs::remove_file(r.path("tests/test_calc.py")).expect("rm"),
            "deleted",
            "behaviour_changed",
        ),
        (
            "deselecting option",
            |r| replace(r, "verify.sh", "-t . 2>&1", "-t . -k test_mul 2>&1"),
            "verify.sh",
            "weakened",
        ),
        (
            "verify.sh rewritten",
            |r| {
                replace(
                    r,
                    "verify.sh",
                    "python3 -m unittest",
                    "exit 0\npython3 -m unittest",
                )
            },
            "verify.sh",
            "weakened",
        ),
        (
            "added configuration",
            |r| r.write("run.cfg", "SKIP_FAILURES=1\n"),
            "run.cfg",
            "weakened",
        ),
    ];
    for (name, weaken, evidence, verdict) in cases {
        let (_project, _clone, out) = judged(|r| {
            break_add(r);
            weaken(r);
        });
        assert_eq!((out.verdict(), out.code), (verdict, 1), "{name}: {out}");
        assert!(
            out.summary
                .contains("but the base's checks fail against its code"),
            "{name}: {out}"
        );
        assert!(out.summary.contains(evidence), "{name}: {out}");
        assert!(out.summary.contains("Read: `git diff "), "{name}: {out}");
        let runs = out.runs();
        assert_eq!(runs[0], ("head".into(), "passed".into()), "{name}: {out}");
        assert_eq!(
            runs[1],
            ("base_checks_on_head".into(), "failed".into()),
            "{name}: {out}"
        );
        assert_eq!(
            runs[2],
            ("control".into(), "passed".into()),
            "{name}: {out}"
        );
    }
}

#[test]
fn a_skip_marker_is_annotated_on_its_line() {
    let (_project, _clone, out) = judged(|r| {
        break_add(r);
        replace(
            r,
            "tests/test_calc.py",
            "    def test_add",
            "    @unittest.skip(\"later\")\n    def test_add",
        );
    });
    out.assert("weakened", 1);
    assert!(
        out.stdout.lines().any(|l| l
            == "::warning file=tests/test_calc.py,line=6,title=prove-it%3A WEAKENED::skip marker added: `@unittest.skip(\"later\")`"),
        "{out}"
    );
    assert!(out.summary.contains("FAIL: test_add"), "{out}");
    assert!(
        out.summary
            .contains("| `tests/test_calc.py` | test modified | skip marker added"),
        "{out}"
    );
}

#[test]
fn git_attributes_that_silence_the_whitespace_check_are_left_out_of_the_replay() {
    let (_project, _clone, out) = judged(|r| {
        replace(r, "calc.py", "return a + b", "return a + b   ");
        r.write(".gitattributes", "* -whitespace\n");
    });
    out.assert("weakened", 1);
    assert!(out.summary.contains(".gitattributes"), "{out}");
    let replayed = &out.json["runs"][1]["tail"];
    assert!(
        replayed.to_string().contains("trailing whitespace"),
        "{out}"
    );
}

#[test]
fn a_changed_expectation_with_the_code_is_behaviour_changed_not_verified() {
    let (_project, _clone, out) = judged(|r| {
        break_add(r);
        replace(r, "tests/test_calc.py", "add(2, 3), 5", "add(2, 3), -1");
    });
    out.assert("behaviour_changed", 1);
    assert!(out.summary.contains("and pass on the base's code"), "{out}");
    assert!(
        out.summary
            .contains("If the task asked for this new behaviour, the change may be right"),
        "{out}"
    );
    assert_eq!(
        out.runs().last().map(|r| r.0.as_str()),
        Some("base_checks_on_base"),
        "{out}"
    );
}

/// CI's own editable install of the checkout (`pip install -e .` in the
/// job) puts the checkout on `sys.path`: the base's code must still be the
/// base's in the copy where the base's checks run, or a deliberate change
/// reads as a weakening.
#[test]
fn an_editable_install_of_the_checkout_does_not_run_in_the_copies() {
    // The tests import `calc` only through the environment (run from
    // `tests/`, the checkout's root is not on `sys.path` by itself).
    let verify = VERIFY.replace(
        "python3 -m unittest discover -s tests -t . 2>&1",
        "cd tests && python3 -m unittest test_calc 2>&1",
    );
    assert_ne!(verify, VERIFY);
    let project = Project::new(Some(&verify));
    project.work(
        |r| {
            break_add(r);
            replace(r, "tests/test_calc.py", "add(2, 3), 5", "add(2, 3), -1");
        },
        "the work",
    );
    let clone = project.clone("ci", "pr", &[]);
    let venv = clone.root.with_extension("venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("venv");
    assert!(made.success());
    let site = std::fs::read_dir(venv.join("lib"))
        .expect("lib")
        .flatten()
        .next()
        .expect("python3.x")
        .path()
        .join("site-packages");
    std::fs::write(
        site.join("__editable__.calc-0.1.pth"),
        format!("{}\n", clone.root.display()),
    )
    .expect("pth");
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (venv_text, path) = (venv.display().to_string(), path);
    let out = ci_with(
        &clone,
        &[("VIRTUAL_ENV", &venv_text), ("PATH", &path)],
        &["--base", "origin/main"],
    );
    out.assert("behaviour_changed", 1);
    assert!(out.summary.contains("and pass on the base's code"), "{out}");
}

/// A pull request that makes the checks unable to fail, with the code
/// still right: the base's checks pass on the head's code, so only the
/// planted failing test tells it apart. The next pull request would be
/// judged by the disarmed checks.
#[test]
fn a_pull_request_that_disarms_the_checks_with_the_code_right_fails_ci() {
    let (_project, _clone, out) = judged(|r| r.write("run.cfg", "SKIP_FAILURES=1\n"));
    out.assert("weakened", 1);
    assert!(
        out.summary.contains("was planted") && out.summary.contains("run.cfg"),
        "the summary says what was planted and which check disarmed it:\n{out}"
    );
    let runs = out.runs();
    assert!(
        runs.contains(&("base_checks_with_planted_test".into(), "failed".into()))
            && runs.contains(&("head_checks_with_planted_test".into(), "passed".into())),
        "{out}"
    );
    // An honest pull request that changes a check is judged by the same
    // question and stays verified.
    let (_project, _clone, out) = judged(|r| {
        replace(
            r,
            "tests/test_calc.py",
            "self.assertEqual(mul(2, 3), 6)",
            "self.assertEqual(mul(2, 3), 6)\n        self.assertEqual(mul(0, 3), 0)",
        )
    });
    out.assert("verified_checks_changed", 0);
    assert!(
        out.runs()
            .contains(&("head_checks_with_planted_test".into(), "failed".into())),
        "{out}"
    );
}

#[test]
fn deleting_or_disarming_verify_sh_is_disarmed() {
    let (_project, _clone, out) =
        judged(|r| std::fs::remove_file(r.path("verify.sh")).expect("rm"));
    out.assert("disarmed", 1);
    assert!(
        out.summary.contains("this pull request deletes it"),
        "{out}"
    );
    let (_project, _clone, out) = judged(|r| r.chmod("verify.sh", 0o644));
    out.assert("disarmed", 1);
    assert!(out.summary.contains("makes it not executable"), "{out}");
}

#[test]
fn tests_added_only_need_no_replay() {
    let (_project, _clone, out) = judged(|r| {
        replace(
            r,
            "calc.py",
            "def mul",
            "def sub(a, b):\n    return a - b\n\n\ndef mul",
        );
        replace(
            r,
            "tests/test_calc.py",
            "from calc import add, mul",
            "from calc import add, mul, sub",
        );
        replace(
            r,
            "tests/test_calc.py",
            "    def test_mul",
            "    def test_sub(self):\n        self.assertEqual(sub(3, 2), 1)\n\n    def test_mul",
        );
        r.write(
            "tests/test_more.py",
            "import unittest\nfrom calc import mul\n\n\nclass More(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(mul(0, 3), 0)\n",
        );
    });
    // The import line changed: the file is not "tests added only", and
    // the base's checks are replayed; they pass.
    out.assert("verified_checks_changed", 0);
    let (_project, _clone, out) = judged(|r| {
        r.write(
            "tests/test_more.py",
            "import unittest\nfrom calc import mul\n\n\nclass More(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(mul(0, 3), 0)\n",
        );
    });
    out.assert("verified_checks_changed", 0);
    assert_eq!(out.runs().len(), 1, "a replay ran: {out}");
    assert!(
        out.summary
            .contains("it only added tests, which never weaken the checks"),
        "{out}"
    );
    assert!(
        out.summary
            .contains("| `tests/test_more.py` | test added |"),
        "{out}"
    );
}

#[test]
fn checks_changed_that_the_base_also_passes_are_verified() {
    let (_project, _clone, out) = judged(|r| {
        replace(
            r,
            "tests/test_calc.py",
            "self.assertEqual(add(2, 3), 5)",
            "self.assertEqual(add(2, 3), 5)\n        self.assertEqual(add(0, 0), 0)",
        );
    });
    out.assert("verified_checks_changed", 0);
    assert_eq!(
        out.runs(),
        [
            ("head".to_string(), "passed".to_string()),
            ("base_checks_on_head".to_string(), "passed".to_string()),
            // Both sets of checks fail on a planted failing test: the
            // changed checks still work.
            (
                "base_checks_with_planted_test".to_string(),
                "failed".to_string()
            ),
            (
                "head_checks_with_planted_test".to_string(),
                "failed".to_string()
            ),
        ],
        "{out}"
    );
    assert!(
        out.summary
            .contains("the base's checks pass against its code too")
            && out
                .summary
                .contains("both sets failed on a failing test in"),
        "{out}"
    );
}

#[test]
fn a_pull_request_that_adds_verify_sh_has_no_baseline() {
    let project = Project::new(None);
    project.work(
        |r| {
            r.write("verify.sh", VERIFY);
            r.chmod("verify.sh", 0o755);
        },
        "add verify.sh",
    );
    let clone = project.clone("ci", "pr", &[]);
    let out = ci(&clone);
    out.assert("no_baseline", 2);
    assert!(
        out.summary
            .contains("The base has no executable `verify.sh`"),
        "{out}"
    );
    assert!(out.summary.contains("Its own `verify.sh` passed"), "{out}");
}

#[test]
fn a_shallow_clone_cannot_be_judged_and_says_how_to_fetch() {
    let project = Project::new(Some(VERIFY));
    project.work(break_add, "the work");
    let clone = project.clone("ci", "pr", &["--depth", "1"]);
    let out = ci(&clone);
    out.assert("could_not_judge", 2);
    assert!(out.summary.contains("this is a shallow clone"), "{out}");
    assert!(out.summary.contains("fetch-depth: 0"), "{out}");
    assert_eq!(out.runs().len(), 0, "{out}");
}

#[test]
fn no_base_given_cannot_be_judged() {
    let project = Project::new(Some(VERIFY));
    project.work(break_add, "the work");
    let clone = project.clone("ci", "pr", &[]);
    let out = ci_with(&clone, &[], &[]);
    out.assert("could_not_judge", 2);
    assert!(out.summary.contains("--base origin/main"), "{out}");
}

/// An honest change, or a broken `add` with its test skipped.
fn honest_or_skipped(repo: &Repo, weaken: bool) {
    if weaken {
        break_add(repo);
        let skip = "    @unittest.skip(\"later\")\n    def test_add";
        replace(repo, "tests/test_calc.py", "    def test_add", skip);
    } else {
        replace(repo, "calc.py", "return a * b", "return b * a");
    }
}

#[test]
fn a_merge_checkout_is_judged_and_its_second_parent_holds_the_claim() {
    for (weaken, verdict, code) in [(false, "verified", 0), (true, "weakened", 1)] {
        let project = Project::new(Some(VERIFY));
        project.work(|r| honest_or_skipped(r, weaken), "the work");
        // The base moves on meanwhile.
        project.dev.git(&["checkout", "-q", "main"]);
        project.dev.write("NOTES.md", "notes\n");
        project.dev.commit("notes");
        project.dev.git(&["push", "-q", "origin", "main"]);
        let clone = project.clone("ci", "main", &[]);
        clone.git(&["fetch", "-q", "origin", "pr"]);
        clone.git(&["merge", "-q", "--no-ff", "-m", "merge", "FETCH_HEAD"]);
        let out = ci(&clone);
        out.assert(verdict, code);
        let tip = clone.git(&["rev-parse", "HEAD^2"]);
        assert_eq!(out.json["head"]["tip"]["commit"], tip.trim(), "{out}");
        let main = clone.git(&["rev-parse", "origin/main"]);
        assert_eq!(out.json["base"]["commit"], main.trim(), "{out}");
    }
}

/// The session's own trailer (`prove-it setup trailer`) reaches CI: an
/// honest session's `verified` matches, a weakening session's `weakened`
/// is shown beside CI's own weakened.
#[test]
fn the_sessions_trailer_travels_with_the_commit() {
    for (weaken, claimed, verdict, status, code) in [
        (false, "verified", "verified", "matched", 0),
        (true, "weakened", "weakened", "not_verified", 1),
    ] {
        let project = Project::new(Some(VERIFY));
        let dev = &project.dev;
        let setup = prove_it(&dev.root, &dev.env, &["setup", "trailer"])
            .output()
            .expect("setup trailer");
        assert!(setup.status.success(), "{setup:?}");
        dev.start("s");
        honest_or_skipped(dev, weaken);
        let stop = dev.stop("s", false);
        if weaken {
            stop.assert_allowed_saying("WEAKENED");
        } else {
            stop.assert_verified();
        }
        let out = dev.git_with_hooks(None, &["commit", "-q", "-a", "-m", "the work"]);
        assert!(out.status.success(), "{out:?}");
        dev.git(&["push", "-q", "origin", "pr"]);
        let out = ci(&project.clone("ci", "pr", &[]));
        out.assert(verdict, code);
        assert_eq!(out.json["claim"]["status"], status, "{out}");
        assert_eq!(out.json["claim"]["verdict"], claimed, "{out}");
    }
}

#[test]
fn a_forged_claim_never_changes_the_outcome() {
    let project = Project::new(Some(VERIFY));
    break_add(&project.dev);
    replace(
        &project.dev,
        "tests/test_calc.py",
        "    def test_add",
        "    @unittest.skip(\"x\")\n    def test_add",
    );
    project.dev.git(&["add", "-A"]);
    let tree = project.dev.git(&["write-tree"]);
    let message = format!("all good\n\nProve-It: verified tree={}", tree.trim());
    project.dev.git(&["commit", "-q", "-m", &message]);
    project.dev.git(&["push", "-q", "origin", "pr"]);
    let clone = project.clone("ci", "pr", &[]);
    let out = ci(&clone);
    out.assert("weakened", 1);
    assert_eq!(out.json["claim"]["status"], "contradicted", "{out}");
    assert!(
        out.summary
            .contains("Claim from the agent's machine: verified, this tree: contradicted"),
        "{out}"
    );
    // A claim for another tree says nothing of this one, and a claim
    // that matches is only shown beside CI's own verdict.
    let project = Project::new(Some(VERIFY));
    project.work(
        |r| replace(r, "calc.py", "return a * b", "return b * a"),
        &format!("honest\n\nProve-It: verified tree={}", tree.trim()),
    );
    let out = ci(&project.clone("ci", "pr", &[]));
    out.assert("verified", 0);
    assert_eq!(out.json["claim"]["status"], "other_tree", "{out}");
    let project = Project::new(Some(VERIFY));
    project.work(
        |r| replace(r, "calc.py", "return a * b", "return b * a"),
        "honest",
    );
    let tip = project.dev.git(&["rev-parse", "HEAD^{tree}"]);
    project.dev.git(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        &format!("honest\n\nProve-It: verified tree={}", tip.trim()),
    ]);
    project.dev.git(&["push", "-q", "-f", "origin", "pr"]);
    let out = ci(&project.clone("ci", "pr", &[]));
    out.assert("verified", 0);
    assert_eq!(out.json["claim"]["status"], "matched", "{out}");
}

#[test]
fn the_base_decides_what_counts_as_a_check_and_which_policy_runs() {
    let (_project, _clone, out) = judged(|r| {
        break_add(r);
        replace(
            r,
            "tests/test_calc.py",
            "add(2, 3), 5",
            "add(2, 3), add(2, 3)",
        );
        // The pull request says nothing is a check, and brings a policy.
        r.write(".prove-it/checks", "# nothing\n");
        r.write(".prove-it/policy.wasm", "not a module");
    });
    out.assert("weakened", 1);
    assert_eq!(out.json["policy"], "default", "{out}");
    assert!(out.summary.contains("tests/test_calc.py"), "{out}");
}

#[test]
fn the_strict_policy_at_the_base_still_reads_as_weakened() {
    let project = Project::new(Some(VERIFY));
    project.work(
        |r| {
            break_add(r);
            replace(r, "tests/test_calc.py", "add(2, 3), 5", "add(2, 3), -1");
        },
        "the work",
    );
    let clone = project.clone("ci", "pr", &[]);
    let out = ci_with(
        &clone,
        &[("PROVE_IT_POLICY", "strict")],
        &["--base", "origin/main"],
    );
    out.assert("weakened", 1);
    assert_eq!(out.json["policy"], "strict", "{out}");
}

#[test]
fn github_actions_defaults_come_from_its_event_and_summary_file() {
    let project = Project::new(Some(VERIFY));
    project.work(break_add, "the work");
    let clone = project.clone("ci", "pr", &[]);
    let base = clone.git(&["rev-parse", "origin/main"]);
    let dir = clone.root.with_extension("gh");
    std::fs::create_dir_all(&dir).expect("dir");
    let event = dir.join("event.json");
    std::fs::write(
        &event,
        format!(
            r#"{{"pull_request": {{"base": {{"sha": "{}", "ref": "main"}}}}}}"#,
            base.trim()
        ),
    )
    .expect("event");
    let step_summary = dir.join("step-summary.md");
    std::fs::write(&step_summary, "earlier step\n").expect("summary");
    let mut cmd = prove_it(&clone.root, &clone.env, &["ci"]);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_STEP_SUMMARY", &step_summary);
    let out = cmd.output().expect("ci");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let summary = std::fs::read_to_string(&step_summary).expect("summary");
    assert!(
        summary.starts_with("earlier step\n### prove-it: FAILED"),
        "{summary}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pull request's base.sha in GITHUB_EVENT_PATH"),
        "{stderr}"
    );
}

#[test]
fn a_head_that_is_not_checked_out_is_refused() {
    let project = Project::new(Some(VERIFY));
    project.work(break_add, "the work");
    let clone = project.clone("ci", "pr", &[]);
    let out = ci_with(
        &clone,
        &[],
        &["--base", "origin/main", "--head", "origin/main"],
    );
    out.assert("could_not_judge", 2);
    assert!(
        out.summary.contains("git checkout --detach origin/main"),
        "{out}"
    );
}

/// The shipped workflow (`ci/example-workflow.yml`), run by `act` in host
/// mode (offline, no Docker) on one verified and one weakened pull
/// request. What act cannot do here is swapped, each swap asserted: the
/// checkout step clones from the bare remote, the released action is the
/// one in this tree (`uses: ./ci`, copied into act's workspace) with this
/// build's binary, and the artifact upload is dropped.
#[test]
#[ignore = "slow: runs act (tests/install-stack-tools.sh installs it)"]
fn the_shipped_workflow_runs_in_act_and_its_exit_code_is_the_verdict() {
    let act = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/stack-tools/act/bin/act");
    assert!(
        act.is_file(),
        "act is missing: run tests/install-stack-tools.sh"
    );
    let action = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci");
    let shipped = std::fs::read_to_string(action.join("example-workflow.yml")).expect("workflow");
    let swaps = [
        (
            "      - uses: actions/checkout@v4\n        with:\n          fetch-depth: 0\n",
            "      - run: cp -r \"$ACTION_DIR\" ci && git clone -q \"$REMOTE\" work && git -C work checkout -q \"$HEAD_SHA\"\n".to_string(),
        ),
        (
            "      - uses: Why-Next/prove-it/ci@v",
            "      - uses: ./ci\n        with:\n          binary: BIN\n          directory: work\n#".to_string(),
        ),
        (
            "      - uses: actions/upload-artifact@v4\n        if: always()\n        with:\n          name: prove-it\n          path: prove-it.json\n",
            String::new(),
        ),
    ];
    let mut workflow = shipped.clone();
    for (from, to) in &swaps {
        assert!(
            workflow.contains(from),
            "the shipped workflow has no `{from}`:\n{shipped}"
        );
        workflow = workflow.replacen(from, &to.replace("BIN", crate::util::BIN), 1);
    }
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        shipped.contains(&format!("Why-Next/prove-it/ci@v{version}\n")),
        "the workflow names another version than {version}:\n{shipped}"
    );
    for (weaken, verdict, code) in [(false, "verified", 0), (true, "WEAKENED", 1)] {
        let project = Project::new(Some(VERIFY));
        project.work(|r| honest_or_skipped(r, weaken), "the work");
        let head = project.dev.git(&["rev-parse", "HEAD"]);
        let base = project.dev.git(&["rev-parse", "main"]);
        let w = project.sb.tmp.path().join("act");
        std::fs::create_dir_all(w.join(".github/workflows")).expect("dir");
        std::fs::write(w.join(".github/workflows/prove-it.yml"), &workflow).expect("workflow");
        std::fs::write(
            w.join("event.json"),
            format!(
                r#"{{"pull_request": {{"base": {{"sha": "{}", "ref": "main"}}, "head": {{"sha": "{}"}}}}}}"#,
                base.trim(),
                head.trim()
            ),
        )
        .expect("event");
        git(&w, &["init", "-q", "-b", "main"]);
        git(&w, &["add", "-A"]);
        git(&w, &["commit", "-q", "-m", "the workflow"]);
        let home = project.sb.tmp.path().join("home");
        let out = std::process::Command::new("timeout")
            .arg("600")
            .arg(&act)
            .args([
                "pull_request",
                "-P",
                "ubuntu-latest=-self-hosted",
                "--action-offline-mode",
                "-e",
                "event.json",
                "-W",
                ".github/workflows/prove-it.yml",
                "--env",
                &format!("REMOTE={}", project.remote.display()),
                "--env",
                &format!("HEAD_SHA={}", head.trim()),
                "--env",
                &format!("ACTION_DIR={}", action.display()),
            ])
            .current_dir(&w)
            .env("HOME", &home)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("PROVE_IT_CACHE_DIR", &project.sb.env["PROVE_IT_CACHE_DIR"])
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("act");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(code), "{verdict}:\n{text}");
        assert!(
            text.contains(&format!(
                "Summary - ### prove-it: {verdict} (judged by CI on "
            )),
            "{verdict}:\n{text}"
        );
        if weaken {
            assert!(text.contains("::set-output:: verdict=weakened"), "{text}");
            assert!(
                text.contains("::warning file=tests/test_calc.py,line=6,title=prove-it%3A WEAKENED::skip marker added"),
                "{text}"
            );
            assert!(
                text.contains("| `tests/test_calc.py` | test modified | skip marker added"),
                "{text}"
            );
        } else {
            assert!(text.contains("::set-output:: verdict=verified"), "{text}");
        }
    }
}

/// The action's step with no binary given installs this version's
/// release as the plugin does (the archive from a real HTTP server on
/// loopback, its SHA-256 checked), then judges; a release whose checksum
/// does not match is refused with an error annotation and exit 2, never
/// run.
#[test]
fn the_action_installs_its_own_version_checked_then_judges() {
    use crate::download::{FileServer, publish, without_debug_info};
    let project = Project::new(Some(VERIFY));
    project.work(break_add, "the work");
    let clone = project.clone("ci", "pr", &[]);
    let site = project.sb.tmp.path().join("site");
    let binary = without_debug_info(&project.sb, Path::new(crate::util::BIN));
    let archive = publish(&site, env!("CARGO_PKG_VERSION"), &binary);
    let server = FileServer::start(&site, std::time::Duration::ZERO);
    let step = |runner_temp: &Path| {
        let mut cmd = std::process::Command::new("sh");
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci/run.sh"))
            .env("INPUT_DIRECTORY", &clone.root)
            .env("INPUT_BASE", "origin/main")
            .env("INPUT_JSON", project.sb.tmp.path().join("ci.json"))
            .env("RUNNER_TEMP", runner_temp)
            .env("PROVE_IT_DOWNLOAD_URL", &server.url)
            .envs(&clone.env);
        crate::util::git_env(&mut cmd);
        cmd.output().expect("run.sh")
    };
    let out = step(&project.sb.tmp.path().join("runner"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout.contains("### prove-it: FAILED"), "{stdout}");
    assert!(
        server.requests().iter().any(|r| r.ends_with(".tar.gz")),
        "{:?}",
        server.requests()
    );
    // The archive changed under its checksum.
    let mut bytes = std::fs::read(&archive).expect("archive");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).expect("archive");
    let out = step(&project.sb.tmp.path().join("runner-2"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stdout.starts_with("::error title=prove-it::"), "{stdout}");
    assert!(stdout.contains("it was not installed"), "{stdout}");
    assert!(!stdout.contains("### prove-it:"), "{stdout}");
}

/// The workflow README.md shows is the one shipped and tested.
#[test]
fn the_readme_shows_the_shipped_workflow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let shipped = std::fs::read_to_string(root.join("ci/example-workflow.yml")).expect("workflow");
    let body = &shipped[shipped.find("name: prove-it").expect("name")..];
    let readme = std::fs::read_to_string(root.join("README.md")).expect("readme");
    assert!(
        readme.contains(&format!("```yaml\n{body}```")),
        "README.md does not show:\n{body}"
    );
}

/// What kept the checks from being compared in full is said in the
/// summary, not only in the JSON.
#[test]
fn a_problem_with_the_base_list_is_said_to_the_reviewer() {
    let project = Project::new(Some(VERIFY));
    project.dev.git(&["checkout", "-q", "main"]);
    project.dev.write(
        ".prove-it/checks",
        "@defaults\n[config]\nrun.cfg\n[nonsense]\n",
    );
    project.dev.commit("a bad heading");
    project.dev.git(&["push", "-q", "origin", "main"]);
    project.dev.git(&["checkout", "-q", "-B", "pr"]);
    project.work(
        |r| replace(r, "tests/test_calc.py", "add(2, 3), 5", "add(3, 2), 5"),
        "the work",
    );
    let out = ci(&project.clone("ci", "pr", &[]));
    assert!(
        out.summary
            .contains("Note: the checks could not all be compared: `.prove-it/checks` line 4: `[nonsense]` is not a heading"),
        "{out}"
    );
}

/// A `verify.sh` the pull request rewrote, which passes with its skipped
/// test and then puts the base's checks back in the work tree, would hide
/// what the pull request changed from the comparison that follows it:
/// CI does not judge files its run of `verify.sh` rewrote.
#[test]
fn a_verify_sh_that_rewrites_the_checks_it_ran_is_not_judged() {
    let (_project, _clone, out) = judged(|r| {
        honest_or_skipped(r, true);
        let verify = std::fs::read_to_string(r.path("verify.sh")).expect("verify.sh");
        r.write(
            "verify.sh",
            &format!("{verify}git checkout -q \"$PROVE_IT_BASE\" -- tests verify.sh\n"),
        );
    });
    out.assert("could_not_judge", 2);
    assert!(
        out.summary
            .contains("`./verify.sh` changed tracked files while it ran"),
        "{out}"
    );
    assert!(out.summary.contains("`tests/test_calc.py`"), "{out}");
    assert_eq!(out.runs()[0], ("head".into(), "passed".into()), "{out}");
}

/// The head's `verify.sh` makes git hand out its weakened test for the
/// base's blob (a replace ref in CI's own clone): the base's checks are
/// still read as stored, and the weakening is found.
#[test]
fn a_replace_ref_made_in_the_clone_does_not_stand_for_the_bases_checks() {
    let (_project, _clone, out) = judged(|r| {
        break_add(r);
        replace(
            r,
            "tests/test_calc.py",
            "    def test_add(self):",
            "    @unittest.skip(\"later\")\n    def test_add(self):",
        );
        let verify = std::fs::read_to_string(r.path("verify.sh")).expect("verify.sh");
        r.write(
            "verify.sh",
            &verify.replacen(
                "set -e\n",
                "set -e\nbase=$(git rev-parse \"$PROVE_IT_BASE:tests/test_calc.py\")\ngit replace -f \"$base\" \"$(git hash-object -w tests/test_calc.py)\"\n",
                1,
            ),
        );
    });
    out.assert("weakened", 1);
}

/// The head's `verify.sh` writes a check git does not track while it runs
/// (here the configuration that skips failures): the replay's copy would
/// hold it, so it is compared as a check the pull request added, and left
/// out of the base's run.
#[test]
fn a_check_the_heads_verify_sh_writes_while_it_runs_is_compared() {
    let (_project, _clone, out) = judged(|r| {
        break_add(r);
        let verify = std::fs::read_to_string(r.path("verify.sh")).expect("verify.sh");
        r.write(
            "verify.sh",
            &verify.replacen(
                "set -e\n",
                "set -e\nprintf 'SKIP_FAILURES=1\\n' > run.cfg\n",
                1,
            ),
        );
    });
    out.assert("weakened", 1);
    assert!(out.summary.contains("`run.cfg`"), "{out}");
}
