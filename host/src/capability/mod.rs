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
        }
    }

    /// Keeps this session's starting point path by path, for
    /// `PROVE_IT_CHANGED_FILES`; once, at its first start.
    pub fn keep_base(&self) -> anyhow::Result<()> {
        use anyhow::Context;
        let file = self.state.base_file();
        if file.exists() {
            return Ok(());
        }
        let mut memo = git::Memo::load(&self.state.git_memo_file());
        let snapshot = git::changes::snapshot(&self.root, &mut memo)?;
        let bytes = serde_json::to_vec(&snapshot).context("cannot encode the snapshot")?;
        if let Some(dir) = file.parent() {
            crate::fs::private_dir(dir)?;
        }
        crate::fs::write_atomic(&file, &bytes)
    }

    /// `PROVE_IT_BASE` and `PROVE_IT_CHANGED_FILES` for `verify.sh`, when
    /// this session's starting point is known; none when it is not (or the
    /// list cannot be made), and `verify.sh` then checks everything.
    fn changed_env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let Ok(bytes) = std::fs::read(self.state.base_file()) else {
            return Vec::new();
        };
        let Ok(Some(base)) = serde_json::from_slice::<Option<git::changes::Snapshot>>(&bytes)
        else {
            return Vec::new();
        };
        let mut memo = git::Memo::load(&self.state.git_memo_file());
        let Ok(Some(paths)) = git::changes::changed_since(&self.root, &base, &mut memo) else {
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
        let file = self.state.git_memo_file();
        let mut memo = git::Memo::load(&file);
        let state = git::tree_state(&self.root, &mut memo);
        if state.is_ok() {
            // Only a speed-up: a memo that cannot be saved (say, before
            // the repo's state dir exists) is not an error.
            let _ = memo.save(&file);
        }
        reply(state)
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        reply(verify::verify_facts(&self.root))
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        Ok(verify::run_with(
            &self.root,
            Duration::from_secs(self.settings.timeout_secs),
            &self.changed_env(),
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
