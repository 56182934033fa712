//! The untracked files, and a memo of them by the directories that hold
//! them (the idea of git's untracked cache, kept in prove-it's own memo).
//!
//! Listing the work tree is most of a look at a large clean tree: every
//! directory read, every name in it classified against the index and the
//! ignore rules. But a name appears or disappears in a directory only by
//! changing that directory's modification and change times, so a look
//! that finds every directory of the last walk with the same stat data,
//! and the ignore rules unchanged, knows the untracked files without
//! reading a directory. Each untracked file is still hashed (or stat'ed,
//! when big) at every look: a write to it does not touch its directory.
//!
//! What makes the memo trustworthy, since a wrong answer is a silent pass:
//! - every directory the walk came to is stamped: those it read, with the
//!   `.gitignore` each holds (or its absence), and those it did not enter
//!   (ignored ones, repositories), whose change can change what is
//!   untracked (a repository whose `.git` is removed becomes files);
//! - the key holds what else the walk depends on: the index's entries (a
//!   file added to the index stops being untracked with no directory
//!   changed), the walk's options from the configuration, and the global
//!   and repository excludes files by their stat data;
//! - it is kept only when every stamp is more than two seconds older than
//!   the walk (racy-git: a change within the same tick leaves the times as
//!   they were), so no change during or after the walk can hide;
//! - stat data includes the change time, which nothing sets back;
//! - only on filesystems known to update a directory's times when a name
//!   in it changes (ext4, xfs, btrfs, tmpfs, zfs, f2fs; APFS and HFS+ on
//!   macOS), and never when the repository sets `core.untrackedCache` to
//!   false (git's own way of saying its filesystem cannot be trusted so).

use crate::fs::Stamp;
use anyhow::{Context, Result};
use gix::bstr::{BString, ByteSlice};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// One walk's untracked paths and what they depend on, as the memo keeps
/// them.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Listing {
    key: String,
    dirs: Vec<Dir>,
    paths: Vec<String>,
    /// The ignored files (see [`Look::ignored`]): a name appears in a
    /// directory the same way whether it is ignored or not.
    #[serde(default)]
    ignored: Vec<String>,
}

/// A directory the walk came to (relative; "" is the work tree itself).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Dir {
    path: String,
    stamp: Stamp,
    /// Read by the walk: the stat data of its `.gitignore` then, `None`
    /// when it had none. Not read (ignored, a repository): `Unread`.
    ignore: Ignore,
}

#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Ignore {
    Unread,
    Absent,
    File(Stamp),
}

/// What the walk depends on beyond the directories, or `None` when the
/// memo is not used for this repository (see the module's notes).
/// `user_excludes` is git's default global excludes file
/// ([`crate::settings::Dirs::git_excludes`]); without it, no memo.
pub(super) fn key(
    repo: &gix::Repository,
    root: &Path,
    options: &gix::dirwalk::Options,
    entries: &str,
    user_excludes: Option<&Path>,
) -> Option<String> {
    let config = repo.config_snapshot();
    if config.boolean("core.untrackedCache") == Some(false) || !times_are_kept(root) {
        return None;
    }
    let mut files = vec![
        user_excludes?.to_path_buf(),
        repo.git_dir().join("info/exclude"),
        repo.common_dir().join("info/exclude"),
    ];
    if let Ok(Some(path)) = config.trusted_path("core.excludesFile") {
        files.push(path);
    }
    let mut key = format!("untracked v2\n{entries}\n{options:?}\n");
    for file in files {
        let stamp = std::fs::metadata(&file).ok().map(|m| Stamp::of(&m));
        key.push_str(&format!("{} {stamp:?}\n", file.display()));
    }
    Some(blake3::hash(key.as_bytes()).to_hex().to_string())
}

/// Whether the filesystem holding `root` is one known to change a
/// directory's times whenever a name in it is added, removed or renamed.
pub(super) fn times_are_kept(root: &Path) -> bool {
    let Ok(path) = std::ffi::CString::new(root.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string and a zeroed out-struct of the right type.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(path.as_ptr(), &mut fs) } != 0 {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        const KNOWN: [i64; 6] = [
            0xEF53,      // ext2, ext3, ext4
            0x5846_5342, // xfs
            0x9123_683E, // btrfs
            0x0102_1994, // tmpfs
            0x2FC1_2FC1, // zfs
            0xF2F5_2010, // f2fs
        ];
        KNOWN.contains(&(fs.f_type as i64))
    }
    #[cfg(target_os = "macos")]
    {
        let name = unsafe { std::ffi::CStr::from_ptr(fs.f_fstypename.as_ptr()) };
        matches!(name.to_bytes(), b"apfs" | b"hfs")
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        false
    }
}

/// What a look at the untracked files found, and what the memo should
/// keep of it.
pub(super) struct Look {
    pub(super) paths: Vec<BString>,
    /// The ignored files in the directories the walk read (not those in
    /// a folder ignored whole, which it does not enter): a `conftest.py`
    /// an ignore rule hides is still loaded by the runner.
    pub(super) ignored: Vec<String>,
    /// `None`: keep what the memo has. `Some(listing)`: keep that instead
    /// (`Some(None)` forgets it).
    pub(super) remember: Option<Option<Listing>>,
    /// The work tree was walked (the memo did not hold).
    pub(super) walked: bool,
}

/// Every untracked, not ignored path: from `known` when it holds for
/// `key`, else by walking the work tree of `repo` (`None`: opened here,
/// only when needed). `read_at` is when the look began (seconds since the
/// epoch).
pub(super) fn look(
    repo: Option<&gix::Repository>,
    root: &Path,
    index: &gix::index::State,
    options: gix::dirwalk::Options,
    key: Option<&str>,
    known: Option<&Listing>,
    read_at: i64,
) -> Result<Look> {
    if let (Some(key), Some(known)) = (key, known)
        && known.key == key
        && known.holds(root)
    {
        return Ok(Look {
            paths: known
                .paths
                .iter()
                .map(|p| BString::from(p.as_str()))
                .collect(),
            ignored: known.ignored.clone(),
            remember: None,
            walked: false,
        });
    }
    let found = match repo {
        Some(repo) => walk(repo, index, options)?,
        None => walk(&super::discover::open(root)?, index, options)?,
    };
    let listing = key.and_then(|key| Listing::of(root, key, &found, read_at));
    let remember = match (&listing, known) {
        (None, None) => None,
        _ => Some(listing),
    };
    Ok(Look {
        ignored: found
            .ignored
            .iter()
            .map(|p| p.to_str_lossy().into_owned())
            .collect(),
        paths: found.paths,
        remember,
        walked: true,
    })
}

impl Listing {
    /// Whether every directory still has the stat data it had (and every
    /// directory read still has the same `.gitignore`).
    fn holds(&self, root: &Path) -> bool {
        self.dirs.iter().all(|dir| {
            let path = root.join(&dir.path);
            let same_dir = std::fs::symlink_metadata(&path)
                .is_ok_and(|m| m.file_type().is_dir() && Stamp::of(&m) == dir.stamp);
            same_dir && (dir.ignore == Ignore::Unread || ignore_of(&path) == dir.ignore)
        })
    }

    /// The memo of a walk, unless a stamp is too recent to be trusted or a
    /// path is not UTF-8 (kept as text).
    fn of(root: &Path, key: &str, found: &Found, read_at: i64) -> Option<Listing> {
        let mut dirs = Vec::with_capacity(found.dirs.len());
        for (rela, read) in &found.dirs {
            let path = root.join(std::ffi::OsStr::from_bytes(rela));
            let meta = std::fs::symlink_metadata(&path).ok()?;
            let stamp = Stamp::of(&meta);
            let ignore = if *read {
                ignore_of(&path)
            } else {
                Ignore::Unread
            };
            let settled = |s: &Stamp| s.older_than(read_at);
            if !meta.file_type().is_dir()
                || !settled(&stamp)
                || matches!(&ignore, Ignore::File(s) if !settled(s))
            {
                return None;
            }
            dirs.push(Dir {
                path: rela.to_str().ok()?.to_owned(),
                stamp,
                ignore,
            });
        }
        let paths = found
            .paths
            .iter()
            .map(|p| p.to_str().ok().map(str::to_owned))
            .collect::<Option<_>>()?;
        let ignored = found
            .ignored
            .iter()
            .map(|p| p.to_str().ok().map(str::to_owned))
            .collect::<Option<_>>()?;
        Some(Listing {
            key: key.to_owned(),
            dirs,
            paths,
            ignored,
        })
    }
}

fn ignore_of(dir: &Path) -> Ignore {
    match std::fs::symlink_metadata(dir.join(".gitignore")) {
        Ok(meta) => Ignore::File(Stamp::of(&meta)),
        Err(_) => Ignore::Absent,
    }
}

/// One walk: the untracked paths, and every directory it came to.
#[derive(Default)]
struct Found {
    paths: Vec<BString>,
    ignored: Vec<BString>,
    /// Relative paths ("" for the work tree), and whether each was read.
    dirs: Vec<(BString, bool)>,
}

/// The directory walk.
fn walk(
    repo: &gix::Repository,
    index: &gix::index::State,
    options: gix::dirwalk::Options,
) -> Result<Found> {
    let mut found = Found {
        dirs: vec![(BString::default(), true)],
        ..Found::default()
    };
    repo.dirwalk(
        index,
        None::<&str>,
        &AtomicBool::new(false),
        options,
        &mut found,
    )
    .context("cannot walk the work tree")?;
    Ok(found)
}

impl gix::dir::walk::Delegate for Found {
    fn emit(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        _collapsed_directory_status: Option<gix::dir::entry::Status>,
    ) -> gix::dir::walk::Action {
        use gix::dir::entry::{Kind, Status};
        if let Status::Ignored(_) = entry.status {
            // Files only: a folder ignored whole is build output or an
            // environment, and is not entered.
            if matches!(entry.disk_kind, Some(Kind::File | Kind::Symlink)) {
                self.ignored.push(entry.rela_path.into_owned());
            }
        // As `git status` (and gix's own status): sockets, FIFOs and the
        // like are never shown as untracked.
        } else if entry.disk_kind != Some(Kind::Untrackable) {
            self.paths.push(entry.rela_path.into_owned());
        }
        std::ops::ControlFlow::Continue(())
    }

    /// gix's own answer; every directory asked about is noted.
    fn can_recurse(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        for_deletion: Option<gix::dir::walk::ForDeletionMode>,
        worktree_root_is_repository: bool,
    ) -> bool {
        let read = entry.status.can_recurse(
            entry.disk_kind,
            entry.pathspec_match,
            for_deletion,
            worktree_root_is_repository,
        );
        self.dirs.push((entry.rela_path.clone().into_owned(), read));
        read
    }
}
