//! The record of each stop's verdict, for `prove-it status`: what the gate
//! concluded, when, for which session, about which tree. Host-owned (no
//! policy can write it) and bounded: one file per repository (the last
//! verdict there) and one per session in it, which goes when the session's
//! state is pruned (`capability::state`).

use crate::capability::state;
use crate::fs::{private_dir, write_atomic};
use anyhow::{Context, Result};
use prove_it_gate::abi::{Action, CheckChanges, Decision, Verdict};
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
    /// The checks the session changed, when the verdict is about them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<CheckChanges>,
    /// The git tree of the work tree the verdict is about
    /// (`capability::content`), kept only when the commit trailer is set
    /// up: what a commit's `Prove-It:` trailer is matched by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_tree: Option<String>,
    /// The agent host whose hook recorded it (its `--agent` name): what
    /// tells `prove-it doctor` that a host it finds wired has really run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// Where the last verdict of a repository is kept.
fn last_file(state_dir: &Path, root: &Path) -> PathBuf {
    state::repo_dir(state_dir, root).join("last-verdict.json")
}

/// Where the last verdict of one session in a repository is kept.
fn session_file(state_dir: &Path, root: &Path, session_id: &str) -> PathBuf {
    state::session_file(state_dir, root, session_id, "verdict.json")
}

/// Records the verdict of one repository's stop.
pub fn save(
    state_dir: &Path,
    root: &Path,
    session_id: &str,
    decision: &Decision,
    content_tree: Option<String>,
    agent: &str,
) -> Result<()> {
    // What the agent was told for a block; what the person saw otherwise.
    let shown = match decision.action {
        Action::Block => decision.reason.as_deref(),
        Action::Allow => decision.message.as_deref(),
    };
    let record = Record {
        verdict: decision.verdict,
        time: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        session: session_id.to_string(),
        repo: root.to_path_buf(),
        tree: decision.tree.clone(),
        said: shown
            .and_then(|text| text.lines().next())
            .map(str::to_string),
        checks: decision.checks.clone(),
        content_tree,
        agent: Some(agent.to_string()),
    };
    let bytes = serde_json::to_vec(&record).context("cannot encode the verdict")?;
    let session = session_file(state_dir, root, session_id);
    // A stop that concludes what a record already says (a read-only stop,
    // a tree verified earlier) leaves that record as it is: a read costs
    // less than a temp file renamed into place, at every turn end.
    let said_already = |file: &Path| {
        std::fs::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
            .is_some_and(|kept| kept.says_as(&record))
    };
    let mut made_dir = false;
    for file in [session, last_file(state_dir, root)] {
        if said_already(&file) {
            continue;
        }
        // The sessions folder is inside the repository's: one check makes both.
        if !made_dir && let Some(dir) = file.parent() {
            private_dir(dir)?;
            made_dir = true;
        }
        write_atomic(&file, &bytes)
            .with_context(|| format!("cannot record the verdict in `{}`", file.display()))?;
    }
    Ok(())
}

impl Record {
    /// Whether this record says what `other` says (its time aside). Every
    /// field is named, so a field added to `Record` must be added here.
    fn says_as(&self, other: &Record) -> bool {
        let Record {
            verdict,
            time: _,
            session,
            repo,
            tree,
            said,
            checks,
            content_tree,
            agent,
        } = self;
        *verdict == other.verdict
            && *session == other.session
            && *repo == other.repo
            && *tree == other.tree
            && *said == other.said
            && *checks == other.checks
            && *content_tree == other.content_tree
            && *agent == other.agent
    }
}

/// The last verdict in the repository at `root`, or of `session` there.
/// `Ok(None)`: none was recorded.
pub fn load(state_dir: &Path, root: &Path, session: Option<&str>) -> Result<Option<Record>> {
    let file = match session {
        Some(id) => session_file(state_dir, root, id),
        None => last_file(state_dir, root),
    };
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    };
    let record: Record = serde_json::from_slice(&bytes)
        .with_context(|| format!("`{}` is not a verdict record", file.display()))?;
    // A record copied from another repository or session is not this one's.
    let foreign_session = session.is_some_and(|id| record.session != id);
    if record.repo != root || foreign_session {
        anyhow::bail!(
            "`{}` holds the verdict of session `{}` in `{}`, not this one's: no verdict is recorded here",
            file.display(),
            record.session,
            record.repo.display()
        );
    }
    Ok(Some(record))
}

/// The records of the repository at `root`: its last verdict and each
/// session's. Records that cannot be read are left out.
fn all(state_dir: &Path, root: &Path) -> Vec<Record> {
    let repo_dir = state::repo_dir(state_dir, root);
    let mut files = vec![last_file(state_dir, root)];
    if let Ok(entries) = std::fs::read_dir(repo_dir.join("sessions")) {
        files.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".verdict.json")),
        );
    }
    files
        .iter()
        .filter_map(|file| std::fs::read(file).ok())
        .filter_map(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
        .filter(|r| r.repo == root)
        .collect()
}

/// The records of the repository at `root` whose content tree is `tree`.
pub fn about_content_tree(state_dir: &Path, root: &Path, tree: &str) -> Vec<Record> {
    all(state_dir, root)
        .into_iter()
        .filter(|r| r.content_tree.as_deref() == Some(tree))
        .collect()
}

/// Whether a verdict recorded by the agent host named `agent` is kept for
/// the repository at `root`.
pub fn recorded_by(state_dir: &Path, root: &Path, agent: &str) -> bool {
    all(state_dir, root)
        .iter()
        .any(|r| r.agent.as_deref() == Some(agent))
}

/// The content tree kept by this session's last record, if it is about
/// the tree fingerprinted `tree`: a stop on a tree judged before need not
/// hash it again.
pub fn kept_content_tree(
    state_dir: &Path,
    root: &Path,
    session_id: &str,
    tree: Option<&str>,
) -> Option<String> {
    let tree = tree?;
    let bytes = std::fs::read(session_file(state_dir, root, session_id)).ok()?;
    let kept: Record = serde_json::from_slice(&bytes).ok()?;
    (kept.repo == root && kept.tree.as_deref() == Some(tree))
        .then_some(kept.content_tree)
        .flatten()
}
