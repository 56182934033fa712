//! The base's policy, run on a pull request as on one session: it starts
//! at the base commit and stops at the head. The host it talks to is made
//! of the hook's own capabilities (the checks list pinned from a commit,
//! the check changes and their evidence, the replay in a throwaway copy,
//! `verify.sh` run with its timeout); only the state is different: it
//! lives in memory and starts empty, so nothing the agent's machine kept
//! plays any part.

use super::revisions::{self, Revisions};
use crate::capability::checks::{self, Pinned, Replayable};
use crate::capability::git::{self, changes::Snapshot};
use crate::capability::{replay, verify};
use crate::selection::{self, Policy};
use crate::settings::Loaded;
use anyhow::{Context, Result};
use prove_it_gate::abi::{
    CheckChanges, Decision, Event, EventKind, Fingerprint, Host, LedgerEntry, Replay,
    ReplayRequest, Reply, SessionRead, SessionWrite, Settings, TreeState, VerifyFacts, VerifyRun,
};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the run of the base's policy found, for the report.
#[derive(Debug, Default)]
pub struct Judged {
    /// The policy's decision at the head (`None`: it failed, `problem` says why).
    pub decision: Option<Decision>,
    /// What the policy said when the pull request's session started.
    pub start_message: Option<String>,
    /// Which policy decided, for people.
    pub policy: String,
    /// An executable `verify.sh` at the base.
    pub base_armed: bool,
    /// `verify.sh` at the head.
    pub head_facts: Option<VerifyFacts>,
    /// `verify.sh`'s run on the head.
    pub head_run: Option<VerifyRun>,
    /// The checks the pull request changed, with their evidence.
    pub checks: Option<CheckChanges>,
    /// The base's checks against the head's code.
    pub replay: Option<Replay>,
    /// Where the list of checks came from (the base's).
    pub origin: String,
    /// Every path the pull request changed (`None`: too many to list).
    pub changed: Option<Vec<String>>,
    /// What went wrong on the way, for the person (never a silent pass).
    pub problems: Vec<String>,
    /// The tracked paths `verify.sh` changed while it ran on the head (or
    /// a line saying git could not tell): what CI judges after it is no
    /// longer the pull request's files.
    pub rewritten: Option<Vec<String>>,
}

/// What the policy's host shares with the command across its two events.
#[derive(Default)]
struct Shared {
    session: Option<serde_json::Value>,
    judged: Judged,
    /// The files git does not track that `verify.sh` wrote on the head
    /// (ignored or not): compared as checks the pull request added, since
    /// the replay's copy holds them.
    written: Vec<String>,
}

/// Judges the pull request `revs` in the work tree at `root` with the
/// policy the base commit chooses.
pub fn judge(root: &Path, revs: &Revisions, loaded: &Loaded) -> Result<Judged> {
    let base = revs.base.commit.as_str();
    let git_user = loaded.dirs.git_excludes.parent().map(Path::to_path_buf);
    let pinned = checks::pin(root, Some(base), std::iter::empty(), git_user.as_deref())
        .context("cannot read the base's checks")?;
    let changed = changed_paths(root, base, &loaded.dirs.git_excludes)?;
    let scratch = tempfile::Builder::new()
        .prefix("prove-it-ci-")
        .tempdir()
        .context("cannot make a temp dir for the changed-files list")?;
    let mut env: Vec<(&'static str, OsString)> = vec![("PROVE_IT_BASE", base.into())];
    if let Some(paths) = &changed {
        let list = scratch.path().join("changed-files");
        let text: String = paths.iter().map(|p| format!("{p}\n")).collect();
        std::fs::write(&list, text).context("cannot write the changed-files list")?;
        env.push(("PROVE_IT_CHANGED_FILES", list.into_os_string()));
    }
    let base_verify = git::file_at(root, Some(base), verify::VERIFY_SH)?;
    let base_facts = VerifyFacts {
        exists: base_verify.is_some(),
        executable: base_verify.as_ref().is_some_and(|(_, x)| *x),
        hash: base_verify
            .as_ref()
            .map(|(bytes, _)| blake3::hash(bytes).to_hex().to_string()),
    };
    let (policy, mut notes) = policy_at_base(root, base, loaded.policy.as_deref());
    let context = PullRequest {
        root: root.to_path_buf(),
        base: base.to_string(),
        base_tree: revs.base.tree.clone(),
        base_facts,
        pinned: Arc::new(pinned),
        changed: changed.clone(),
        git_user,
        excludes: loaded.dirs.git_excludes.clone(),
        env,
        timeout: Duration::from_secs(loaded.settings.timeout_secs),
        cache: loaded.dirs.cache.clone(),
        config_count: loaded.dirs.git_config_count,
    };
    let options = crate::runtime::RunOptions {
        cache_dir: &loaded.dirs.cache,
        timings: false,
    };
    let settings = Settings {
        skip: false,
        max_blocks: Settings::default().max_blocks,
        ledger: false,
        timeout_secs: loaded.settings.timeout_secs,
    };
    let mut judged = match session(&policy, &context, &settings, &options) {
        Ok(judged) => judged,
        Err(e) if !policy.is_default() => {
            notes.push(format!(
                "the base's policy {} failed ({e:#}); the default policy decided instead",
                policy.label
            ));
            session(&Policy::default_policy(), &context, &settings, &options)?
        }
        Err(e) => return Err(e),
    };
    drop(scratch);
    judged.problems.splice(0..0, notes);
    judged.base_armed = context.base_facts.armed();
    judged.changed = changed;
    judged.origin = context.pinned.origin.clone();
    Ok(judged)
}

/// One session of `policy`: a start at the base, a stop at the head.
fn session(
    policy: &Policy,
    context: &PullRequest,
    settings: &Settings,
    options: &crate::runtime::RunOptions,
) -> Result<Judged> {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let event = |kind| Event {
        kind,
        source: Some("startup".to_string()),
        turn: Some("pull-request".to_string()),
        may_be_retry: false,
        claim: None,
        repo: context.root.display().to_string(),
        settings: settings.clone(),
        notes: Vec::new(),
    };
    let host = |at_start| CiHost {
        context: context.clone(),
        at_start,
        shared: shared.clone(),
        found: None,
    };
    let start = policy.run(&event(EventKind::SessionStart), host(true), options)?;
    let stop = policy.run(&event(EventKind::Stop), host(false), options)?;
    let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
    let mut judged = std::mem::take(&mut shared.judged);
    judged.start_message = start.message;
    judged.decision = Some(stop);
    judged.policy = policy.label.clone();
    Ok(judged)
}

/// The policy the base chooses: `PROVE_IT_POLICY` (a built-in name, or a
/// module path read from the base commit), else the base's
/// `.prove-it/policy.wasm`, else the default. Never a file of the head's.
fn policy_at_base(root: &Path, base: &str, named: Option<&str>) -> (Policy, Vec<String>) {
    let mut notes = Vec::new();
    let (path, origin) = match named {
        Some(name) => match selection::builtin(name) {
            Some(policy) => return (policy, notes),
            None => (name.trim_start_matches("./").to_string(), "PROVE_IT_POLICY"),
        },
        None => (selection::REPO_POLICY.to_string(), "the base"),
    };
    match git::file_at(root, Some(base), &path) {
        Ok(Some((bytes, _))) => (
            Policy::from_file(format!("`{path}` at the base (from {origin})"), bytes),
            notes,
        ),
        Ok(None) if named.is_none() => (Policy::default_policy(), notes),
        Ok(None) => {
            notes.push(format!(
                "the policy `{path}` (from PROVE_IT_POLICY) is not in the base commit; the default policy decided"
            ));
            (Policy::default_policy(), notes)
        }
        Err(e) => {
            notes.push(format!(
                "the policy `{path}` cannot be read from the base ({e:#}); the default policy decided"
            ));
            (Policy::default_policy(), notes)
        }
    }
}

/// The paths that differ between the base commit and the work tree (the
/// head, and whatever the CI job changed in it), sorted; `None`: more
/// than a list is made for.
fn changed_paths(root: &Path, base: &str, excludes: &Path) -> Result<Option<Vec<String>>> {
    let walk = git::walk(root, &mut git::Memo::fresh(excludes))?;
    let start = Snapshot {
        head: Some(base.to_string()),
        paths: BTreeMap::new(),
    };
    git::changes::changed_since(root, &start, walk)
}

/// What every event of the session shares.
#[derive(Clone)]
struct PullRequest {
    root: PathBuf,
    base: String,
    base_tree: String,
    base_facts: VerifyFacts,
    pinned: Arc<Pinned>,
    changed: Option<Vec<String>>,
    git_user: Option<PathBuf>,
    excludes: PathBuf,
    env: Vec<(&'static str, OsString)>,
    timeout: Duration,
    cache: PathBuf,
    config_count: usize,
}

/// The policy's host for one event.
struct CiHost {
    context: PullRequest,
    /// The session-start event: the tree and `verify.sh` are the base's.
    at_start: bool,
    shared: Arc<Mutex<Shared>>,
    found: Option<Replayable>,
}

impl CiHost {
    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn find_checks(&mut self) -> Result<(Replayable, CheckChanges)> {
        let c = &self.context;
        let Some(changed) = &c.changed else {
            return Ok((
                Replayable::default(),
                CheckChanges {
                    origin: c.pinned.origin.clone(),
                    base: Some(c.base.clone()),
                    problem: Some(
                        "the pull request changed more paths than a list is made for (SPEC.md, \"The changed files\"), so its checks were not compared"
                            .to_string(),
                    ),
                    ..CheckChanges::default()
                },
            ));
        };
        let written = self.shared().written.clone();
        checks::changes(
            &c.root,
            &c.pinned,
            Some(&c.base),
            &BTreeMap::new(),
            changed,
            &written,
            c.git_user.as_deref(),
        )
    }
}

fn reply<T>(result: Result<T>) -> Reply<T> {
    result.map_err(|e| format!("{e:#}"))
}

impl crate::runtime::Diagnose for CiHost {}

impl Host for CiHost {
    fn tree_state(&mut self) -> Reply<TreeState> {
        if self.at_start {
            // Not a work tree's fingerprint: it only has to differ from
            // the head's, so that the stop always runs `verify.sh`.
            return Ok(TreeState {
                head: Some(self.context.base.clone()),
                fingerprint: format!("base-tree-{}", self.context.base_tree),
            });
        }
        let memo = &mut git::Memo::fresh(&self.context.excludes);
        reply(git::tree_state(&self.context.root, memo))
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        if self.at_start {
            return Ok(self.context.base_facts.clone());
        }
        let facts = reply(verify::verify_facts(&self.context.root))?;
        self.shared().judged.head_facts = Some(facts.clone());
        Ok(facts)
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        let c = &self.context;
        errln!("prove-it ci: running ./verify.sh on the pull request's code ...");
        let before = revisions::tracked_state(&c.root);
        let outside_before = revisions::untracked(&c.root);
        let run = verify::run_with(&c.root, c.timeout, &c.env);
        let written: Vec<String> = revisions::untracked(&c.root)
            .into_iter()
            .filter(|p| !outside_before.contains(p))
            .collect();
        errln!("prove-it ci: {}", super::said::run_said(&run));
        // The check changes and the replay read the work tree after this
        // run: a `verify.sh` that put the base's checks back once it had
        // passed would hide what the pull request changed.
        let after = revisions::tracked_state(&c.root);
        let rewritten = match (before, after) {
            (Some(before), Some(after)) if before == after => None,
            (Some(_), Some(_)) => Some(revisions::dirty(&c.root)),
            _ => Some(vec![
                "(git could not say what the tracked files hold)".to_string(),
            ]),
        };
        let mut shared = self.shared();
        shared.judged.head_run = Some(run.clone());
        shared.judged.rewritten = rewritten;
        shared.written = written;
        Ok(run)
    }
    fn session_read(&mut self) -> Reply<SessionRead> {
        Ok(SessionRead {
            value: self.shared().session.clone(),
            problem: None,
        })
    }
    fn session_write(&mut self, request: &SessionWrite) -> Reply<()> {
        self.shared().session = Some(request.value.clone());
        Ok(())
    }
    /// Nothing passed before: CI judges from nothing it did not see.
    fn passed_check(&mut self, _: &Fingerprint) -> Reply<bool> {
        Ok(false)
    }
    fn passed_record(&mut self, _: &Fingerprint) -> Reply<()> {
        Ok(())
    }
    fn ledger_append(&mut self, _: &LedgerEntry) -> Reply<bool> {
        Ok(false)
    }
    fn check_changes(&mut self) -> Reply<CheckChanges> {
        let (found, report) = reply(self.find_checks())?;
        self.found = Some(found);
        self.shared().judged.checks = Some(report.clone());
        Ok(report)
    }
    fn replay_checks(&mut self, request: &ReplayRequest) -> Reply<Replay> {
        let found = match self.found.take() {
            Some(found) => found,
            None => reply(self.find_checks())?.0,
        };
        let c = &self.context;
        errln!(
            "prove-it ci: the pull request changed checks: running the base's checks against its code, in a throwaway copy ..."
        );
        let replay = reply(replay::replay(
            &c.root,
            &found,
            request.start,
            c.timeout,
            &c.env,
            &c.cache,
            c.config_count,
        ))?;
        errln!(
            "prove-it ci: the base's checks: {}",
            super::said::run_said(&replay.run)
        );
        self.shared().judged.replay = Some(replay.clone());
        Ok(replay)
    }
}
