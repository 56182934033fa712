//! The record of each stop's verdict, for `prove-it status`: what the gate
//! concluded, when, for which session, about which tree. Host-owned (no
//! policy can write it) and bounded: one file per repository (the last
//! verdict there) and one per session in it, which goes when the session's
//! state is pruned (`capability::state`).

use crate::capability::state;
use crate::fs::{private_dir, write_atomic};
use anyhow::{Context, Result};
use prove_it_gate::abi::{Decision, Verdict};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Serialize, Deserialize)]
pub struct Record {
    /// `None`: the policy stated no verdict.
    pub verdict: Option<Verdict>,
    /// RFC 3339, UTC.
    pub time: String,
    pub session: String,
    pub repo: PathBuf,
    /// The tree fingerprint the verdict is about, when the policy said.
    pub tree: Option<String>,
    /// The first line the person was shown (or the agent told), if any.
    pub said: Option<String>,
}

/// Where the last verdict of a repository, or of one session in it, is kept.
fn files(state_dir: &Path, root: &Path, session_id: &str) -> (PathBuf, PathBuf) {
    let repo = state::repo_dir(state_dir, root);
    let session = state::session_file(state_dir, root, session_id, "verdict.json");
    (repo.join("last-verdict.json"), session)
}

/// Records the verdict of one repository's stop.
pub fn save(state_dir: &Path, root: &Path, session_id: &str, decision: &Decision) -> Result<()> {
    let said = decision
        .message
        .as_deref()
        .or(decision.reason.as_deref())
        .and_then(|text| text.lines().next())
        .map(str::to_string);
    let record = Record {
        verdict: decision.verdict,
        time: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        session: session_id.to_string(),
        repo: root.to_path_buf(),
        tree: decision.tree.clone(),
        said,
    };
    let bytes = serde_json::to_vec(&record).context("cannot encode the verdict")?;
    let (last, session) = files(state_dir, root, session_id);
    for file in [session, last] {
        if let Some(dir) = file.parent() {
            private_dir(dir)?;
        }
        write_atomic(&file, &bytes)
            .with_context(|| format!("cannot record the verdict in `{}`", file.display()))?;
    }
    Ok(())
}

/// The last verdict in the repository at `root`, or of `session` there.
/// `Ok(None)`: none was recorded.
pub fn load(state_dir: &Path, root: &Path, session: Option<&str>) -> Result<Option<Record>> {
    let file = match session {
        Some(id) => files(state_dir, root, id).1,
        None => files(state_dir, root, "").0,
    };
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .with_context(|| format!("`{}` is not a verdict record", file.display()))
}
