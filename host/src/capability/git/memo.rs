//! What one stop leaves for the next in a work tree, so that unchanged
//! things are not recomputed. Saved in the state dir; losing it only costs
//! time.

use crate::fs::{Stamp, StampedHash, hash_file, write_atomic};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// What one stop leaves for the next in this work tree: big files'
/// content hashes (by their stat data: an unchanged 50 MB file is not read
/// again) and the staged-changes digest (by HEAD and the index checksum).
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Memo {
    files: std::collections::HashMap<PathBuf, StampedHash>,
    pub(super) staged: Option<Staged>,
    #[serde(skip)]
    used: std::collections::HashMap<PathBuf, StampedHash>,
    #[serde(skip)]
    pub(super) changed: bool,
}

/// What the staged-changes digest was computed for.
#[derive(PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct StagedKey {
    pub(super) commit: String,
    pub(super) index: String,
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

    pub fn load(path: &Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
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
