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
use prove_it_gate::abi::{Differential, VerifyOutcome};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// Whether a failing test can be planted in the test file at `path`.
pub fn plantable(path: &str) -> bool {
    lang(path).is_some()
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

/// The start's checks are in place in `copy`: plants a failing test in
/// the canary's file, runs `verify.sh`, takes it out. When they fail on it,
/// `to_now` puts the session's checks in place, the same test is planted
/// again (in the session's version of the file; where the session moved
/// it, there; where it removed it, in the start's version at its place)
/// and `verify.sh` runs again.
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
    if start_run.outcome == VerifyOutcome::Passed {
        return Ok(Some(Differential {
            planted: planted_said,
            start: start_run,
            now: None,
        }));
    }
    to_now()?;
    let at = match &canary.moved_to {
        Some(moved) if Content::on_disk(&at)?.is_none() => copy.join(moved),
        _ => at,
    };
    // Where the session removed the file, the start's version with the
    // test: the same question, where the start's checks looked.
    let gone = Content::on_disk(&at)?.is_none();
    let was = plant(&at, if gone { start } else { None })?;
    let now_run = verify::run_with(copy, timeout, now_env);
    match was {
        Some(was) if !gone => checks::write_file(&at, Some(&was)),
        _ => checks::write_file(&at, None),
    }
    .context("cannot take the planted test out")?;
    Ok(Some(Differential {
        planted: planted_said,
        start: start_run,
        now: Some(now_run),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
