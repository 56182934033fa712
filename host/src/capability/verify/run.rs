//! Starting `verify.sh`, waiting for it within its time, and reading what
//! it said.

use super::VERIFY_SH;
use super::guard::{Guard, tell_group};
use super::tail::Tail;
use prove_it_gate::abi::{VerifyOutcome, VerifyRun};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long to wait for the output pipe to close once the group is gone (a
/// process that escaped the group may still hold it open).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The process group of the script running now (0: none), for
/// [`stop_running`].
static RUNNING: AtomicI32 = AtomicI32::new(0);

/// Kills the script running now, if any, and all it started: for a command
/// that is interrupted and must clean up after the script before it exits
/// (`prove-it canary`). Safe to call from any thread.
pub fn stop_running() {
    let group = RUNNING.swap(0, Ordering::SeqCst);
    if group > 0 {
        kill_group(group);
    }
}

/// Runs `verify.sh` in `root`, stopping it after `timeout`.
pub fn run(root: &Path, timeout: Duration) -> VerifyRun {
    run_with(root, timeout, &[])
}

/// [`run`], with `env` added to its environment.
pub fn run_with(root: &Path, timeout: Duration, env: &[(&str, OsString)]) -> VerifyRun {
    run_script_with(&root.join(VERIFY_SH), root, timeout, env)
}

/// Runs `script` (no arguments) with `cwd` as working directory.
pub fn run_script(script: &Path, cwd: &Path, timeout: Duration) -> VerifyRun {
    run_script_with(script, cwd, timeout, &[])
}

fn run_script_with(
    script: &Path,
    cwd: &Path,
    timeout: Duration,
    env: &[(&str, OsString)],
) -> VerifyRun {
    let start = Instant::now();
    let could_not_start = |detail: String| VerifyRun {
        outcome: VerifyOutcome::CouldNotStart,
        exit_code: None,
        duration_ms: start.elapsed().as_millis() as u64,
        tail: Vec::new(),
        timeout_secs: timeout.as_secs(),
        detail: Some(detail),
        notes: Vec::new(),
        tests_ran: None,
    };
    // Started first: the script tells it its group before it runs (see
    // [`Guard`]). Without a guard (no `sh`?) the script still runs; only
    // the cleanup after a kill is lost.
    let guard = Guard::start().ok();
    let (reader, child) = match spawn(script, cwd, env, guard.as_ref()) {
        Ok(spawned) => spawned,
        Err(e) => return could_not_start(e.to_string()),
    };
    let group = child.id() as libc::pid_t;
    RUNNING.store(group, Ordering::SeqCst);
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
    RUNNING.store(0, Ordering::SeqCst);
    if let Some(guard) = guard {
        guard.release();
    }
    let _ = drained_rx.recv_timeout(DRAIN_GRACE);
    let (tail, tests_ran) = tail
        .lock()
        .map(|t| (t.lines(), t.tests_ran()))
        .unwrap_or_default();
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
        notes: Vec::new(),
        tests_ran,
    }
}

/// Starts the script with both output streams on one pipe.
fn spawn(
    script: &Path,
    cwd: &Path,
    env: &[(&str, OsString)],
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
            .envs(env.iter().map(|(k, v)| (k, v)))
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
