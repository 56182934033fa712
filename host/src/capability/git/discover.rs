//! Finding the repository around a directory, and opening it.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// Finds the work tree root around `cwd`: the nearest folder holding a
/// `.git` (a directory, or a file in linked worktrees and submodules), as git
/// does. `None`: not in a work tree, nothing to guard.
///
/// The root is returned resolved (no symlinks, macOS `/tmp` as
/// `/private/tmp`), and found from the resolved `cwd` as git finds it: one
/// repository reached by two spellings has one state, so a session started
/// through one and stopped through the other keeps its baseline.
///
/// This only looks; the repository is opened by [`super::tree_state`], so a stop in
/// a repository without `verify.sh` never pays for opening it, and a broken
/// repository is reported there rather than passing for "no repository".
/// `GIT_DIR` and `GIT_WORK_TREE` play no part: see [`open`].
pub fn discover(cwd: &Path) -> Option<PathBuf> {
    let cwd = std::fs::canonicalize(cwd)
        .or_else(|_| std::path::absolute(cwd))
        .ok()?;
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Opens the repository whose work tree is `root`. (The variables that
/// would point gix elsewhere are gone from the environment: see
/// [`crate::settings::scrub_repository_vars`].)
pub(super) fn open(root: &Path) -> Result<gix::Repository> {
    // Objects as stored, whatever `refs/replace/` says (see
    // `capability::loads`): the environment says so too, and a setting in
    // the repository's own configuration must not say otherwise.
    let options = gix::open::Options::default().config_overrides(["core.useReplaceRefs=false"]);
    let repo = gix::open_opts(root, options)
        .with_context(|| format!("cannot open the git repository at `{}`", root.display()))?;
    if repo.workdir().is_none() {
        bail!(
            "`{}` is a bare repository, with no work tree to verify",
            root.display()
        );
    }
    Ok(repo)
}
