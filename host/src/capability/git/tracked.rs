//! The stat pass over the index: which tracked entries are unchanged by
//! their stat data alone, by exactly the rules gix's status applies before
//! it would read a file (`gix_status::index_as_worktree`, its
//! `compute_status`). Only the others go on to gix's status.
//!
//! Why: gix takes each entry through a general path stack that costs about
//! 2,700 instructions beyond the entry's `lstat`, most of a read-only
//! stop's own CPU time on a large clean tree, where `git status` spends a
//! few hundred. Here each directory is opened once (which also proves it
//! a plain directory, not a symlink), and each entry costs one `fstatat`
//! of its name in it: the kernel resolves one name, not the whole path.
//!
//! It must never call an entry unchanged that gix would call changed: that
//! would be a silent pass. So whatever is not the plain case (a flag other
//! than a hint, a stage, a submodule, stat data that differs or is racy, a
//! mode that changed, a leading directory that is not a plain directory,
//! an error) is left to gix. The rules are stricter than git's own
//! ([`Rules::strict`]), and hints that say "unchanged" are not taken.

// The stat fields' types differ between Linux and macOS (`mode_t` is 16
// bits there), so casts that are no-ops here are not on every target.
#![allow(clippy::unnecessary_cast)]

use gix::bstr::ByteSlice;
use gix::index::entry::stat::Time;
use gix::index::entry::{Flags, Mode, Stat};
use rustix::fs::{AtFlags, OFlags};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the comparison depends on.
#[derive(Clone, Copy)]
pub struct Rules {
    pub stat: gix::index::entry::stat::Options,
    pub fs: gix::fs::Capabilities,
}

impl Rules {
    /// The rules for `repo`, strict whatever its configuration says: the
    /// change time and the inode are always compared, and the executable
    /// bit and symlinks always count (Linux and macOS file systems keep
    /// both). `core.trustctime`, `core.checkStat`, `core.fileMode` and
    /// `core.symlinks` are for git's speed or odd file systems; read from
    /// a configuration the agent can write, they would let a same-size
    /// edit with its modification time set back, or a `chmod`, pass
    /// unseen. A stricter rule only costs a read of a file whose stat data
    /// differs; the content decides.
    pub fn strict(repo: &gix::Repository) -> anyhow::Result<Rules> {
        use anyhow::Context;
        let mut fs = repo
            .filesystem_options()
            .context("cannot read the configuration")?;
        fs.executable_bit = true;
        fs.symlink = true;
        Ok(Rules {
            stat: gix::index::entry::stat::Options {
                trust_ctime: true,
                check_stat: true,
                use_nsec: true,
                use_stdev: false,
            },
            fs,
        })
    }
}

/// Flags that make gix's status skip an entry unread. Each is a hint that
/// the file is as the index says (`git update-index --assume-unchanged`,
/// an fsmonitor's word, or git's own "checked already"), and the agent can
/// set the first two with one command: the gate looks anyway.
pub const HINTS: Flags = Flags::ASSUME_VALID
    .union(Flags::FSMONITOR_VALID)
    .union(Flags::UPTODATE);

/// The positions in `index` of the entries not shown unchanged here, in
/// index order, found on `threads` threads.
pub fn needing_a_look(
    root: &Path,
    index: &gix::index::State,
    rules: Rules,
    threads: usize,
) -> Vec<usize> {
    let count = index.entries().len();
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return Pass::new(root, index, rules).run(0..count);
    }
    let per_thread = count.div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = (0..count)
            .step_by(per_thread)
            .map(|start| {
                let range = start..(start + per_thread).min(count);
                scope.spawn(move || Pass::new(root, index, rules).run(range))
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|part| {
                part.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Directories are opened to be looked in, not read: on Linux `O_PATH`
/// needs no read permission and does less.
#[cfg(target_os = "linux")]
const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// One thread's pass over a run of entries.
struct Pass<'a> {
    index: &'a gix::index::State,
    rules: Rules,
    dirs: OpenDirs,
    /// The entry's file name and a NUL, as the system call takes it.
    name: Vec<u8>,
}

/// The directories an entry is looked up in.
struct OpenDirs {
    /// The work tree, opened (`None`: it could not be).
    root: Option<OwnedFd>,
    /// The directory the last entry was in (relative, no trailing slash).
    dir: Vec<u8>,
    /// That directory and each one above it below the root, outermost
    /// first: where its path ends in `dir`, and its descriptor (`None`:
    /// not a plain directory, or not there). The index is sorted, so the
    /// entries of a directory come together and each is opened once.
    open: Vec<(usize, Option<OwnedFd>)>,
}

impl<'a> Pass<'a> {
    fn new(root: &Path, index: &'a gix::index::State, rules: Rules) -> Self {
        Pass {
            index,
            rules,
            dirs: OpenDirs {
                root: rustix::fs::open(root, DIR_FLAGS, rustix::fs::Mode::empty()).ok(),
                dir: Vec::new(),
                open: Vec::new(),
            },
            name: Vec::new(),
        }
    }

    fn run(mut self, range: std::ops::Range<usize>) -> Vec<usize> {
        range.filter(|&i| !self.unchanged(i)).collect()
    }

    /// Whether gix would find entry `i` unchanged without reading it.
    fn unchanged(&mut self, i: usize) -> bool {
        let entry = &self.index.entries()[i];
        // Flags (and the stage, kept among them) each change what gix does;
        // hints are looked past, as the status is made to ([`subset`]).
        if !(entry.flags - Flags::EXTENDED - Flags::PATH_LEN - HINTS).is_empty()
            || !matches!(
                entry.mode,
                Mode::FILE | Mode::FILE_EXECUTABLE | Mode::SYMLINK
            )
        {
            return false;
        }
        let rela: &[u8] = entry.path_in(self.index.path_backing());
        let (dir, name) = match rela.rfind_byte(b'/') {
            Some(slash) => (&rela[..slash], &rela[slash + 1..]),
            None => (&rela[..0], rela),
        };
        let Some(dir) = self.dirs.enter(dir) else {
            return false;
        };
        self.name.clear();
        self.name.extend_from_slice(name);
        self.name.push(0);
        // SAFETY: an index path holds no NUL (the index ends each path with
        // one, and gix reads it up to there), so the one pushed is the only
        // one. Checking would scan every name again.
        let name = unsafe { std::ffi::CStr::from_bytes_with_nul_unchecked(&self.name) };
        let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            return false;
        };
        // As gix's `fs::Metadata` reads it.
        let kind = st.st_mode as u32 & libc::S_IFMT as u32;
        let (is_file, is_dir, is_symlink) = (
            kind == libc::S_IFREG as u32,
            kind == libc::S_IFDIR as u32,
            kind == libc::S_IFLNK as u32,
        );
        let is_executable = is_file && st.st_mode as u32 & libc::S_IXUSR as u32 != 0;
        let stat = Stat {
            mtime: time(st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: time(st.st_ctime as i64, st.st_ctime_nsec as i64),
            dev: st.st_dev as u32,
            ino: st.st_ino as u32,
            uid: st.st_uid as u32,
            gid: st.st_gid as u32,
            size: st.st_size as u32,
        };
        let Rules { stat: options, fs } = self.rules;
        // Nanoseconds are compared where the index keeps them (git writes
        // them on Linux and macOS; a writer that leaves them 0 would make
        // every file be read). The change time's cannot be set back, so a
        // same-size edit in the same second as the last `git add`, with
        // its modification time forged, is still seen.
        let seconds_only = gix::index::entry::stat::Options {
            use_nsec: false,
            ..options
        };
        let nsecs_match = |new: Time, old: Time| old.nsecs == 0 || new.nsecs == old.nsecs;
        !is_dir
            && entry
                .mode
                .change_to_match_fs_with_values(
                    is_file,
                    is_dir,
                    is_symlink,
                    is_executable,
                    fs.symlink,
                    fs.executable_bit,
                )
                .is_none()
            && stat.matches(&entry.stat, seconds_only)
            && nsecs_match(stat.mtime, entry.stat.mtime)
            && nsecs_match(stat.ctime, entry.stat.ctime)
            && (!entry.id.is_empty_blob() || entry.stat.size == 0)
            && !stat.is_racy(self.index.timestamp(), seconds_only)
    }
}

impl OpenDirs {
    /// The descriptor of `dir` (relative; empty: the root), opening what
    /// is not open yet; `None` when it or a directory above it is not a
    /// plain directory (gix reports an entry beneath a symlink as removed,
    /// and a path through one would reach another file).
    fn enter(&mut self, dir: &[u8]) -> Option<&OwnedFd> {
        // Close what `dir` is not in.
        while let Some(&(end, _)) = self.open.last() {
            let open = &self.dir[..end];
            if dir.starts_with(open) && (dir.len() == end || dir[end] == b'/') {
                break;
            }
            self.open.pop();
        }
        self.dir
            .truncate(self.open.last().map_or(0, |&(end, _)| end));
        // Open what is below.
        let rest = &dir[self.dir.len()..];
        for name in rest.split(|b| *b == b'/').filter(|n| !n.is_empty()) {
            let parent = match self.open.last() {
                Some((_, fd)) => fd.as_ref(),
                None => self.root.as_ref(),
            };
            let fd = parent.and_then(|parent| {
                rustix::fs::openat(
                    parent,
                    std::ffi::OsStr::from_bytes(name),
                    DIR_FLAGS,
                    rustix::fs::Mode::empty(),
                )
                .ok()
            });
            if !self.dir.is_empty() {
                self.dir.push(b'/');
            }
            self.dir.extend_from_slice(name);
            self.open.push((self.dir.len(), fd));
        }
        match self.open.last() {
            Some((_, fd)) => fd.as_ref(),
            None => self.root.as_ref(),
        }
    }
}

/// A file time as gix's `Stat::from_fs` keeps it: the low 32 bits of the
/// seconds, and nothing for a time before 1970.
fn time(secs: i64, nsecs: i64) -> Time {
    if secs < 0 || !(0..1_000_000_000).contains(&nsecs) {
        return Time::default();
    }
    Time {
        secs: secs as u32,
        nsecs: nsecs as u32,
    }
}

/// The entries of `index` at `positions` (in index order), as an index of
/// their own with the same timestamp, for gix's status to look at, with
/// their [`HINTS`] cleared so that it compares them, and skip-worktree
/// cleared too unless `sparse` (a sparse checkout, whose skip-worktree
/// entries are files left out of the work tree on purpose).
pub fn subset(index: &gix::index::State, positions: &[usize], sparse: bool) -> gix::index::State {
    let mut out = gix::index::State::new(index.object_hash());
    out.set_timestamp(index.timestamp());
    let cleared = if sparse {
        HINTS
    } else {
        HINTS | Flags::SKIP_WORKTREE
    };
    for &i in positions {
        let entry = &index.entries()[i];
        out.dangerously_push_entry(
            entry.stat,
            entry.id,
            entry.flags - cleared,
            entry.mode,
            entry.path_in(index.path_backing()),
        );
    }
    out
}

/// Whether any of the entries at `positions` has a flag [`subset`] clears.
pub fn any_flagged(index: &gix::index::State, positions: &[usize]) -> bool {
    let flags = HINTS | Flags::SKIP_WORKTREE;
    positions
        .iter()
        .any(|&i| index.entries()[i].flags.intersects(flags))
}
