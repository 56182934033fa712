//! Git state through gix: finding the repository, the tree fingerprint and
//! the facts about `verify.sh`.
//!
//! No `git` subprocess runs here. The fingerprint is exact: it covers HEAD,
//! the index against HEAD, and every work-tree path that differs from the
//! index (content, mode, symlink target) or is untracked and not ignored.
//! Paths equal to HEAD are covered by HEAD's id, so only changed paths are
//! hashed, and a tree that returns to an earlier state gives the earlier
//! fingerprint.

use anyhow::{Context, Result, bail};
use gix::bstr::{BString, ByteSlice};
use gix::status::index_worktree::Item as WorktreeItem;
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
use prove_it_gate::abi::{TreeState, VerifyFacts};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The name of the proof, at the work tree root.
pub const VERIFY_SH: &str = "verify.sh";

/// Finds the work tree root around `cwd`: the nearest folder holding a
/// `.git` (a directory, or a file in linked worktrees and submodules), as git
/// does. `None`: not in a work tree, nothing to guard.
///
/// This only looks; the repository is opened by [`tree_state`], so a stop in
/// a repository without `verify.sh` never pays for opening it, and a broken
/// repository is reported there rather than passing for "no repository".
pub fn discover(cwd: &Path) -> Option<PathBuf> {
    let cwd = std::path::absolute(cwd).ok()?;
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Opens the repository whose work tree is `root`.
fn open(root: &Path) -> Result<gix::Repository> {
    let repo = gix::open(root)
        .with_context(|| format!("cannot open the git repository at `{}`", root.display()))?;
    if repo.workdir().is_none() {
        bail!(
            "`{}` is a bare repository, with no work tree to verify",
            root.display()
        );
    }
    Ok(repo)
}

/// `verify.sh` at the root, now.
pub fn verify_facts(root: &Path) -> Result<VerifyFacts> {
    let path = root.join(VERIFY_SH);
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(VerifyFacts {
                exists: false,
                executable: false,
                hash: None,
            });
        }
        Err(e) => return Err(e).with_context(|| format!("cannot stat `{}`", path.display())),
    };
    if !meta.is_file() {
        return Ok(VerifyFacts {
            exists: true,
            executable: false,
            hash: None,
        });
    }
    let hash = hash_file(&path)?;
    Ok(VerifyFacts {
        exists: true,
        executable: meta.permissions().mode() & 0o111 != 0,
        hash: Some(hash),
    })
}

/// HEAD and the fingerprint of the whole tree state. `hashes` remembers
/// the content hashes of big changed files between stops.
pub fn tree_state(root: &Path, hashes: &mut HashCache) -> Result<TreeState> {
    let repo = open(root)?;
    let head = repo.head().context("cannot read HEAD")?;
    // Both the commit and the branch name: switching branches is a change.
    let head_id = head.id().map(|id| id.to_string());
    let head_name = head.referent_name().map(|n| n.as_bstr().to_string());

    let mut records: Vec<(BString, String)> = Vec::new();
    let status = repo
        .status(gix::progress::Discard)
        .context("cannot start `git status`")?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .into_iter(None)
        .context("cannot compute `git status`")?;
    for item in status {
        let item = item.context("cannot compute `git status`")?;
        match item {
            gix::status::Item::TreeIndex(change) => records.push(staged(&change)),
            gix::status::Item::IndexWorktree(item) => {
                if let Some(record) = unstaged(root, item, hashes)? {
                    records.push(record);
                }
            }
        }
    }
    records.sort();

    let mut hasher = blake3::Hasher::new();
    hasher.update(b"prove-it tree state v1\n");
    hasher.update(
        format!(
            "head {} {}\n",
            head_name.as_deref().unwrap_or("-"),
            head_id.as_deref().unwrap_or("unborn")
        )
        .as_bytes(),
    );
    for (path, what) in &records {
        hasher.update(path);
        hasher.update(b"\0");
        hasher.update(what.as_bytes());
        hasher.update(b"\n");
    }
    Ok(TreeState {
        head: head_id,
        fingerprint: hasher.finalize().to_hex().to_string(),
    })
}

/// A difference between HEAD's tree and the index (a staged change).
fn staged(change: &gix::diff::index::Change) -> (BString, String) {
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

/// A difference between the index and the work tree, or an untracked path.
fn unstaged(
    root: &Path,
    item: WorktreeItem,
    hashes: &mut HashCache,
) -> Result<Option<(BString, String)>> {
    match item {
        WorktreeItem::Modification {
            rela_path, status, ..
        } => {
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
                EntryStatus::Conflict { .. } => {
                    format!("conflict {}", on_disk(root, &rela_path, hashes)?)
                }
                EntryStatus::IntentToAdd => {
                    format!("intent-to-add {}", on_disk(root, &rela_path, hashes)?)
                }
                EntryStatus::Change(_) => {
                    format!("modified {}", on_disk(root, &rela_path, hashes)?)
                }
            };
            Ok(Some((rela_path, what)))
        }
        WorktreeItem::DirectoryContents { entry, .. } => {
            let what = format!("untracked {}", on_disk(root, &entry.rela_path, hashes)?);
            Ok(Some((entry.rela_path, what)))
        }
        WorktreeItem::Rewrite { dirwalk_entry, .. } => {
            // Rename tracking is off, so this does not happen; stay exact anyway.
            let what = format!(
                "untracked {}",
                on_disk(root, &dirwalk_entry.rela_path, hashes)?
            );
            Ok(Some((dirwalk_entry.rela_path, what)))
        }
    }
}

/// What is at `rela_path` on disk: kind, exec bit, content or link target.
fn on_disk(root: &Path, rela_path: &BString, hashes: &mut HashCache) -> Result<String> {
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
    Ok(format!("file {exec} {}", hashes.hash(&path, &meta)?))
}

/// Content hash of a file, read in chunks (memory stays flat for big files).
pub fn hash_file(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read `{}`", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().to_hex().to_string())
}

/// Content hashes of big files, remembered by their stat data so that an
/// unchanged 50 MB file is not read again at every stop. Saved per work
/// tree in the state dir; losing it only costs time.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct HashCache {
    entries: std::collections::HashMap<PathBuf, Stamped>,
    #[serde(skip)]
    used: std::collections::HashMap<PathBuf, Stamped>,
    #[serde(skip)]
    changed: bool,
}

#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamped {
    stat: [i64; 6],
    hash: String,
}

impl HashCache {
    /// Files smaller than this are hashed every time (cheaper than a lookup
    /// is worth remembering).
    const MIN_BYTES: u64 = 1 << 20;

    pub fn load(path: &Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Saves what this run used (entries for files no longer changed drop
    /// out), if anything changed.
    pub fn save(self, path: &Path) -> Result<()> {
        if !self.changed && self.used.len() == self.entries.len() {
            return Ok(());
        }
        let kept = HashCache {
            entries: self.used,
            ..HashCache::default()
        };
        super::state::write_atomic(path, &serde_json::to_vec(&kept)?)
    }

    fn hash(&mut self, path: &Path, meta: &std::fs::Metadata) -> Result<String> {
        use std::os::unix::fs::MetadataExt;
        if meta.len() < Self::MIN_BYTES {
            return hash_file(path);
        }
        let stat = [
            meta.size() as i64,
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
            meta.ino() as i64,
        ];
        if let Some(known) = self.entries.get(path).filter(|e| e.stat == stat) {
            self.used.insert(path.to_path_buf(), known.clone());
            return Ok(known.hash.clone());
        }
        let hash = hash_file(path)?;
        // Racy-git rule: a file modified within the last two seconds could
        // change again without its stat data changing; do not remember it.
        let settled = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|now| now.as_secs() as i64 > meta.mtime() + 2)
            .unwrap_or(false);
        if settled {
            self.used.insert(
                path.to_path_buf(),
                Stamped {
                    stat,
                    hash: hash.clone(),
                },
            );
            self.changed = true;
        }
        Ok(hash)
    }
}
