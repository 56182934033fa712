//! The defects `prove-it canary` plants, and where: one whitespace error
//! for every repository, then, for each stack it knows, a failing test in
//! the stack's test layout, a type or compile error, a lint violation and
//! (where the stack has one standard formatter) unformatted code.
//!
//! Each defect is chosen to trip exactly one kind of check: a failing test
//! that type-checks, lints and is formatted; a type error that no test
//! runs into (a build or a test runner that compiles catches it too); lint
//! and format defects that compile and run. Every planted line says it was
//! planted by prove-it canary.

use crate::stacks::Stack;
use clap::ValueEnum;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What kind of check a defect should trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Trailing whitespace on a changed line (`git diff --check`).
    Whitespace,
    /// A failing unit test.
    Test,
    /// A type or compile error.
    Type,
    /// A lint violation.
    Lint,
    /// Code the stack's formatter would rewrite.
    Format,
}

impl Kind {
    /// The defect in words, for the table.
    pub fn defect(self) -> &'static str {
        match self {
            Kind::Whitespace => "trailing whitespace",
            Kind::Test => "a failing test",
            Kind::Type => "a type error",
            Kind::Lint => "a lint violation",
            Kind::Format => "unformatted code",
        }
    }

    /// The kind of check that catches this defect, for the line that says
    /// it was not caught. Only what was seen is said (`verify.sh` exited 0
    /// with it in place), never a guess at why.
    pub fn catcher(self) -> &'static str {
        match self {
            Kind::Whitespace => "`git diff --check` would",
            Kind::Test => "a test runner that runs that file would",
            Kind::Type => "a type check or a build would",
            Kind::Lint => "a linter would",
            Kind::Format => "a format check would",
        }
    }
}

/// One defect to plant.
#[derive(Debug, Clone)]
pub struct Defect {
    pub kind: Kind,
    /// The stack's name (`None` for the whitespace error, which is any
    /// repository's).
    pub stack: Option<String>,
    /// The file it goes in, relative to the root.
    pub file: String,
    /// The check `init` offers for this stack that would catch it.
    pub check: Option<String>,
    /// The line of `verify.sh` that already runs a check of this kind, if
    /// one does: then a defect it lets through is in a file that check
    /// does not cover, and switching it on is no advice.
    pub on: Option<String>,
    edit: Edit,
}

#[derive(Debug, Clone)]
enum Edit {
    /// Two spaces at the end of the file's first line that can take them.
    TrailingSpaces,
    /// Lines added at the end of an existing file.
    Append(String),
    /// Lines added to a Rust file before its first `#[cfg(test)]` item, or
    /// at its end (clippy flags items after a test module).
    BeforeTests(String),
    /// A new file.
    Create(String),
}

/// A planted defect, to be taken out again.
pub struct Planted {
    file: PathBuf,
    /// The file's bytes before (`None`: the canary made it).
    before: Option<Vec<u8>>,
    /// The bytes planted.
    after: Vec<u8>,
    /// Folders the canary made for it, deepest first.
    made_dirs: Vec<PathBuf>,
}

impl Defect {
    /// Plants it in the copy at `root`.
    pub fn plant(&self, root: &Path) -> std::io::Result<Planted> {
        let file = root.join(&self.file);
        match &self.edit {
            Edit::TrailingSpaces | Edit::Append(_) | Edit::BeforeTests(_) => {
                let before = std::fs::read(&file)?;
                let after = match &self.edit {
                    Edit::Append(block) => append(&before, block),
                    Edit::BeforeTests(block) => before_tests(&before, block),
                    _ => trailing_spaces(&before).ok_or_else(|| {
                        std::io::Error::other("no line that can take trailing spaces")
                    })?,
                };
                std::fs::write(&file, &after)?;
                Ok(Planted {
                    file,
                    before: Some(before),
                    after,
                    made_dirs: Vec::new(),
                })
            }
            Edit::Create(text) => {
                let mut made_dirs = Vec::new();
                let mut dir = file.parent();
                while let Some(d) = dir.filter(|d| !d.exists()) {
                    made_dirs.push(d.to_path_buf());
                    dir = d.parent();
                }
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&file)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))?;
                Ok(Planted {
                    file,
                    before: None,
                    after: text.as_bytes().to_vec(),
                    made_dirs,
                })
            }
        }
    }
}

impl Planted {
    /// Whether something (`verify.sh`: a formatter, a linter with auto-fix
    /// on) rewrote or removed the planted file.
    pub fn rewritten(&self) -> bool {
        std::fs::read(&self.file).map_or(true, |now| now != self.after)
    }

    /// Puts the copy back as it was.
    pub fn remove(self) -> std::io::Result<()> {
        match self.before {
            Some(bytes) => std::fs::write(&self.file, bytes)?,
            None => std::fs::remove_file(&self.file)?,
        }
        for dir in self.made_dirs {
            let _ = std::fs::remove_dir(dir);
        }
        Ok(())
    }
}

/// `before` with `block` after one blank line.
fn append(before: &[u8], block: &str) -> Vec<u8> {
    let newlines = before.iter().rev().take_while(|&&b| b == b'\n').count();
    let gap = match (before.is_empty(), newlines) {
        (true, _) => "",
        (false, 0) => "\n\n",
        (false, 1) => "\n",
        _ => "",
    };
    let mut after = before.to_vec();
    after.extend_from_slice(gap.as_bytes());
    after.extend_from_slice(block.as_bytes());
    after
}

/// `before` with `block` and a blank line inserted before its first line
/// that starts with `#[cfg(test)]`; else [`append`]ed.
fn before_tests(before: &[u8], block: &str) -> Vec<u8> {
    let mut start = 0;
    for line in before.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(b"#[cfg(test)]") {
            let mut after = before[..start].to_vec();
            after.extend_from_slice(block.as_bytes());
            after.push(b'\n');
            after.extend_from_slice(&before[start..]);
            return after;
        }
        start += line.len();
    }
    append(before, block)
}

/// `text` with two spaces at the end of its first line that has content,
/// does not already end in whitespace and does not continue on the next
/// line (a trailing `\`).
fn trailing_spaces(text: &[u8]) -> Option<Vec<u8>> {
    let mut start = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        let fits = body
            .last()
            .is_some_and(|&b| !b.is_ascii_whitespace() && b != b'\\');
        if fits {
            let at = start + body.len();
            let mut after = text[..at].to_vec();
            after.extend_from_slice(b"  ");
            after.extend_from_slice(&text[at..]);
            return Some(after);
        }
        start += line.len();
    }
    None
}

/// The files of the copy the canary may plant in: tracked or untracked,
/// not ignored, regular files; sorted by depth, then path.
pub struct Files {
    root: PathBuf,
    paths: Vec<String>,
}

impl Files {
    pub fn new(root: &Path, mut paths: Vec<String>) -> Files {
        paths.retain(|p| {
            std::fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.file_type().is_file())
        });
        paths.sort_by_key(|p| (p.matches('/').count(), p.clone()));
        paths.dedup();
        Files {
            root: root.to_path_buf(),
            paths,
        }
    }

    fn read(&self, path: &str) -> Option<String> {
        let bytes = std::fs::read(self.root.join(path)).ok()?;
        if bytes.contains(&0) {
            return None;
        }
        String::from_utf8(bytes).ok()
    }

    fn first(&self, keep: impl Fn(&str) -> bool) -> Option<&str> {
        self.paths.iter().map(String::as_str).find(|p| keep(p))
    }

    fn find(&self, keep: impl Fn(&str) -> bool) -> Vec<&str> {
        self.paths
            .iter()
            .map(String::as_str)
            .filter(|p| keep(p))
            .collect()
    }
}

/// Every defect to plant in `files` for `stacks`, leaving out `skip`; and
/// a note for each stack the canary has no defects for.
pub fn plan(
    files: &Files,
    stacks: &[Stack],
    skip: &[Kind],
    verify: &str,
) -> (Vec<Defect>, Vec<String>) {
    let mut defects = Vec::new();
    let mut notes = Vec::new();
    if let Some(file) = whitespace_target(files, stacks) {
        defects.push(Defect {
            kind: Kind::Whitespace,
            stack: None,
            file,
            check: Some("git diff --check".into()),
            on: running(verify, &["git diff --check"]),
            edit: Edit::TrailingSpaces,
        });
    } else {
        notes.push("no text file to plant trailing whitespace in".into());
    }
    for stack in stacks {
        let planted = match stack.key {
            "rust" => rust(files, stack),
            "python" => python(files, stack),
            "node" => node(files, stack),
            "go" => go(files, stack),
            _ => {
                notes.push(format!(
                    "{}: the canary has no defects for this stack yet (only the whitespace one applies)",
                    stack.name
                ));
                continue;
            }
        };
        if planted.is_empty() {
            notes.push(format!(
                "{}: no source file found to plant defects in",
                stack.name
            ));
        }
        defects.extend(planted.into_iter().map(|mut d| {
            d.on = running(verify, check_words(stack.key, d.kind));
            d
        }));
    }
    defects.retain(|d| !skip.contains(&d.kind));
    (defects, notes)
}

fn defect(kind: Kind, stack: &Stack, file: &str, check: Option<String>, edit: Edit) -> Defect {
    Defect {
        kind,
        stack: Some(stack.name.clone()),
        file: file.to_string(),
        check,
        on: None,
        edit,
    }
}

/// Words in a `verify.sh` line that show a check of `kind` runs for the
/// stack `key`.
fn check_words(key: &str, kind: Kind) -> &'static [&'static str] {
    match (key, kind) {
        ("node", Kind::Test) => &["vitest", "jest", "mocha", "node --test", "ava"],
        ("node", Kind::Type) => &["tsc", "tsgo", "vue-tsc"],
        ("node", Kind::Lint) => &[
            "eslint",
            "oxlint",
            "biome",
            "run lint",
            "pnpm lint",
            "yarn lint",
        ],
        ("python", Kind::Test) => &["pytest", "unittest"],
        ("python", Kind::Type) => &["mypy", "pyright"],
        ("python", Kind::Lint) => &["ruff check", "flake8", "pylint"],
        ("rust", Kind::Test) => &["cargo test", "cargo nextest"],
        ("rust", Kind::Type) => &["cargo check", "cargo build", "cargo test", "cargo clippy"],
        ("rust", Kind::Lint) => &["clippy"],
        ("rust", Kind::Format) => &["fmt"],
        ("go", Kind::Test) | ("go", Kind::Type) => &["go test", "go build", "go vet"],
        ("go", Kind::Lint) => &["go vet", "staticcheck", "golangci-lint"],
        ("go", Kind::Format) => &["gofmt", "gofumpt"],
        _ => &[],
    }
}

/// The first line of `verify` that is not a comment and holds one of
/// `words`, trimmed.
fn running(verify: &str, words: &[&str]) -> Option<String> {
    verify
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .find(|l| words.iter().any(|w| has_word(l, w)))
        .map(str::to_string)
}

/// Whether `line` holds `word` with no letter, digit, `_` or `-` touching
/// it on either side (`ava` is not in `javac`; `tsc` is in `vue-tsc` only
/// when `vue-tsc` is the word asked for).
fn has_word(line: &str, word: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
    line.match_indices(word).any(|(at, _)| {
        !part(line[..at].chars().next_back()) && !part(line[at + word.len()..].chars().next())
    })
}

/// The first of the stack's checks that contains `needle`.
fn check(stack: &Stack, needle: &str) -> Option<String> {
    stack.checks.iter().find(|c| c.contains(needle)).cloned()
}

/// A README or other prose first (two trailing spaces harm nothing
/// there), else a source file of a stack, else any text file.
fn whitespace_target(files: &Files, stacks: &[Stack]) -> Option<String> {
    let fits = |p: &str| {
        p != crate::capability::verify::VERIFY_SH
            && files
                .read(p)
                .is_some_and(|t| trailing_spaces(t.as_bytes()).is_some())
    };
    let prose = |p: &str| {
        let name = p.rsplit('/').next().unwrap_or(p).to_ascii_lowercase();
        name.ends_with(".md") || name.ends_with(".txt") || name.starts_with("readme")
    };
    let source = |p: &str| {
        stacks.iter().any(|s| match s.key {
            "rust" => p.ends_with(".rs"),
            "python" => p.ends_with(".py"),
            "node" => node_source(p),
            "go" => p.ends_with(".go"),
            _ => false,
        })
    };
    // Each file is read only until one fits.
    files
        .first(|p| prose(p) && fits(p))
        .or_else(|| files.first(|p| source(p) && fits(p)))
        .or_else(|| files.first(fits))
        .map(str::to_string)
}

/// Is `path` under a folder that holds tests, fixtures, builds or
/// dependencies rather than the project's own source?
fn under(path: &str, dirs: &[&str]) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.iter().any(|part| dirs.contains(part))
}

const NOT_SOURCE: &[&str] = &[
    "node_modules",
    "vendor",
    "dist",
    "build",
    "target",
    "out",
    "coverage",
    "testdata",
    "fixtures",
    "docs",
    "examples",
    ".venv",
    "venv",
];

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn rust(files: &Files, stack: &Stack) -> Vec<Defect> {
    // The shallowest crate root: tests, clippy and rustfmt all reach it.
    let roots = files.find(|p| {
        let name = ["src/lib.rs", "src/main.rs"]
            .iter()
            .any(|root| p == *root || p.ends_with(&format!("/{root}")));
        name && !under(p, NOT_SOURCE)
    });
    let Some(file) = roots
        .iter()
        .min_by_key(|p| (p.matches('/').count(), p.ends_with("main.rs")))
    else {
        return Vec::new();
    };
    let build = check(stack, "cargo test").or_else(|| Some("cargo check".into()));
    vec![
        defect(
            Kind::Test,
            stack,
            file,
            check(stack, "cargo test"),
            Edit::BeforeTests(
                "#[cfg(test)]\n\
                 mod prove_it_canary {\n    \
                     // Planted by prove-it canary: a failing test.\n    \
                     #[test]\n    \
                     fn planted_failing_test() {\n        \
                         panic!(\"a failing test planted by prove-it canary\");\n    \
                     }\n\
                 }\n"
                .into(),
            ),
        ),
        defect(
            Kind::Type,
            stack,
            file,
            build,
            Edit::BeforeTests(
                "// Planted by prove-it canary: a type error.\n\
                 const _: u8 = \"prove-it canary\";\n"
                    .into(),
            ),
        ),
        defect(
            Kind::Lint,
            stack,
            file,
            check(stack, "clippy"),
            Edit::BeforeTests(
                "// Planted by prove-it canary: a lint violation (clippy::len_zero).\n\
                 #[allow(dead_code)]\n\
                 fn prove_it_canary_lint(v: &[u8]) -> bool {\n    \
                     v.len() == 0\n\
                 }\n"
                .into(),
            ),
        ),
        defect(
            Kind::Format,
            stack,
            file,
            check(stack, "fmt"),
            Edit::BeforeTests(
                "// Planted by prove-it canary: code rustfmt would rewrite.\n\
                 #[allow(dead_code)]\n\
                 fn prove_it_canary_format( ) {}\n"
                    .into(),
            ),
        ),
    ]
}

fn python_test(path: &str) -> bool {
    let name = file_name(path);
    name.ends_with(".py")
        && (name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py")
}

fn python(files: &Files, stack: &Stack) -> Vec<Defect> {
    let mut out = Vec::new();
    // Beside the first test file, where the runner already looks; else in
    // `tests/`, pytest's and unittest's usual place.
    let tests =
        files.find(|p| python_test(p) && file_name(p) != "conftest.py" && !under(p, NOT_SOURCE));
    let dir = tests.first().map_or("tests", |p| dir_of(p));
    out.push(defect(
        Kind::Test,
        stack,
        &join(dir, "test_prove_it_canary.py"),
        check(stack, "pytest"),
        // A unittest case: pytest collects it too.
        Edit::Create(
            "# Planted by prove-it canary: a failing test.\n\
             import unittest\n\
             \n\
             \n\
             class ProveItCanary(unittest.TestCase):\n    \
                 def test_planted_by_prove_it_canary(self):\n        \
                     self.fail(\"a failing test planted by prove-it canary\")\n"
                .into(),
        ),
    ));
    let sources = files.find(|p| {
        p.ends_with(".py")
            && !python_test(p)
            && !under(p, NOT_SOURCE)
            && !under(p, &["tests", "test"])
            && !matches!(file_name(p), "setup.py" | "noxfile.py" | "conftest.py")
    });
    // A module over a package's `__init__.py`.
    let source = sources
        .iter()
        .find(|p| file_name(p) != "__init__.py")
        .or(sources.first());
    if let Some(file) = source {
        out.push(defect(
            Kind::Type,
            stack,
            file,
            check(stack, "mypy"),
            Edit::Append(
                "# Planted by prove-it canary: a type error.\n\
                 prove_it_canary: int = \"prove-it canary\"\n"
                    .into(),
            ),
        ));
        out.push(defect(
            Kind::Lint,
            stack,
            file,
            check(stack, "ruff"),
            Edit::Append(
                "# Planted by prove-it canary: a lint violation (an unused import).\n\
                 import os as prove_it_canary_unused\n"
                    .into(),
            ),
        ));
    }
    out
}

const NODE_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];

fn extension(path: &str) -> &str {
    file_name(path).rsplit_once('.').map_or("", |(_, ext)| ext)
}

fn typescript(path: &str) -> bool {
    matches!(extension(path), "ts" | "mts" | "cts" | "tsx")
}

fn node_test(path: &str) -> bool {
    let name = file_name(path);
    NODE_EXTENSIONS.contains(&extension(path))
        && (name.contains(".test.")
            || name.contains(".spec.")
            || under(path, &["test", "tests", "__tests__"]))
}

/// A TypeScript declaration file (`.d.ts`, `.d.mts`, `.d.cts`): types
/// only, often generated, and skipped by `skipLibCheck`.
fn is_declaration(name: &str) -> bool {
    [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

fn node_source(path: &str) -> bool {
    let name = file_name(path);
    NODE_EXTENSIONS.contains(&extension(path))
        && !is_declaration(name)
        && !name.contains(".config.")
        && !name.starts_with('.')
        && !node_test(path)
        && !under(path, NOT_SOURCE)
}

fn node(files: &Files, stack: &Stack) -> Vec<Defect> {
    let mut out = Vec::new();
    // Beside the first test file, named as it is named (`.test.` or
    // `.spec.`, its extension): the runner's pattern matches it.
    let tests = files.find(|p| node_test(p) && !under(p, &["node_modules", "fixtures"]));
    let file = match tests.first() {
        Some(sibling) => {
            let marker = if file_name(sibling).contains(".spec.") {
                "spec"
            } else {
                "test"
            };
            join(
                dir_of(sibling),
                &format!("prove-it-canary.{marker}.{}", extension(sibling)),
            )
        }
        None => "test/prove-it-canary.test.js".to_string(),
    };
    let export = if typescript(&file) {
        "export {};\n"
    } else {
        ""
    };
    out.push(defect(
        Kind::Test,
        stack,
        &file,
        stack.checks.first().cloned(),
        // A test file that throws fails under every runner (Jest, Vitest,
        // Mocha, node --test), with or without their globals.
        Edit::Create(format!(
            "// Planted by prove-it canary: a failing test.\n{export}\
             throw new Error(\"a failing test planted by prove-it canary\");\n"
        )),
    ));
    let sources = files.find(node_source);
    // Where the checks look: tsconfig's `include`/`files` for tsc, the
    // lint script's paths for the linter (`None`: not known, anywhere).
    // Among the files a check covers, `src/` first, then `lib/` (often
    // build output beside `src/`), then the rest.
    let tsc_covers = files
        .read("tsconfig.json")
        .and_then(|t| tsconfig_covers(&t));
    let lint_covers = files
        .read("package.json")
        .and_then(|t| lint_script_paths(&t));
    let rank = |p: &str| {
        if p.starts_with("src/") {
            0
        } else if p.starts_with("lib/") {
            1
        } else {
            2
        }
    };
    let pick = |keep: &dyn Fn(&str) -> bool, covers: &Option<Vec<String>>| {
        let covered = |p: &str| covers.as_ref().is_none_or(|dirs| under_any(p, dirs));
        sources
            .iter()
            .filter(|p| keep(p))
            .min_by_key(|p| (!covered(p), rank(p)))
            .copied()
    };
    let first = |keep: &dyn Fn(&str) -> bool| pick(keep, &tsc_covers);
    // TypeScript, or JavaScript checked by tsc (`checkJs`), where the type
    // is a JSDoc.
    let typed = first(&typescript)
        .map(|file| {
            (
                file,
                "const proveItCanaryTypeError: number = \"prove-it canary\";\n",
            )
        })
        .or_else(|| {
            first(&|_| true).map(|file| {
                (
                    file,
                    "/** @type {number} */\nconst proveItCanaryTypeError = \"prove-it canary\";\n",
                )
            })
        });
    if let (Some(tsc), Some((file, code))) = (check(stack, "tsc"), typed) {
        out.push(defect(
            Kind::Type,
            stack,
            file,
            Some(tsc),
            Edit::Append(format!(
                "// Planted by prove-it canary: a type error.\n{code}"
            )),
        ));
    }
    if let Some(file) = pick(&|_| true, &lint_covers) {
        out.push(defect(
            Kind::Lint,
            stack,
            file,
            check(stack, "lint"),
            Edit::Append(
                "// Planted by prove-it canary: a lint violation (a debugger statement).\n\
                 debugger;\n"
                    .into(),
            ),
        ));
    }
    out
}

/// Whether `path` is in one of `dirs` (each a path or a folder, `.` or
/// empty for all).
fn under_any(path: &str, dirs: &[String]) -> bool {
    dirs.iter().any(|dir| {
        let dir = dir.trim_start_matches("./").trim_end_matches('/');
        dir.is_empty() || dir == "." || path == dir || path.starts_with(&format!("{dir}/"))
    })
}

/// The folders and files tsconfig.json's `include` and `files` name (each
/// pattern cut at its first wildcard), `None` when it names none (tsc
/// then takes every file under the root).
fn tsconfig_covers(text: &str) -> Option<Vec<String>> {
    let doc: serde_json::Value = serde_json::from_str(&jsonc(text)).ok()?;
    let mut dirs = Vec::new();
    for key in ["include", "files"] {
        for entry in doc[key].as_array().into_iter().flatten() {
            let Some(entry) = entry.as_str() else {
                continue;
            };
            let cut = entry.find(['*', '?', '{']).map_or(entry, |at| &entry[..at]);
            dirs.push(cut.trim_end_matches('/').to_string());
        }
    }
    (!dirs.is_empty()).then_some(dirs)
}

/// The paths the `lint` script of package.json hands its linters
/// (`oxlint src && oxfmt --check src test`: `src`, `test`), `None` when
/// there is no such script or it names no path.
fn lint_script_paths(text: &str) -> Option<Vec<String>> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let script = doc["scripts"]["lint"].as_str()?;
    const LINTERS: &[&str] = &["eslint", "oxlint", "biome", "standard", "xo"];
    let mut paths = Vec::new();
    for part in script.split(['&', ';', '|']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let Some(at) = words
            .iter()
            .position(|w| LINTERS.contains(&w.rsplit('/').next().unwrap_or(w)))
        else {
            continue;
        };
        let mut rest = words[at + 1..].iter();
        while let Some(word) = rest.next() {
            if let Some(flag) = word.strip_prefix('-') {
                // Options with a value of their own word.
                if matches!(
                    flag,
                    "c" | "-config" | "-ext" | "-ignore-path" | "-format" | "f"
                ) {
                    rest.next();
                }
                continue;
            }
            if !matches!(*word, "check" | "lint" | "ci") {
                let path = word.trim_matches(['\'', '"']);
                let cut = path.find(['*', '?', '{']).map_or(path, |at| &path[..at]);
                paths.push(cut.trim_end_matches('/').to_string());
            }
        }
    }
    (!paths.is_empty()).then_some(paths)
}

/// JSON with comments and trailing commas (tsconfig.json) as plain JSON.
fn jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            (',', _) => {
                // A comma before `}` or `]` is dropped.
                let rest: String = chars.clone().take_while(|c| c.is_whitespace()).collect();
                let next = chars.clone().nth(rest.chars().count());
                if !matches!(next, Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// A Go file of `package` with `body`.
fn go_file(package: &str, body: &str) -> String {
    format!("package {package}\n\n{body}")
}

/// The package clause of a Go file.
fn go_package(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("package "))
        .map(|p| p.split_whitespace().next().unwrap_or("").to_string())
        .filter(|p| !p.is_empty())
}

fn go(files: &Files, stack: &Stack) -> Vec<Defect> {
    let mut out = Vec::new();
    // Files with build constraints may not be built at all.
    let plain = |p: &str| {
        p.ends_with(".go")
            && !under(p, NOT_SOURCE)
            && files.read(p).is_some_and(|t| {
                !t.lines()
                    .any(|l| l.starts_with("//go:build") || l.starts_with("// +build"))
            })
    };
    let sources = files.find(|p| plain(p) && !p.ends_with("_test.go"));
    let tests = files.find(|p| plain(p) && p.ends_with("_test.go"));
    let package_in = |dir: &str| -> Option<String> {
        let in_dir = |p: &&&str| dir_of(p) == dir;
        sources
            .iter()
            .filter(in_dir)
            .chain(tests.iter().filter(in_dir))
            .find_map(|p| files.read(p).as_deref().and_then(go_package))
    };
    let test_dir = tests.first().or(sources.first()).map(|p| dir_of(p));
    if let Some(dir) = test_dir
        && let Some(package) = package_in(dir)
    {
        out.push(defect(
            Kind::Test,
            stack,
            &join(dir, "prove_it_canary_test.go"),
            check(stack, "go test"),
            Edit::Create(go_file(
                &package,
                "import \"testing\"\n\
                 \n\
                 // Planted by prove-it canary: a failing test.\n\
                 func TestProveItCanary(t *testing.T) {\n\
                 \tt.Fatal(\"a failing test planted by prove-it canary\")\n\
                 }\n",
            )),
        ));
    }
    let Some(file) = sources.first() else {
        return out;
    };
    let dir = dir_of(file);
    let Some(package) = package_in(dir) else {
        return out;
    };
    out.push(defect(
        Kind::Type,
        stack,
        file,
        check(stack, "go test"),
        Edit::Append(
            "// Planted by prove-it canary: a type error.\n\
             var _ int = \"prove-it canary\"\n"
                .into(),
        ),
    ));
    out.push(defect(
        Kind::Lint,
        stack,
        &join(dir, "prove_it_canary_vet.go"),
        check(stack, "go vet"),
        Edit::Create(go_file(
            &package,
            "// Planted by prove-it canary: a lint violation (go vet's assign\n\
             // check, which `go test` does not run).\n\
             func proveItCanaryVet() {\n\
             \tx := 1\n\
             \tx = x\n\
             \t_ = x\n\
             }\n",
        )),
    ));
    out.push(defect(
        Kind::Format,
        stack,
        &join(dir, "prove_it_canary_fmt.go"),
        check(stack, "gofmt"),
        Edit::Create(go_file(
            &package,
            "// Planted by prove-it canary: code gofmt would rewrite.\n\
             func  proveItCanaryFmt()  {}\n",
        )),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_blocks_follow_one_blank_line() {
        assert_eq!(append(b"a\n", "b\n"), b"a\n\nb\n");
        assert_eq!(append(b"a", "b\n"), b"a\n\nb\n");
        assert_eq!(append(b"a\n\n", "b\n"), b"a\n\nb\n");
        assert_eq!(append(b"", "b\n"), b"b\n");
    }

    #[test]
    fn rust_blocks_go_before_the_tests() {
        assert_eq!(
            before_tests(b"fn a() {}\n\n#[cfg(test)]\nmod tests {}\n", "fn b() {}\n"),
            b"fn a() {}\n\nfn b() {}\n\n#[cfg(test)]\nmod tests {}\n"
        );
        assert_eq!(
            before_tests(b"fn a() {}\n", "fn b() {}\n"),
            b"fn a() {}\n\nfn b() {}\n"
        );
    }

    #[test]
    fn trailing_spaces_go_on_a_line_that_can_take_them() {
        assert_eq!(
            trailing_spaces(b"\n  \nx \\\n# T\r\nrest\n").as_deref(),
            Some(&b"\n  \nx \\\n# T  \r\nrest\n"[..])
        );
        assert_eq!(trailing_spaces(b"\n \n"), None);
    }

    #[test]
    fn what_tsconfig_and_the_lint_script_cover() {
        let tsconfig = "{\n  \"$schema\": \"https://json.schemastore.org/tsconfig\", // a URL is no comment\n  /* block */ \"include\": [\"src\", \"test/**/*.ts\",],\n  \"files\": [\"env.d.ts\"],\n}\n";
        assert_eq!(
            tsconfig_covers(tsconfig),
            Some(vec![
                "src".to_string(),
                "test".to_string(),
                "env.d.ts".to_string()
            ])
        );
        assert_eq!(tsconfig_covers("{\"compilerOptions\": {}}"), None);
        let lint = |script: &str| {
            lint_script_paths(&format!("{{\"scripts\": {{\"lint\": \"{script}\"}}}}"))
        };
        assert_eq!(
            lint("oxlint src && oxfmt --check src test"),
            Some(vec!["src".to_string()])
        );
        assert_eq!(
            lint("eslint --cache -c eslint.config.js src test"),
            Some(vec!["src".to_string(), "test".to_string()])
        );
        assert_eq!(lint("eslint ."), Some(vec![".".to_string()]));
        assert_eq!(lint("eslint 'src/**/*.ts'"), Some(vec!["src".to_string()]));
        assert_eq!(running("javac Main.java\n", &["ava"]), None);
        assert_eq!(
            running("# npx tsc\nnpx vue-tsc --noEmit\n", &["tsc"]),
            None,
            "vue-tsc is not tsc, and comments do not run"
        );
        assert!(running("npx tsc --noEmit\n", &["tsc"]).is_some());
        assert_eq!(lint("npm run lint:js"), None);
        assert!(under_any("src/a.ts", &["src".into()]));
        assert!(under_any("lib/a.ts", &[".".into()]));
        assert!(!under_any("lib/a.ts", &["src".into()]));
        assert!(is_declaration("defu.d.cts") && !is_declaration("defu.cts"));
    }
}
