//! What a failing run says the machine lacks: a module, a command or a
//! plugin that the checks need and the environment does not have. Read
//! from the run's own words (Python's `ModuleNotFoundError`, the shell's
//! `command not found`, Node's `Cannot find module`, pytest's
//! `unrecognized arguments` for a plugin's option, cargo's `no such
//! command`), so that the agent is told the code may be fine, and a
//! replay that fails for it alone is not called a weakening.
//!
//! The host keeps these lines in the tail it reports (they are often far
//! above the last lines); the policy says what they name.

/// What one line says is missing, for the person: "the Python module
/// `pytest_cov`", or `None` when it says nothing of the kind.
pub fn lacking(line: &str) -> Option<String> {
    let t = line.trim();
    if let Some(name) = after(t, "No module named ") {
        let name = name.trim_matches(['\'', '"']);
        return Some(format!("the Python module `{name}`"));
    }
    if let Some(name) = t.strip_suffix(": command not found") {
        let name = name.rsplit(": ").next().unwrap_or(name);
        return Some(format!("the command `{}`", name.trim()));
    }
    // dash: `sh: 1: vitest: not found`; env: `env: 'node': No such file...`
    // is too close to a missing file of the project's to be told apart.
    if let Some(head) = t.strip_suffix(": not found")
        && (head.starts_with("sh: ") || head.contains("verify.sh: "))
    {
        let name = head.rsplit(": ").next().unwrap_or(head);
        return Some(format!("the command `{}`", name.trim()));
    }
    for (marker, what) in [
        ("Cannot find module ", "the Node module"),
        ("Cannot find package ", "the Node package"),
    ] {
        if let Some(name) = after(t, marker) {
            let name = quoted(name)?;
            // A relative or absolute path is the project's own file.
            if name.starts_with('.') || name.starts_with('/') {
                return None;
            }
            return Some(format!("{what} `{name}`"));
        }
    }
    if let Some(args) = after(t, "error: unrecognized arguments: ") {
        return Some(format!(
            "the plugin that gives the option `{}` (its test runner does not know it)",
            args.split_whitespace().next().unwrap_or(args)
        ));
    }
    if let Some(name) = after(t, "error: no such command: ") {
        return Some(format!("the cargo command {}", name.trim()));
    }
    if let Some(name) = after(t, "no required module provides package ") {
        let name = name.split([';', ' ']).next().unwrap_or(name);
        return Some(format!(
            "the Go module for `{name}` (try `go mod download`)"
        ));
    }
    None
}

/// Everything the lines say is missing, each once, in order.
pub fn lacking_in(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for what in lines.iter().filter_map(|l| lacking(l)) {
        if !out.contains(&what) {
            out.push(what);
        }
    }
    out
}

/// What follows `marker` in `text`.
fn after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.find(marker).map(|at| &text[at + marker.len()..])
}

/// The name in quotes at the start of `text`: `'x'`, `"x"` or `` `x` ``.
fn quoted(text: &str) -> Option<&str> {
    let quote = text
        .chars()
        .next()
        .filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let rest = &text[1..];
    rest.find(quote).map(|end| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::lacking;

    /// Lines as the runners print them, each with what it names.
    #[test]
    fn names_what_each_runner_says_is_missing() {
        for (line, said) in [
            (
                "E   ModuleNotFoundError: No module named 'freezegun'",
                Some("the Python module `freezegun`"),
            ),
            (
                "ImportError: No module named yaml",
                Some("the Python module `yaml`"),
            ),
            (
                "./verify.sh: line 4: vitest: command not found",
                Some("the command `vitest`"),
            ),
            ("bash: pnpm: command not found", Some("the command `pnpm`")),
            ("sh: 1: tsc: not found", Some("the command `tsc`")),
            (
                "Error: Cannot find module 'fill-range'",
                Some("the Node module `fill-range`"),
            ),
            ("Error: Cannot find module './lib/parse'", None),
            (
                "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'vitest' imported from /r/test/a.test.js",
                Some("the Node package `vitest`"),
            ),
            (
                "pytest: error: unrecognized arguments: --cov=humanize --cov-report=term",
                Some(
                    "the plugin that gives the option `--cov=humanize` (its test runner does not know it)",
                ),
            ),
            (
                "error: no such command: `nextest`",
                Some("the cargo command `nextest`"),
            ),
            (
                "main.go:4:2: no required module provides package github.com/google/uuid; to add it:",
                Some("the Go module for `github.com/google/uuid` (try `go mod download`)"),
            ),
            ("FAILED tests/test_a.py::test_x - assert 1 == 2", None),
            ("grep: not found", None),
        ] {
            assert_eq!(lacking(line).as_deref(), said, "{line}");
        }
    }
}
