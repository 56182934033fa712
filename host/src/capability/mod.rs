//! The capabilities the host grants a policy: one file per room.
//!
//! [`Capabilities`] implements the ABI's [`Host`] trait for one session in one
//! work tree; the runtime links each trait method as an import. Errors become
//! `Err` replies with their whole context chain, so the policy can say what
//! failed on what.

pub mod git;
pub mod ledger;
pub mod state;
pub mod verify;

use crate::settings::Dirs;
use prove_it_gate::abi::{
    Fingerprint, Host, LedgerEntry, Reply, SessionRead, SessionWrite, Settings, TreeState,
    VerifyFacts, VerifyRun,
};
use state::StateStore;
use std::path::PathBuf;
use std::time::Duration;

pub struct Capabilities {
    root: PathBuf,
    state: StateStore,
    settings: Settings,
    ledger_dir: PathBuf,
    /// A look at the tree made just before this instance, for its first
    /// `tree_state`.
    handoff: Option<git::Walk>,
    /// The last `tree_state`'s look at the tree, for the changed-files list
    /// of a `verify.sh` run right after it.
    last_walk: Option<git::Walk>,
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
            handoff: None,
            last_walk: None,
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
    /// `PROVE_IT_CHANGED_FILES`; once, at its first start. Returns the look
    /// at the tree it made (none if the starting point was already kept).
    pub fn keep_base(&self) -> anyhow::Result<Option<git::Walk>> {
        use anyhow::Context;
        let file = self.state.base_file();
        if file.exists() {
            return Ok(None);
        }
        let memo_file = self.state.git_memo_file();
        let mut memo = git::Memo::load(&memo_file);
        let walk = git::walk(&self.root, &mut memo)?;
        let _ = memo.save(&memo_file);
        let snapshot = git::changes::snapshot_of(walk.clone());
        let bytes = serde_json::to_vec(&snapshot).context("cannot encode the snapshot")?;
        if let Some(dir) = file.parent() {
            crate::fs::private_dir(dir)?;
        }
        crate::fs::write_atomic(&file, &bytes)?;
        Ok(Some(walk))
    }

    /// `PROVE_IT_BASE` and `PROVE_IT_CHANGED_FILES` for `verify.sh`, when
    /// this session's starting point is known; none when it is not (or the
    /// list cannot be made), and `verify.sh` then checks everything. The
    /// list comes from the policy's last look at the tree, when it looked.
    fn changed_env(&mut self) -> Vec<(&'static str, std::ffi::OsString)> {
        let last = self.last_walk.take();
        let Ok(bytes) = std::fs::read(self.state.base_file()) else {
            return Vec::new();
        };
        let Ok(Some(base)) = serde_json::from_slice::<Option<git::changes::Snapshot>>(&bytes)
        else {
            return Vec::new();
        };
        let now = match last {
            Some(walk) => walk,
            None => {
                let mut memo = git::Memo::load(&self.state.git_memo_file());
                match git::walk(&self.root, &mut memo) {
                    Ok(walk) => walk,
                    Err(_) => return Vec::new(),
                }
            }
        };
        let Ok(Some(paths)) = git::changes::changed_since(&self.root, &base, now) else {
            return Vec::new();
        };
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

impl Host for Capabilities {
    fn tree_state(&mut self) -> Reply<TreeState> {
        let walk = match self.handoff.take() {
            Some(walk) => walk,
            None => {
                let file = self.state.git_memo_file();
                let mut memo = git::Memo::load(&file);
                let walk = reply(git::walk(&self.root, &mut memo))?;
                // Only a speed-up: a memo that cannot be saved (say, before
                // the repo's state dir exists) is not an error.
                let _ = memo.save(&file);
                walk
            }
        };
        let state = walk.state.clone();
        self.last_walk = Some(walk);
        Ok(state)
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        reply(verify::verify_facts(&self.root))
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        let env = self.changed_env();
        Ok(verify::run_with(
            &self.root,
            Duration::from_secs(self.settings.timeout_secs),
            &env,
        ))
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
}
