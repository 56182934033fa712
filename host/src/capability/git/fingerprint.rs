//! The tree fingerprint: a hash of HEAD, the index against HEAD, and every
//! work-tree path that differs from the index (content, mode, symlink
//! target) or is untracked and not ignored.
//!
//! It is exact. Paths equal to HEAD are covered by HEAD's id, so only
//! changed paths are hashed, and a tree that returns to an earlier state
//! gives the earlier fingerprint.

use super::discover::open;
use super::memo::{Memo, Staged, StagedKey};
use anyhow::{Context, Result, bail};
use gix::bstr::{BStr, BString, ByteSlice};
use gix::status::plumbing::index_as_worktree::traits::{FastEq, SubmoduleStatus};
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
use gix::status::plumbing::index_as_worktree_with_renames::Entry as WorktreeEntry;
use prove_it_gate::abi::TreeState;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Index entries from which the directory walk runs in a second thread,
/// beside the check of tracked files, as `git status` does. A thread costs
/// about 0.2 ms to start here, and the second one saves about 25 ms on
/// 30,000 files (1.25 instead of 1.6 times `git status`, BENCHMARKS.md);
/// the crossover was not measured, 4,000 is a round figure between.
const WALK_THREAD_FROM_ENTRIES: usize = 4_000;

/// One look at the tree: its state, and the path-by-path records its
/// fingerprint is made of. A stop that runs `verify.sh` lists the changed
/// files from the same look that fingerprinted the tree.
#[derive(Clone)]
pub struct Walk {
    pub state: TreeState,
    /// Every path that differs from HEAD with what it holds (its staged and
    /// its work-tree records, in that order). `None` when the staged
    /// records were more than [`MEMO_RECORDS_MAX`] and taken from the memo,
    /// which keeps only their digest then.
    pub records: Option<Vec<Record>>,
}

/// Staged records kept in the memo beside their digest, at most; a list of
/// changed files is not given for more (SPEC.md, "The changed files").
const MEMO_RECORDS_MAX: usize = 10_000;

/// HEAD and the fingerprint of the whole tree state. `memo` remembers what
/// need not be recomputed at every stop: big files' content hashes, and the
/// staged changes for a HEAD and an index that have not moved.
pub fn tree_state(root: &Path, memo: &mut Memo) -> Result<TreeState> {
    walk(root, memo).map(|w| w.state)
}

/// [`tree_state`], with the records it hashed.
pub fn walk(root: &Path, memo: &mut Memo) -> Result<Walk> {
    let repo = open(root)?;
    let head = repo.head().context("cannot read HEAD")?;
    // Both the commit and the branch name: switching branches is a change.
    let head_id = head.id().map(|id| id.detach());
    let head_name = head.referent_name().map(|n| n.as_bstr().to_string());
    let index = read_index(&repo)?;

    let (staged, staged_records) = staged_digest(&repo, head_id, &index, memo)?;
    let mut unstaged = unstaged_records(&repo, root, &index, memo)?;
    unstaged.sort();

    let mut hasher = blake3::Hasher::new();
    hasher.update(b"prove-it tree state v2\n");
    hasher.update(
        format!(
            "head {} {}\nstaged {staged}\n",
            head_name.as_deref().unwrap_or("-"),
            head_id.map_or("unborn".into(), |id| id.to_string())
        )
        .as_bytes(),
    );
    for (path, what) in &unstaged {
        hasher.update(path);
        hasher.update(b"\0");
        hasher.update(what.as_bytes());
        hasher.update(b"\n");
    }
    let records = staged_records.map(|mut records| {
        records.extend(unstaged);
        records
    });
    Ok(Walk {
        state: TreeState {
            head: head_id.map(|id| id.to_string()),
            fingerprint: hasher.finalize().to_hex().to_string(),
        },
        records,
    })
}

/// A path and what it holds there.
pub(super) type Record = (BString, String);

/// The paths whose content differs between the trees of commits `from`
/// and `to` (added, modified, deleted; a rename is both of its paths).
pub(super) fn committed_paths(root: &Path, from: &str, to: &str) -> Result<Vec<BString>> {
    let repo = open(root)?;
    let id = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).context("not a commit id");
    let old = tree_of(&repo, Some(id(from)?))?;
    let new = tree_of(&repo, Some(id(to)?))?;
    let index = repo
        .index_from_tree(&new)
        .context("cannot read the current commit's tree")?;
    let records = tree_index_records(&repo, &old, &index)?;
    Ok(records.into_iter().map(|(path, _)| path).collect())
}

/// The paths the index tracks (`git ls-files`), for `prove-it doctor`.
pub fn tracked_paths(root: &Path) -> Result<Vec<String>> {
    let repo = open(root)?;
    let index = read_index(&repo)?;
    Ok(index
        .entries()
        .iter()
        .map(|e| e.path(&index).to_str_lossy().into_owned())
        .collect())
}

/// The index as `git status` reads it. Its trailing checksum is read, not
/// verified: verifying is a SHA-1 over the whole file at every stop, and
/// the checksum serves only as the index's identity for [`staged_digest`].
fn read_index(repo: &gix::Repository) -> Result<gix::index::File> {
    gix::index::File::at_or_default(
        repo.index_path(),
        repo.object_hash(),
        true,
        Default::default(),
    )
    .context("cannot read the index")
}

/// The tree of `commit`, or the empty tree when there is no commit yet.
fn tree_of(repo: &gix::Repository, commit: Option<gix::ObjectId>) -> Result<gix::ObjectId> {
    match commit {
        Some(commit) => Ok(repo
            .find_commit(commit)
            .context("cannot read a commit")?
            .tree_id()
            .context("cannot read a commit's tree")?
            .detach()),
        None => Ok(repo.empty_tree().id),
    }
}

/// Every difference between `tree` and `index`, as staged records. No
/// rename tracking: a rename must differ from a copy.
fn tree_index_records(
    repo: &gix::Repository,
    tree: &gix::oid,
    index: &gix::index::File,
) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    repo.tree_index_status(
        tree,
        index,
        None,
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            records.push(staged(&change));
            Ok(std::ops::ControlFlow::Continue(()))
        },
    )
    .context("cannot compare a tree with the index")?;
    Ok(records)
}

/// The digest of every difference between HEAD's tree and the index.
///
/// Remembered by HEAD's commit and the index file's own checksum, which
/// changes with any change to the index: diffing HEAD's tree means reading
/// every tree object, the largest part of a stop on a small repository.
fn staged_digest(
    repo: &gix::Repository,
    head: Option<gix::ObjectId>,
    index: &gix::index::File,
    memo: &mut Memo,
) -> Result<(String, Option<Vec<Record>>)> {
    let key = head.zip(index.checksum()).map(|(commit, index)| StagedKey {
        commit: commit.to_string(),
        index: index.to_string(),
    });
    if let Some(known) = memo
        .staged
        .as_ref()
        .filter(|m| Some(&m.key) == key.as_ref())
    {
        let records = known.records.as_ref().map(|records| {
            records
                .iter()
                .map(|(path, what)| (BString::from(path.as_slice()), what.clone()))
                .collect()
        });
        return Ok((known.digest.clone(), records));
    }
    let mut records = tree_index_records(repo, &tree_of(repo, head)?, index)?;
    records.sort();
    let mut hasher = blake3::Hasher::new();
    for (path, what) in &records {
        hasher.update(path);
        hasher.update(b"\0");
        hasher.update(what.as_bytes());
        hasher.update(b"\n");
    }
    let digest = hasher.finalize().to_hex().to_string();
    if let Some(key) = key {
        let kept = (records.len() <= MEMO_RECORDS_MAX).then(|| {
            records
                .iter()
                .map(|(path, what)| (path.to_vec(), what.clone()))
                .collect()
        });
        memo.staged = Some(Staged {
            key,
            digest: digest.clone(),
            records: kept,
        });
        memo.changed = true;
    }
    Ok((digest, Some(records)))
}

/// Every path where the work tree differs from the index, and every
/// untracked, not ignored path, each with what is on disk there.
fn unstaged_records(
    repo: &gix::Repository,
    root: &Path,
    index: &gix::index::File,
    memo: &mut Memo,
) -> Result<Vec<(BString, String)>> {
    let two_threads = index.entries().len() >= WALK_THREAD_FROM_ENTRIES;
    unstaged_records_with(repo, root, index, memo, two_threads)
}

fn unstaged_records_with(
    repo: &gix::Repository,
    root: &Path,
    index: &gix::index::File,
    memo: &mut Memo,
    two_threads: bool,
) -> Result<Vec<(BString, String)>> {
    let dirwalk = repo
        .dirwalk_options()
        .context("cannot read the configuration")?
        .emit_untracked(gix::dir::walk::EmissionMode::Matching);
    let submodules = Submodules::new(repo, index)?;
    let mut collect = Collect {
        root,
        memo,
        records: Vec::new(),
        error: None,
    };
    let options = gix::status::index_worktree::Options {
        // With a second thread, the directory walk runs there instead.
        dirwalk_options: (!two_threads).then_some(dirwalk),
        ..Default::default()
    };
    let untracked = std::thread::scope(|scope| -> Result<Vec<BString>> {
        let walk = two_threads.then(|| scope.spawn(|| untracked_paths(root, index, dirwalk)));
        repo.index_worktree_status(
            index,
            None::<&str>,
            &mut collect,
            FastEq,
            submodules,
            &mut gix::progress::Discard,
            &AtomicBool::new(false),
            options,
        )
        .context("cannot compare the index with the work tree")?;
        match walk {
            Some(walk) => walk
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => Ok(Vec::new()),
        }
    })?;
    for path in &untracked {
        collect.untracked(path.as_ref());
    }
    match collect.error {
        Some(error) => Err(error),
        None => Ok(collect.records),
    }
}

/// Every untracked, not ignored path: the directory walk alone, on a
/// repository handle of its own (gix handles stay in their thread).
fn untracked_paths(
    root: &Path,
    index: &gix::index::File,
    options: gix::dirwalk::Options,
) -> Result<Vec<BString>> {
    let repo = open(root)?;
    let mut found = Untracked(Vec::new());
    repo.dirwalk(
        index,
        None::<&str>,
        &AtomicBool::new(false),
        options,
        &mut found,
    )
    .context("cannot walk the work tree")?;
    Ok(found.0)
}

struct Untracked(Vec<BString>);

impl gix::dir::walk::Delegate for Untracked {
    fn emit(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        _collapsed_directory_status: Option<gix::dir::entry::Status>,
    ) -> gix::dir::walk::Action {
        // As `git status` (and gix's own status): sockets, FIFOs and the
        // like are never shown as untracked.
        if entry.disk_kind != Some(gix::dir::entry::Kind::Untrackable) {
            self.0.push(entry.rela_path.into_owned());
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// Gathers [`modified`] and [`untracked`] records as the status finds them.
struct Collect<'a> {
    root: &'a Path,
    memo: &'a mut Memo,
    records: Vec<(BString, String)>,
    error: Option<anyhow::Error>,
}

impl Collect<'_> {
    fn modified(&mut self, rela_path: &BStr, status: EntryStatus<(), gix::submodule::Status>) {
        if self.error.is_none() {
            match modified(self.root, rela_path, status, self.memo) {
                Ok(Some(record)) => self.records.push(record),
                Ok(None) => {}
                Err(error) => self.error = Some(error),
            }
        }
    }

    fn untracked(&mut self, rela_path: &BStr) {
        if self.error.is_none() {
            match on_disk(self.root, rela_path, self.memo) {
                Ok(what) => self
                    .records
                    .push((rela_path.to_owned(), format!("untracked {what}"))),
                Err(error) => self.error = Some(error),
            }
        }
    }
}

impl<'index> gix::status::plumbing::index_as_worktree_with_renames::VisitEntry<'index>
    for Collect<'_>
{
    type ContentChange = ();
    type SubmoduleStatus = gix::submodule::Status;

    fn visit_entry(&mut self, entry: WorktreeEntry<'index, (), gix::submodule::Status>) {
        match entry {
            WorktreeEntry::Modification {
                rela_path, status, ..
            } => self.modified(rela_path, status),
            WorktreeEntry::DirectoryContents { entry, .. } => {
                self.untracked(entry.rela_path.as_ref())
            }
            // Rename tracking is off, so this does not happen; stay exact anyway.
            WorktreeEntry::Rewrite { dirwalk_entry, .. } => {
                self.untracked(dirwalk_entry.rela_path.as_ref())
            }
        }
    }
}

/// Submodule status, computed only when the index has a submodule: setting
/// it up costs more than the rest of a small repository's status.
#[derive(Clone)]
enum Submodules {
    None,
    Some(Box<gix::status::index_worktree::BuiltinSubmoduleStatus>),
}

impl Submodules {
    fn new(repo: &gix::Repository, index: &gix::index::File) -> Result<Self> {
        let gitlink = gix::index::entry::Mode::COMMIT;
        if !index.entries().iter().any(|e| e.mode == gitlink) {
            return Ok(Submodules::None);
        }
        let status = gix::status::index_worktree::BuiltinSubmoduleStatus::new(
            repo.clone().into_sync(),
            gix::status::Submodule::AsConfigured { check_dirty: false },
        )
        .context("cannot read the submodule configuration")?;
        Ok(Submodules::Some(Box::new(status)))
    }
}

impl SubmoduleStatus for Submodules {
    type Output = gix::submodule::Status;

    fn status(
        &mut self,
        entry: &gix::index::Entry,
        rela_path: &gix::bstr::BStr,
    ) -> gix::error::Result<Option<Self::Output>> {
        match self {
            Submodules::None => Ok(None),
            Submodules::Some(status) => status.status(entry, rela_path),
        }
    }
}

/// A difference between HEAD's tree and the index (a staged change).
fn staged(change: &gix::diff::index::ChangeRef<'_, '_>) -> (BString, String) {
    use gix::diff::index::ChangeRef;
    match change {
        ChangeRef::Addition {
            location,
            entry_mode,
            id,
            ..
        }
        | ChangeRef::Modification {
            location,
            entry_mode,
            id,
            ..
        }
        | ChangeRef::Rewrite {
            location,
            entry_mode,
            id,
            ..
        } => (
            location.as_ref().to_owned(),
            format!("staged {entry_mode:?} {}", id.to_hex()),
        ),
        ChangeRef::Deletion { location, .. } => {
            (location.as_ref().to_owned(), "staged-deleted".into())
        }
    }
}

/// A tracked path whose work-tree state differs from the index.
fn modified(
    root: &Path,
    rela_path: &BStr,
    status: EntryStatus<(), gix::submodule::Status>,
    memo: &mut Memo,
) -> Result<Option<(BString, String)>> {
    let what = match status {
        // Only the stat data is stale; the content is the index's.
        EntryStatus::NeedsUpdate(_) => return Ok(None),
        EntryStatus::Change(Change::Removed) => "deleted".to_string(),
        EntryStatus::Change(Change::SubmoduleModification(sub)) => format!(
            "submodule {} dirty={:?} {}",
            sub.checked_out_head_id
                .map_or("-".into(), |id| id.to_string()),
            sub.is_dirty(),
            sub.changes
                .iter()
                .flatten()
                .map(|c| c.location().to_str_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(",")
        ),
        EntryStatus::Conflict { .. } => format!("conflict {}", on_disk(root, rela_path, memo)?),
        EntryStatus::IntentToAdd => {
            format!("intent-to-add {}", on_disk(root, rela_path, memo)?)
        }
        EntryStatus::Change(_) => format!("modified {}", on_disk(root, rela_path, memo)?),
    };
    Ok(Some((rela_path.to_owned(), what)))
}

/// What is at `rela_path` on disk: kind, exec bit, content or link target.
fn on_disk(root: &Path, rela_path: &BStr, memo: &mut Memo) -> Result<String> {
    let path = root.join(std::ffi::OsStr::from_bytes(rela_path));
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        // Gone between the status and now: that is a state of its own.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok("gone".into()),
        Err(e) => return Err(e).with_context(|| format!("cannot stat `{}`", path.display())),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(&path)
            .with_context(|| format!("cannot read the link `{}`", path.display()))?;
        return Ok(format!(
            "link {}",
            blake3::hash(target.as_os_str().as_encoded_bytes()).to_hex()
        ));
    }
    if kind.is_dir() {
        return Ok("dir".into());
    }
    if !kind.is_file() {
        bail!(
            "`{}` is neither a file, a directory nor a symlink",
            path.display()
        );
    }
    let exec = if meta.permissions().mode() & 0o111 != 0 {
        "x"
    } else {
        "-"
    };
    Ok(format!("file {exec} {}", memo.hash(&path, &meta)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    use prove_it_test_support::git;

    fn records(root: &Path, threads: bool) -> Vec<(BString, String)> {
        let repo = open(root).expect("open");
        let index = gix::index::File::at_or_default(
            repo.index_path(),
            repo.object_hash(),
            false,
            Default::default(),
        )
        .expect("index");
        let mut records = unstaged_records_with(&repo, root, &index, &mut Memo::default(), threads)
            .expect("status");
        records.sort();
        records
    }

    /// The small-repository path (one thread, gix's status) and the large
    /// one (the directory walk in a thread of its own) must see exactly the
    /// same changes.
    #[test]
    fn one_thread_and_two_threads_agree() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        git(root, &["init", "-q", "-b", "main"]);
        for i in 0..30 {
            write(&format!("d{}/f{i}.txt", i % 4), &format!("{i}\n"));
        }
        write(".gitignore", "*.log\nbuild/\n");
        write("tool.sh", "#!/bin/sh\n");
        symlink("d0/f0.txt", root.join("link")).expect("symlink");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);

        write("d1/f1.txt", "edited\n");
        std::fs::remove_file(root.join("d2/f2.txt")).expect("rm");
        std::fs::set_permissions(root.join("tool.sh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::fs::remove_file(root.join("link")).expect("rm link");
        symlink("d0/f4.txt", root.join("link")).expect("relink");
        write("new/deep/file.txt", "new\n");
        write("top.txt", "new\n");
        write("noise.log", "ignored\n");
        write("build/out.o", "ignored\n");
        write("d3/f3.txt", "staged\n");
        git(root, &["add", "d3/f3.txt"]);
        write("d3/f3.txt", "staged, then edited\n");

        let one = records(root, false);
        let many = records(root, true);
        assert_eq!(one, many);
        let paths: Vec<String> = one.iter().map(|(p, _)| p.to_string()).collect();
        for expected in [
            "d1/f1.txt",
            "d2/f2.txt",
            "d3/f3.txt",
            "link",
            "new/deep/file.txt",
            "tool.sh",
            "top.txt",
        ] {
            assert!(
                paths.contains(&expected.to_string()),
                "{expected} in {paths:?}"
            );
        }
        assert!(
            !paths
                .iter()
                .any(|p| p.ends_with(".log") || p.starts_with("build")),
            "{paths:?}"
        );
    }
}
