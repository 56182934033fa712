//! The replay: the checks as they were at the session's start, run against
//! the code as it is now (SPEC.md, "Weakened checks"). In a throwaway copy
//! of the tree ([`copy`]), each check the session modified or deleted is put
//! back as it was at the start (only the check sections of a manifest, only
//! the test parts of a Rust source file), configuration and hooks it added
//! are left out, tests it added stay, and the files in test folders those
//! checks read go back with them; then `verify.sh` runs there as the
//! gate runs it. When that fails, the checks as they are now run in the
//! same copy, as the control. The person's tree is only read.

use super::checks::{self, Content, Replayable};
use super::git;
use super::{copy, differential, loads, verify};
use anyhow::{Context, Result};
use prove_it_gate::abi::{CheckKind, FileChange, Replay, VerifyOutcome};
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
    let mut indexed = Vec::new();
    for f in &found.files {
        let at = copy.root.join(&f.change.path);
        let now = Content::on_disk(&at)?;
        // A check that is now a link is put back as a link for the control.
        let link = std::fs::read_link(&at).ok();
        let (want, said) = checks::restored(f, now.as_ref())?;
        if want != now {
            let attributes = is_attributes(&f.change.path);
            if attributes {
                indexed.push((
                    f.change.path.as_str(),
                    index_entry(&copy.root, &f.change.path)?,
                ));
            }
            checks::write_file(&at, want.as_ref())
                .with_context(|| format!("cannot put back `{}` in the copy", f.change.path))?;
            if attributes {
                index_as_on_disk(&copy.root, &f.change.path, want.is_some())?;
            }
            undo.push((at, now, link));
        }
        restored.extend(said);
    }
    // What those checks read, as it was at the start: the old checks with
    // the inputs they were written for.
    let mut added_inputs = Vec::new();
    let mut inputs_back = Vec::new();
    for input in &found.inputs {
        let at = copy.root.join(&input.path);
        let now = Content::on_disk(&at)?;
        if input.start == now {
            continue;
        }
        let link = std::fs::read_link(&at).ok();
        checks::write_file(&at, input.start.as_ref())
            .with_context(|| format!("cannot put back `{}` in the copy", input.path))?;
        if input.start.is_none() {
            added_inputs.push((at.clone(), now.clone()));
        }
        inputs_back.push(input.path.as_str());
        undo.push((at, now, link));
    }
    if !inputs_back.is_empty() {
        restored.push(inputs_said(&inputs_back));
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
            .chain(copy.redirect.env.iter().cloned())
            .map(|(k, v)| (k.to_string(), v)),
    );
    restored.extend(copy.redirect.said.iter().cloned());
    let mut run_env = control_env.clone();
    if let Some((start, now)) = &found.git {
        let (extra, said) = git::config::replay_env(root, start, now, &copy.scratch, config_count)?;
        run_env.extend(extra);
        restored.extend(said);
    }
    let (run_env, control_env) = (borrowed(&run_env), borrowed(&control_env));
    let mut run = verify::run_with(&copy.root, timeout, &run_env);
    // Files the session added in test folders are the old checks' new
    // cases or the inputs of tests it added (which stay): when the replay
    // without them fails and it added tests, it runs once more with them.
    let added_tests = found.files.iter().any(|f| {
        f.change.change == FileChange::Added
            && matches!(f.change.kind, CheckKind::Test | CheckKind::Inline)
    });
    if run.outcome != VerifyOutcome::Passed && added_tests && !added_inputs.is_empty() {
        for (at, now) in &added_inputs {
            checks::write_file(at, now.as_ref()).context("cannot put an input back in the copy")?;
        }
        let again = verify::run_with(&copy.root, timeout, &run_env);
        if again.outcome == VerifyOutcome::Passed {
            run = again;
            restored.push(
                "the files the session added in test folders kept: the tests it added read them"
                    .to_string(),
            );
        }
    }
    // Failing, the old checks prove a weakening only if the checks as they
    // are now pass in the same copy: a copy that lacks what the checks
    // need fails both.
    let undo_all = || -> Result<()> {
        for (at, now, link) in &undo {
            match link {
                Some(target) => {
                    std::fs::remove_file(at).and_then(|()| std::os::unix::fs::symlink(target, at))
                }
                None => checks::write_file(at, now.as_ref()),
            }
            .context("cannot undo the replay in the copy")?;
        }
        for (path, entry) in &indexed {
            index_restore(&copy.root, path, entry.as_deref())?;
        }
        Ok(())
    };
    // Passing, both sets of checks are asked about one failing test.
    let differential = match (&found.canary, run.outcome) {
        (Some(canary), VerifyOutcome::Passed) => differential::ask(
            &copy.root,
            canary,
            timeout,
            &run_env,
            &control_env,
            undo_all,
        )?,
        _ => None,
    };
    let control = if run.outcome == VerifyOutcome::Passed {
        None
    } else {
        undo_all()?;
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
    // Python's bytecode of the copy is of no use once it is gone.
    if let Some((_, prefix)) = env.iter().find(|(k, _)| *k == "PYTHONPYCACHEPREFIX") {
        loads::forget_python_cache(Path::new(prefix), &copy.root);
    }
    Ok(Replay {
        run,
        restored,
        control,
        start,
        start_problem,
        differential,
    })
}

/// `N files the checks read as at the start: ...`, naming the first few.
fn inputs_said(paths: &[&str]) -> String {
    const NAMED: usize = 5;
    let mut list: Vec<String> = paths.iter().take(NAMED).map(|p| format!("`{p}`")).collect();
    if paths.len() > NAMED {
        list.push(format!("and {} more", paths.len() - NAMED));
    }
    format!(
        "{} file{} the checks read (in test folders) as at the start, added ones left out: {}",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        list.join(", ")
    )
}

/// A `.gitattributes` file: git reads it from the index when the work tree
/// has none, so one left out of the copy's tree must leave its index too.
fn is_attributes(path: &str) -> bool {
    path.rsplit('/').next() == Some(".gitattributes")
}

/// The copy's index entry for `path` as `git update-index --cacheinfo`
/// takes it (`mode,object,path`), if it has one.
fn index_entry(copy: &Path, path: &str) -> Result<Option<String>> {
    let out = copy::git(copy, &["ls-files", "-s", "--", path])?;
    let line = String::from_utf8_lossy(&out);
    let Some((info, _)) = line.lines().next().and_then(|l| l.split_once('\t')) else {
        return Ok(None);
    };
    let mut words = info.split_whitespace();
    match (words.next(), words.next()) {
        (Some(mode), Some(object)) => Ok(Some(format!("{mode},{object},{path}"))),
        _ => Ok(None),
    }
}

/// Makes the copy's index hold `path` as its work tree does.
fn index_as_on_disk(copy: &Path, path: &str, present: bool) -> Result<()> {
    let args: &[&str] = match present {
        true => &["update-index", "--add", "--", path],
        false => &["update-index", "--force-remove", "--", path],
    };
    copy::git(copy, args)
        .map(drop)
        .with_context(|| format!("cannot put back `{path}` in the copy's index"))
}

/// Puts the copy's index entry for `path` back as [`index_entry`] read it.
fn index_restore(copy: &Path, path: &str, entry: Option<&str>) -> Result<()> {
    let done = match entry {
        Some(info) => copy::git(copy, &["update-index", "--add", "--cacheinfo", info]),
        None => copy::git(copy, &["update-index", "--force-remove", "--", path]),
    };
    done.map(drop)
        .with_context(|| format!("cannot undo the replay of `{path}` in the copy's index"))
}

/// `env` as [`verify::run_with`] takes it.
fn borrowed(env: &[(String, OsString)]) -> Vec<(&str, OsString)> {
    env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
}
