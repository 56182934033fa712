//! What a session changed, path by path: the list `verify.sh` is given in
//! `PROVE_IT_CHANGED_FILES`, so that a slow check can run only on what the
//! session touched (SPEC.md, "The changed files").
//!
//! At session start the host keeps a [`Snapshot`]: HEAD's commit and every
//! path that differs from HEAD with what it holds. At a stop, a path is
//! changed when it differs between the two commits, or its record is not
//! the same as at the start. That is exact for every path the session
//! touched; a path changed at the start and committed during the session
//! is listed even if its content ended where it began.

use super::fingerprint::{Walk, committed_paths};
use anyhow::Result;
use gix::bstr::ByteSlice;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// More paths differing from HEAD than this (at the start or at a stop),
/// and no list is given: it would cost more than the checks it could save.
const MAX_PATHS: usize = 10_000;

#[derive(Debug, Serialize, Deserialize)]
pub struct Snapshot {
    /// HEAD's commit (`None`: no commit yet).
    pub head: Option<String>,
    /// Each path that differs from HEAD, with what it holds.
    pub paths: BTreeMap<String, String>,
}

/// The records by path, or `None` when they cannot make a list (SPEC.md
/// says when; `verify.sh` then checks everything).
fn usable(records: Vec<(gix::bstr::BString, String)>) -> Option<BTreeMap<String, String>> {
    if records.len() > MAX_PATHS {
        return None;
    }
    let mut paths = BTreeMap::new();
    for (path, what) in records {
        // A name that is not UTF-8, or holds a newline, cannot be one line
        // of the list.
        let path = path.to_str().ok().filter(|p| !p.contains('\n'))?;
        paths
            .entry(path.to_string())
            .and_modify(|w: &mut String| {
                w.push('\n');
                w.push_str(&what);
            })
            .or_insert(what);
    }
    Some(paths)
}

/// The snapshot a [`Walk`] of the tree gives.
pub fn snapshot_of(walk: Walk) -> Option<Snapshot> {
    let paths = usable(walk.records?)?;
    Some(Snapshot {
        head: walk.state.head,
        paths,
    })
}

/// The paths that differ from `base` in the tree as `now` saw it, sorted
/// (`None`: no list can be given).
pub fn changed_since(root: &Path, base: &Snapshot, now: Walk) -> Result<Option<Vec<String>>> {
    let Some(now) = snapshot_of(now) else {
        return Ok(None);
    };
    let mut changed = BTreeSet::new();
    match (&base.head, &now.head) {
        (Some(from), Some(to)) if from != to => {
            for path in committed_paths(root, from, to)? {
                let Some(path) = path.to_str().ok().filter(|p| !p.contains('\n')) else {
                    return Ok(None);
                };
                changed.insert(path.to_string());
            }
        }
        (None, Some(_)) => return Ok(None),
        _ => {}
    }
    let keys: BTreeSet<&String> = base.paths.keys().chain(now.paths.keys()).collect();
    for path in keys {
        if base.paths.get(path) != now.paths.get(path) {
            changed.insert(path.clone());
        }
    }
    Ok(Some(changed.into_iter().collect()))
}
