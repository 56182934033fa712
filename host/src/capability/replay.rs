//! The replay: the checks as they were at the session's start, run against
//! the code as it is now (SPEC.md, "Weakened checks"). In a throwaway copy
//! of the tree ([`copy`]), each check the session modified or deleted is put
//! back as it was at the start (only the check sections of a manifest, only
//! the test parts of a Rust source file), configuration and hooks it added
//! are left out, tests it added stay; then `verify.sh` runs there as the
//! gate runs it. When that fails, the checks as they are now run in the
//! same copy, as the control. The person's tree is only read.

use super::checks::{self, Content, Found};
use super::{copy, verify};
use anyhow::{Context, Result};
use prove_it_gate::abi::{Replay, VerifyOutcome};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// Replays the session-start checks of `found` in a copy of `root`.
/// `env` is what the gate gave `verify.sh` ([`copy::build_caches`] is added);
/// `cache` is where the copy's build caches live.
pub fn replay(
    root: &Path,
    found: &[Found],
    timeout: Duration,
    env: &[(&'static str, OsString)],
    cache: &Path,
) -> Result<Replay> {
    let copy =
        copy::make(root).context("cannot make the throwaway copy to replay the checks in")?;
    let mut restored = Vec::new();
    let mut undo = Vec::new();
    for f in found {
        let at = copy.root.join(&f.change.path);
        let now = Content::on_disk(&at)?;
        let (want, said) = checks::restored(f, now.as_ref())?;
        if want != now {
            write(&at, want.as_ref())
                .with_context(|| format!("cannot put back `{}` in the copy", f.change.path))?;
            undo.push((at, now));
        }
        restored.extend(said);
    }
    let mut env = env.to_vec();
    env.extend(copy::build_caches(root, cache));
    let run = verify::run_with(&copy.root, timeout, &env);
    // Failing, the old checks prove a weakening only if the checks as they
    // are now pass in the same copy: a copy that lacks what the checks
    // need fails both.
    let control = if run.outcome == VerifyOutcome::Passed {
        None
    } else {
        for (at, now) in &undo {
            write(at, now.as_ref()).context("cannot undo the replay in the copy")?;
        }
        Some(verify::run_with(&copy.root, timeout, &env))
    };
    Ok(Replay {
        run,
        restored,
        control,
    })
}

/// Makes the file at `path` hold `content` (`None`: removes it).
fn write(path: &Path, content: Option<&Content>) -> std::io::Result<()> {
    let Some(content) = content else {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, content.bytes())?;
    let mode = if content.exec { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}
