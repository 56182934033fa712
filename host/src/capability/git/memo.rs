//! What one stop leaves for the next in a work tree, so that unchanged
//! things are not recomputed. Saved in the state dir; losing it only costs
//! time.

use crate::fs::{Stamp, StampedHash, hash_file, write_atomic};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// What one stop leaves for the next in this work tree: big files'
/// content hashes (by their stat data: an unchanged 50 MB file is not read
/// again), the staged-changes digest (by HEAD and the index's entries),
/// which racily clean entries were found clean by their content, the
/// untracked files by the directories holding them ([`super::untracked`]),
/// and the index entries' digest by the index file's stat data.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Memo {
    files: std::collections::HashMap<PathBuf, StampedHash>,
    pub(super) staged: Option<Staged>,
    #[serde(default)]
    pub(super) settled: Option<Settled>,
    #[serde(default)]
    pub(super) untracked: Option<super::untracked::Listing>,
    #[serde(default)]
    pub(super) index_digest: Option<IndexDigest>,
    #[serde(skip)]
    used: std::collections::HashMap<PathBuf, StampedHash>,
    #[serde(skip)]
    pub(super) changed: bool,
    /// Git's default global excludes file, which the memo of untracked
    /// files watches; without it that memo is not used.
    #[serde(skip)]
    pub(super) user_excludes: Option<PathBuf>,
}

/// What the staged-changes digest was computed for: HEAD's commit and a
/// digest of every index entry's path, mode, object id and flags. Not the
/// index file's checksum: `index.skipHash` (set by `feature.manyFiles`)
/// leaves it out, and `git status` rewrites the file with new stat data
/// and so a new checksum, while the staged changes stay the same.
#[derive(PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct StagedKey {
    pub(super) commit: String,
    pub(super) entries: String,
}

/// Racily clean entries found clean by reading them. An index entry whose
/// modification time is not older than the index file itself is "racy":
/// its file may have changed within the same tick without its stat data
/// changing, so its content is compared at every look, until something
/// rewrites the index (`git status` does; prove-it never writes the
/// index). After a commit that can be every file. Remembered here
/// instead: an entry of this same index file whose file was last modified
/// more than two seconds before `read_at`, and whose stat data still
/// equals the entry's in every field, was clean at `read_at` and has not
/// been written since (a write after it would have changed its
/// modification or change time), unless it is in `differ`.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Settled {
    /// The index file, by its stat data, and its entries' digest (as in
    /// [`StagedKey`]): a rewritten index starts over.
    pub(super) index: Stamp,
    pub(super) entries: String,
    /// When the entries were compared (seconds since the epoch, taken
    /// before the look began).
    pub(super) read_at: i64,
    /// Entries compared and found changed: never taken as clean.
    pub(super) differ: Vec<String>,
}

/// The digest of the index's entries (as in [`StagedKey`]) and the stat
/// data of the index file it was taken from.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct IndexDigest {
    pub(super) stamp: Stamp,
    pub(super) entries: String,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Staged {
    pub(super) key: StagedKey,
    pub(super) digest: String,
    /// The records the digest is of, for the changed-files list (`None`:
    /// too many to keep). A memo without this field is not read at all.
    #[serde(deserialize_with = "serde::Deserialize::deserialize")]
    pub(super) records: Option<Vec<(Vec<u8>, String)>>,
}

impl Memo {
    /// Files smaller than this are hashed every time (cheaper than a lookup
    /// is worth remembering).
    const MIN_BYTES: u64 = 1 << 20;

    /// An empty memo, for a look that remembers nothing. The fingerprint
    /// holds git's default attributes and excludes files, found beside
    /// `user_excludes`: a look with a memo that does not name it
    /// ([`Memo::default`]) gives another fingerprint.
    pub fn fresh(user_excludes: &Path) -> Self {
        Memo {
            user_excludes: Some(user_excludes.to_path_buf()),
            ..Memo::default()
        }
    }

    /// The memo saved at `path` (an empty one when there is none or it
    /// cannot be read), for looks that may use git's default global
    /// excludes file `user_excludes`.
    pub fn load(path: &Path, user_excludes: &Path) -> Self {
        let memo: Memo = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Memo {
            user_excludes: Some(user_excludes.to_path_buf()),
            ..memo
        }
    }

    /// Saves what this run used (big files no longer changed drop out),
    /// if anything changed.
    pub fn save(self, path: &Path) -> Result<()> {
        if !self.changed && self.used.len() == self.files.len() {
            return Ok(());
        }
        let kept = Memo {
            files: self.used,
            staged: self.staged,
            settled: self.settled,
            untracked: self.untracked,
            index_digest: self.index_digest,
            ..Memo::default()
        };
        write_atomic(path, &serde_json::to_vec(&kept)?)
    }

    /// The content hash of the file at `path`, remembered by its stat data
    /// when it is big.
    pub(super) fn hash(&mut self, path: &Path, meta: &std::fs::Metadata) -> Result<String> {
        if meta.len() < Self::MIN_BYTES {
            return hash_file(path);
        }
        let known = self.files.get(path);
        let (hash, remember) = StampedHash::get(Stamp::of(meta), known, || hash_file(path))?;
        if let Some(remember) = remember {
            self.changed |= known != Some(&remember);
            self.used.insert(path.to_path_buf(), remember);
        }
        Ok(hash)
    }
}
