//! What prove-it's tests and its benchmark share, written once: git with a
//! pinned environment, a process run with its wall time and peak memory,
//! and the hook command lines the plugin ships. Dev-only: nothing here is
//! part of prove-it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Pinned git environment: no system or user config, fixed identity and
/// dates, so every test repository is the same on every machine. No
/// automatic maintenance: every commit would otherwise start a `git
/// maintenance run --auto` of its own (hundreds a test run) that finds
/// nothing to do in a repository of a few files.
pub fn git_env(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "maintenance.auto")
        .env("GIT_CONFIG_VALUE_0", "false")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
}

/// Runs git in `dir` with the pinned environment, panicking with its
/// output on failure; returns its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_env(&mut Command::new("git"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {} failed:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A finished process, measured.
pub struct Measured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// From spawn to exit.
    pub wall: Duration,
    /// Peak resident memory, from `wait4`.
    pub max_rss_kib: i64,
}

/// Runs `cmd` with `input` on stdin, reading stdout and stderr, and reaps
/// it with `wait4` for its peak memory (std's `wait` does not report it).
pub fn measure(cmd: &mut Command, input: &[u8]) -> Measured {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let began = Instant::now();
    let mut child = cmd.spawn().expect("the process starts");
    // A process may answer before it has read all its input.
    let _ = child.stdin.take().expect("stdin").write_all(input);
    let mut stderr_pipe = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout);
    let mut status = 0;
    // SAFETY: waiting on our own child with valid out-pointers.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = began.elapsed();
    assert_eq!(pid, child.id() as i32, "wait4");
    // Reaped by wait4: the Child must not wait again.
    std::mem::forget(child);
    use std::os::unix::process::ExitStatusExt;
    Measured {
        status: ExitStatus::from_raw(status),
        stdout,
        stderr: stderr.join().expect("the stderr reader"),
        wall,
        max_rss_kib: usage.ru_maxrss,
    }
}

/// The repository root (the plugin's root too), resolved.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The command line the plugin's `plugin/hooks.json` under `root` gives the
/// hook for `event` (`session-start`, `user-prompt-submit`, `stop`).
pub fn hook_command_line(root: &Path, event: &str) -> String {
    let hooks: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("plugin/hooks.json")).expect("hooks.json"),
    )
    .expect("hooks.json is JSON");
    let name = match event {
        "session-start" => "SessionStart",
        "user-prompt-submit" => "UserPromptSubmit",
        "stop" => "Stop",
        other => panic!("no hook event {other}"),
    };
    let command = hooks["hooks"][name][0]["hooks"][0]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("hooks.json has no command for {name}"));
    assert!(command.ends_with(&format!(" hook {event}")), "{command}");
    command.to_string()
}

/// Sets `path`'s modification time to `ago` before now (as `touch -d`
/// does): for caches and pruning that go by a file's age.
pub fn age(path: &Path, ago: Duration) {
    let then = std::time::SystemTime::now() - ago;
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(then))
        .unwrap_or_else(|e| panic!("cannot age {}: {e}", path.display()));
}
