//! The replay: the checks as they were at the session's start, run against
//! the code as it is now (SPEC.md, "Weakened checks"). In a throwaway copy
//! of the tree ([`copy`]), each check the session modified or deleted is put
//! back as it was at the start (only the check sections of a manifest, only
//! the test parts of a Rust source file), configuration and hooks it added
//! are left out, tests it added stay; then `verify.sh` runs there as the
//! gate runs it. When that fails, the checks as they are now run in the
//! same copy, as the control. The person's tree is only read.

use super::checks::{self, Content, Replayable};
use super::git;
use super::{copy, verify};
use anyhow::{Context, Result};
use prove_it_gate::abi::{Replay, VerifyOutcome};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// Replays the session-start checks of `found` in a copy of `root`, with
/// git's configuration of the checks as it was at the start.
/// `env` is what the gate gave `verify.sh` ([`copy::build_caches`] is added);
/// `cache` is where the copy's build caches live; `config_count` is the
/// person's `GIT_CONFIG_COUNT`. With `start`, when the replay fails and the
/// control passes, the tree is then put back as it was at the session's
/// start and `verify.sh` runs once more: did the session-start checks
/// pass on the session-start code?
#[allow(clippy::too_many_arguments)]
pub fn replay(
    root: &Path,
    found: &Replayable,
    start: bool,
    timeout: Duration,
    env: &[(&'static str, OsString)],
    cache: &Path,
    config_count: usize,
) -> Result<Replay> {
    let copy =
        copy::make(root).context("cannot make the throwaway copy to replay the checks in")?;
    let mut restored = Vec::new();
    let mut undo = Vec::new();
    for f in &found.files {
        let at = copy.root.join(&f.change.path);
        let now = Content::on_disk(&at)?;
        let (want, said) = checks::restored(f, now.as_ref())?;
        if want != now {
            checks::write_file(&at, want.as_ref())
                .with_context(|| format!("cannot put back `{}` in the copy", f.change.path))?;
            undo.push((at, now));
        }
        restored.extend(said);
    }
    // The control runs as the gate ran `verify.sh`; the replay with git's
    // configuration of the checks put back as well.
    let mut control_env: Vec<(String, OsString)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    control_env.extend(
        copy::build_caches(root, cache)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    let mut run_env = control_env.clone();
    if let Some((start, now)) = &found.git {
        let (extra, said) = git::config::replay_env(root, start, now, &copy.scratch, config_count)?;
        run_env.extend(extra);
        restored.extend(said);
    }
    let (run_env, control_env) = (borrowed(&run_env), borrowed(&control_env));
    let run = verify::run_with(&copy.root, timeout, &run_env);
    // Failing, the old checks prove a weakening only if the checks as they
    // are now pass in the same copy: a copy that lacks what the checks
    // need fails both.
    let control = if run.outcome == VerifyOutcome::Passed {
        None
    } else {
        for (at, now) in &undo {
            checks::write_file(at, now.as_ref()).context("cannot undo the replay in the copy")?;
        }
        Some(verify::run_with(&copy.root, timeout, &control_env))
    };
    let wanted = start
        && control
            .as_ref()
            .is_some_and(|c| c.outcome == VerifyOutcome::Passed);
    let (start, start_problem) = match (&found.start.unknown, wanted) {
        (_, false) => (None, None),
        (Some(why), true) => (None, Some(why.clone())),
        // The replay has told its story already: a start that cannot be
        // put back is said beside it, never in place of it.
        (None, true) => match found.start.rebuild(root, &copy.root) {
            Ok(()) => (Some(verify::run_with(&copy.root, timeout, &run_env)), None),
            Err(e) => (None, Some(format!("{e:#}"))),
        },
    };
    Ok(Replay {
        run,
        restored,
        control,
        start,
        start_problem,
    })
}

/// `env` as [`verify::run_with`] takes it.
fn borrowed(env: &[(String, OsString)]) -> Vec<(&str, OsString)> {
    env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
}
