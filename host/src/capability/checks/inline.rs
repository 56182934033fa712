//! Tests that live in the code's own files: a Rust file's `#[cfg(test)]`
//! modules and its doc tests (the fenced code in `///` and `//!` comments);
//! a Python file's doctests are read by [`super::doctest`].
//! These parts are checks; the rest of the file is code. A replay puts
//! back only these parts, so an honest fix that edits a function and its
//! inline test in one file is judged by its old test, not reverted whole.
//!
//! The reading is lexical, not a parse: comments, strings, raw strings and
//! character literals are skipped when looking for braces and attributes.

use std::ops::Range;

/// One test part of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    /// `mod NAME` for a test module; for a doc block, the line of the item
    /// it documents (or `//! N` for the Nth inner doc block).
    key: String,
    span: Range<usize>,
    /// The fenced code of a doc block (empty: it has none); the whole
    /// text of a module.
    tests: String,
    module: bool,
}

/// The test parts of `src`, the text of the file `path`, as one text:
/// equal texts, equal tests.
pub fn tests_of(path: &str, src: &str) -> String {
    if path.ends_with(".py") {
        return super::doctest::tests_of(src);
    }
    rust_tests_of(src)
}

/// `new` with its test parts as they are in `old` (see [`rust_put_back`]
/// and [`super::doctest::put_back`]), and what it put back.
pub fn put_back(path: &str, new: &str, old: &str) -> (String, Vec<String>) {
    if path.ends_with(".py") {
        return super::doctest::put_back(new, old);
    }
    rust_put_back(new, old)
}

fn rust_tests_of(src: &str) -> String {
    let mut text = String::new();
    for part in parts(src) {
        if part.module || !part.tests.is_empty() {
            text.push_str(&part.key);
            text.push('\n');
            text.push_str(&part.tests);
            text.push('\n');
        }
    }
    text
}

/// `new` with its test parts as they are in `old`: each test module and
/// each doc test of `old` put back where `new` has it (a module `new` lost
/// is added at the end; a doc block goes back above its item when the item
/// is still there). Parts only `new` has are kept: adding tests never
/// weakens. Also says what it put back.
fn rust_put_back(new: &str, old: &str) -> (String, Vec<String>) {
    let now = parts(new);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut appended = String::new();
    let mut said = Vec::new();
    for before in parts(old) {
        let text = &old[before.span.clone()];
        let same = now.iter().find(|p| p.key == before.key);
        if before.module {
            match same {
                Some(p) if p.tests == before.tests => {}
                Some(p) => {
                    edits.push((p.span.clone(), text.to_string()));
                    said.push(format!("`{}` as it was", before.key));
                }
                None => {
                    appended.push('\n');
                    appended.push_str(text);
                    appended.push('\n');
                    said.push(format!("`{}` (removed) put back", before.key));
                }
            }
            continue;
        }
        if before.tests.is_empty() {
            continue;
        }
        match same {
            Some(p) if p.tests == before.tests => {}
            Some(p) => {
                edits.push((p.span.clone(), text.to_string()));
                said.push(format!("the doc tests of `{}` as they were", before.key));
            }
            None => {
                if let Some(at) = line_start(new, &before.key) {
                    edits.push((at..at, text.to_string()));
                    said.push(format!("the doc tests of `{}` put back", before.key));
                }
            }
        }
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = new.to_string();
    for (span, text) in edits {
        out.replace_range(span, &text);
    }
    out.push_str(&appended);
    (out, said)
}

/// Where the line whose trimmed text is `key` starts in `text`.
fn line_start(text: &str, key: &str) -> Option<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim() == key {
            return Some(at);
        }
        at += line.len();
    }
    None
}

/// For each byte of `src`: whether it is code (not in a comment, a string
/// or a character literal).
fn code_mask(src: &str) -> Vec<bool> {
    let b = src.as_bytes();
    let mut mask = vec![true; b.len()];
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let start = i;
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (b[i] == b'r' || (b[i] == b'b' && b.get(i + 1) == Some(&b'r')))
            && (i == 0 || !ident(b[i - 1]))
            && raw_string_open(&b[i..]).is_some()
        {
            let (hashes, open) = raw_string_open(&b[i..]).expect("checked");
            i += open;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i = (i + close.len()).min(b.len());
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
        } else if b[i] == b'\'' {
            // A character literal, or a lifetime (`'a`), which is code.
            if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i = (i + 1).min(b.len());
            } else if let Some(len) = src[i + 1..].chars().next().map(char::len_utf8)
                && b.get(i + 1 + len) == Some(&b'\'')
            {
                i += len + 2;
            } else {
                i += 1;
                continue;
            }
        } else {
            i += 1;
            continue;
        }
        for m in &mut mask[start..i.min(b.len())] {
            *m = false;
        }
    }
    mask
}

/// `r"`, `r#"`, `br##"`...: the number of `#` and the length of the
/// opening, when `b` starts one.
fn raw_string_open(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = if b.first() == Some(&b'b') { 2 } else { 1 };
    let hashes = b[i..].iter().take_while(|c| **c == b'#').count();
    i += hashes;
    (b.get(i) == Some(&b'"')).then_some((hashes, i + 1))
}

fn parts(src: &str) -> Vec<Part> {
    let mask = code_mask(src);
    let mut parts = test_modules(src, &mask);
    parts.extend(doc_blocks(src));
    parts
}

/// `#[cfg(test)] mod NAME { ... }`, from the attribute to the closing brace.
fn test_modules(src: &str, mask: &[bool]) -> Vec<Part> {
    let b = src.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = src[i..].find("#[cfg(test)]").map(|p| p + i) {
        i = at + 1;
        if !mask[at] {
            continue;
        }
        let mut j = at + "#[cfg(test)]".len();
        // Other attributes, whitespace and comments before the item.
        loop {
            while j < b.len() && (b[j].is_ascii_whitespace() || !mask[j]) {
                j += 1;
            }
            if b[j..].starts_with(b"#[") {
                match matching(b, mask, j + 1, b'[', b']') {
                    Some(end) => j = end + 1,
                    None => break,
                }
            } else {
                break;
            }
        }
        let rest = &src[j..];
        let rest_trim = rest.strip_prefix("pub ").unwrap_or(rest);
        let Some(after_mod) = rest_trim.strip_prefix("mod ") else {
            continue;
        };
        let name: String = after_mod
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = src[j..].find(['{', ';']).map(|p| p + j) else {
            continue;
        };
        if b[open] != b'{' {
            continue;
        }
        let Some(close) = matching(b, mask, open, b'{', b'}') else {
            continue;
        };
        let span = at..close + 1;
        found.push(Part {
            key: format!("mod {name}"),
            tests: src[span.clone()].to_string(),
            span,
            module: true,
        });
        i = close + 1;
    }
    found
}

/// The index of the bracket that closes the one at `open`, counting only
/// code.
fn matching(b: &[u8], mask: &[bool], open: usize, up: u8, down: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(open) {
        if !mask[k] {
            continue;
        }
        if c == up {
            depth += 1;
        } else if c == down {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Runs of `///` or `//!` lines, each with the fenced code in it.
fn doc_blocks(src: &str) -> Vec<Part> {
    let lines: Vec<(usize, &str)> = src
        .split_inclusive('\n')
        .scan(0, |at, line| {
            let start = *at;
            *at += line.len();
            Some((start, line))
        })
        .collect();
    let doc = |line: &str| {
        let t = line.trim_start();
        (t.starts_with("///") && !t.starts_with("////")) || t.starts_with("//!")
    };
    let mut found = Vec::new();
    let mut inner = 0;
    let mut k = 0;
    while k < lines.len() {
        if !doc(lines[k].1) {
            k += 1;
            continue;
        }
        let first = k;
        let is_inner = lines[k].1.trim_start().starts_with("//!");
        while k < lines.len() && doc(lines[k].1) {
            k += 1;
        }
        let span = lines[first].0..lines.get(k).map_or(src.len(), |l| l.0);
        let mut tests = String::new();
        let mut fenced = false;
        for (_, line) in &lines[first..k] {
            let body = line.trim_start()[3..]
                .strip_prefix(' ')
                .unwrap_or(&line.trim_start()[3..]);
            let fence = body.trim_start().starts_with("```");
            if fenced || fence {
                tests.push_str(body.trim_end());
                tests.push('\n');
            }
            if fence {
                fenced = !fenced;
            }
        }
        let key = if is_inner {
            inner += 1;
            format!("//! {inner}")
        } else {
            lines[k..]
                .iter()
                .map(|(_, l)| l.trim())
                .find(|l| !l.is_empty() && !l.starts_with("#[") && !l.starts_with("//"))
                .unwrap_or("")
                .to_string()
        };
        found.push(Part {
            key,
            span,
            tests,
            module: false,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = r##"/// Adds.
///
/// ```
/// assert_eq!(calc::add(2, 2), 4);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn text() -> &'static str {
    "#[cfg(test)] mod fake { }"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        let brace = '{';
        assert_eq!(add(2, 2), 4, "{brace}");
    }
}
"##;

    #[test]
    fn finds_the_test_module_and_the_doc_test_only() {
        let parts = parts(OLD);
        let keys: Vec<&str> = parts.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            ["mod tests", "pub fn add(a: i32, b: i32) -> i32 {"],
            "{parts:#?}"
        );
        assert!(parts[0].tests.ends_with("}\n}"), "{:?}", parts[0].tests);
        assert!(parts[1].tests.contains("assert_eq!(calc::add(2, 2), 4);"));
    }

    #[test]
    fn an_honest_fix_keeps_the_code_and_gets_the_old_tests() {
        // The fix changes the code and weakens the test in one file.
        let new = OLD
            .replace("a + b\n", "a.wrapping_add(b)\n")
            .replace("assert_eq!(add(2, 2), 4, \"{brace}\");", "assert!(true);")
            .replace(
                "/// assert_eq!(calc::add(2, 2), 4);",
                "/// assert_eq!(calc::add(2, 2), 5);",
            );
        assert_ne!(rust_tests_of(&new), rust_tests_of(OLD));
        let (back, said) = rust_put_back(&new, OLD);
        assert!(back.contains("a.wrapping_add(b)"), "{back}");
        assert_eq!(rust_tests_of(&back), rust_tests_of(OLD), "{back}");
        assert_eq!(said.len(), 2, "{said:?}");
    }

    #[test]
    fn a_removed_test_module_and_doc_test_come_back() {
        let start = OLD.find("#[cfg(test)]\nmod tests").expect("module");
        let new = OLD[..start].replace(
            "/// ```\n/// assert_eq!(calc::add(2, 2), 4);\n/// ```\n",
            "",
        );
        let (back, _) = rust_put_back(&new, OLD);
        assert_eq!(rust_tests_of(&back), rust_tests_of(OLD), "{back}");
    }

    #[test]
    fn code_only_changes_leave_the_tests_equal() {
        let new = OLD.replace("a + b\n", "b + a\n");
        assert_eq!(rust_tests_of(&new), rust_tests_of(OLD));
        let (back, said) = rust_put_back(&new, OLD);
        assert_eq!(back, new);
        assert!(said.is_empty());
    }

    #[test]
    fn raw_strings_and_comments_hide_braces() {
        let src = "fn f() { let s = r#\"}\"#; /* } */ // }\n }\n#[cfg(test)]\nmod t { fn g() { let _ = \"}\"; } }\n";
        let parts = parts(src);
        assert_eq!(parts.len(), 1);
        assert!(src[parts[0].span.clone()].ends_with("} }"));
    }
}
