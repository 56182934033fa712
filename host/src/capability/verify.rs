//! Running `./verify.sh`: from the work tree root, no arguments, stdin empty,
//! stdout and stderr merged into one pipe of which only the last lines are
//! kept, in a process group of its own that is killed whole at the timeout
//! (and after the script exits, so nothing it started is left behind).
//!
//! If this process dies first (the person interrupts, the agent host
//! cancels the hook with SIGTERM, or kill -9), a [`Guard`] kills the group:
//! nothing of `verify.sh` runs on in the background.
//!
//! It never returns an error: a script that cannot start is an outcome the
//! policy reports like any other failure.

use prove_it_gate::abi::{VerifyOutcome, VerifyRun};
use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::git::VERIFY_SH;

/// Lines of output kept: what the agent is shown when it is sent back.
pub const TAIL_LINES: usize = 20;
/// Characters kept of one line (20 of them must fit Claude Code's 10,000).
const LINE_CHARS: usize = 400;
/// Bytes buffered for the line being read; the rest of a huge line is dropped.
const LINE_BYTES: usize = 4 * LINE_CHARS;
/// How long to wait for the output pipe to close once the group is gone (a
/// process that escaped the group may still hold it open).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Runs `verify.sh` in `root`, stopping it after `timeout`.
pub fn run(root: &Path, timeout: Duration) -> VerifyRun {
    run_script(&root.join(VERIFY_SH), root, timeout)
}

/// Runs `script` (no arguments) with `cwd` as working directory.
pub fn run_script(script: &Path, cwd: &Path, timeout: Duration) -> VerifyRun {
    let start = Instant::now();
    let could_not_start = |detail: String| VerifyRun {
        outcome: VerifyOutcome::CouldNotStart,
        exit_code: None,
        duration_ms: start.elapsed().as_millis() as u64,
        tail: Vec::new(),
        timeout_secs: timeout.as_secs(),
        detail: Some(detail),
    };
    // Started first: the script tells it its group before it runs (see
    // [`Guard`]). Without a guard (no `sh`?) the script still runs; only
    // the cleanup after a kill is lost.
    let guard = Guard::start().ok();
    let (reader, child) = match spawn(script, cwd, guard.as_ref()) {
        Ok(spawned) => spawned,
        Err(e) => return could_not_start(e.to_string()),
    };
    let group = child.id() as libc::pid_t;
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (drained_tx, drained_rx) = mpsc::channel();
    {
        let tail = Arc::clone(&tail);
        std::thread::spawn(move || {
            read_into(reader, &tail);
            let _ = drained_tx.send(());
        });
    }
    let (exit_tx, exit_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut child: Child = child;
        let _ = exit_tx.send(child.wait());
    });

    let status = match exit_rx.recv_timeout(timeout) {
        Ok(status) => Some(status),
        Err(RecvTimeoutError::Timeout) => {
            kill_group(group);
            // Reap it so no zombie is left; the group is already dead.
            let _ = exit_rx.recv();
            None
        }
        Err(RecvTimeoutError::Disconnected) => None,
    };
    // Whatever the script left running in its group goes too.
    kill_group(group);
    if let Some(guard) = guard {
        guard.release();
    }
    let _ = drained_rx.recv_timeout(DRAIN_GRACE);
    let tail = tail.lock().map(|t| t.lines()).unwrap_or_default();
    let duration_ms = start.elapsed().as_millis() as u64;

    let (outcome, exit_code, detail) = match status {
        None => (
            VerifyOutcome::TimedOut,
            None,
            Some(format!("timed out after {} s", timeout.as_secs())),
        ),
        Some(Err(e)) => (
            VerifyOutcome::Failed,
            None,
            Some(format!("cannot wait for it: {e}")),
        ),
        Some(Ok(status)) => match (status.code(), status.signal()) {
            (Some(0), _) => (VerifyOutcome::Passed, Some(0), None),
            (Some(code), _) => (VerifyOutcome::Failed, Some(code), None),
            (None, Some(signal)) => (
                VerifyOutcome::Failed,
                None,
                Some(format!("killed by signal {signal}")),
            ),
            (None, None) => (
                VerifyOutcome::Failed,
                None,
                Some("ended without an exit code".into()),
            ),
        },
    };
    VerifyRun {
        outcome,
        exit_code,
        duration_ms,
        tail,
        timeout_secs: timeout.as_secs(),
        detail,
    }
}

/// Starts the script with both output streams on one pipe.
fn spawn(
    script: &Path,
    cwd: &Path,
    guard: Option<&Guard>,
) -> std::io::Result<(std::io::PipeReader, Child)> {
    let (reader, writer) = std::io::pipe()?;
    let guard_fd = guard.and_then(Guard::fd);
    let command = |program: &Path, args: &[&str]| -> std::io::Result<Command> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer.try_clone()?)
            .env("PROVE_IT_RUNNING", "1")
            .process_group(0);
        if let Some(fd) = guard_fd {
            // SAFETY: runs in the child between fork and exec, where only
            // async-signal-safe calls are allowed: getpid and write, on a
            // stack buffer, nothing allocated.
            unsafe {
                cmd.pre_exec(move || {
                    tell_group(fd);
                    Ok(())
                });
            }
        }
        Ok(cmd)
    };
    // `command` is dropped at the end of each statement, closing our copies
    // of the pipe's write end: only the script holds it, so EOF comes.
    let spawned = command(script, &[])?.spawn();
    let child = match spawned {
        // No `#!` line: run it the way a shell would, with sh.
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
            let mut cmd = command(Path::new("/bin/sh"), &[])?;
            cmd.arg(script).spawn()?
        }
        other => other?,
    };
    drop(writer);
    Ok((reader, child))
}

/// Writes this process's id, which is its process group, and a newline to
/// `fd`: the script's first act, in the child before exec.
fn tell_group(fd: std::os::fd::RawFd) {
    // SAFETY: getpid cannot fail and has no preconditions.
    let mut pid = unsafe { libc::getpid() } as u32;
    let mut buf = [0u8; 12];
    let mut at = buf.len() - 1;
    buf[at] = b'\n';
    loop {
        at -= 1;
        buf[at] = b'0' + (pid % 10) as u8;
        pid /= 10;
        if pid == 0 {
            break;
        }
    }
    // SAFETY: writes from a live stack buffer to an open descriptor; a
    // failed write only loses the cleanup after a kill.
    unsafe { libc::write(fd, buf[at..].as_ptr().cast(), buf.len() - at) };
}

/// Kills the script's process group when this process dies before it has
/// done so itself, however it dies.
///
/// A signal handler would not see kill -9, and a parent-death signal
/// (Linux only) reaches the script but not what it started. So the guard
/// is a `sh` in a process group of its own (a kill aimed at the hook's
/// group spares it), reading a pipe whose write end only this process
/// holds. The script itself writes its group there, between fork and exec,
/// so there is no moment in which the script runs and the guard does not
/// know it. Then the guard reads either `done` (this process killed the
/// group itself) or, when this process dies, end of file: then it kills
/// the group. It costs one `sh` start per run of `verify.sh`, never a stop
/// that runs nothing.
///
/// What remains: processes the script moved out of its group on purpose
/// (`setsid`), as at the timeout.
struct Guard {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
}

impl Guard {
    /// The last group it was told is the script's (a first child whose
    /// exec failed, for want of a `#!` line, told it too).
    const SCRIPT: &str = r#"group=
while read -r line; do
  [ "$line" = done ] && exit 0
  group=$line
done
[ -n "$group" ] && kill -KILL "-$group" 2>/dev/null"#;

    fn start() -> std::io::Result<Guard> {
        let mut child = Command::new("/bin/sh")
            .args(["-c", Self::SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take();
        Ok(Guard { child, stdin })
    }

    /// The descriptor the script writes its group to.
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.stdin.as_ref().map(|stdin| stdin.as_raw_fd())
    }

    fn release(mut self) {
        self.say("done\n");
        self.stdin = None;
        // It exits at once; reaping it leaves no zombie behind.
        let _ = self.child.wait();
    }

    fn say(&mut self, line: &str) {
        use std::io::Write;
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = stdin.write_all(line.as_bytes());
        }
    }
}

fn kill_group(group: libc::pid_t) {
    // SAFETY: killpg only sends a signal; ESRCH (group gone) is fine.
    unsafe {
        libc::killpg(group, libc::SIGKILL);
    }
}

fn read_into(mut reader: std::io::PipeReader, tail: &Mutex<Tail>) {
    let mut buf = [0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Ok(mut tail) = tail.lock() {
                    tail.push(&buf[..n]);
                }
            }
        }
    }
    if let Ok(mut tail) = tail.lock() {
        tail.finish();
    }
}

/// The last [`TAIL_LINES`] lines of a stream, in bounded memory.
#[derive(Default)]
pub struct Tail {
    lines: VecDeque<String>,
    current: Vec<u8>,
    current_cut: bool,
}

impl Tail {
    pub fn push(&mut self, bytes: &[u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
