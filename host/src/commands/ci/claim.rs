//! The agent machine's claim: a `Prove-It:` trailer on the pull request's
//! tip, read and compared, never trusted. Anyone who can commit can write
//! one, so it changes no outcome; it only says whether the session's own
//! verdict agrees with CI's.

use super::revisions::Revisions;
use crate::capability::copy::git;
use serde::Serialize;
use std::path::Path;

/// The trailer's key.
pub const TRAILER: &str = "Prove-It";

/// What the tip's trailer says, and how it compares with CI's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    /// `absent`, `matched`, `contradicted`, `other_tree` (it is about
    /// another tree than the tip's), or `not_verified` (it says itself the
    /// session did not verify this tree).
    pub status: &'static str,
    /// The trailer's verdict word (`verified`, `unverified`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The tree it names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The whole trailer line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

/// The claim on the tip of `revs`, compared with CI's outcome (`passed`:
/// CI verified it).
pub fn read(root: &Path, revs: &Revisions, passed: bool) -> Claim {
    let message = git(root, &["log", "-1", "--format=%B", &revs.tip.commit])
        .map(|b| String::from_utf8_lossy(&b).to_string())
        .unwrap_or_default();
    let prefix = format!("{TRAILER}:");
    let Some(line) = message
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with(&prefix))
    else {
        return Claim {
            status: "absent",
            verdict: None,
            tree: None,
            line: None,
        };
    };
    let mut words = line[prefix.len()..].split_whitespace();
    let verdict = words.next().map(str::to_string);
    let tree = words
        .find_map(|w| w.strip_prefix("tree="))
        .map(str::to_string);
    let status = match (&tree, verdict.as_deref()) {
        (Some(tree), _) if *tree != revs.tip.tree => "other_tree",
        (None, _) => "other_tree",
        (Some(_), Some("verified")) if passed => "matched",
        (Some(_), Some("verified")) => "contradicted",
        (Some(_), _) => "not_verified",
    };
    Claim {
        status,
        verdict,
        tree,
        line: Some(line.to_string()),
    }
}

impl Claim {
    /// One line for the reviewer.
    pub fn said(&self) -> String {
        let verdict = self.verdict.as_deref().unwrap_or("?");
        match self.status {
            "absent" => format!("no `{TRAILER}:` trailer on the pull request's last commit"),
            "matched" => format!("{verdict}, this tree: matches CI's verdict"),
            "contradicted" => format!(
                "{verdict}, this tree: contradicted (CI did not verify it; a forged claim, or a machine that differs from CI's)"
            ),
            "not_verified" => {
                format!("{verdict}, this tree: the agent's machine did not verify it itself")
            }
            _ => format!(
                "{verdict}, for another tree than the pull request's (`{}`): says nothing of this one",
                self.tree.as_deref().unwrap_or("none named")
            ),
        }
    }
}
