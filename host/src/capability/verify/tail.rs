//! The last lines of a stream, in bounded memory: what the agent is shown
//! when it is sent back. The lines that name a failing test (pytest's
//! `FAILED`, unittest's `FAIL:`, cargo's `---- name stdout ----`, go's
//! `--- FAIL`, node's `not ok`, jest's and vitest's `✕`/`×`) are kept
//! apart too, so that the last lines of a long report cannot push them
//! out, and so are the first lines saying the machine lacks a module or
//! a command ([`prove_it_gate::lacking`]) and the first lines stating an
//! error (the start of a failure whose stack frames fill the last lines);
//! colours and other terminal escapes are taken out of every line.

use std::collections::VecDeque;

/// Lines of output kept: what the agent is shown when it is sent back.
pub const TAIL_LINES: usize = 20;
/// Characters kept of one line (20 of them must fit Claude Code's 10,000).
const LINE_CHARS: usize = 400;
/// Bytes buffered for the line being read; the rest of a huge line is dropped.
const LINE_BYTES: usize = 4 * LINE_CHARS;
/// Lines naming failures kept apart, at most (the last ones seen).
const NAMED_LINES: usize = 8;
/// Lines saying something is missing kept apart, at most (the first ones
/// seen: the first is the cause, the rest its echoes).
const LACKING_LINES: usize = 2;
/// The first error lines kept apart, at most: the start of a failure,
/// which a long report's stack frames push out of the last lines.
const FIRST_ERRORS: usize = 2;

/// Whether a line states an error, by the words runners and languages put
/// first: `TypeError: ...`, pytest's `E   AssertionError: ...`, rustc's
/// `error[E0308]: ...`, `thread 'x' panicked at`, go's `panic: ...`.
fn states_error(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("E ").map(str::trim_start).unwrap_or(t);
    if t.starts_with("error:") || t.starts_with("error[") || t.starts_with("panic: ") {
        return true;
    }
    if t.starts_with("thread '") && t.contains("' panicked at") {
        return true;
    }
    let head = t.split([':', ' ', '[']).next().unwrap_or("");
    let name = head.rsplit('.').next().unwrap_or(head);
    head.len() < t.len()
        && name.len() > 5
        && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && head
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && (name.ends_with("Error") || name.ends_with("Exception"))
}

/// Whether a line names a failing test, by a runner's own words.
fn names_failure(line: &str) -> bool {
    let t = line.trim_start();
    const STARTS: &[&str] = &[
        "FAILED ", "FAIL ", "FAIL: ", "ERROR: ", "ERROR ", "--- FAIL", "not ok ", "✕ ", "× ", "✗ ",
        "✖ ", "● ",
    ];
    // mocha's `1) adds`.
    let numbered = t
        .split_once(") ")
        .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    STARTS.iter().any(|s| t.starts_with(s))
        || numbered
        // pytest -v: `tests/test_a.py::test_x FAILED [ 50%]`.
        || (t.contains("::") && t.contains(" FAILED"))
        || (t.starts_with("---- ") && t.ends_with(" ----"))
        || (t.starts_with("test ") && t.ends_with(" FAILED"))
        || t.ends_with(" --- FAILED")
}

/// `text` without terminal escapes: CSI sequences (colours, cursor moves),
/// OSC sequences (titles, links) and two-byte escapes.
pub fn strip_escapes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\x1b') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The last [`TAIL_LINES`] lines of a stream, in bounded memory.
#[derive(Default)]
pub struct Tail {
    lines: VecDeque<String>,
    current: Vec<u8>,
    current_cut: bool,
    named: VecDeque<String>,
    lacking: Vec<String>,
    first_errors: Vec<String>,
    tests_ran: Option<u64>,
}

impl Tail {
    pub fn push(&mut self, mut bytes: &[u8]) {
        // Lines that the last TAIL_LINES lines of this read replace are
        // never kept, so they are not rendered either: a verify.sh that
        // prints 50 MB costs one backward scan per read, not a UTF-8
        // decode per line.
        if let Some(start) = start_of_last_lines(bytes) {
            // The skipped lines are still read for failure names: the
            // line under way ends first, then each whole line (a look at
            // its ends, no decode unless it may name one).
            let skipped = &bytes[..start];
            let first = memchr::memchr(b'\n', skipped).unwrap_or(skipped.len());
            self.push(&skipped[..=first.min(skipped.len() - 1)]);
            let mut rest = &skipped[(first + 1).min(skipped.len())..];
            while let Some(end) = memchr::memchr(b'\n', rest) {
                let line = &rest[..end];
                let cut = line.len() > LINE_BYTES;
                let line = &line[..line.len().min(LINE_BYTES)];
                if may_name_failure(line) {
                    self.remember(Self::render(line, cut));
                }
                rest = &rest[end + 1..];
            }
            self.lines.clear();
            self.current.clear();
            self.current_cut = false;
            bytes = &bytes[start..];
        }
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match chunk.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (chunk, false),
            };
            let room = LINE_BYTES.saturating_sub(self.current.len());
            self.current
                .extend_from_slice(&body[..body.len().min(room)]);
            self.current_cut |= body.len() > room;
            if ends {
                self.end_line();
            }
        }
    }

    pub fn finish(&mut self) {
        if !self.current.is_empty() {
            self.end_line();
        }
    }

    /// The lines naming failures that the last lines do not hold, a `⋮`,
    /// then the last lines: [`TAIL_LINES`] in all.
    pub fn lines(&self) -> Vec<String> {
        let mut last: Vec<String> = self.lines.iter().cloned().collect();
        if !self.current.is_empty() {
            last.push(Self::render(&self.current, self.current_cut));
            if last.len() > TAIL_LINES {
                last.remove(0);
            }
        }
        let mut keep = last.len();
        let mut named: Vec<String> = Vec::new();
        // Making room for the named lines can drop named lines from the
        // last ones: look again until it settles.
        for _ in 0..3 {
            let kept = &last[last.len() - keep..];
            let mut apart: Vec<&String> = Vec::new();
            for line in self
                .lacking
                .iter()
                .chain(&self.first_errors)
                .chain(&self.named)
            {
                if !apart.contains(&line) {
                    apart.push(line);
                }
            }
            named = apart
                .into_iter()
                .filter(|n| !kept.contains(n))
                .cloned()
                .collect();
            let room = TAIL_LINES.saturating_sub(named.len() + 1);
            if named.is_empty() || keep <= room {
                break;
            }
            keep = room;
        }
        let mut out = Vec::new();
        if !named.is_empty() {
            out.extend(named);
            out.push("⋮".to_string());
        }
        out.extend(last[last.len() - keep..].iter().cloned());
        out
    }

    /// How many tests ran, by every runner summary line read (not only
    /// those still in the tail): [`prove_it_gate::policy::tests_ran`] of
    /// each, added up.
    pub fn tests_ran(&self) -> Option<u64> {
        self.tests_ran
    }

    fn remember(&mut self, line: String) {
        if may_count_tests(line.as_bytes())
            && let Some(n) = prove_it_gate::policy::tests_ran(std::slice::from_ref(&line))
        {
            self.tests_ran = Some(self.tests_ran.unwrap_or(0) + n);
        }
        if self.lacking.len() < LACKING_LINES
            && !self.lacking.contains(&line)
            && prove_it_gate::lacking::lacking(&line).is_some()
        {
            self.lacking.push(line.clone());
        }
        if self.first_errors.len() < FIRST_ERRORS
            && !self.first_errors.contains(&line)
            && states_error(&line)
        {
            self.first_errors.push(line.clone());
        }
        if names_failure(&line) {
            if self.named.len() == NAMED_LINES {
                self.named.pop_front();
            }
            self.named.push_back(line);
        }
    }

    fn end_line(&mut self) {
        let line = Self::render(&self.current, self.current_cut);
        self.current.clear();
        self.current_cut = false;
        self.remember(line.clone());
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    fn render(bytes: &[u8], cut: bool) -> String {
        let text = String::from_utf8_lossy(bytes);
        let text = strip_escapes(&text);
        let text = text.trim_end_matches('\r');
        // A progress bar rewrites its line with \r: show the last state.
        let text = text.rsplit('\r').next().unwrap_or(text);
        let mut out: String = text.chars().take(LINE_CHARS).collect();
        if cut || text.chars().count() > LINE_CHARS {
            out.push('…');
        }
        out
    }
}

/// A cheap look at a raw line's ends before it is decoded: whether it may
/// be one [`names_failure`] or [`prove_it_gate::lacking`] takes (escapes
/// can hide a start: then yes).
fn may_name_failure(line: &[u8]) -> bool {
    const LACKING: &[&[u8]] = &[
        // And what may state an error ([`states_error`]).
        b"Error",
        b"Exception",
        b"error",
        b"panic",
        b"No module named ",
        b"Cannot find ",
        b"unrecognized arguments",
        b"no such command",
        b"no required module",
    ];
    if may_count_tests(line)
        || line.ends_with(b"not found")
        || LACKING
            .iter()
            .any(|m| memchr::memmem::find(line, m).is_some())
    {
        return true;
    }
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let t = &line[start..];
    let first = t.first().copied().unwrap_or(0);
    matches!(
        first,
        b'F' | b'E' | b'-' | b'n' | b't' | b'0'..=b'9' | 0x1b | 0xe2 | 0xc3
    ) || memchr::memmem::find(line, b" FAILED").is_some()
        || line.ends_with(b"FAILED")
        || line.ends_with(b"FAILED\r")
}

/// A cheap look for a runner's summary line: every one the policy counts
/// says `pass`, `fail` or `Ran ` (any case of the first two).
fn may_count_tests(line: &[u8]) -> bool {
    const WORDS: &[&[u8]] = &[
        b"pass", b"fail", b"Ran ", b"PASS", b"FAIL", b"Pass", b"Fail",
    ];
    WORDS
        .iter()
        .any(|w| memchr::memmem::find(line, w).is_some())
}

/// Where the last [`TAIL_LINES`] complete lines of `bytes` start, when
/// `bytes` holds more than that many line ends: everything before is
/// replaced by what follows (and so is any earlier output).
fn start_of_last_lines(bytes: &[u8]) -> Option<usize> {
    let mut ends = 0;
    let mut end = bytes.len();
    while let Some(at) = bytes[..end].iter().rposition(|b| *b == b'\n') {
        ends += 1;
        if ends > TAIL_LINES {
            return Some(at + 1);
        }
        end = at;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path (a read with more line ends than are kept) gives what
    /// pushing the same bytes a line at a time gives, whatever the reads'
    /// sizes.
    #[test]
    fn reads_of_any_size_keep_the_same_lines() {
        let mut text = Vec::new();
        for i in 0..500 {
            text.extend_from_slice(format!("line {i}{}\n", "é".repeat(i % 7)).as_bytes());
            if i % 50 == 0 {
                text.extend_from_slice(b"progress 10%\rprogress 100%\n");
            }
        }
        text.extend_from_slice(b"no line end");
        let mut slow = Tail::default();
        for line in text.split_inclusive(|b| *b == b'\n') {
            slow.push(line);
        }
        slow.finish();
        for size in [1, 7, 64, 1000, 4096, text.len()] {
            let mut fast = Tail::default();
            for chunk in text.chunks(size) {
                fast.push(chunk);
            }
            fast.finish();
            assert_eq!(fast.lines(), slow.lines(), "reads of {size} bytes");
        }
        assert_eq!(slow.lines().last().map(String::as_str), Some("no line end"));
    }

    /// The tail of `out`, read `size` bytes at a time.
    fn read_in(out: &str, size: usize) -> Vec<String> {
        let mut tail = Tail::default();
        for chunk in out.as_bytes().chunks(size) {
            tail.push(chunk);
        }
        tail.finish();
        tail.lines()
    }

    /// Every summary line counts, however the output is read: the ones the
    /// tail keeps and the ones far before it.
    #[test]
    fn the_test_count_adds_up_every_summary_line_read() {
        let mut out = String::new();
        for (n, name) in [(17, "lib"), (6, "tests/it.rs"), (3, "doc")] {
            out.push_str(&format!("     Running {name}\nrunning {n} tests\n"));
            for i in 0..40 {
                out.push_str(&format!("test t{i} ... ok\n"));
            }
            out.push_str(&format!(
                "\ntest result: ok. {n} passed; 0 failed; 0 ignored\n"
            ));
        }
        for size in [1, 7, 4096, out.len()] {
            let mut tail = Tail::default();
            for chunk in out.as_bytes().chunks(size) {
                tail.push(chunk);
            }
            tail.finish();
            assert_eq!(tail.tests_ran(), Some(26), "reads of {size} bytes");
        }
        let mut tail = Tail::default();
        tail.push(b"no summary here\n");
        tail.finish();
        assert_eq!(tail.tests_ran(), None);
    }

    /// The start of a failure stays when its stack frames fill the last
    /// lines; a line that only mentions an error word does not count.
    #[test]
    fn the_first_error_stays_ahead_of_its_stack_frames() {
        let mut out = String::from("running the old harness\nloading 409 data files\n");
        out.push_str("TypeError: Cannot read properties of undefined (reading 'decode')\n");
        for i in 0..60 {
            out.push_str(&format!("    at frame{i} (harness.js:{i}:7)\n"));
        }
        for size in [3, out.len()] {
            let lines = read_in(&out, size);
            assert!(
                lines[0].starts_with("TypeError: Cannot read"),
                "reads of {size}: {lines:?}"
            );
            assert_eq!(lines.len(), TAIL_LINES, "{lines:?}");
        }
        for stated in [
            "E       AssertionError: assert 3 == 5",
            "error[E0308]: mismatched types",
            "thread 'tests::adds' panicked at src/lib.rs:9:5:",
            "panic: runtime error: index out of range [recovered]",
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        ] {
            assert!(states_error(stated), "{stated}");
        }
        for not in [
            "no errors found",
            "Error",
            "handles the Error case ... ok",
            "    at Error (x.js:1:1)",
        ] {
            assert!(!states_error(not), "{not}");
        }
    }

    #[test]
    fn lines_naming_failures_stay_and_escapes_go() {
        let mut out = String::new();
        for name in ["test_a", "test_b", "test_c"] {
            out.push_str(&format!("not ok 1 - {name}\n"));
            for i in 0..30 {
                out.push_str(&format!("  \x1b[31mstack line {i}\x1b[0m\n"));
            }
        }
        out.push_str("# pass 0\n# fail 3\n");
        for size in [1, 64, out.len()] {
            let lines = read_in(&out, size);
            assert_eq!(lines.len(), TAIL_LINES, "{lines:?}");
            assert_eq!(
                &lines[..4],
                [
                    "not ok 1 - test_a",
                    "not ok 1 - test_b",
                    "not ok 1 - test_c",
                    "⋮"
                ],
                "reads of {size}: {lines:?}"
            );
            assert_eq!(lines.last().map(String::as_str), Some("# fail 3"));
            assert!(lines.iter().all(|l| !l.contains('\x1b')), "{lines:?}");
            assert!(lines.iter().any(|l| l == "  stack line 29"), "{lines:?}");
        }
    }

    /// pytest's own report of a test module that cannot be imported, with
    /// twelve failing tests after it: the line naming the missing module
    /// stays, above the failures' names.
    #[test]
    fn the_line_saying_a_module_is_missing_stays() {
        let mut out = String::from(
            "______________ ERROR collecting tests/test_a.py ______________\n\
             ImportError while importing test module '/tmp/pyx/tests/test_a.py'.\n\
             tests/test_a.py:1: in <module>\n    import freezegun\n\
             E   ModuleNotFoundError: No module named 'freezegun'\n",
        );
        for i in 1..=12 {
            out.push_str(&format!(
                "____ test_b{i} ____\n    def test_b{i}():\n>       assert {i} == 0\nE       assert {i} == 0\n"
            ));
        }
        out.push_str(
            "=========================== short test summary info ============================\n",
        );
        out.push_str("ERROR tests/test_a.py\n");
        for i in 1..=12 {
            out.push_str(&format!(
                "FAILED tests/test_b{i}.py::test_b{i} - assert {i} == 0\n"
            ));
        }
        out.push_str("12 failed, 1 error in 0.31s\n");
        for size in [1, 64, out.len()] {
            let lines = read_in(&out, size);
            assert_eq!(lines.len(), TAIL_LINES, "{lines:?}");
            assert_eq!(
                lines[0], "E   ModuleNotFoundError: No module named 'freezegun'",
                "reads of {size}: {lines:?}"
            );
            assert_eq!(
                lines.last().map(String::as_str),
                Some("12 failed, 1 error in 0.31s")
            );
        }
    }

    #[test]
    fn keeps_the_last_lines_of_many() {
        let mut tail = Tail::default();
        for i in 0..1000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines.first().map(String::as_str), Some("line 980"));
        assert_eq!(lines.last().map(String::as_str), Some("line 999"));
    }

    #[test]
    fn joins_lines_split_across_reads_and_cuts_huge_ones() {
        let mut tail = Tail::default();
        tail.push(b"hel");
        tail.push(b"lo\nwor");
        tail.push(&vec![b'x'; 1_000_000]);
        tail.finish();
        let lines = tail.lines();
        assert_eq!(lines[0], "hello");
        assert!(lines[1].starts_with("worx") && lines[1].ends_with('…'));
        assert!(lines[1].chars().count() <= LINE_CHARS + 1);
    }
}
