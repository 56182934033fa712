//! The capabilities the host grants a policy: one file per room.
//!
//! [`Capabilities`] implements the ABI's [`Host`] trait for one session in one
//! work tree; the runtime links each trait method as an import. Errors become
//! `Err` replies with their whole context chain, so the policy can say what
//! failed on what.

pub mod checks;
pub mod content;
pub mod copy;
pub mod differential;
pub mod git;
pub mod ledger;
pub mod loads;
pub mod replay;
pub mod state;
pub mod verify;

use crate::settings::Dirs;
use prove_it_gate::abi::{
    CheckChanges, Fingerprint, Host, LedgerEntry, Replay, ReplayRequest, Reply, SessionRead,
    SessionWrite, Settings, TreeState, VerifyFacts, VerifyRun,
};
use state::StateStore;
use std::path::PathBuf;
use std::time::Duration;

pub struct Capabilities {
    root: PathBuf,
    state: StateStore,
    settings: Settings,
    ledger_dir: PathBuf,
    cache_dir: PathBuf,
    /// Git's default global excludes file (see [`Dirs::git_excludes`]).
    git_excludes: PathBuf,
    /// The person's `GIT_CONFIG_COUNT` (see [`Dirs::git_config_count`]).
    git_config_count: usize,
    /// A look at the tree made just before this instance, for its first
    /// `tree_state`.
    handoff: Option<git::Walk>,
    /// The last `tree_state`'s look at the tree, for the changed-files list
    /// of a `verify.sh` run right after it.
    last_walk: Option<git::Walk>,
    /// What that look had to do (for `PROVE_IT_TIMINGS`).
    tree_work: Option<git::Work>,
    /// What the last `verify.sh` run was given, for a replay to get the same.
    run_env: Vec<(&'static str, std::ffi::OsString)>,
    /// The paths the session changed, as that run was told.
    changed: Option<Vec<String>>,
    /// The checks `check_changes` found, for a replay right after it.
    found: Option<checks::Replayable>,
    /// The ignored files the last look at the tree found (see
    /// [`git::Walk::ignored`]).
    ignored: Option<Vec<String>>,
}

impl Capabilities {
    /// Capabilities for `session_id` in the work tree at `root`, for the
    /// policy whose state lives in `namespace` (`None`: the default's).
    pub fn new(
        root: PathBuf,
        session_id: &str,
        settings: Settings,
        dirs: &Dirs,
        namespace: Option<&str>,
    ) -> Self {
        let state = StateStore::new(&dirs.state, &root, session_id, namespace);
        Capabilities {
            root,
            state,
            settings,
            ledger_dir: dirs.ledger.clone(),
            cache_dir: dirs.cache.clone(),
            git_excludes: dirs.git_excludes.clone(),
            git_config_count: dirs.git_config_count,
            handoff: None,
            last_walk: None,
            tree_work: None,
            run_env: Vec::new(),
            changed: None,
            found: None,
            ignored: None,
        }
    }

    /// Hands this instance a [`git::Walk`] made a moment ago, for its first
    /// `tree_state` (SessionStart looks at the tree once, for both the
    /// starting point and the policy's baseline).
    pub fn with_walk(mut self, walk: Option<git::Walk>) -> Self {
        self.handoff = walk;
        self
    }

    /// Keeps this session's starting point path by path, for
    /// `PROVE_IT_CHANGED_FILES`, and pins its checks (what counts as one,
    /// and what each that differed from HEAD held), for `check_changes`;
    /// once, at its first start. Returns the look at the tree it made (none
    /// if the starting point was already kept).
    pub fn keep_base(&self) -> anyhow::Result<Option<git::Walk>> {
        use anyhow::Context;
        let file = self.state.base_file();
        if file.exists() {
            return Ok(None);
        }
        let memo_file = self.state.git_memo_file();
        let mut memo = git::Memo::load(&memo_file, &self.git_excludes);
        let walk = git::walk(&self.root, &mut memo)?;
        let _ = memo.save(&memo_file);
        let snapshot = git::changes::snapshot_of(walk.clone());
        if let Some(dir) = file.parent() {
            crate::fs::private_dir(dir)?;
        }
        // The checks first: a base without them would read as "none".
        if let Some(snapshot) = &snapshot {
            // Ignored checks are kept too: the runner loads them.
            let mut pinned = checks::pin(
                &self.root,
                snapshot.head.as_deref(),
                snapshot.paths.keys().chain(walk.ignored.iter()),
                self.git_excludes.parent(),
            )
            .context("cannot pin this session's checks")?;
            pinned.environments = Some(loads::environments(&self.root));
            pinned.ignored =
                (walk.ignored.len() <= loads::IGNORED_KEPT).then(|| walk.ignored.clone());
            self.state.write_own(&self.state.checks_file(), &pinned)?;
        }
        self.state.write_own(&file, &snapshot)?;
        Ok(Some(walk))
    }

    /// The session's starting point, when it is known path by path.
    /// `Err`: there is a file, and it cannot be used (why).
    fn base(&self) -> Result<Option<git::changes::Snapshot>, String> {
        Ok(self
            .state
            .read_own::<Option<git::changes::Snapshot>>(&self.state.base_file())?
            .flatten())
    }

    /// The paths the session changed: as the last `verify.sh` run was told,
    /// else from a new look at the tree (`None`: no list can be made).
    fn changed_paths(
        &mut self,
        base: &git::changes::Snapshot,
    ) -> anyhow::Result<Option<Vec<String>>> {
        if let Some(changed) = &self.changed {
            return Ok(Some(changed.clone()));
        }
        let now = match self.last_walk.take() {
            Some(walk) => walk,
            None => git::walk(
                &self.root,
                &mut git::Memo::load(&self.state.git_memo_file(), &self.git_excludes),
            )?,
        };
        git::changes::changed_since(&self.root, base, now)
    }

    /// [`Host::check_changes`], with what a replay needs.
    fn find_checks(&mut self) -> anyhow::Result<(checks::Replayable, CheckChanges)> {
        let unknown = |why: &str| {
            Ok((
                checks::Replayable::default(),
                CheckChanges {
                    problem: Some(why.to_string()),
                    ..CheckChanges::default()
                },
            ))
        };
        let base = match self.base() {
            Ok(Some(base)) => base,
            Ok(None) => {
                return unknown(
                    "this session's start is not known path by path, so its checks cannot be compared with it",
                );
            }
            Err(why) => {
                return unknown(&format!(
                    "this session's start cannot be used ({why}), so its checks cannot be compared with it"
                ));
            }
        };
        let pinned: checks::Pinned = match self.state.read_own(&self.state.checks_file()) {
            Ok(Some(pinned)) => pinned,
            Ok(None) => {
                return unknown(
                    "this session's checks were not pinned at its start (it began before this version of prove-it)",
                );
            }
            Err(why) => {
                return unknown(&format!(
                    "this session's pinned checks cannot be used ({why}), so they cannot be compared"
                ));
            }
        };
        let Some(changed) = self.changed_paths(&base)? else {
            return unknown(
                "more paths changed than a list is made for (SPEC.md, \"The changed files\"), so the checks were not compared",
            );
        };
        let ignored = match self.ignored.take() {
            Some(ignored) => ignored,
            None => loads::ignored_files(&self.root)?,
        };
        checks::changes(
            &self.root,
            &pinned,
            base.head.as_deref(),
            &base.paths,
            &changed,
            &ignored,
            self.git_excludes.parent(),
        )
    }

    /// `PROVE_IT_BASE` and `PROVE_IT_CHANGED_FILES` for `verify.sh`, when
    /// this session's starting point is known; none when it is not (or the
    /// list cannot be made), and `verify.sh` then checks everything. The
    /// list comes from the policy's last look at the tree, when it looked.
    fn changed_env(&mut self) -> Vec<(&'static str, std::ffi::OsString)> {
        let last = self.last_walk.take();
        let Ok(Some(base)) = self.base() else {
            return Vec::new();
        };
        let now = match last {
            Some(walk) => walk,
            None => {
                let mut memo = git::Memo::load(&self.state.git_memo_file(), &self.git_excludes);
                match git::walk(&self.root, &mut memo) {
                    Ok(walk) => walk,
                    Err(_) => return Vec::new(),
                }
            }
        };
        let Ok(Some(paths)) = git::changes::changed_since(&self.root, &base, now) else {
            return Vec::new();
        };
        self.changed = Some(paths.clone());
        let list = self.state.changed_file();
        let text: String = paths.iter().map(|p| format!("{p}\n")).collect();
        if crate::fs::write_atomic(&list, text.as_bytes()).is_err() {
            return Vec::new();
        }
        let mut env = vec![("PROVE_IT_CHANGED_FILES", list.into_os_string())];
        if let Some(head) = base.head {
            env.push(("PROVE_IT_BASE", head.into()));
        }
        env
    }
}

fn reply<T>(result: anyhow::Result<T>) -> Reply<T> {
    result.map_err(|e| format!("{e:#}"))
}

impl crate::runtime::Diagnose for Capabilities {
    /// The tree's last look: entries left to gix's status by the stat
    /// pass, files whose content was compared, racily clean entries the
    /// memo settled, staged changes from the memo, whether the work tree
    /// was walked for untracked files, and the time taken by the tracked
    /// files and by the untracked ones.
    fn diagnostics(&self) -> String {
        self.tree_work.map_or(String::new(), |w| {
            format!(
                r#""tree":{{"looked":{},"compared":{},"settled":{},"staged_from_memo":{},"walked":{},"tracked_us":{},"walk_us":{}}}"#,
                w.looked, w.compared, w.settled, w.staged_from_memo, w.walked, w.tracked_us, w.walk_us
            )
        })
    }
}

impl Host for Capabilities {
    fn tree_state(&mut self) -> Reply<TreeState> {
        let walk = match self.handoff.take() {
            Some(walk) => walk,
            None => {
                let file = self.state.git_memo_file();
                let mut memo = git::Memo::load(&file, &self.git_excludes);
                let walk = reply(git::walk(&self.root, &mut memo))?;
                // Only a speed-up: a memo that cannot be saved (say, before
                // the repo's state dir exists) is not an error.
                let _ = memo.save(&file);
                walk
            }
        };
        let mut walk = walk;
        let state = walk.state.clone();
        self.tree_work = Some(walk.work);
        self.ignored = Some(std::mem::take(&mut walk.ignored));
        self.last_walk = Some(walk);
        Ok(state)
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        reply(verify::verify_facts(&self.root))
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        let repo_dir = self.state.repo_dir();
        if content::opted_in(repo_dir)
            && let Some(walk) = &self.last_walk
        {
            // Not kept: the stop's record takes the tree as it is then.
            let _ = content::keep_before_run(
                &self.root,
                repo_dir,
                &self.state.content_file(),
                &walk.state.fingerprint,
            );
        }
        let mut env = self.changed_env();
        let since = std::fs::metadata(self.state.base_file())
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128);
        let changed = self.changed.clone().unwrap_or_default();
        let prepared = loads::prepare(&self.root, &changed, since, &self.cache_dir);
        env.extend(prepared.env);
        let mut run = verify::run_with(
            &self.root,
            Duration::from_secs(self.settings.timeout_secs),
            &env,
        );
        run.notes = prepared.notes;
        self.run_env = env;
        Ok(run)
    }
    fn session_read(&mut self) -> Reply<SessionRead> {
        reply(self.state.read_session())
    }
    fn session_write(&mut self, request: &SessionWrite) -> Reply<()> {
        reply(self.state.write_session(&request.value, &self.root))
    }
    fn passed_check(&mut self, request: &Fingerprint) -> Reply<bool> {
        reply(self.state.passed(&request.fingerprint))
    }
    fn passed_record(&mut self, request: &Fingerprint) -> Reply<()> {
        reply(self.state.record_passed(&request.fingerprint, &self.root))
    }
    fn ledger_append(&mut self, request: &LedgerEntry) -> Reply<bool> {
        // The person's setting, not the policy's wish, decides.
        if !self.settings.ledger {
            return Ok(false);
        }
        reply(ledger::append(&self.ledger_dir, &self.root, request).map(|()| true))
    }
    fn check_changes(&mut self) -> Reply<CheckChanges> {
        let (found, report) = reply(self.find_checks())?;
        self.found = Some(found);
        Ok(report)
    }
    fn replay_checks(&mut self, request: &ReplayRequest) -> Reply<Replay> {
        let found = match self.found.take() {
            Some(found) => found,
            None => reply(self.find_checks())?.0,
        };
        reply(replay::replay(
            &self.root,
            &found,
            request.start,
            Duration::from_secs(self.settings.timeout_secs),
            &self.run_env,
            &self.cache_dir,
            self.git_config_count,
        ))
    }
}
