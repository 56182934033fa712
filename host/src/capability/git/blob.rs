//! Files as a commit holds them: what a session's start had at the paths
//! that did not differ from HEAD then (the checks a replay puts back).

use super::discover::open;
use anyhow::{Context, Result};
use std::path::Path;

/// One commit's tree, opened once for any number of lookups.
pub struct Commit {
    repo: gix::Repository,
    tree: gix::ObjectId,
}

impl Commit {
    /// The commit `id` of the repository at `root` (`None`: no commit, so
    /// every file is absent).
    pub fn open(root: &Path, id: Option<&str>) -> Result<Option<Commit>> {
        let Some(id) = id else {
            return Ok(None);
        };
        let repo = open(root)?;
        let id = gix::ObjectId::from_hex(id.as_bytes()).context("not a commit id")?;
        let tree = repo
            .find_commit(id)
            .context("cannot read the session's starting commit")?
            .tree_id()
            .context("cannot read the starting commit's tree")?
            .detach();
        Ok(Some(Commit { repo, tree }))
    }

    /// The content of `path` and whether it is executable; `None` when
    /// there is no file there.
    pub fn file(&self, path: &str) -> Result<Option<(Vec<u8>, bool)>> {
        let tree = self
            .repo
            .find_tree(self.tree)
            .context("cannot read the starting commit's tree")?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .with_context(|| format!("cannot look up `{path}` in the starting commit"))?
        else {
            return Ok(None);
        };
        if !entry.mode().is_blob() {
            return Ok(None);
        }
        let exec = entry.mode().is_executable();
        let object = entry
            .object()
            .with_context(|| format!("cannot read `{path}` from the starting commit"))?;
        Ok(Some((object.data.clone(), exec)))
    }
}

/// [`Commit::file`] of one commit, for a single lookup.
pub fn file_at(root: &Path, id: Option<&str>, path: &str) -> Result<Option<(Vec<u8>, bool)>> {
    match Commit::open(root, id)? {
        Some(commit) => commit.file(path),
        None => Ok(None),
    }
}
