//! Static evidence: what a session's edit to a check says, read from the
//! text before and after, with nothing run. Skip, ignore, only and xfail
//! markers added; test functions or files removed; assertions removed or
//! changed; lint suppressions added; runner options that deselect or narrow
//! tests; hooks that can turn a failure into a pass. Rust, Python,
//! JavaScript/TypeScript and Go by their markers; any other check file
//! (runner and linter configuration, `verify.sh`) by its options.
//!
//! Evidence is a hint for the person reading the change, never a verdict:
//! the replay decides (SPEC.md, "Weakened checks").

use similar::{ChangeTag, TextDiff};
use std::collections::BTreeSet;

/// Lines of evidence kept per file; the rest are counted.
const MAX_LINES: usize = 8;
/// Characters kept of a quoted line.
const QUOTE_CHARS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Script,
    Rust,
    Go,
    /// Configuration, `verify.sh`, anything else.
    Other,
}

fn lang(path: &str) -> Lang {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => Lang::Python,
        Some("js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx") if !is_config(name) => {
            Lang::Script
        }
        Some("rs") => Lang::Rust,
        Some("go") => Lang::Go,
        _ => Lang::Other,
    }
}

/// `jest.config.js` and the like are configuration, read by their options.
fn is_config(name: &str) -> bool {
    name.contains(".config.") || name.starts_with('.')
}

/// Markers that a test will not run (or will pass whatever happens).
fn skip_markers(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &[
            "@pytest.mark.skip",
            "pytest.skip(",
            "pytest.importorskip(",
            "@unittest.skip",
            "self.skipTest(",
            "SkipTest",
        ],
        Lang::Script => &[
            ".skip(",
            "xit(",
            "xdescribe(",
            "xtest(",
            ".todo(",
            "skip: true",
            "{ skip:",
            ".fixme(",
            // vitest: run only when / skip when a condition holds
            // (`test.runIf(false)` never runs).
            ".runIf(",
            ".skipIf(",
        ],
        Lang::Rust => &[
            "#[ignore",
            "```ignore",
            "```no_run",
            ",ignore",
            ",no_run",
            "#[cfg(any())]",
        ],
        Lang::Go => &[
            "t.Skip",
            "b.Skip",
            "testing.Short()",
            "//go:build ignore",
            "// +build ignore",
        ],
        Lang::Other => &[],
    }
}

/// Markers that a test is expected to fail: it passes when it fails, so
/// the failure it had is no longer one.
fn expected_failure_markers(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &[
            "@pytest.mark.xfail",
            "pytest.xfail(",
            "@unittest.expectedFailure",
        ],
        // vitest's `test.fails`, jest's `test.failing`.
        Lang::Script => &["test.fails", "it.fails", "test.failing", "it.failing"],
        Lang::Rust => &["#[should_panic", "```should_panic", ",should_panic"],
        _ => &[],
    }
}

/// Markers that narrow a run to some tests only.
fn only_markers(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Script => &[".only(", "fit(", "fdescribe("],
        _ => &[],
    }
}

fn assert_markers(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &["assert", "pytest.raises", "pytest.approx"],
        Lang::Script => &["assert", "expect(", ".should", "t.is(", "t.deepEqual("],
        Lang::Rust => &["assert", "panic!("],
        Lang::Go => &[
            "t.Error", "t.Fatal", "t.Fail", "assert.", "require.", "b.Error", "b.Fatal",
        ],
        Lang::Other => &[],
    }
}

const SUPPRESSIONS: &[&str] = &[
    "# noqa",
    "# type: ignore",
    "# pylint: disable",
    "# pyright: ignore",
    "# mypy: ignore",
    "# ruff: noqa",
    "# pragma: no cover",
    "eslint-disable",
    "@ts-ignore",
    "@ts-expect-error",
    "@ts-nocheck",
    "istanbul ignore",
    "c8 ignore",
    "#[allow(",
    "#![allow(",
    "#[expect(",
    "#![expect(",
    "//nolint",
    "// nolint",
    "//lint:ignore",
];

/// What lets a hook or setup file turn failures into passes.
const HOOKS: &[&str] = &[
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_collection_modifyitems",
    "pytest_runtest_call",
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_sessionfinish",
    "outcome = \"passed\"",
    "outcome = 'passed'",
    "exitstatus = 0",
    "process.exit(0)",
    "process.exitCode = 0",
    "os.Exit(0)",
];

/// Options and commands that run fewer tests, or ignore what fails.
const NARROWING: &[&str] = &[
    " -k ",
    " -k=",
    "--deselect",
    "--ignore",
    " -m ",
    "\"not ",
    "'not ",
    "addopts",
    "testpaths",
    "norecursedirs",
    "python_files",
    "python_functions",
    "collect_ignore",
    "--skip",
    " -run",
    " -skip",
    "--test-skip-pattern",
    "--test-name-pattern",
    "--testNamePattern",
    "testPathIgnorePatterns",
    "modulePathIgnorePatterns",
    "testMatch",
    "testRegex",
    "exclude",
    "--grep",
    "--invert",
    "passWithNoTests",
    "|| true",
    "|| :",
    "; true",
    "exit 0",
    "--exit-zero",
    "fail_under",
    "ignore =",
    "extend-ignore",
    "per-file-ignores",
    "\"off\"",
    "'off'",
    "\"warn\"",
    "strict = false",
    "\"strict\": false",
    "test = false",
    "doctest = false",
    "harness = false",
];

/// coverage.py's options that leave code out of what it counts.
const COVERAGE: &[&str] = &["exclude_lines", "exclude_also", "partial_branches", "omit"];

/// The evidence for one check file: `old` at the session's start, `new`
/// now (`None`: the file is absent). `test_file` says an added file never
/// weakens (it is a test, not configuration).
pub fn of_file(path: &str, old: Option<&str>, new: Option<&str>, test_file: bool) -> Vec<String> {
    let lang = lang(path);
    let mut out = Vec::new();
    match (old, new) {
        (None, None) => {}
        (Some(old), None) => {
            let names: Vec<String> = test_names(lang, old).into_iter().collect();
            if names.is_empty() {
                out.push("deleted".to_string());
            } else {
                out.push(format!("deleted, with its tests {}", quoted_list(&names)));
            }
        }
        (None, Some(new)) => {
            for line in new.lines() {
                // An added test never weakens, unless it is a hook.
                if let Some(what) =
                    config_line(lang, line).filter(|what| !test_file || *what == HOOK)
                {
                    out.push(format!(
                        "{what} (in a file this session added): {}",
                        quote(line)
                    ));
                }
            }
        }
        (Some(old), Some(new)) => {
            out = of_change(lang, path, old, new);
            if out.is_empty() && !test_file {
                out = lines_changed(old, new);
            }
        }
    }
    cap(out)
}

/// Test runners, by the words that start them in a test script.
const RUNNERS: &[&str] = &[
    "vitest",
    "jest",
    "mocha",
    "ava",
    "node --test",
    "tap",
    "jasmine",
    "karma",
    "playwright test",
    "pytest",
    "unittest",
    "nose2",
    "tox",
    "nox",
    "cargo nextest",
    "cargo test",
    "go test",
    "bun test",
    "deno test",
];

/// Build steps a test script may run first.
const BUILDS: &[&str] = &[
    "npm run build",
    "pnpm build",
    "pnpm run build",
    "yarn build",
    "yarn run build",
    "tsc",
    "vite build",
    "webpack",
    "rollup",
    "esbuild",
    "tsup",
    "cargo build",
    "make",
];

/// What a changed test command says beyond its lines: the runner replaced
/// (`mocha` to `vitest`: the old tests may not run at all on what was
/// rewritten for the new one), or a build step the old command did not run
/// (the old tests then lack what it builds). Said in words, so that a
/// failing replay of an old runner reads as what it is.
pub fn runner_changes(old: &str, new: &str) -> Vec<String> {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || "&|;\"'()`".contains(c))
            .filter(|w| !w.is_empty())
            .map(|w| w.rsplit('/').next().unwrap_or(w).to_string())
            .collect()
    };
    let has = |words: &[String], tool: &str| {
        let tool: Vec<&str> = tool.split(' ').collect();
        words
            .windows(tool.len())
            .any(|w| w.iter().zip(&tool).all(|(a, b)| a == b))
    };
    let (was, now) = (words(old), words(new));
    let mut out = Vec::new();
    let runs = |words: &[String], list: &[&'static str]| -> Vec<&'static str> {
        list.iter().copied().filter(|t| has(words, t)).collect()
    };
    let (old_runners, new_runners) = (runs(&was, RUNNERS), runs(&now, RUNNERS));
    let gone: Vec<&str> = old_runners
        .iter()
        .copied()
        .filter(|r| !new_runners.contains(r))
        .collect();
    let came: Vec<&str> = new_runners
        .iter()
        .copied()
        .filter(|r| !old_runners.contains(r))
        .collect();
    if !gone.is_empty() && !came.is_empty() {
        out.push(format!(
            "test runner replaced: `{}` -> `{}` (the old tests may not run at all on what was rewritten for the new runner)",
            gone.join(" "),
            came.join(" ")
        ));
    }
    let built: Vec<&str> = runs(&now, BUILDS)
        .into_iter()
        .filter(|b| !has(&was, b))
        .collect();
    if !built.is_empty() {
        out.push(format!(
            "the tests now run after a build step the old command did not run (`{}`): the old tests may lack what it builds",
            built.join("`, `")
        ));
    }
    out
}

/// Configuration changed in a way no rule names: its first changed lines,
/// as they were and are, so that a report always shows what changed.
pub fn lines_changed(old: &str, new: &str) -> Vec<String> {
    let code = |l: &&str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#') && !t.starts_with("//")
    };
    let mut out = Vec::new();
    for (gone, came) in hunks(old, new) {
        let gone: Vec<&str> = gone.into_iter().filter(code).collect();
        let came: Vec<&str> = came.into_iter().filter(code).collect();
        for k in 0..gone.len().max(came.len()) {
            out.push(match (gone.get(k), came.get(k)) {
                (Some(was), Some(now)) => format!("line changed: {} -> {}", quote(was), quote(now)),
                (Some(was), None) => format!("line removed: {}", quote(was)),
                (None, Some(now)) => format!("line added: {}", quote(now)),
                (None, None) => continue,
            });
        }
        if out.len() >= 3 {
            break;
        }
    }
    out.truncate(3);
    out
}

/// Evidence in a file that is not a check: only the lint suppressions it
/// gained (a suppression weakens the linter, wherever it is written).
pub fn of_code(old: Option<&str>, new: &str) -> Vec<String> {
    let (removed, added) = match old {
        Some(old) => changed_lines(old, new),
        None => (Vec::new(), new.lines().collect()),
    };
    let mut out = suppressions(&removed, &added);
    out.dedup();
    cap(out)
}

/// Style rules: how a line is laid out (its length, spacing, quotes, where
/// a formatter breaks it). Silencing one hides nothing a test or a type
/// checker would fail on, so a marker naming only these is a style marker,
/// said but not a suppression (it never rules out "behaviour changed").
const STYLE_RULES: &[&str] = &[
    // pycodestyle (layout: indentation, whitespace, blank lines, line
    // length), flake8-bugbear's line length, pydocstyle, isort, quotes and
    // commas (ruff and flake8 plugins).
    "E1",
    "E2",
    "E3",
    "E501",
    "W1",
    "W2",
    "W3",
    "W5",
    "B950",
    "D",
    "I0",
    "Q0",
    "COM",
    // pylint's names and numbers for the same.
    "line-too-long",
    "C0301",
    "trailing-whitespace",
    "C0303",
    "bad-indentation",
    "W0311",
    "missing-function-docstring",
    "C0116",
    // ESLint's layout rules.
    "max-len",
    "indent",
    "quotes",
    "semi",
    "comma-dangle",
    "no-trailing-spaces",
    "prettier/prettier",
    "@stylistic/",
];

/// Markers that only stop a formatter from rewriting the lines they cover.
const FORMATTER_MARKERS: &[&str] = &[
    "prettier-ignore",
    "# fmt: off",
    "# fmt: skip",
    "# isort: skip",
    "#[rustfmt::skip]",
    "@formatter:off",
];

/// The lint suppressions `added` has that `removed` did not, and the style
/// markers among them said as such.
fn suppressions(removed: &[&str], added: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for marker in SUPPRESSIONS {
        if count(added, marker) > count(removed, marker) {
            for line in added.iter().filter(|l| l.contains(marker)) {
                if style_only(line) {
                    out.push(format!(
                        "style marker added (line layout only): {}",
                        quote(line)
                    ));
                } else {
                    out.push(format!("lint suppression added: {}", quote(line)));
                }
            }
        }
    }
    for marker in FORMATTER_MARKERS {
        if count(added, marker) > count(removed, marker) {
            for line in added.iter().filter(|l| l.contains(marker)) {
                out.push(format!(
                    "style marker added (line layout only): {}",
                    quote(line)
                ));
            }
        }
    }
    out
}

/// Whether every suppression on `line` names style rules only (a bare
/// `# noqa` or `eslint-disable-line` silences every rule: not style).
fn style_only(line: &str) -> bool {
    let style = |rule: &str| {
        let rule = rule
            .trim()
            .trim_matches(|c| c == ',' || c == ')' || c == '(');
        !rule.is_empty()
            && STYLE_RULES.iter().any(|s| {
                rule == *s
                    || (s.ends_with('/') && rule.starts_with(s))
                    // A code family (`E2`) covers its codes (`E203`).
                    || (s.len() <= 3
                        && rule.starts_with(s)
                        && rule[s.len()..].chars().all(|c| c.is_ascii_digit()))
            })
    };
    let rules_after = |marker: &str, sep: &[char]| -> Option<Vec<String>> {
        let at = line.find(marker)? + marker.len();
        let rest = line[at..].trim_start();
        let rest = rest.strip_prefix(sep).map(str::trim_start).unwrap_or(rest);
        let list: Vec<String> = rest
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .take_while(|w| !w.starts_with("--") && !w.starts_with('#') && !w.starts_with("*/"))
            .map(str::to_string)
            .collect();
        Some(list)
    };
    let mut found = false;
    for marker in SUPPRESSIONS {
        if !line.contains(marker) {
            continue;
        }
        found = true;
        let rules = match *marker {
            "# noqa" => rules_after("# noqa", &[':']),
            "# pylint: disable" => rules_after("# pylint: disable", &['=']),
            "eslint-disable" => rules_after("eslint-disable", &[])
                .map(|r| r.into_iter().skip_while(|w| w.starts_with('-')).collect()),
            _ => None,
        };
        match rules {
            Some(rules) if !rules.is_empty() && rules.iter().all(|r| style(r)) => {}
            _ => return false,
        }
    }
    found
}

fn of_change(lang: Lang, path: &str, old: &str, new: &str) -> Vec<String> {
    let mut out = Vec::new();
    let hunks = hunks(old, new);
    let removed: Vec<&str> = hunks.iter().flat_map(|h| h.0.iter().copied()).collect();
    let added: Vec<&str> = hunks.iter().flat_map(|h| h.1.iter().copied()).collect();

    for (markers, what) in [
        (skip_markers(lang), "skip marker added"),
        (
            expected_failure_markers(lang),
            "expected-failure marker added (the test passes when it fails)",
        ),
        (only_markers(lang), "tests narrowed to one (`only`)"),
    ] {
        let mut said = BTreeSet::new();
        for marker in markers {
            if count(&added, marker) > count(&removed, marker) {
                for line in added.iter().filter(|l| l.contains(marker)) {
                    if said.insert(line.trim()) {
                        out.push(format!("{what}: {}", quote(line)));
                    }
                }
            }
        }
    }

    if lang == Lang::Go {
        // A build constraint leaves the whole file out of a plain `go
        // test`: its tests stop running without a word.
        for line in &added {
            let code = line.trim();
            let constraint = code.starts_with("//go:build") || code.starts_with("// +build");
            if constraint && !code.ends_with(" ignore") && !removed.iter().any(|r| r.trim() == code)
            {
                out.push(format!(
                    "build constraint added: {} (`go test` leaves this file out unless built with that tag)",
                    quote(line)
                ));
            }
        }
    }

    let (before, after) = (test_names(lang, old), test_names(lang, new));
    let gone: Vec<String> = before.difference(&after).cloned().collect();
    let new_names: Vec<String> = after.difference(&before).cloned().collect();
    if !gone.is_empty() {
        let mut line = format!(
            "test{} removed: {}",
            if gone.len() == 1 { "" } else { "s" },
            quoted_list(&gone)
        );
        if !new_names.is_empty() {
            line.push_str(&format!(" ({} added)", quoted_list(&new_names)));
        }
        out.push(line);
    }

    let asserts = assert_markers(lang);
    let is_assert = |l: &str| asserts.iter().any(|m| l.contains(m));
    let added_set: BTreeSet<&str> = added.iter().map(|l| l.trim()).collect();
    for (gone, came) in &hunks {
        let gone: Vec<&str> = gone
            .iter()
            .copied()
            .filter(|l| is_assert(l) && !added_set.contains(l.trim()))
            .collect();
        let came: Vec<&str> = came.iter().copied().filter(|l| is_assert(l)).collect();
        for (k, line) in gone.iter().enumerate() {
            match came.get(k) {
                Some(now) => out.push(format!(
                    "assertion changed: {} -> {}",
                    quote(line),
                    quote(now)
                )),
                None => out.push(format!("assertion removed: {}", quote(line))),
            }
        }
    }

    if lang != Lang::Other {
        out.extend(tables_and_conditions(old, new, &is_assert));
    }

    out.extend(suppressions(&removed, &added));

    for (gone, came) in &hunks {
        for line in came {
            if let Some(what) = config_line(lang, line) {
                match gone.first() {
                    Some(was) if lang == Lang::Other => {
                        out.push(format!("{what}: {} -> {}", quote(was), quote(line)))
                    }
                    _ => out.push(format!("{what}: {}", quote(line))),
                }
            }
        }
        if is_script(path) {
            for line in gone {
                let code = line.trim();
                if code.is_empty() || code.starts_with('#') {
                    continue;
                }
                let commented = came.iter().any(|c| {
                    c.trim()
                        .strip_prefix('#')
                        .is_some_and(|rest| rest.trim() == code)
                });
                let kept = came.iter().any(|c| c.trim() == code);
                if commented {
                    out.push(format!("check commented out: {}", quote(line)));
                } else if !kept && came.is_empty() {
                    out.push(format!("check removed: {}", quote(line)));
                }
            }
        }
    }
    out.dedup();
    out
}

/// `verify.sh` and other shell scripts: a removed command is a removed
/// check.
fn is_script(path: &str) -> bool {
    path.ends_with(".sh") || !path.rsplit('/').next().unwrap_or(path).contains('.')
}

/// The evidence a hook gives: an added test file that says this is a hook,
/// not a test, and is left out of a replay like configuration.
pub const HOOK: &str = "hook that can turn failures into passes";

/// What a line of configuration or a hook says, when it narrows the run
/// or can turn failures into passes.
fn config_line(lang: Lang, line: &str) -> Option<&'static str> {
    let code = line.trim();
    if HOOKS.iter().any(|h| code.contains(h)) {
        return Some(HOOK);
    }
    if lang == Lang::Other && !code.starts_with('#') {
        // coverage.py's options leave lines or files out of its count; no
        // test stops running.
        if COVERAGE.iter().any(|key| code.starts_with(key)) {
            return Some("coverage option that leaves code out of its count");
        }
        let padded = format!(" {code} ");
        if NARROWING.iter().any(|n| padded.contains(n)) {
            return Some("runner option that narrows or ignores tests");
        }
    }
    None
}

/// The names of the test functions in `text`.
fn test_names(lang: Lang, text: &str) -> BTreeSet<String> {
    let mut after_test_attr = false;
    text.lines()
        .filter_map(|line| test_name(lang, line, &mut after_test_attr))
        .collect()
}

/// The test that `line` starts, if it starts one. `after_test_attr` carries
/// Rust's `#[test]` from one line to the next.
fn test_name(lang: Lang, line: &str, after_test_attr: &mut bool) -> Option<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let t = line.trim_start();
    match lang {
        Lang::Python => {
            let t = t.strip_prefix("async ").unwrap_or(t);
            t.strip_prefix("def test")
                .map(|rest| format!("test{}", word(rest)))
        }
        Lang::Go => ["func Test", "func Example", "func Fuzz", "func Benchmark"]
            .iter()
            .find_map(|prefix| {
                t.strip_prefix(prefix)
                    .map(|rest| format!("{}{}", &prefix[5..], word(rest)))
            }),
        Lang::Rust => {
            if t.starts_with("#[test]") || t.starts_with("#[tokio::test") {
                *after_test_attr = true;
                None
            } else if *after_test_attr && let Some(pos) = t.find("fn ") {
                *after_test_attr = false;
                Some(word(&t[pos + 3..]))
            } else {
                None
            }
        }
        Lang::Script => script_test_name(t),
        Lang::Other => None,
    }
}

/// The name a JavaScript or TypeScript test call gives: `it('name'`,
/// `test.skip('name'`, and any chain of modifiers before it
/// (`test.runIf(cond)('name'`, `it.concurrent.fails('name'`).
fn script_test_name(line: &str) -> Option<String> {
    let mut rest = line
        .strip_prefix("it")
        .or_else(|| line.strip_prefix("test"))
        .filter(|r| r.starts_with(['.', '(']))?;
    loop {
        if let Some(after) = rest.strip_prefix('.') {
            let ident = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if ident == 0 {
                return None;
            }
            rest = &after[ident..];
        } else if let Some(after) = rest.strip_prefix('(') {
            let after = after.trim_start();
            if let Some(q) = after
                .chars()
                .next()
                .filter(|c| matches!(c, '\'' | '"' | '`'))
            {
                let end = after[1..].find(q)?;
                return Some(after[1..1 + end].to_string());
            }
            // A modifier's own arguments (`runIf(cond)`): skip to its `)`.
            let mut depth = 1;
            let close = after.char_indices().find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            })?;
            rest = &after[close + 1..];
        } else {
            return None;
        }
    }
}

/// What a modified test file's diff did to its tests, by name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TestChanges {
    /// Tests it gained.
    pub added: Vec<String>,
    /// Tests of the old file with a line removed or changed, or a line
    /// added inside them.
    pub modified: Vec<String>,
    /// Nothing but whole new tests added ([`added_only`]).
    pub added_only: bool,
}

/// The tests a modified test file gained and changed, and whether it only
/// gained whole new ones.
pub fn test_changes(path: &str, old: &str, new: &str) -> TestChanges {
    let lang = lang(path);
    if lang == Lang::Other {
        return TestChanges::default();
    }
    let (before, after) = (test_names(lang, old), test_names(lang, new));
    let added: Vec<String> = after.difference(&before).cloned().collect();
    let (a, b) = (lines(old), lines(new));
    let hunks = hunks_at(old, new);
    let mut modified = BTreeSet::new();
    for (gone, came) in &hunks {
        for (i, _) in gone {
            modified.extend(enclosing_test(lang, &a, *i));
        }
        // A line added inside an old test changes it (a new test's own
        // lines are inside that new test, which is no old one).
        for (i, _) in came {
            modified.extend(enclosing_test(lang, &b, *i).filter(|n| before.contains(n)));
        }
    }
    modified.retain(|n| after.contains(n) && !added.contains(n));
    let added_only = !added.is_empty()
        && hunks
            .iter()
            .all(|(gone, came)| gone.is_empty() && whole_tests(lang, &b, came, &before));
    TestChanges {
        added,
        modified: modified.into_iter().collect(),
        added_only,
    }
}

/// Indentation, in characters (a tab counts as one: files mix rarely).
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The test whose definition holds line `at` of `text`: going up from
/// it, the first line that starts a test, if it is `at` itself or is less
/// indented than every line met on the way (a less indented line that
/// starts no test, such as a helper's `def`, moves the bar up with it).
fn enclosing_test(lang: Lang, text: &[&str], at: usize) -> Option<String> {
    let mut depth = indent(text.get(at)?);
    for i in (0..=at).rev() {
        let line = text[i];
        if line.trim().is_empty() {
            continue;
        }
        let mut attr = lang == Lang::Rust
            && text[..i]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| {
                    let t = l.trim_start();
                    t.starts_with("#[test]") || t.starts_with("#[tokio::test")
                });
        if let Some(name) = test_name(lang, line, &mut attr) {
            return (i == at || indent(line) < depth).then_some(name);
        }
        depth = depth.min(indent(line));
    }
    None
}

/// Decorators that change only the test under them (a marker, a frozen
/// clock, a patch for its run, Hypothesis' inputs). A skip marker among
/// them is evidence of its own, and evidence rules an addition out.
const TEST_DECORATORS: &[&str] = &[
    "@pytest.mark.",
    "@freeze_time(",
    "@freezegun.freeze_time(",
    "@mock.patch",
    "@patch(",
    "@patch.object(",
    "@given(",
    "@settings(",
    "@example(",
];

/// Whether the lines `came` (all added, none removed, at their place in
/// `new`) are whole new tests and nothing else: each block starts a test
/// of a name `old` did not have (Python: after [`TEST_DECORATORS`] only),
/// every other line is blank, deeper
/// than that start, or the block's closing brace at its depth; the line
/// after the block is blank, the end, or no deeper than its start; the
/// line before it is no decorator or attribute (the new test would take
/// it from the old one). Go's `TestMain` runs instead of every test: never
/// counted as a test.
fn whole_tests(lang: Lang, new: &[&str], came: &[(usize, &str)], old: &BTreeSet<String>) -> bool {
    let Some(&(first, _)) = came.first() else {
        return false;
    };
    let last = came.last().map_or(first, |(i, _)| *i);
    if came.iter().enumerate().any(|(k, (i, _))| *i != first + k) {
        return false;
    }
    let above = new[..first].iter().rev().find(|l| !l.trim().is_empty());
    if above.is_some_and(|l| {
        let t = l.trim_start();
        t.starts_with('@') || t.starts_with("#[")
    }) {
        return false;
    }
    let Some(&(_, start)) = came.iter().find(|(_, l)| !l.trim().is_empty()) else {
        return false;
    };
    let depth = indent(start);
    let braces = lang != Lang::Python;
    let mut attr = false;
    let mut in_test = false;
    let mut names = BTreeSet::new();
    let mut last_code = "";
    for (_, line) in came {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        last_code = line;
        if indent(line) > depth {
            if !in_test {
                return false;
            }
            continue;
        }
        if indent(line) < depth {
            return false;
        }
        if lang == Lang::Rust && t == "#[test]" {
            attr = true;
            continue;
        }
        if lang == Lang::Python && TEST_DECORATORS.iter().any(|d| t.starts_with(d)) {
            continue;
        }
        if braces && matches!(t, "}" | "})" | "});" | "})," | "},") {
            in_test = false;
            continue;
        }
        match test_name(lang, line, &mut attr) {
            Some(name)
                if !old.contains(&name)
                    && names.insert(name.clone())
                    && name != "TestMain"
                    && (lang != Lang::Script || t.starts_with("it(") || t.starts_with("test(")) =>
            {
                in_test = true;
            }
            _ => return false,
        }
    }
    if braces && !matches!(last_code.trim(), "}" | "})" | "});") {
        return false;
    }
    let below = new[last + 1..].iter().find(|l| !l.trim().is_empty());
    below.is_none_or(|l| indent(l) <= depth)
}

/// The changed lines as (removed, added) pairs, one per hunk.
fn hunks<'a>(old: &'a str, new: &'a str) -> Vec<(Vec<&'a str>, Vec<&'a str>)> {
    hunks_at(old, new)
        .into_iter()
        .map(|(gone, came)| {
            (
                gone.into_iter().map(|(_, l)| l).collect(),
                came.into_iter().map(|(_, l)| l).collect(),
            )
        })
        .collect()
}

/// The changed lines as (removed, added) pairs, one per hunk, each line
/// with its index in its own text.
type Numbered<'a> = Vec<(usize, &'a str)>;

fn hunks_at<'a>(old: &'a str, new: &'a str) -> Vec<(Numbered<'a>, Numbered<'a>)> {
    let (a, b) = (lines(old), lines(new));
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for group in diff.grouped_ops(0) {
        let (mut gone, mut came) = (Vec::new(), Vec::new());
        for op in &group {
            for change in diff.iter_changes(op) {
                match (change.tag(), change.old_index(), change.new_index()) {
                    (ChangeTag::Delete, Some(i), _) => gone.extend(a.get(i).map(|l| (i, *l))),
                    (ChangeTag::Insert, _, Some(i)) => came.extend(b.get(i).map(|l| (i, *l))),
                    _ => {}
                }
            }
        }
        out.push((gone, came));
    }
    out
}

/// A text's lines, as the diff's `from_lines` cuts them, without endings.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n')
        .map(|l| l.trim_end_matches(['\n', '\r']))
        .collect()
}

/// A line that is only data: a row of a test table (`("1.2.3", True),`,
/// `{input: 1, want: 2},`), not code.
fn is_data_row(line: &str) -> bool {
    let t = line.trim();
    let t = t
        .strip_prefix(['b', 'r', 'u', 'f'])
        .filter(|rest| rest.starts_with(['"', '\'']))
        .unwrap_or(t);
    t.starts_with(['(', '[', '{', '"', '\'', '`'])
        || t.starts_with(|c: char| c.is_ascii_digit())
        || (t.starts_with('-') && t[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Which table the row at `at` in `text` belongs to, from the nearest
/// line above it that is less indented and more than brackets or data
/// (`None`: data, but not a table prove-it knows).
fn table_of(text: &[&str], at: usize) -> Option<&'static str> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = text.get(at).map_or(0, |l| indent(l));
    for line in text[..at.min(text.len())].iter().rev().take(500) {
        let code = line.trim();
        if code.is_empty()
            || indent(line) >= own
            || code.chars().all(|c| "([{".contains(c))
            || is_data_row(line)
        {
            continue;
        }
        return if code.contains("parametrize") {
            Some("a `parametrize` row")
        } else if code.contains(".each") {
            Some("an `.each` row")
        } else if code.contains("[]struct") {
            Some("a row of a test table")
        } else {
            None
        };
    }
    None
}

/// Test cases changed in a table (the rows of a `parametrize` list, an
/// `.each` table, a Go test table), and assertions that the session put
/// under a condition (`if False:` above an assertion that was there).
fn tables_and_conditions(old: &str, new: &str, is_assert: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let (a, b) = (lines(old), lines(new));
    let old_asserts: BTreeSet<&str> = a
        .iter()
        .filter(|l| is_assert(l))
        .map(|l| l.trim())
        .collect();
    for (gone, came) in hunks_at(old, new) {
        let came_set: BTreeSet<&str> = came.iter().map(|(_, l)| l.trim()).collect();
        let gone_rows: Vec<(usize, &str)> = gone
            .iter()
            .copied()
            .filter(|(_, l)| is_data_row(l) && !is_assert(l) && !came_set.contains(l.trim()))
            .collect();
        let came_rows: Vec<&str> = came
            .iter()
            .map(|(_, l)| *l)
            .filter(|l| is_data_row(l) && !is_assert(l))
            .collect();
        for (k, (at, row)) in gone_rows.iter().enumerate() {
            let table = table_of(&a, *at);
            let what = |verb: &str| match table {
                Some(table) => format!("test case {verb} ({table})"),
                None => format!("test data {verb}"),
            };
            match came_rows.get(k) {
                Some(now) => out.push(format!(
                    "{}: {} -> {}",
                    what("changed"),
                    quote(row),
                    quote(now)
                )),
                None => out.push(format!("{}: {}", what("removed"), quote(row))),
            }
        }
        for (at, line) in &came {
            let code = line.trim();
            let condition = code.starts_with("if ") || code.starts_with("if(");
            let next = b.get(at + 1).map(|l| l.trim()).unwrap_or_default();
            let indent = |l: &str| l.len() - l.trim_start().len();
            let under = b.get(at + 1).is_some_and(|n| indent(n) > indent(line));
            if condition && under && is_assert(next) && old_asserts.contains(next) {
                out.push(format!(
                    "assertion put under a condition: {} above {}",
                    quote(line),
                    quote(next)
                ));
            }
        }
    }
    out
}

fn changed_lines<'a>(old: &'a str, new: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for (gone, came) in hunks(old, new) {
        removed.extend(gone);
        added.extend(came);
    }
    (removed, added)
}

fn count(lines: &[&str], marker: &str) -> usize {
    lines.iter().filter(|l| l.contains(marker)).count()
}

pub(super) fn quote(line: &str) -> String {
    let line = line.trim();
    let mut text: String = line.chars().take(QUOTE_CHARS).collect();
    if line.chars().count() > QUOTE_CHARS {
        text.push('…');
    }
    format!("`{}`", text.replace('`', "'"))
}

fn quoted_list(names: &[String]) -> String {
    let shown: Vec<String> = names.iter().take(5).map(|n| format!("`{n}`")).collect();
    let more = names.len().saturating_sub(shown.len());
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

fn cap(mut lines: Vec<String>) -> Vec<String> {
    if lines.len() > MAX_LINES {
        let more = lines.len() - (MAX_LINES - 1);
        lines.truncate(MAX_LINES - 1);
        lines.push(format!("and {more} more"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_neg():\n    assert add(-1, 1) == 0\n";

    fn says(evidence: &[String], what: &str) -> bool {
        evidence.iter().any(|e| e.contains(what))
    }

    #[test]
    fn python_weakenings_are_named() {
        let skip = PY.replace("def test_add", "@pytest.mark.skip\ndef test_add");
        assert!(says(
            &of_file("tests/test_calc.py", Some(PY), Some(&skip), true),
            "skip marker added"
        ));
        let value = PY.replace("== 4", "== 5");
        let e = of_file("tests/test_calc.py", Some(PY), Some(&value), true);
        assert!(
            says(
                &e,
                "assertion changed: `assert add(2, 2) == 4` -> `assert add(2, 2) == 5`"
            ),
            "{e:?}"
        );
        let weaker = PY.replace("assert add(2, 2) == 4", "assert add(2, 2)");
        assert!(says(
            &of_file("tests/test_calc.py", Some(PY), Some(&weaker), true),
            "assertion changed"
        ));
        let gone = PY.replace("def test_neg():\n    assert add(-1, 1) == 0\n", "");
        let e = of_file("tests/test_calc.py", Some(PY), Some(&gone), true);
        assert!(says(&e, "test removed: `test_neg`"), "{e:?}");
        let e = of_file("tests/test_calc.py", Some(PY), None, true);
        assert!(
            says(&e, "deleted, with its tests `test_add`, `test_neg`"),
            "{e:?}"
        );
    }

    #[test]
    fn options_and_hooks_are_named() {
        let e = of_file(
            "pytest.ini",
            Some("[pytest]\n"),
            Some("[pytest]\naddopts = -k \"not test_add\"\n"),
            false,
        );
        assert!(says(&e, "runner option"), "{e:?}");
        let hook = "def pytest_runtest_makereport(item, call):\n    pass\n";
        let e = of_file("conftest.py", None, Some(hook), false);
        assert!(says(&e, "hook that can turn failures into passes"), "{e:?}");
        let e = of_file(
            "verify.sh",
            Some("#!/bin/sh\nset -e\npytest -q\ngit diff --check\n"),
            Some("#!/bin/sh\nset -e\ngit diff --check\n"),
            false,
        );
        assert!(says(&e, "check removed: `pytest -q`"), "{e:?}");
        let e = of_file(
            "verify.sh",
            Some("#!/bin/sh\npytest -q\n"),
            Some("#!/bin/sh\n# pytest -q\n"),
            false,
        );
        assert!(says(&e, "check commented out"), "{e:?}");
    }

    #[test]
    fn other_languages_markers() {
        let js = "test('adds', () => {\n  assert.equal(add(2, 2), 4);\n});\n";
        let e = of_file(
            "test/calc.test.js",
            Some(js),
            Some(&js.replace("test('adds'", "test.skip('adds'")),
            true,
        );
        assert!(says(&e, "skip marker added"), "{e:?}");
        // vitest's and jest's conditional and expected-failure forms are
        // named as what they are, not as an assertion changed or a test
        // removed.
        let vt = "import { test, expect } from 'vitest'\ntest('works', () => {\n  expect(add(2, 2)).toBe(4)\n})\n";
        for (form, what) in [
            ("test.runIf(false)('works'", "skip marker added"),
            ("test.skipIf(true)('works'", "skip marker added"),
            ("test.fails('works'", "expected-failure marker added"),
            ("test.failing('works'", "expected-failure marker added"),
        ] {
            let e = of_file(
                "test/calc.test.ts",
                Some(vt),
                Some(&vt.replace("test('works'", form)),
                true,
            );
            assert!(says(&e, what), "{form}: {e:?}");
            assert!(
                !says(&e, "test removed") && !says(&e, "assertion"),
                "{form}: {e:?}"
            );
        }
        let py = "def test_add():\n    assert add(2, 2) == 4\n";
        let e = of_file(
            "tests/test_calc.py",
            Some(py),
            Some(&format!("@pytest.mark.xfail\n{py}")),
            true,
        );
        assert!(says(&e, "expected-failure marker added"), "{e:?}");
        let rs = "#[test]\nfn adds() {\n    assert_eq!(add(2, 2), 4);\n}\n";
        let e = of_file(
            "tests/calc.rs",
            Some(rs),
            Some(&rs.replace("#[test]", "#[test]\n#[should_panic]")),
            true,
        );
        assert!(says(&e, "expected-failure marker added"), "{e:?}");
        let e = of_file(
            "tests/calc.rs",
            Some(rs),
            Some(&rs.replace("#[test]", "#[test]\n#[ignore]")),
            true,
        );
        assert!(says(&e, "skip marker added"), "{e:?}");
        let go =
            "func TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n";
        let e = of_file(
            "calc_test.go",
            Some(go),
            Some(&go.replace(
                "func TestAdd(t *testing.T) {\n",
                "func TestAdd(t *testing.T) {\n\tt.Skip(\"later\")\n",
            )),
            true,
        );
        assert!(says(&e, "skip marker added"), "{e:?}");
        let tagged = format!("//go:build slow\n\n{go}");
        let e = of_file("calc_test.go", Some(go), Some(&tagged), true);
        assert!(
            says(&e, "build constraint added: `//go:build slow`"),
            "{e:?}"
        );
    }

    #[test]
    fn an_honest_rename_or_reformat_says_little() {
        let renamed = PY.replace("test_neg", "test_negative");
        let e = of_file("tests/test_calc.py", Some(PY), Some(&renamed), true);
        assert!(
            says(&e, "test removed: `test_neg` (`test_negative` added)"),
            "{e:?}"
        );
        assert!(!says(&e, "assertion"), "{e:?}");
        let added = format!("{PY}\n\ndef test_big():\n    assert add(10, 10) == 20\n");
        assert!(of_file("tests/test_calc.py", Some(PY), Some(&added), true).is_empty());
    }

    /// What 12 of the replay's reports named with no line: changed rows of
    /// a table, an assertion put under a condition; and coverage's options
    /// named for what they are.
    #[test]
    fn table_rows_conditions_and_coverage_are_named() {
        let table = "import pytest\n\n\n@pytest.mark.parametrize(\n    \"v, ok\",\n    [\n        (\"1.2.3\", True),\n        (\"1.2\", False),\n    ],\n)\ndef test_valid(v, ok):\n    assert valid(v) == ok\n";
        let e = of_file(
            "tests/test_v.py",
            Some(table),
            Some(&table.replace("(\"1.2\", False)", "(\"1.2\", True)")),
            true,
        );
        assert!(
            says(
                &e,
                "test case changed (a `parametrize` row): `(\"1.2\", False),` -> `(\"1.2\", True),`"
            ),
            "{e:?}"
        );
        let e = of_file(
            "tests/test_v.py",
            Some(table),
            Some(&table.replace("        (\"1.2\", False),\n", "")),
            true,
        );
        assert!(says(&e, "test case removed (a `parametrize` row)"), "{e:?}");
        let added = table.replace(
            "        (\"1.2\", False),\n",
            "        (\"1.2\", False),\n        (\"2\", False),\n",
        );
        assert!(of_file("tests/test_v.py", Some(table), Some(&added), true).is_empty());

        let go = "func TestAdd(t *testing.T) {\n\ttests := []struct{ a, b, want int }{\n\t\t{2, 2, 4},\n\t}\n\tfor _, c := range tests {\n\t\tif Add(c.a, c.b) != c.want {\n\t\t\tt.Fatal(c)\n\t\t}\n\t}\n}\n";
        let e = of_file(
            "add_test.go",
            Some(go),
            Some(&go.replace("{2, 2, 4}", "{2, 2, 5}")),
            true,
        );
        assert!(
            says(
                &e,
                "test case changed (a row of a test table): `{2, 2, 4},`"
            ),
            "{e:?}"
        );

        let e = of_file(
            "tests/test_calc.py",
            Some(PY),
            Some(&PY.replace(
                "    assert add(2, 2) == 4",
                "    if False:\n        assert add(2, 2) == 4",
            )),
            true,
        );
        assert!(
            says(
                &e,
                "assertion put under a condition: `if False:` above `assert add(2, 2) == 4`"
            ),
            "{e:?}"
        );
        let js = "test('adds', () => {\n  expect(add(2, 2)).toBe(4);\n});\n";
        let e = of_file(
            "calc.test.js",
            Some(js),
            Some(
                &js.replace("  expect(", "  if (process.env.CI) {\n    expect(")
                    .replace(");\n});", ");\n  }\n});"),
            ),
            true,
        );
        assert!(
            says(
                &e,
                "assertion put under a condition: `if (process.env.CI) {`"
            ),
            "{e:?}"
        );

        let e = of_file(
            ".coveragerc",
            Some("[report]\n"),
            Some("[report]\nexclude_also =\n    def __repr__\n"),
            false,
        );
        assert!(
            says(&e, "coverage option that leaves code out of its count"),
            "{e:?}"
        );
        assert!(!says(&e, "narrows"), "{e:?}");
    }

    #[test]
    fn suppressions_in_code_are_named() {
        let e = of_code(Some("import os\n"), "import os  # noqa: F401\n");
        assert!(says(&e, "lint suppression added"), "{e:?}");
        assert!(of_code(Some("x = 1\n"), "x = 2\n").is_empty());
    }

    #[test]
    fn a_runner_swap_and_a_new_build_step_are_said() {
        let e = runner_changes("\"mocha test/*.js\"", "\"npm run build && vitest run\"");
        assert!(
            e.iter()
                .any(|l| l.starts_with("test runner replaced: `mocha` -> `vitest`")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|l| l.contains("build step") && l.contains("`npm run build`")),
            "{e:?}"
        );
        // The same runner with other options is no swap; `tsconfig` is no `tsc`.
        assert!(
            runner_changes(
                "\"vitest run\"",
                "\"vitest run --coverage -c tsconfig.json\""
            )
            .is_empty()
        );
        assert!(
            runner_changes("\"node --test\"", "\"./node_modules/.bin/jest\"")[0]
                .contains("`node --test` -> `jest`")
        );
    }

    /// A marker that names only layout rules (line length, spacing, a
    /// formatter kept off some lines) is a style marker; one that names any
    /// other rule, or none (every rule), is a suppression.
    #[test]
    fn style_markers_are_told_from_suppressions() {
        for style in [
            "    expected = \"a very long message\"  # noqa: E501",
            "    expected = \"a very long message\"  # noqa:E501,W291",
            "    x = 1  # pylint: disable=line-too-long",
            "  const s = 'long'; // eslint-disable-line max-len",
            "  // eslint-disable-next-line max-len, quotes -- a long fixture",
            "  /* eslint-disable max-len */",
            "  // prettier-ignore",
            "    # fmt: off",
            "#[rustfmt::skip]",
        ] {
            let e = of_code(Some("x = 1\n"), &format!("x = 1\n{style}\n"));
            assert!(says(&e, "style marker added"), "{style}: {e:?}");
            assert!(!says(&e, "lint suppression"), "{style}: {e:?}");
        }
        for suppression in [
            "    x = f()  # noqa",
            "    x = f()  # noqa: E501, F821",
            "    x = f()  # type: ignore",
            "    x = 1  # pylint: disable=line-too-long,no-member",
            "  // eslint-disable-next-line",
            "  /* eslint-disable */",
            "  // eslint-disable-line max-len, no-undef",
            "  // @ts-expect-error",
        ] {
            let e = of_code(Some("x = 1\n"), &format!("x = 1\n{suppression}\n"));
            assert!(says(&e, "lint suppression added"), "{suppression}: {e:?}");
        }
    }

    /// Whole new tests added between other definitions are told apart from
    /// every addition that changes an old test or the file's run: a line
    /// in an old test's body, a name taken twice (Python's second
    /// definition replaces the first), a decorator taken from an old test,
    /// Go's `TestMain`, a test's `only`.
    #[test]
    fn whole_new_tests_are_told_from_changes_to_old_ones() {
        let py = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\ndef test_sub():\n    assert calc.sub(3, 2) == 1\n";
        let case = |path: &str, old: &str, new: &str| test_changes(path, old, new);

        let appended =
            format!("{py}\n\ndef test_mul():\n    x = 2\n    assert calc.mul(x, 3) == 6\n");
        let t = case("tests/test_calc.py", py, &appended);
        assert_eq!(
            (t.added.clone(), t.added_only),
            (vec!["test_mul".to_string()], true),
            "{t:?}"
        );
        assert!(t.modified.is_empty(), "{t:?}");

        let between = py.replace(
            "\n\ndef test_sub",
            "\n\n@pytest.mark.parametrize(\"a\", [1, 2])\ndef test_one(a):\n    assert a\n\n\ndef test_sub",
        );
        assert!(case("tests/test_calc.py", py, &between).added_only);
        // As in python-humanize a47a89ea: a frozen clock for the new test.
        let frozen =
            format!("{py}\n\n@freeze_time(\"2023-10-15\")\ndef test_day():\n    assert True\n");
        assert!(case("tests/test_calc.py", py, &frozen).added_only);
        // A decorator that is not known to touch only its test.
        let unknown = format!("{py}\n\n@install_everywhere\ndef test_day():\n    assert True\n");
        assert!(!case("tests/test_calc.py", py, &unknown).added_only);

        // A line added in an old test's body: that test modified.
        let inside = py.replace(
            "def test_add():\n",
            "def test_add():\n    return\n\n\ndef test_new():\n    assert True\n",
        );
        let t = case("tests/test_calc.py", py, &inside);
        assert!(!t.added_only, "{t:?}");
        let returned = py.replace("def test_add():\n", "def test_add():\n    return\n");
        let t = case("tests/test_calc.py", py, &returned);
        assert_eq!(t.modified, vec!["test_add".to_string()], "{t:?}");
        assert!(!t.added_only);

        // The same name again replaces the old test.
        let twice = format!("{py}\n\ndef test_add():\n    assert True\n");
        assert!(!case("tests/test_calc.py", py, &twice).added_only);

        // Between an old decorator and its test.
        let deco = py.replace("def test_sub", "@pytest.mark.slow\ndef test_sub");
        let stolen = deco.replace(
            "@pytest.mark.slow\n",
            "@pytest.mark.slow\ndef test_new():\n    assert True\n\n\n",
        );
        assert!(!case("tests/test_calc.py", &deco, &stolen).added_only);

        // Module-level code is not a test.
        let module = format!("{py}\ncalc.add = lambda a, b: 5\n");
        assert!(!case("tests/test_calc.py", py, &module).added_only);

        // A changed assertion: modified, nothing added.
        let changed = py.replace("== 5", "== 6");
        let t = case("tests/test_calc.py", py, &changed);
        assert_eq!(
            (t.modified.clone(), t.added_only),
            (vec!["test_add".to_string()], false)
        );

        // unittest: a method added to the class.
        let ut = "class CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
        let more =
            format!("{ut}\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n");
        assert!(case("tests/test_calc.py", ut, &more).added_only);

        // Go: a new test function; TestMain never.
        let go = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n";
        let more = format!(
            "{go}\nfunc TestSub(t *testing.T) {{\n\tif Sub(3, 2) != 1 {{\n\t\tt.Fatal(\"no\")\n\t}}\n}}\n"
        );
        assert!(case("calc_test.go", go, &more).added_only);
        let main = format!("{go}\nfunc TestMain(m *testing.M) {{\n\tos.Exit(0)\n}}\n");
        assert!(!case("calc_test.go", go, &main).added_only);

        // JavaScript: `it(` inside a describe; `it.only(` never.
        let js = "describe('add', () => {\n  it('adds', () => {\n    expect(add(2, 3)).toBe(5);\n  });\n});\n";
        let more = js.replace(
            "  });\n});",
            "  });\n\n  it('adds zero', () => {\n    expect(add(0, 0)).toBe(0);\n  });\n});",
        );
        let t = case("test/add.test.js", js, &more);
        assert_eq!(
            (t.added.clone(), t.added_only),
            (vec!["adds zero".to_string()], true),
            "{t:?}"
        );
        let only = more.replace("it('adds zero'", "it.only('adds zero'");
        assert!(!case("test/add.test.js", js, &only).added_only);

        // Rust: a new #[test] fn.
        let rs = "#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n";
        let more = format!("{rs}\n#[test]\nfn adds_zero() {{\n    assert_eq!(add(0, 0), 0);\n}}\n");
        assert!(case("tests/add.rs", rs, &more).added_only);
    }

    /// A configuration change no rule names still shows what changed.
    #[test]
    fn configuration_changed_otherwise_shows_its_lines() {
        let e = of_file(
            "tests/conftest.py",
            Some("import sys\n\nsys.path.insert(0, \"docs\")\n"),
            Some("import sys\n\nsys.path.insert(0, \"docs/usage\")\n"),
            false,
        );
        assert_eq!(
            e,
            vec![
                "line changed: `sys.path.insert(0, \"docs\")` -> `sys.path.insert(0, \"docs/usage\")`"
            ]
        );
        // A test file's changes have rules of their own.
        let e = of_file("tests/test_a.py", Some("x = 1\n"), Some("x = 2\n"), true);
        assert!(e.is_empty(), "{e:?}");
    }
}
