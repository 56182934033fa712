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
        Ok(verify::run(
            &self.root,
            Duration::from_secs(self.settings.timeout_secs),
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
