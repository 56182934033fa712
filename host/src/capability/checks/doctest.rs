//! Tests that live in a Python file's docstrings: doctest examples (a
//! `>>>` line, its `...` continuations and the output it expects), run by
//! `pytest --doctest-modules`, `python -m doctest` or `doctest.testmod()`.
//! The examples are checks; the rest of the file, prose included, is code.
//! A replay puts back only the docstrings whose examples changed, so an
//! honest fix that edits a function and its docstring in one file is
//! judged by its old examples, not reverted whole.
//!
//! The reading is lexical: comments and the other string literals are
//! skipped when looking for triple-quoted strings.

use std::ops::Range;

/// One triple-quoted string with doctest examples in it.
#[derive(Debug)]
struct Part {
    /// The `def` or `class` line above it (trimmed), `module` for one
    /// above every definition; `#2`, `#3` for a repeat.
    key: String,
    /// The literal, quotes included.
    span: Range<usize>,
    /// Its examples, one line each: `assert (doctest) SOURCE == OUTPUT`
    /// (or `(doctest) SOURCE` when it expects no output), so an edit reads
    /// as a changed or removed assertion.
    tests: String,
}

/// The examples of `src`, as one text: equal texts, equal tests.
pub fn tests_of(src: &str) -> String {
    let mut text = String::new();
    for part in parts(src) {
        text.push_str(&part.key);
        text.push('\n');
        text.push_str(&part.tests);
    }
    text
}

/// `new` with each docstring whose examples differ from `old`'s put back
/// as it was in `old`. A docstring `new` no longer has (its function was
/// removed or renamed, or the docstring deleted) is put back at the end of
/// the file as the docstring of a function of its own, where doctest still
/// finds it. Docstrings only `new` has are kept: adding tests never
/// weakens. Also says what it put back.
pub fn put_back(new: &str, old: &str) -> (String, Vec<String>) {
    let now = parts(new);
    let mut edits: Vec<(Range<usize>, &str)> = Vec::new();
    let mut appended = String::new();
    let mut said = Vec::new();
    for (n, before) in parts(old).into_iter().enumerate() {
        let literal = &old[before.span.clone()];
        match now.iter().find(|p| p.key == before.key) {
            Some(p) if p.tests == before.tests => {}
            Some(p) => {
                edits.push((p.span.clone(), literal));
                said.push(format!("the doctests of `{}` as they were", before.key));
            }
            None => {
                appended.push_str(&format!(
                    "\n\ndef _prove_it_put_back_{n}():\n    {literal}\n"
                ));
                said.push(format!(
                    "the doctests of `{}` (removed) put back",
                    before.key
                ));
            }
        }
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = new.to_string();
    for (span, text) in edits {
        out.replace_range(span, text);
    }
    if !appended.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&appended);
    }
    (out, said)
}

fn parts(src: &str) -> Vec<Part> {
    let mut found: Vec<Part> = Vec::new();
    for (span, body) in triple_strings(src) {
        let tests = examples(body);
        if tests.is_empty() {
            continue;
        }
        let mut key = src[..span.start]
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| {
                l.starts_with("def ") || l.starts_with("async def ") || l.starts_with("class ")
            })
            .unwrap_or("module")
            .to_string();
        let repeats = found
            .iter()
            .filter(|p| p.key.split(" #").next() == Some(&key))
            .count();
        if repeats > 0 {
            key = format!("{key} #{}", repeats + 1);
        }
        found.push(Part { key, span, tests });
    }
    found
}

/// Each example of a docstring's text, as a line (see [`Part::tests`]).
fn examples(body: &str) -> String {
    let mut out = String::new();
    let mut lines = body.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        let Some(source) = line.strip_prefix(">>>") else {
            continue;
        };
        let mut source = source.trim().to_string();
        while let Some(more) = lines.peek().and_then(|l| l.strip_prefix("...")) {
            source.push_str("\\n");
            source.push_str(more.trim());
            lines.next();
        }
        let mut want = Vec::new();
        while let Some(l) = lines.peek() {
            if l.is_empty() || l.starts_with(">>>") {
                break;
            }
            want.push(*l);
            lines.next();
        }
        if want.is_empty() {
            out.push_str(&format!("(doctest) {source}\n"));
        } else {
            out.push_str(&format!(
                "assert (doctest) {source} == {}\n",
                want.join("\\n")
            ));
        }
    }
    out
}

/// Every triple-quoted string literal: its span (prefix and quotes
/// included) and its text between the quotes.
fn triple_strings(src: &str) -> Vec<(Range<usize>, &str)> {
    let b = src.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let mut start = i;
                while start > 0
                    && matches!(b[start - 1].to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f')
                {
                    start -= 1;
                }
                if start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
                    start = i;
                }
                if b[i..].starts_with(&[q, q, q]) {
                    let open = i + 3;
                    let mut j = open;
                    while j < b.len() && !b[j..].starts_with(&[q, q, q]) {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    let close = j.min(b.len());
                    let end = (close + 3).min(b.len());
                    found.push((start..end, &src[open..close]));
                    i = end;
                } else {
                    i += 1;
                    while i < b.len() && b[i] != q && b[i] != b'\n' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = r#"'''Sizes.

>>> 1 + 1
2
'''
# A comment with """ in it.
TEXT = "not a docstring: >>> 1"


def naturalsize(value, binary=False):
    """Format a size.

    >>> naturalsize(3000, True)
    '2.9 KiB'
    >>> naturalsize(
    ...     10)
    '10 Bytes'
    """
    base = 1024 if binary else 1000
    return f"{value / base:.1f}"


class Sizes:
    def half(self, n):
        r"""Half of it, with a \""" inside.

        >>> Sizes().half(4)
        2.0
        """
        return n / 2
"#;

    #[test]
    fn finds_the_examples_and_not_the_other_strings() {
        let parts = parts(OLD);
        let keys: Vec<&str> = parts.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "module",
                "def naturalsize(value, binary=False):",
                "def half(self, n):"
            ]
        );
        assert_eq!(
            parts[1].tests,
            "assert (doctest) naturalsize(3000, True) == '2.9 KiB'\n\
             assert (doctest) naturalsize(\\n10) == '10 Bytes'\n"
        );
        assert!(OLD[parts[2].span.clone()].starts_with("r\"\"\"Half"));
        assert!(OLD[parts[2].span.clone()].ends_with("\"\"\""));
    }

    #[test]
    fn a_changed_expected_value_goes_back_and_the_fix_stays() {
        let new = OLD
            .replace("1024 if binary else 1000", "1024 if not binary else 1000")
            .replace("'2.9 KiB'", "'3.0 KiB'")
            .replace("Format a size.", "Format a file size.");
        assert_ne!(tests_of(&new), tests_of(OLD));
        let (back, said) = put_back(&new, OLD);
        assert!(back.contains("1024 if not binary"), "{back}");
        assert_eq!(tests_of(&back), tests_of(OLD), "{back}");
        assert_eq!(
            said,
            ["the doctests of `def naturalsize(value, binary=False):` as they were"]
        );
    }

    #[test]
    fn prose_and_code_changes_leave_the_examples_equal() {
        let new = OLD
            .replace("Format a size.", "Formats a size.")
            .replace("n / 2", "n * 0.5");
        assert_eq!(tests_of(&new), tests_of(OLD));
        let (back, said) = put_back(&new, OLD);
        assert_eq!(back, new);
        assert!(said.is_empty());
    }

    #[test]
    fn a_removed_docstring_comes_back_as_a_function_of_its_own() {
        let start = OLD.find("class Sizes").expect("class");
        let new = &OLD[..start];
        let (back, said) = put_back(new, OLD);
        assert!(
            back.contains("def _prove_it_put_back_2():\n    r\"\"\"Half"),
            "{back}"
        );
        assert_eq!(
            said,
            ["the doctests of `def half(self, n):` (removed) put back"]
        );
        // Found again under the new function's name, with the same examples.
        let parts = parts(&back);
        assert_eq!(
            parts.last().map(|p| p.tests.as_str()),
            Some("assert (doctest) Sizes().half(4) == 2.0\n")
        );
    }
}
