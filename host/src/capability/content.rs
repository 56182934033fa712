//! The content tree: the id of the git tree of the work tree as it is
//! (tracked files as they are on disk, untracked files that are not
//! ignored), the tree `git add -A && git commit` would commit. A verdict
//! record keeps it when the commit trailer is set up (`prove-it setup
//! trailer`), so that a commit can name the verdict about exactly its tree.
//!
//! Through git itself, on a copy of the index: `git add -A` hashes the
//! files git's stat data shows changed and applies the repository's clean
//! filters, as the commit will; the person's index is not touched. It
//! writes the blobs and trees into the object store, as a commit would.

use super::copy::git;
use super::git::hidden_paths;
use crate::fs::{private_dir, write_atomic};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where a repository's opt-in is kept, in its state folder: a stop knows
/// with one stat whether to keep content trees.
pub fn marker(repo_dir: &Path) -> PathBuf {
    repo_dir.join("trailer")
}

/// Whether the trailer is set up for the repository whose state folder is
/// `repo_dir`.
pub fn opted_in(repo_dir: &Path) -> bool {
    marker(repo_dir).exists()
}

/// A content tree and the fingerprint of the tree it is of.
#[derive(Serialize, Deserialize)]
struct Kept {
    fingerprint: String,
    content_tree: String,
}

/// Keeps, in `file`, the content tree of the tree fingerprinted
/// `fingerprint`, just before `verify.sh` runs on it: a verdict is about
/// the tree as `verify.sh` found it, not with what its run left behind
/// (a build folder that is not ignored). `Err`: nothing is kept.
pub fn keep_before_run(root: &Path, repo_dir: &Path, file: &Path, fingerprint: &str) -> Result<()> {
    let _ = std::fs::remove_file(file);
    let content_tree = content_tree(root, repo_dir)?;
    let bytes = serde_json::to_vec(&Kept {
        fingerprint: fingerprint.to_string(),
        content_tree,
    })?;
    write_atomic(file, &bytes)
}

/// The content tree kept in `file`, if it is of the tree `fingerprint`.
pub fn kept(file: &Path, fingerprint: &str) -> Option<String> {
    let kept: Kept = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    (kept.fingerprint == fingerprint).then_some(kept.content_tree)
}

/// The content tree of the work tree at `root`, whose state folder is
/// `repo_dir` (the index copy goes in its sessions folder, whose pruning
/// removes a `.tmp` file a killed stop left).
pub fn content_tree(root: &Path, repo_dir: &Path) -> Result<String> {
    let index = git(
        root,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?;
    let index = String::from_utf8_lossy(&index).trim().to_string();
    let scratch = repo_dir.join("sessions");
    private_dir(&scratch)?;
    let copy = tempfile::Builder::new()
        .prefix(".tmp-content-index.")
        .tempfile_in(&scratch)
        .with_context(|| format!("cannot make a temp file in `{}`", scratch.display()))?
        .into_temp_path();
    match std::fs::copy(&index, &copy) {
        // The copy keeps the index's modification time: git takes an entry
        // whose file changed in the same second as the index was written
        // ("racily clean") for unchanged unless the index file is no
        // older than it, so a copy with a new time would hide a same-size
        // edit made in that second, and the tree would be the old one.
        Ok(_) => {
            let modified = std::fs::metadata(&index)
                .and_then(|m| m.modified())
                .with_context(|| format!("cannot read the index `{index}`"))?;
            std::fs::File::options()
                .write(true)
                .open(&copy)
                .and_then(|f| f.set_modified(modified))
                .with_context(|| format!("cannot keep the index's time on `{}`", copy.display()))?;
        }
        // No index yet: an empty one, which `git add` fills.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::remove_file(&copy)?,
        Err(e) => return Err(e).with_context(|| format!("cannot copy the index `{index}`")),
    }
    // A file flagged assume-unchanged (or skip-worktree outside a sparse
    // checkout) is one `git add -A` would not look at: the tree would hold
    // what the index says, not what verify.sh ran on.
    let hidden: Vec<String> = hidden_paths(root)?
        .into_keys()
        .filter(|path| root.join(path).symlink_metadata().is_ok())
        .collect();
    if !hidden.is_empty() {
        let mut input = Vec::new();
        for path in &hidden {
            input.extend_from_slice(path.as_bytes());
            input.push(0);
        }
        run(
            root,
            &copy,
            &[
                "update-index",
                "--no-assume-unchanged",
                "--no-skip-worktree",
                "-z",
                "--stdin",
            ],
            Some(&input),
        )?;
    }
    run(root, &copy, &["add", "--all", "--", "."], None)?;
    let tree = run(root, &copy, &["write-tree"], None)?;
    let tree = String::from_utf8_lossy(&tree).trim().to_string();
    if tree.is_empty() {
        bail!("`git write-tree` printed no tree");
    }
    Ok(tree)
}

/// Runs git on the index copy: no hooks (a `post-index-change` hook is the
/// person's, about their index), no file system monitor or untracked cache
/// (each is a memo that may be stale; the tree must be what is on disk).
fn run(root: &Path, index: &Path, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut child = Command::new("git")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
        ])
        .args(args)
        .current_dir(root)
        .env("GIT_INDEX_FILE", index)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run git")?;
    if let Some(input) = input
        && let Some(mut stdin) = child.stdin.take()
    {
        stdin
            .write_all(input)
            .context("cannot write to `git update-index`")?;
    }
    let out = child.wait_with_output().context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A same-size edit in the second the index was written, looked at in
    /// a later second: git's racy-clean rule reads it only while the index
    /// copy keeps the index's own time (the trailer's flaky `unverified`).
    #[test]
    fn a_same_size_edit_in_the_indexs_second_is_in_the_content_tree() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = &tmp.path().canonicalize().expect("canonical");
        let state = tempfile::tempdir().expect("state");
        let sh = |script: &str| {
            let ok = Command::new("sh")
                .args(["-c", script])
                .current_dir(root)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .expect("sh");
            assert!(ok.success(), "{script}");
        };
        sh("git init -q -b main");
        // All in one second: the file, the commit (the index written), the
        // edit; then the look, in the next second.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock");
        std::thread::sleep(std::time::Duration::from_nanos(
            1_000_000_000 - u64::from(now.subsec_nanos()) + 10_000_000,
        ));
        sh("echo v0 > lib.txt && git add lib.txt \
            && git -c user.name=a -c user.email=a@b commit -qm v0 && echo v1 > lib.txt");
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        let tree = content_tree(root, state.path()).expect("content tree");
        let want = {
            sh("git add lib.txt");
            String::from_utf8(git(root, &["write-tree"]).expect("write-tree"))
                .expect("utf-8")
                .trim()
                .to_string()
        };
        assert_eq!(
            tree, want,
            "the content tree holds lib.txt as it was committed"
        );
    }
}
