//! The last lines of a stream, in bounded memory: what the agent is shown
//! when it is sent back.

use std::collections::VecDeque;

/// Lines of output kept: what the agent is shown when it is sent back.
pub const TAIL_LINES: usize = 20;
/// Characters kept of one line (20 of them must fit Claude Code's 10,000).
const LINE_CHARS: usize = 400;
/// Bytes buffered for the line being read; the rest of a huge line is dropped.
const LINE_BYTES: usize = 4 * LINE_CHARS;

/// The last [`TAIL_LINES`] lines of a stream, in bounded memory.
#[derive(Default)]
pub struct Tail {
    lines: VecDeque<String>,
    current: Vec<u8>,
    current_cut: bool,
}

impl Tail {
    pub fn push(&mut self, mut bytes: &[u8]) {
        // Lines that the last TAIL_LINES lines of this read replace are
        // never kept, so they are not rendered either: a verify.sh that
        // prints 50 MB costs one backward scan per read, not a UTF-8
        // decode per line.
        if let Some(start) = start_of_last_lines(bytes) {
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

    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.lines.iter().cloned().collect();
        if !self.current.is_empty() {
            lines.push(Self::render(&self.current, self.current_cut));
            if lines.len() > TAIL_LINES {
                lines.remove(0);
            }
        }
        lines
    }

    fn end_line(&mut self) {
        let line = Self::render(&self.current, self.current_cut);
        self.current.clear();
        self.current_cut = false;
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    fn render(bytes: &[u8], cut: bool) -> String {
        let text = String::from_utf8_lossy(bytes);
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
