//! The differential: when the session-start checks pass on the code as it
//! is now, both sets of checks are asked the same question. One failing
//! test is planted where the start's checks look (in a test file they
//! hold), first with the start's checks in place, then with the checks as
//! the session left them. What the start's checks catch and the session's
//! let through is a disarm: a runner whose status is laundered, a suite
//! sent to the background, a matcher that always passes, a test file moved
//! out of the runner's reach. No list of such forms is complete; running
//! the checks against a known failure settles it.
//!
//! The test planted fails by the file's own assertion where it has one
//! (`expect(1).toBe(2)`, Python's `assert`), else by a throw; it is
//! written in Python, JavaScript/TypeScript and Go test files.

use super::checks::{self, Canary, Content};
use super::verify;
use anyhow::{Context, Result};
use prove_it_gate::abi::{Differential, MutantRun, VerifyOutcome};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// Whether a failing test can be planted in the test file at `path`.
pub fn plantable(path: &str) -> bool {
    lang(path).is_some()
}

/// Whether a type and lint defect can be planted in the source file at
/// `path` (TypeScript, JavaScript, Python; not a test).
pub fn lintable(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.contains("test")
        && !name.contains("spec")
        && !name.contains(".config.")
        && !name.starts_with('.')
        && !path.split('/').any(|part| part == "node_modules")
        && matches!(
            name.rsplit_once('.').map(|(_, e)| e),
            Some("ts" | "tsx" | "mts" | "js" | "mjs" | "jsx" | "py")
        )
        && !name.ends_with(".d.ts")
}

/// A defect a type checker or a linter catches and a test never runs into:
/// an unused function holding an unused variable, and in TypeScript a
/// parameter with no type (an implicit `any` under `strict`).
fn lint_defect(path: &str) -> String {
    if path.ends_with(".py") {
        "\n\ndef _prove_it_planted(value):\n    import os\n    unused = value\n    return 1\n"
            .to_string()
    } else {
        "\n// planted by prove-it: a type and lint defect\nfunction proveItPlanted(value) {\n  const unused = value;\n  return 1;\n}\n".to_string()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Script,
    Go,
}

fn lang(path: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "py" if name.starts_with("test_") || name.ends_with("_test.py") => Some(Lang::Python),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx"
            if name.contains(".test.") || name.contains(".spec.") || path.contains("test") =>
        {
            Some(Lang::Script)
        }
        "go" if name.ends_with("_test.go") => Some(Lang::Go),
        _ => None,
    }
}

/// `text` (a test file) with a failing test added at its end.
fn planted(path: &str, text: &str) -> Option<String> {
    let block = match lang(path)? {
        Lang::Python => "\n\nimport unittest as _prove_it_canary_unittest\n\n\nclass ProveItCanary(_prove_it_canary_unittest.TestCase):\n    def test_prove_it_canary(self):\n        assert 1 == 2, \"planted by prove-it: the checks must fail on it\"\n".to_string(),
        Lang::Script => {
            let call = if !text.contains("test(") && text.contains("it(") {
                "it"
            } else {
                "test"
            };
            let body = if text.contains("expect(") {
                "expect(1).toBe(2);"
            } else {
                "throw new Error(\"planted by prove-it: the checks must fail on it\");"
            };
            format!("\n\n{call}(\"planted by prove-it\", () => {{\n  {body}\n}});\n")
        }
        Lang::Go => "\n\nfunc TestProveItCanary(t *testing.T) {\n\tt.Fatal(\"planted by prove-it: the checks must fail on it\")\n}\n".to_string(),
    };
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&block);
    Some(out)
}

/// Mutants tried at most: each costs two runs of `verify.sh`.
const MUTANTS: usize = 3;

/// Mutants are tried only when the start's checks ran with the planted
/// test within this long: a slow suite is asked only the runner's question.
const MUTANT_BUDGET_MS: u64 = 20_000;

/// The start's checks are in place in `copy`: plants a failing test in
/// the canary's file, runs `verify.sh`, takes it out; then, when the
/// session changed that test file, tries a few mutants of the code it
/// imports, one at a time. For what the start's checks caught, `to_now`
/// puts the session's checks in place and the same question is asked
/// again: the failing test in the session's version of the file (where the
/// session moved it, there; where it removed it, the start's version at its
/// place), and each mutant the start's checks killed.
pub fn ask(
    copy: &Path,
    canary: &Canary,
    timeout: Duration,
    start_env: &[(&str, OsString)],
    now_env: &[(&str, OsString)],
    to_now: impl FnOnce() -> Result<()>,
) -> Result<Option<Differential>> {
    let target = canary.path.as_str();
    let start = canary.start.as_ref();
    let at = copy.join(target);
    let plant = |at: &Path, base: Option<&Content>| -> Result<Option<Content>> {
        let before = Content::on_disk(at)?;
        let text = base
            .or(before.as_ref())
            .and_then(Content::text)
            .unwrap_or("");
        let Some(with) = planted(target, text) else {
            return Ok(None);
        };
        let exec = before.as_ref().is_some_and(|c| c.exec);
        checks::write_file(at, Some(&Content::new(with.into_bytes(), exec)))
            .with_context(|| format!("cannot plant a failing test in `{target}` in the copy"))?;
        Ok(Some(
            before.unwrap_or_else(|| Content::new(Vec::new(), false)),
        ))
    };
    let Some(was) = plant(&at, None)? else {
        return Ok(None);
    };
    let start_run = verify::run_with(copy, timeout, start_env);
    checks::write_file(&at, Some(&was)).context("cannot take the planted test out")?;
    let planted_said = format!("a failing test in `{target}`");

    // The session changed the test file itself: mutants of what it tests.
    let mut killed = Vec::new();
    if let Some(test) = start.and_then(Content::text)
        && start_run.duration_ms <= MUTANT_BUDGET_MS
    {
        for mutant in mutants(copy, target, test) {
            let run = mutant.with(copy, || verify::run_with(copy, timeout, start_env))?;
            if run.outcome != VerifyOutcome::Passed {
                killed.push((mutant, run));
            }
        }
    }
    // The session changed configuration: a type and lint defect, which the
    // start's type checker or linter would catch. It goes in the code the
    // tests import when there is such (a file a linter excludes on purpose,
    // generated code, is less likely there), else in the first tracked
    // source file.
    let tested = std::fs::read_to_string(copy.join(target))
        .map(|test| imported(copy, target, &test))
        .unwrap_or_default()
        .into_iter()
        .find(|p| lintable(p));
    if let Some(code) = canary
        .code
        .as_ref()
        .map(|first| tested.unwrap_or(first.clone()))
        && start_run.duration_ms <= MUTANT_BUDGET_MS
        && let Ok(text) = std::fs::read_to_string(copy.join(&code))
    {
        let defect = Mutant {
            file: code.clone(),
            line: text.lines().count().saturating_sub(1),
            from: String::new(),
            to: lint_defect(&code),
        };
        let run = defect.with(copy, || verify::run_with(copy, timeout, start_env))?;
        if run.outcome != VerifyOutcome::Passed {
            killed.push((defect, run));
        }
    }
    let caught = start_run.outcome != VerifyOutcome::Passed;
    if !caught && killed.is_empty() {
        return Ok(Some(Differential {
            planted: planted_said,
            start: start_run,
            now: None,
            mutants: Vec::new(),
        }));
    }

    to_now()?;
    let now = if caught {
        let at = match &canary.moved_to {
            Some(moved) if Content::on_disk(&at)?.is_none() => copy.join(moved),
            _ => at,
        };
        // Where the session removed the file, the start's version with
        // the test: the same question, where the start's checks looked.
        let gone = Content::on_disk(&at)?.is_none();
        let was = plant(&at, if gone { start } else { None })?;
        let now_run = verify::run_with(copy, timeout, now_env);
        match was {
            Some(was) if !gone => checks::write_file(&at, Some(&was)),
            _ => checks::write_file(&at, None),
        }
        .context("cannot take the planted test out")?;
        Some(now_run)
    } else {
        None
    };
    let mut mutant_runs = Vec::new();
    for (mutant, start_run) in killed {
        let now_run = mutant.with(copy, || verify::run_with(copy, timeout, now_env))?;
        mutant_runs.push(MutantRun {
            mutant: mutant.said(),
            start: start_run,
            now: now_run,
        });
    }
    Ok(Some(Differential {
        planted: planted_said,
        start: start_run,
        now,
        mutants: mutant_runs,
    }))
}

/// One line of a code file changed by a mutation operator.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mutant {
    file: String,
    /// 0-based.
    line: usize,
    from: String,
    to: String,
}

impl Mutant {
    /// Runs `run` with the mutant in place in `copy`, then puts the line
    /// back. An empty `from` appends `to` to the file (a defect added,
    /// not a line changed).
    fn with<T>(&self, copy: &Path, run: impl FnOnce() -> T) -> Result<T> {
        let at = copy.join(&self.file);
        let text = std::fs::read_to_string(&at)
            .with_context(|| format!("cannot read `{}` in the copy", self.file))?;
        let planted = if self.from.is_empty() {
            format!("{text}{}", self.to)
        } else {
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            let Some(line) = lines.get(self.line).copied() else {
                anyhow::bail!("`{}` has no line {}", self.file, self.line + 1);
            };
            let mutated = line.replacen(&self.from, &self.to, 1);
            lines[self.line] = &mutated;
            lines.concat()
        };
        std::fs::write(&at, planted)
            .with_context(|| format!("cannot plant a mutant in `{}`", self.file))?;
        let out = run();
        std::fs::write(&at, &text)
            .with_context(|| format!("cannot take the mutant out of `{}`", self.file))?;
        Ok(out)
    }

    fn said(&self) -> String {
        if self.from.is_empty() {
            return format!(
                "a type and lint defect appended to `{}` (an unused function and variable{})",
                self.file,
                if self.file.ends_with(".py") {
                    ", an unused import"
                } else {
                    ", a parameter with no type"
                }
            );
        }
        format!(
            "a mutant of the code the changed tests import (`{}` line {}: `{}` -> `{}`)",
            self.file,
            self.line + 1,
            self.from.trim(),
            self.to.trim()
        )
    }
}

/// Operators, each a change a test of the code should notice: arithmetic
/// swapped, a comparison flipped, a boolean result or condition reversed.
const OPERATORS: &[(&str, &str)] = &[
    (" + ", " - "),
    (" - ", " + "),
    (" * ", " / "),
    (" == ", " != "),
    (" === ", " !== "),
    (" != ", " == "),
    (" < ", " >= "),
    (" > ", " <= "),
    (" <= ", " > "),
    (" >= ", " < "),
    ("return True", "return False"),
    ("return False", "return True"),
    ("return true", "return false"),
    ("return false", "return true"),
    (" and ", " or "),
    (" && ", " || "),
];

/// Up to [`MUTANTS`] mutants, each on another line, of the code files the
/// test file at `test_path` (text `test`) imports, as they are in `copy`.
fn mutants(copy: &Path, test_path: &str, test: &str) -> Vec<Mutant> {
    let mut out: Vec<Mutant> = Vec::new();
    for file in imported(copy, test_path, test) {
        let Ok(text) = std::fs::read_to_string(copy.join(&file)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.is_empty()
                || t.starts_with('#')
                || t.starts_with("//")
                || t.starts_with("import ")
                || t.starts_with("from ")
                || t.starts_with('*')
                || t.starts_with("/*")
            {
                continue;
            }
            if let Some((from, to)) = OPERATORS.iter().find(|(from, _)| line.contains(from)) {
                out.push(Mutant {
                    file: file.clone(),
                    line: n,
                    from: from.to_string(),
                    to: to.to_string(),
                });
                if out.len() == MUTANTS {
                    return out;
                }
            }
        }
    }
    out
}

/// The code files (not tests) a test file imports that are in `copy`:
/// Python's `from x import` / `import x` (at the root or under `src/`),
/// JavaScript's relative `from "./x"` and `require("./x")`, and for Go the
/// package's other files.
fn imported(copy: &Path, test_path: &str, test: &str) -> Vec<String> {
    let dir = test_path.rsplit_once('/').map_or("", |(d, _)| d);
    let exists = |p: &str| copy.join(p).is_file();
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: String| {
        let name = p.rsplit('/').next().unwrap_or(&p).to_string();
        if !name.contains("test") && !name.contains("spec") && !out.contains(&p) {
            out.push(p);
        }
    };
    match lang(test_path) {
        Some(Lang::Python) => {
            for line in test.lines().map(str::trim) {
                let module = line
                    .strip_prefix("from ")
                    .and_then(|r| r.split_whitespace().next())
                    .or_else(|| {
                        line.strip_prefix("import ")
                            .and_then(|r| r.split([' ', ',']).next())
                    });
                let Some(module) = module.filter(|m| !m.starts_with('.') && !m.is_empty()) else {
                    continue;
                };
                let path = module.replace('.', "/");
                for candidate in [
                    format!("{path}.py"),
                    format!("{path}/__init__.py"),
                    format!("src/{path}.py"),
                    format!("src/{path}/__init__.py"),
                ] {
                    if exists(&candidate) {
                        add(candidate);
                        break;
                    }
                }
            }
        }
        Some(Lang::Script) => {
            for line in test.lines() {
                let spec = ["from \"", "from '", "require(\"", "require('"]
                    .iter()
                    .find_map(|open| {
                        let at = line.find(open)? + open.len();
                        let rest = &line[at..];
                        let end = rest.find(['"', '\''])?;
                        Some(&rest[..end])
                    });
                let Some(spec) = spec.filter(|s| s.starts_with('.')) else {
                    continue;
                };
                let joined = normalize(&format!("{dir}/{spec}"));
                let found = [
                    "",
                    ".js",
                    ".ts",
                    ".mjs",
                    ".cjs",
                    ".jsx",
                    ".tsx",
                    "/index.js",
                    "/index.ts",
                ]
                .iter()
                .map(|ext| format!("{joined}{ext}"))
                .find(|p| exists(p));
                if let Some(found) = found {
                    add(found);
                }
            }
        }
        Some(Lang::Go) => {
            if let Ok(entries) = std::fs::read_dir(copy.join(dir)) {
                let mut names: Vec<String> = entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".go") && !n.ends_with("_test.go"))
                    .collect();
                names.sort();
                for name in names {
                    add(if dir.is_empty() {
                        name
                    } else {
                        format!("{dir}/{name}")
                    });
                }
            }
        }
        None => {}
    }
    out
}

/// `a/b/../c/./d` as `a/c/d` (relative to the root; leading `/` dropped).
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutants_are_made_in_the_code_a_test_imports() {
        let dir = tempfile::tempdir().expect("temp");
        let root = dir.path();
        let write = |p: &str, t: &str| {
            let at = root.join(p);
            std::fs::create_dir_all(at.parent().expect("parent")).expect("dir");
            std::fs::write(at, t).expect("write");
        };
        write(
            "src/calc/__init__.py",
            "def add(a, b):\n    # a + b, said\n    return a + b\n\n\ndef pos(a):\n    return a > 0\n",
        );
        write("lib/calc.js", "export const add = (a, b) => a + b;\n");
        write(
            "pkg/calc.go",
            "package pkg\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
        );
        let py = mutants(root, "tests/test_calc.py", "from calc import add\n");
        assert_eq!(
            py.iter().map(Mutant::said).collect::<Vec<_>>(),
            [
                "a mutant of the code the changed tests import (`src/calc/__init__.py` line 3: `+` -> `-`)",
                "a mutant of the code the changed tests import (`src/calc/__init__.py` line 7: `>` -> `<=`)"
            ]
        );
        let js = mutants(
            root,
            "test/unit/calc.test.js",
            "import { add } from '../../lib/calc.js'\n",
        );
        assert_eq!(js.len(), 1, "{js:?}");
        assert_eq!(js[0].file, "lib/calc.js");
        let go = mutants(root, "pkg/calc_test.go", "package pkg\n");
        assert_eq!(go[0].file, "pkg/calc.go");
        // A mutant is put in place for the run, then taken out.
        let seen = go[0]
            .with(root, || {
                std::fs::read_to_string(root.join("pkg/calc.go")).expect("read")
            })
            .expect("with");
        assert!(seen.contains("return a - b"), "{seen}");
        assert!(
            std::fs::read_to_string(root.join("pkg/calc.go"))
                .expect("read")
                .contains("return a + b")
        );
        // A defect appended is appended for the run only.
        let defect = Mutant {
            file: "lib/calc.js".into(),
            line: 0,
            from: String::new(),
            to: lint_defect("lib/calc.js"),
        };
        let seen = defect
            .with(root, || {
                std::fs::read_to_string(root.join("lib/calc.js")).expect("read")
            })
            .expect("with");
        assert!(
            seen.starts_with("export const add") && seen.contains("const unused = value;"),
            "{seen}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("lib/calc.js")).expect("read"),
            "export const add = (a, b) => a + b;\n"
        );
        assert!(
            lintable("src/calc.ts") && !lintable("src/calc.test.ts") && !lintable("vite.config.ts")
        );
    }

    #[test]
    fn a_failing_test_is_planted_in_each_language_with_its_own_assertion() {
        let py = planted("tests/test_calc.py", "def test_a():\n    assert True\n").expect("py");
        assert!(
            py.contains("class ProveItCanary") && py.contains("assert 1 == 2"),
            "{py}"
        );
        let vt = planted(
            "test/calc.test.ts",
            "import { it, expect } from 'vitest'\nit('a', () => expect(1).toBe(1))\n",
        )
        .expect("ts");
        assert!(
            vt.contains("it(\"planted by prove-it\"") && vt.contains("expect(1).toBe(2)"),
            "{vt}"
        );
        let node = planted(
            "test/calc.test.mjs",
            "import { test } from 'node:test'\ntest('a', () => {})",
        )
        .expect("mjs");
        assert!(
            node.contains("test(\"planted by prove-it\"") && node.contains("throw new Error"),
            "{node}"
        );
        let go = planted("calc_test.go", "package calc\n\nimport \"testing\"\n").expect("go");
        assert!(go.contains("func TestProveItCanary(t *testing.T)"), "{go}");
        assert!(planted("src/lib.rs", "").is_none());
        assert!(planted("src/calc.js", "").is_none(), "not a test file");
    }
}
