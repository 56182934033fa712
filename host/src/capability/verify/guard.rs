//! The guard that kills `verify.sh`'s process group when the hook dies
//! before it could.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// Writes this process's id, which is its process group, and a newline to
/// `fd`: the script's first act, in the child before exec.
pub(super) fn tell_group(fd: std::os::fd::RawFd) {
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
pub(super) struct Guard {
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

    pub(super) fn start() -> std::io::Result<Guard> {
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
    pub(super) fn fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.stdin.as_ref().map(|stdin| stdin.as_raw_fd())
    }

    pub(super) fn release(mut self) {
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
