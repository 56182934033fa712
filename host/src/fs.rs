//! File-system helpers every room uses: private directories, atomic
//! writes, content hashes, and the [`Stamp`] that tells "unchanged since".
//!
//! Nothing here knows what the files mean; that belongs to the callers
//! (`capability::state`, the git memo, the module cache, the policy pin).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::DirBuilder;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` and its missing parents, each 0700.
pub fn private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create `{}`", dir.display()))?;
    // An existing umask can widen nothing here, but a parent we did not make
    // keeps its own mode: only ours are forced.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot set the mode of `{}`", dir.display()))
}

/// Writes `bytes` to `path` through a 0600 temp file renamed into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    // No fsync: it would cost every stop milliseconds, and a file torn by a
    // crash reads as corrupt state, which is reported, never trusted.
    write_via_temp(path, bytes, false)
}

/// [`write_atomic`], with the data on disk before the rename: for files
/// written rarely whose loss in a crash must not go unnoticed.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    write_via_temp(path, bytes, true)
}

fn write_via_temp(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let dir = path
        .parent()
        .expect("state files always live in a directory");
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temp file in `{}`", dir.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    if sync {
        file.as_file()
            .sync_all()
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    file.persist(path)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

/// Content hash of a file (blake3, lowercase hex), read in chunks so that
/// memory stays flat for big files.
pub fn hash_file(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    let mut hasher = blake3::Hasher::new();
    hasher
        .update_reader(&mut file)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// A file's stat data as far as telling "unchanged since" goes: size,
/// modification and change times (ns) and inode. Any write changes one of
/// them (ctime cannot be set back), which is what the caches keyed by it
/// rely on. Kept on disk as six numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "[i64; 6]", into = "[i64; 6]")]
pub struct Stamp {
    size: i64,
    mtime: i64,
    mtime_nsec: i64,
    ctime: i64,
    ctime_nsec: i64,
    inode: i64,
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            size: meta.size() as i64,
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
            inode: meta.ino() as i64,
        }
    }

    /// Racy-git rule: a file modified within the last two seconds could
    /// change again without its stat data changing, so what was learnt of
    /// it must not be remembered by this stamp yet.
    pub fn settled(&self) -> bool {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .is_ok_and(|now| now.as_secs() as i64 > self.mtime + 2)
    }
}

impl Stamp {
    /// Whether the file was last modified, and last had its metadata
    /// changed, more than two seconds before `secs` (seconds since the
    /// epoch): what was seen of it at `secs` or later is then its state
    /// for as long as the stamp stays the same (racy-git's rule).
    pub fn older_than(&self, secs: i64) -> bool {
        self.mtime + 2 < secs && self.ctime + 2 < secs
    }
}

impl From<[i64; 6]> for Stamp {
    fn from([size, mtime, mtime_nsec, ctime, ctime_nsec, inode]: [i64; 6]) -> Stamp {
        Stamp {
            size,
            mtime,
            mtime_nsec,
            ctime,
            ctime_nsec,
            inode,
        }
    }
}

impl From<Stamp> for [i64; 6] {
    fn from(s: Stamp) -> [i64; 6] {
        [
            s.size,
            s.mtime,
            s.mtime_nsec,
            s.ctime,
            s.ctime_nsec,
            s.inode,
        ]
    }
}

/// A content hash and the stamp of the file it was taken from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StampedHash {
    #[serde(rename = "stat")]
    pub stamp: Stamp,
    pub hash: String,
}

impl StampedHash {
    /// The hash of the file whose stamp is `stamp`: `known`'s when `known`
    /// has that very stamp (the file is not read), else `hash()`'s. The
    /// second value is what to remember for next time: `None` while the
    /// file is too fresh to be trusted by its stamp.
    pub fn get<E>(
        stamp: Stamp,
        known: Option<&StampedHash>,
        hash: impl FnOnce() -> std::result::Result<String, E>,
    ) -> std::result::Result<(String, Option<StampedHash>), E> {
        if let Some(known) = known.filter(|k| k.stamp == stamp) {
            return Ok((known.hash.clone(), Some(known.clone())));
        }
        let hash = hash()?;
        let remember = stamp.settled().then(|| StampedHash {
            stamp,
            hash: hash.clone(),
        });
        Ok((hash, remember))
    }
}
