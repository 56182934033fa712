//! The tree fingerprint: a hash of HEAD, the index against HEAD, and every
//! work-tree path that differs from the index (content, mode, symlink
//! target) or is untracked and not ignored.
//!
//! It is exact. Paths equal to HEAD are covered by HEAD's id, so only
//! changed paths are hashed, and a tree that returns to an earlier state
//! gives the earlier fingerprint.

use super::discover::open;
use super::memo::{IndexDigest, Memo, Settled, Staged, StagedKey};
use super::{config, tracked, untracked};
use crate::fs::Stamp;
use anyhow::{Context, Result, bail};
use gix::bstr::{BStr, BString, ByteSlice};
use gix::status::plumbing::index_as_worktree::traits::{
    CompareBlobs, FastEq, ReadData, SubmoduleStatus,
};
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
use prove_it_gate::abi::TreeState;
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Index entries from which a look uses threads: the directory walk in one
/// of its own, beside the check of tracked files, which is itself spread
/// over every core, as `git status` does both. A thread costs about 0.2 ms
/// to start here; on 30,000 files the walk's thread saves about 25 ms and
/// the tracked check on two cores a further 23% (BENCHMARKS.md). The
/// crossover was not measured; 4,000 is a round figure between.
const THREADS_FROM_ENTRIES: usize = 4_000;

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
    /// What the look had to do, and what the memo spared it.
    pub work: Work,
    /// The ignored files of the directories it read (see
    /// `untracked::Look::ignored`), for the checks git does not show.
    pub ignored: Vec<String>,
}

/// What one look at the tree did (for tests and `PROVE_IT_TIMINGS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Tracked files compared with the index beyond their stat data (read,
    /// unless their size already differed).
    pub compared: usize,
    /// Racily clean entries taken as clean from the memo, unread.
    pub settled: usize,
    /// Entries the stat pass left to gix's status (not shown unchanged by
    /// their stat data).
    pub looked: usize,
    /// The work tree was walked for its untracked files (the memo of them
    /// did not hold).
    pub walked: bool,
    /// Microseconds spent on the tracked files (the stat pass and gix's
    /// status) and on the untracked files, which may overlap.
    pub tracked_us: u64,
    pub walk_us: u64,
    /// The staged changes came from the memo (no tree was read).
    pub staged_from_memo: bool,
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
    walk_at(root, memo, now_secs())
}

/// [`walk`], as a look that began at `read_at` (seconds since the epoch):
/// what the memo may keep depends on it.
fn walk_at(root: &Path, memo: &mut Memo, read_at: i64) -> Result<Walk> {
    let repo = open(root)?;
    let head = repo.head().context("cannot read HEAD")?;
    // Both the commit and the branch name: switching branches is a change.
    let head_id = head.id().map(|id| id.detach());
    let head_name = head.referent_name().map(|n| n.as_bstr().to_string());
    // The index file's stat data before it is read: what the memo learns
    // of its racy entries is kept for exactly this file.
    let index_stamp = std::fs::symlink_metadata(repo.index_path())
        .ok()
        .map(|meta| Stamp::of(&meta));
    let index = read_index(&repo)?;
    let index_id = IndexId {
        stamp: index_stamp,
        entries: entries_digest_of(&repo, &index, index_stamp, memo, read_at),
    };
    let mut work = Work::default();
    let (staged, staged_records) =
        staged_digest(&repo, head_id, &index, &index_id.entries, memo, &mut work)?;
    let (mut unstaged, ignored) =
        unstaged_records(&repo, root, &index, &index_id, memo, &mut work, read_at)?;
    let flags = flagged(&index, sparse_checkout(&repo));
    unstaged.extend(flags.records);
    unstaged.sort();

    let mut hasher = blake3::Hasher::new();
    hasher.update(b"prove-it tree state v3\n");
    hasher.update(
        format!(
            "head {} {}\nstaged {staged}\n",
            head_name.as_deref().unwrap_or("-"),
            head_id.map_or("unborn".into(), |id| id.to_string())
        )
        .as_bytes(),
    );
    if let Some(digest) = &flags.digest {
        hasher.update(format!("flags {digest}\n").as_bytes());
    }
    let user = memo.user_excludes.as_deref().and_then(Path::parent);
    let config = config::digest(&repo, user);
    hasher.update(format!("config {config}\n").as_bytes());
    if let Some(replaced) = replace_refs(&repo) {
        hasher.update(format!("replace {replaced}\n").as_bytes());
    }
    // An ignore file that hides itself (a `.gitignore` that names itself,
    // in a folder with tracked files) is not among the untracked files,
    // yet what it hides may be what the checks load: it is part of the
    // state. (A folder ignored whole, as `.pytest_cache/` with its own
    // `.gitignore`, is not entered, and plays no part.)
    for path in ignored
        .iter()
        .filter(|p| p.rsplit('/').next() == Some(".gitignore"))
    {
        let content = std::fs::read(root.join(path)).unwrap_or_default();
        hasher.update(format!("hidden-ignore {path} {}\n", blake3::hash(&content)).as_bytes());
    }
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
        work,
        ignored,
    })
}

/// The digest of the refs under `refs/replace/`, by name and target
/// (`None`: there are none). Objects are read as stored, not as these say
/// (`capability::loads`), but making or moving one is still something the
/// session did to the repository. One that cannot be read is said as such
/// in the digest, never left out.
fn replace_refs(repo: &gix::Repository) -> Option<String> {
    let mut bytes = Vec::new();
    match repo
        .references()
        .map_err(|e| e.to_string())
        .and_then(|refs| {
            refs.prefixed("refs/replace/")
                .map(|iter| {
                    for r in iter {
                        match r {
                            Ok(r) => {
                                bytes.extend_from_slice(r.name().as_bstr());
                                bytes.push(b' ');
                                bytes.extend_from_slice(format!("{:?}", r.target()).as_bytes());
                                bytes.push(b'\n');
                            }
                            Err(e) => {
                                bytes.extend_from_slice(format!("unreadable {e}\n").as_bytes())
                            }
                        }
                    }
                })
                .map_err(|e| e.to_string())
        }) {
        Ok(()) => {}
        Err(e) => bytes.extend_from_slice(format!("unreadable {e}\n").as_bytes()),
    }
    (!bytes.is_empty()).then(|| blake3::hash(&bytes).to_hex().to_string())
}

/// A path and what it holds there.
pub(super) type Record = (BString, String);

/// The index entries with a flag a person (or an agent) sets to make git
/// look past a file: assume-unchanged and skip-worktree.
struct Flagged {
    /// The digest of every such entry's path and flags (`None`: none has
    /// one), so that setting or clearing a flag changes the fingerprint.
    digest: Option<String>,
    /// A record for each, so that the path is among the changed files of a
    /// session that set or cleared its flag; not for skip-worktree entries
    /// of a sparse checkout (there can be very many, and they stay put).
    records: Vec<Record>,
}

fn flagged(index: &gix::index::File, sparse: bool) -> Flagged {
    use gix::index::entry::Flags;
    let mut bytes = Vec::new();
    let mut records = Vec::new();
    for entry in index.entries() {
        let flags = entry.flags & (Flags::ASSUME_VALID | Flags::SKIP_WORKTREE);
        if flags.is_empty() {
            continue;
        }
        let path = entry.path(index);
        bytes.extend_from_slice(path);
        bytes.push(b'\0');
        bytes.extend_from_slice(&flags.bits().to_le_bytes());
        let names = [
            (Flags::ASSUME_VALID, "assume-unchanged"),
            (Flags::SKIP_WORKTREE, "skip-worktree"),
        ];
        let named: Vec<&str> = names
            .iter()
            .filter(|(flag, _)| flags.contains(*flag) && !(sparse && *flag == Flags::SKIP_WORKTREE))
            .map(|(_, name)| *name)
            .collect();
        if !named.is_empty() {
            records.push((path.to_owned(), format!("flagged {}", named.join(","))));
        }
    }
    Flagged {
        digest: (!bytes.is_empty()).then(|| blake3::hash(&bytes).to_hex().to_string()),
        records,
    }
}

/// Whether the repository is a sparse checkout (`core.sparseCheckout`),
/// whose skip-worktree entries are files left out on purpose.
fn sparse_checkout(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .boolean("core.sparseCheckout")
        .unwrap_or(false)
}

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

/// The tracked paths an index flag hides from `git status` and `git diff`
/// (assume-unchanged; skip-worktree outside a sparse checkout), each with
/// the flag's name: the gate sees their changes, a person reading
/// `git diff` would not.
pub fn hidden_paths(root: &Path) -> Result<BTreeMap<String, String>> {
    let repo = open(root)?;
    let index = read_index(&repo)?;
    Ok(flagged(&index, sparse_checkout(&repo))
        .records
        .into_iter()
        .map(|(path, what)| {
            let flag = what.strip_prefix("flagged ").unwrap_or(&what).to_string();
            (path.to_str_lossy().into_owned(), flag)
        })
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
/// Remembered by HEAD's commit and the index's entries ([`StagedKey`]):
/// diffing HEAD's tree means reading every tree object, the largest part
/// of a stop on a small repository.
fn staged_digest(
    repo: &gix::Repository,
    head: Option<gix::ObjectId>,
    index: &gix::index::File,
    entries: &str,
    memo: &mut Memo,
    work: &mut Work,
) -> Result<(String, Option<Vec<Record>>)> {
    let key = head.map(|commit| StagedKey {
        commit: commit.to_string(),
        entries: entries.to_owned(),
    });
    if let Some(known) = memo
        .staged
        .as_ref()
        .filter(|m| Some(&m.key) == key.as_ref())
    {
        work.staged_from_memo = true;
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

/// The index as read: its file's stat data (taken before it was read) and
/// the digest of its entries.
struct IndexId {
    stamp: Option<Stamp>,
    entries: String,
}

/// What the staged changes depend on in the index: every entry's path,
/// mode, object id and the flags git keeps on disk (stage, intent-to-add,
/// skip-worktree, assume-valid); not stat data, which `git status`
/// refreshes.
fn entries_digest(index: &gix::index::File) -> String {
    use gix::index::entry::Flags;
    let kept =
        Flags::STAGE_MASK | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE;
    // One buffer hashed at once: five small updates an entry cost 16 ms
    // on 30,000 entries, the same bytes in one update about 1 ms.
    let mut bytes = Vec::with_capacity(index.path_backing().len() + index.entries().len() * 32);
    for entry in index.entries() {
        bytes.extend_from_slice(entry.path(index));
        bytes.push(b'\0');
        bytes.extend_from_slice(&entry.mode.bits().to_le_bytes());
        bytes.extend_from_slice(&(entry.flags & kept).bits().to_le_bytes());
        bytes.extend_from_slice(entry.id.as_bytes());
    }
    blake3::hash(&bytes).to_hex().to_string()
}

/// [`entries_digest`] of `index`, read from the file whose stat data was
/// `stamp` before it was read: the memo's when it was taken from that same
/// file (a file rewritten gets a new inode and change time), and only
/// remembered when the file was stable across the read and is older than
/// two seconds. Hashing 100,000 entries takes about 10 ms.
fn entries_digest_of(
    repo: &gix::Repository,
    index: &gix::index::File,
    stamp: Option<Stamp>,
    memo: &mut Memo,
    read_at: i64,
) -> String {
    let after = std::fs::symlink_metadata(repo.index_path())
        .ok()
        .map(|meta| Stamp::of(&meta));
    let stable = stamp.filter(|s| after == Some(*s) && s.older_than(read_at));
    if let (Some(stamp), Some(known)) = (stable, &memo.index_digest)
        && known.stamp == stamp
    {
        return known.entries.clone();
    }
    let entries = entries_digest(index);
    if let Some(stamp) = stable {
        memo.index_digest = Some(IndexDigest {
            stamp,
            entries: entries.clone(),
        });
        memo.changed = true;
    }
    entries
}

/// Every path where the work tree differs from the index, and every
/// untracked, not ignored path, each with what is on disk there.
fn unstaged_records(
    repo: &gix::Repository,
    root: &Path,
    index: &gix::index::File,
    index_id: &IndexId,
    memo: &mut Memo,
    work: &mut Work,
    read_at: i64,
) -> Result<(Vec<Record>, Vec<String>)> {
    let threads = if index.entries().len() >= THREADS_FROM_ENTRIES {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        1
    };
    unstaged_records_with(repo, root, index, index_id, memo, work, threads, read_at)
}

/// [`unstaged_records`] with the tracked files checked on `threads`
/// threads; with more than one, the directory walk runs in one more.
#[expect(
    clippy::too_many_arguments,
    reason = "the one look's parts, each used throughout"
)]
fn unstaged_records_with(
    repo: &gix::Repository,
    root: &Path,
    index: &gix::index::File,
    index_id: &IndexId,
    memo: &mut Memo,
    work: &mut Work,
    threads: usize,
    read_at: i64,
) -> Result<(Vec<Record>, Vec<String>)> {
    let known = memo
        .settled
        .clone()
        .filter(|s| Some(s.index) == index_id.stamp && s.entries == index_id.entries);
    // Only the entries the stat pass could not show unchanged go to gix.
    let rules = tracked::Rules::strict(repo)?;
    let tracked_started = std::time::Instant::now();
    let looks = tracked::needing_a_look(root, index, rules, threads);
    work.looked = looks.len();
    let subset;
    let to_look: &gix::index::State =
        if looks.len() == index.entries().len() && !tracked::any_flagged(index, &looks) {
            index
        } else {
            subset = tracked::subset(index, &looks, sparse_checkout(repo));
            &subset
        };
    let compared = Compared::default();
    let compare = SettledEq {
        root,
        index: to_look,
        known: known.as_ref(),
        read_at,
        compared: &compared,
    };
    let look_threads = if looks.len() >= THREADS_FROM_ENTRIES {
        threads
    } else {
        1
    };
    let dirwalk = repo
        .dirwalk_options()
        .context("cannot read the configuration")?
        .emit_untracked(gix::dir::walk::EmissionMode::Matching)
        .emit_ignored(Some(gix::dir::walk::EmissionMode::CollapseDirectory));
    let mut collect = Collect {
        root,
        memo,
        records: Vec::new(),
        error: None,
    };
    let micros = |since: std::time::Instant| since.elapsed().as_micros() as u64;
    let key = untracked::key(
        repo,
        root,
        &dirwalk,
        &index_id.entries,
        collect.memo.user_excludes.as_deref(),
    );
    let listing = collect.memo.untracked.take();
    let untracked = |repo: Option<&gix::Repository>| {
        let started = std::time::Instant::now();
        untracked::look(
            repo,
            root,
            index,
            dirwalk,
            key.as_deref(),
            listing.as_ref(),
            read_at,
        )
        .map(|look| (look, micros(started)))
    };
    let (look, walk_us) = if threads > 1 {
        std::thread::scope(|scope| -> Result<_> {
            // gix handles stay in their thread: a walk opens its own.
            let walk = scope.spawn(|| untracked(None));
            if !looks.is_empty() {
                tracked_changes(repo, index, to_look, compare, look_threads, &mut collect)?;
            }
            work.tracked_us = micros(tracked_started);
            walk.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?
    } else {
        if !looks.is_empty() {
            tracked_changes(repo, index, to_look, compare, 1, &mut collect)?;
        }
        work.tracked_us = micros(tracked_started);
        untracked(Some(repo))?
    };
    work.walk_us = walk_us;
    work.walked = look.walked;
    match look.remember {
        Some(remember) => {
            collect.memo.untracked = remember;
            collect.memo.changed = true;
        }
        None => collect.memo.untracked = listing,
    }
    for path in &look.paths {
        collect.untracked(path.as_ref());
    }
    if let Some(error) = collect.error {
        return Err(error);
    }
    let records = collect.records;
    work.compared = compared.read.load(Ordering::Relaxed);
    work.settled = compared.skipped.load(Ordering::Relaxed);
    let mut differ = compared
        .differ
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    differ.sort();
    // Saved only when it says more than the memo did: a read-only stop on a
    // tree already settled writes nothing.
    let learnt = compared.newly_settled.load(Ordering::Relaxed) > 0
        || known.as_ref().is_some_and(|k| k.differ != differ);
    if let Some(index) = index_id
        .stamp
        .filter(|_| learnt && differ.len() <= SETTLED_DIFFER_MAX)
    {
        memo.settled = Some(Settled {
            index,
            entries: index_id.entries.clone(),
            read_at,
            differ,
        });
        memo.changed = true;
    }
    Ok((records, look.ignored))
}

/// Every entry of `to_look` (entries of `index`) whose work-tree state
/// differs from the entry, given to `collect`, checked on `threads`
/// threads (the calling one when 1). gix's own status would start a thread
/// for this even on one core; its parts are called here as it calls them,
/// with nothing to rename.
fn tracked_changes(
    repo: &gix::Repository,
    index: &gix::index::State,
    to_look: &gix::index::State,
    compare: SettledEq<'_>,
    threads: usize,
    collect: &mut Collect<'_>,
) -> Result<()> {
    use gix::status::plumbing::index_as_worktree as status;
    let workdir = repo.workdir().context("the repository has no work tree")?;
    let stack = repo
        .attributes_only(
            index,
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
        )
        .context("cannot read the attributes")?
        .detach();
    let (filter, stack) = gix::filter::Pipeline::new(repo, stack)
        .context("cannot read the filter configuration")?
        .into_parts();
    let pathspec = gix::pathspec::Search::from_specs(None, None, workdir)
        .context("cannot make an empty pathspec")?;
    let rules = tracked::Rules::strict(repo)?;
    let options = status::Options {
        fs: rules.fs,
        thread_limit: Some(threads),
        stat: rules.stat,
        fscache: false,
    };
    gix::status::plumbing::index_as_worktree(
        to_look,
        workdir,
        collect,
        compare,
        Submodules::new(repo, index)?,
        repo.objects
            .clone()
            .into_arc()
            .context("cannot share the object store")?,
        &mut gix::progress::Discard,
        status::Context {
            pathspec,
            stack,
            filter,
            should_interrupt: &AtomicBool::new(false),
        },
        options,
    )
    .context("cannot compare the index with the work tree")?;
    Ok(())
}

/// Changed racy entries kept in the memo, at most; with more, nothing is
/// remembered (each is read at every look anyway, to hash it).
const SETTLED_DIFFER_MAX: usize = 1_000;

/// Seconds since the epoch, by the clock file times are set by.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// What the content comparisons of one look found (shared by the status's
/// threads).
#[derive(Default)]
struct Compared {
    read: AtomicUsize,
    skipped: AtomicUsize,
    /// Entries read, found clean, and old enough to be trusted by their
    /// stat data from now on.
    newly_settled: AtomicUsize,
    differ: Mutex<Vec<String>>,
}

/// gix's content comparison ([`FastEq`]), except for racily clean entries
/// the memo found clean before ([`Settled`]): those are not read again.
#[derive(Clone)]
struct SettledEq<'a> {
    root: &'a Path,
    /// The index whose entries are compared.
    index: &'a gix::index::State,
    known: Option<&'a Settled>,
    read_at: i64,
    compared: &'a Compared,
}

impl CompareBlobs for SettledEq<'_> {
    type Output = ();

    fn compare_blobs<'a, 'b>(
        &mut self,
        entry: &gix::index::Entry,
        worktree_blob_size: u64,
        data: impl ReadData<'a>,
        buf: &mut Vec<u8>,
    ) -> gix::error::Result<Option<()>> {
        let rela_path = entry.path(self.index);
        let path_str = rela_path.to_str().ok();
        let mtime = i64::from(entry.stat.mtime.secs);
        // Comparing every field of the stat data, nanoseconds and change
        // time included, is what makes "not written since" true: a write
        // sets both times to now, and the change time cannot be set back.
        let unchanged_since = || {
            let path = self.root.join(std::ffi::OsStr::from_bytes(rela_path));
            std::fs::symlink_metadata(path).is_ok_and(|meta| stat_equals(&meta, &entry.stat))
        };
        if let (Some(known), Some(path)) = (self.known, path_str)
            && mtime + 2 < known.read_at
            && !known.differ.iter().any(|d| d == path)
            && unchanged_since()
        {
            self.compared.skipped.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        self.compared.read.fetch_add(1, Ordering::Relaxed);
        let change = FastEq.compare_blobs(entry, worktree_blob_size, data, buf)?;
        match (&change, path_str) {
            (Some(_), Some(path)) => {
                if let Ok(mut differ) = self.compared.differ.lock() {
                    differ.push(path.to_owned());
                }
            }
            // Only an entry the next look can skip is news: one whose file
            // has the entry's stat data (a touched file is read every time).
            (None, Some(_)) if mtime + 2 < self.read_at && unchanged_since() => {
                self.compared.newly_settled.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        Ok(change)
    }
}

/// The file's stat data is the index entry's, field by field, as the index
/// keeps them (32 bits each).
fn stat_equals(meta: &std::fs::Metadata, stat: &gix::index::entry::Stat) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.mtime() as u32 == stat.mtime.secs
        && meta.mtime_nsec() as u32 == stat.mtime.nsecs
        && meta.ctime() as u32 == stat.ctime.secs
        && meta.ctime_nsec() as u32 == stat.ctime.nsecs
        && meta.dev() as u32 == stat.dev
        && meta.ino() as u32 == stat.ino
        && meta.uid() == stat.uid
        && meta.gid() == stat.gid
        && meta.size() as u32 == stat.size
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

impl<'index> gix::status::plumbing::index_as_worktree::VisitEntry<'index> for Collect<'_> {
    type ContentChange = ();
    type SubmoduleStatus = gix::submodule::Status;

    fn visit_entry(
        &mut self,
        _entries: &'index [gix::index::Entry],
        _entry: &'index gix::index::Entry,
        _entry_index: usize,
        rela_path: &'index BStr,
        status: EntryStatus<(), gix::submodule::Status>,
    ) {
        self.modified(rela_path, status);
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
    fn new(repo: &gix::Repository, index: &gix::index::State) -> Result<Self> {
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

    fn records(root: &Path, threads: usize) -> Vec<(BString, String)> {
        let repo = open(root).expect("open");
        let index = gix::index::File::at_or_default(
            repo.index_path(),
            repo.object_hash(),
            false,
            Default::default(),
        )
        .expect("index");
        let index_id = IndexId {
            stamp: None,
            entries: entries_digest(&index),
        };
        let mut work = Work::default();
        let mut records = unstaged_records_with(
            &repo,
            root,
            &index,
            &index_id,
            &mut Memo::default(),
            &mut work,
            threads,
            now_secs(),
        )
        .expect("status")
        .0;
        records.sort();
        records
    }

    /// The stat pass leaves to gix's status every entry that status,
    /// given the whole index, reports as changed, however it changed, and
    /// takes the untouched ones off its hands. A miss here is a silent
    /// pass: the change would not be in the fingerprint.
    #[test]
    fn the_stat_pass_leaves_every_change_to_gix() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let tmp = tempfile::tempdir().expect("tmp");
        let root = &tmp.path().canonicalize().expect("canonical");
        for path in [
            "a/f.txt",
            "b/g.txt",
            "plain.txt",
            "tool.sh",
            "gone.txt",
            "dir-to-be.txt",
            "c/deep/h.txt",
            "same-size.txt",
        ] {
            write(root, path, &format!("{path}\n"));
            // Old enough that no entry is racy: those always go to gix.
            touch(&root.join(path), 1_700_000_000);
        }
        symlink("plain.txt", root.join("link")).expect("symlink");
        git(root, &["init", "-q", "-b", "main"]);
        // A mode change is then seen only by comparing modes, not by the
        // change time it sets.
        git(root, &["config", "core.trustctime", "false"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);

        // The same files behind a symlinked directory: same inodes, same
        // stat data, reached through `a`.
        std::fs::rename(root.join("a"), root.join("a-real")).expect("mv");
        symlink("a-real", root.join("a")).expect("symlink dir");
        std::fs::set_permissions(root.join("tool.sh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::fs::remove_file(root.join("gone.txt")).expect("rm");
        std::fs::remove_file(root.join("dir-to-be.txt")).expect("rm");
        std::fs::create_dir(root.join("dir-to-be.txt")).expect("mkdir");
        std::fs::remove_file(root.join("link")).expect("rm link");
        symlink("tool.sh", root.join("link")).expect("relink");
        write(root, "c/deep/h.txt", "longer than it was\n");
        write(root, "new.txt", "new\n");
        git(root, &["add", "-N", "new.txt"]);

        let repo = open(root).expect("open");
        let index = read_index(&repo).expect("index");
        let compared = Compared::default();
        let compare = SettledEq {
            root,
            index: &index,
            known: None,
            read_at: now_secs(),
            compared: &compared,
        };
        let mut memo = Memo::default();
        let mut collect = Collect {
            root,
            memo: &mut memo,
            records: Vec::new(),
            error: None,
        };
        tracked_changes(&repo, &index, &index, compare, 1, &mut collect).expect("gix status");
        let changed: Vec<String> = collect.records.iter().map(|(p, _)| p.to_string()).collect();
        for expected in [
            "a/f.txt",
            "tool.sh",
            "gone.txt",
            "dir-to-be.txt",
            "link",
            "c/deep/h.txt",
            "new.txt",
        ] {
            assert!(
                changed.iter().any(|p| p == expected),
                "{expected} in {changed:?}"
            );
        }
        let rules = tracked::Rules::strict(&repo).expect("rules");
        for threads in [1, 3] {
            let looks: Vec<String> = tracked::needing_a_look(root, &index, rules, threads)
                .into_iter()
                .map(|i| index.entries()[i].path(&index).to_string())
                .collect();
            for path in &changed {
                assert!(
                    looks.contains(path),
                    "{path} not left to gix: {looks:?} ({threads} threads)"
                );
            }
            for untouched in ["b/g.txt", "plain.txt"] {
                assert!(
                    !looks.iter().any(|p| p == untouched),
                    "{untouched} in {looks:?}"
                );
            }
        }
    }

    /// Every way a name can appear, go or change meaning under the
    /// untracked memo is seen: the memo is dropped and the tree walked, and
    /// the look gives what a look without any memo gives. A write to an
    /// untracked file is seen with the memo holding.
    #[test]
    fn the_ignored_files_of_the_folders_read_are_listed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = &tmp.path().canonicalize().expect("canonical");
        git(root, &["init", "-q", "-b", "main"]);
        write(root, ".gitignore", "build/\n*.log\n");
        write(root, "tests/tracked.txt", "a\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        write(root, "tests/.gitignore", ".gitignore\nconftest.py\n");
        write(root, "tests/conftest.py", "x = 1\n");
        write(root, "a.log", "noise\n");
        write(root, "build/out.o", "ignored whole\n");
        write(root, ".pytest_cache/.gitignore", "*\n");
        write(root, ".pytest_cache/v/x", "[]\n");
        let walk = walk(root, &mut Memo::default()).expect("walk");
        let mut ignored = walk.ignored.clone();
        ignored.sort();
        assert_eq!(ignored, ["a.log", "tests/.gitignore", "tests/conftest.py"]);
    }

    #[test]
    fn the_untracked_memo_sees_every_change_under_it() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = &tmp.path().canonicalize().expect("canonical");
        if !untracked::times_are_kept(root) {
            errln!("skipped: the temp dir's filesystem is not one the memo is used on");
            return;
        }
        let state = tempfile::tempdir().expect("state");
        git(root, &["init", "-q", "-b", "main"]);
        write(root, ".gitignore", "build/\n*.log\n");
        write(root, "a/tracked.txt", "a\n");
        write(root, "b/c/tracked.txt", "c\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        write(root, "a/noise.log", "ignored\n");
        write(root, "u/x.txt", "untracked\n");
        write(root, "build/out.o", "ignored\n");
        std::fs::create_dir(root.join("empty")).expect("mkdir");
        write(root, "nested/inner.txt", "inside a repository\n");
        git(&root.join("nested"), &["init", "-q"]);

        // A look far enough after every write that the memo may be kept.
        let later = || now_secs() + 10;
        let truth = |root: &Path| {
            walk_at(root, &mut Memo::default(), later())
                .expect("look")
                .records
                .expect("records")
        };
        // The user's global excludes file, as settings name it.
        let excludes = state.path().join("no-such-excludes");
        let mut memo = Memo::load(&state.path().join("none-yet"), &excludes);
        let look = |memo: &mut Memo| {
            let seen = walk_at(root, memo, later()).expect("look");
            let loaded = next_stop(std::mem::take(memo), state.path());
            *memo = loaded;
            seen
        };
        let first = look(&mut memo);
        assert!(first.work.walked, "the first look walks");
        assert!(memo.untracked.is_some(), "and its listing is kept");
        let second = look(&mut memo);
        assert!(!second.work.walked, "an unchanged tree is not walked again");
        assert_eq!(second.records, first.records);

        type Change = Box<dyn Fn(&Path)>;
        let changes: Vec<(&str, Change)> = vec![
            (
                "a file added beside tracked ones",
                Box::new(|r| write(r, "a/new.txt", "n\n")),
            ),
            (
                "a file in an empty directory",
                Box::new(|r| write(r, "empty/new.txt", "n\n")),
            ),
            (
                "a file in an untracked directory",
                Box::new(|r| write(r, "u/y.txt", "y\n")),
            ),
            (
                "a file removed",
                Box::new(|r| std::fs::remove_file(r.join("u/x.txt")).expect("rm")),
            ),
            (
                "a repository that stops being one",
                Box::new(|r| std::fs::remove_dir_all(r.join("nested/.git")).expect("rm .git")),
            ),
            (
                "a rule that stops ignoring",
                Box::new(|r| write(r, ".gitignore", "build/\n")),
            ),
            (
                "the repository's excludes",
                Box::new(|r| write(r, ".git/info/exclude", "u/\n")),
            ),
            (
                "a file added to the index",
                Box::new(|r| git(r, &["add", "a/new.txt"]).truncate(0)),
            ),
            (
                "a file in an ignored directory",
                Box::new(|r| write(r, "build/more.o", "m\n")),
            ),
            (
                "the user's global excludes",
                Box::new(move |_| std::fs::write(&excludes, "a/new.txt\n").expect("write")),
            ),
        ];
        for (what, change) in &changes {
            change(root);
            let seen = look(&mut memo);
            assert!(seen.work.walked, "{what}: the memo was trusted");
            assert_eq!(seen.records, Some(truth(root)), "{what}");
            assert!(
                !look(&mut memo).work.walked,
                "{what}: the memo is kept again"
            );
        }

        // A write to an untracked file changes no directory: the memo
        // holds, and the file is hashed anyway.
        let before = look(&mut memo).state.fingerprint;
        write(root, "a/new.txt", "written again, longer\n");
        let seen = look(&mut memo);
        assert!(!seen.work.walked);
        assert_ne!(seen.state.fingerprint, before);
        assert_eq!(seen.records, Some(truth(root)));

        // A directory changed within two seconds of the look is not
        // remembered by its times: a change in the same tick would not
        // show in them.
        write(root, "u/z.txt", "z\n");
        walk_at(root, &mut memo, now_secs()).expect("look");
        assert!(
            memo.untracked.is_none(),
            "a listing with a fresh directory was kept"
        );
    }

    /// The index entries' digest is taken from the memo only for the very
    /// index file it was computed from: a stage rewrites the file, and the
    /// staged change is seen.
    #[test]
    fn the_index_digest_memo_sees_a_new_stage() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = &tmp.path().canonicalize().expect("canonical");
        let state = tempfile::tempdir().expect("state");
        git(root, &["init", "-q", "-b", "main"]);
        write(root, "a.txt", "a\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        let later = now_secs() + 10;
        let mut memo = first_stop(state.path());
        let first = walk_at(root, &mut memo, later).expect("look");
        assert!(memo.index_digest.is_some(), "the digest is remembered");
        let mut memo = next_stop(memo, state.path());

        write(root, "a.txt", "staged\n");
        git(root, &["add", "a.txt"]);
        std::fs::write(root.join("a.txt"), "a\n").expect("restore the work tree");
        let staged = walk_at(root, &mut memo, later).expect("look");
        assert_ne!(staged.state, first.state, "the stage was not seen");
        let mut none = Memo::load(
            &state.path().join("fresh.json"),
            &state.path().join("no-such-excludes"),
        );
        let fresh = walk_at(root, &mut none, later).expect("look");
        assert_eq!(staged.state, fresh.state);
    }

    /// The small-repository path (one thread) and the large one (the
    /// directory walk in a thread of its own, the tracked files split in
    /// chunks over several) must see exactly the same changes.
    #[test]
    fn one_thread_and_many_threads_agree() {
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

        let one = records(root, 1);
        for threads in [2, 3] {
            assert_eq!(one, records(root, threads), "{threads} threads");
        }
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

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// Sets a file's modification time to `secs` (its change time becomes
    /// now: nothing can set that back).
    fn touch(path: &Path, secs: i64) {
        let out = std::process::Command::new("touch")
            .arg("-d")
            .arg(format!("@{secs}"))
            .arg(path)
            .output()
            .expect("touch");
        assert!(out.status.success(), "{out:?}");
    }

    /// The memo of a session's first stop: none saved yet, the user's
    /// excludes file as [`next_stop`] names it.
    fn first_stop(dir: &Path) -> Memo {
        Memo::load(&dir.join("memo.json"), &dir.join("no-such-excludes"))
    }

    /// Through a save and a load, as from one stop to the next.
    fn next_stop(memo: Memo, dir: &Path) -> Memo {
        let file = dir.join("memo.json");
        memo.save(&file).expect("save");
        Memo::load(&file, &dir.join("no-such-excludes"))
    }

    /// A fresh commit leaves entries as old as the index ("racy"): their
    /// content is compared at every look until something rewrites the
    /// index, which prove-it never does. The memo reads each of them once;
    /// a file changed under it (same size, its modification time set back)
    /// is still seen, by its change time.
    #[test]
    fn racily_clean_entries_are_read_once_and_a_change_under_them_is_seen() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = &tmp.path().join("repo");
        git(tmp.path(), &["init", "-q", "-b", "main", "repo"]);
        let past = now_secs() - 60;
        for i in 0..20 {
            let path = format!("d{}/f{i}.txt", i % 3);
            write(root, &path, &format!("file {i:02}\n"));
            touch(&root.join(&path), past);
        }
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        // The index as old as its entries: all twenty are racy.
        touch(&root.join(".git/index"), past);

        let mut memo = first_stop(tmp.path());
        let first = walk(root, &mut memo).expect("first look");
        assert_eq!((first.work.compared, first.work.settled), (20, 0));
        let mut memo = next_stop(memo, tmp.path());
        let second = walk(root, &mut memo).expect("second look");
        assert_eq!((second.work.compared, second.work.settled), (0, 20));
        assert_eq!(second.state, first.state);

        // Same size, same modification time: only the change time tells.
        std::fs::write(root.join("d1/f4.txt"), "FILE 04\n").expect("edit");
        touch(&root.join("d1/f4.txt"), past);
        let mut memo = next_stop(memo, tmp.path());
        let third = walk(root, &mut memo).expect("third look");
        assert_ne!(
            third.state, first.state,
            "the change under the memo was missed"
        );
        assert_eq!((third.work.compared, third.work.settled), (1, 19));
        let changed: Vec<String> = third
            .records
            .expect("records")
            .iter()
            .map(|(path, _)| path.to_string())
            .collect();
        assert_eq!(changed, ["d1/f4.txt"]);

        // And back: the same content as the index again.
        std::fs::write(root.join("d1/f4.txt"), "file 04\n").expect("revert");
        let mut memo = next_stop(memo, tmp.path());
        let fourth = walk(root, &mut memo).expect("fourth look");
        assert_eq!(fourth.state, first.state);

        // d1/f4.txt is now clean with stat data unlike its entry's: read at
        // every look, and nothing to remember, so the memo is not rewritten.
        let mut memo = next_stop(memo, tmp.path());
        let fifth = walk(root, &mut memo).expect("fifth look");
        assert_eq!((fifth.work.compared, fifth.work.settled), (1, 19));
        assert!(!memo.changed, "a read-only look rewrote the memo");
    }

    /// The staged changes are remembered by HEAD and the index's entries:
    /// kept when `index.skipHash` leaves the index without a checksum and
    /// when `git status` rewrites the index with new stat data; recomputed
    /// when a new version of a file is staged.
    #[test]
    fn the_staged_memo_survives_skip_hash_and_git_status_but_not_a_new_stage() {
        for skip_hash in [true, false] {
            let tmp = tempfile::tempdir().expect("tmp");
            let root = &tmp.path().join("repo");
            git(tmp.path(), &["init", "-q", "-b", "main", "repo"]);
            git(root, &["config", "index.skipHash", &skip_hash.to_string()]);
            for i in 0..10 {
                write(root, &format!("f{i}.txt"), &format!("{i}\n"));
            }
            git(root, &["add", "-A"]);
            git(root, &["commit", "-q", "-m", "base"]);
            write(root, "f1.txt", "staged\n");
            git(root, &["add", "f1.txt"]);

            let mut memo = first_stop(tmp.path());
            let first = walk(root, &mut memo).expect("first look");
            assert!(!first.work.staged_from_memo);
            let mut memo = next_stop(memo, tmp.path());
            let second = walk(root, &mut memo).expect("second look");
            assert!(second.work.staged_from_memo, "skipHash={skip_hash}");
            assert_eq!(second.state, first.state);

            // New stat data for an unchanged file: `git status` refreshes
            // the index and writes it again.
            let index = std::fs::read(root.join(".git/index")).expect("index");
            touch(&root.join("f2.txt"), now_secs() - 30);
            git(root, &["status", "--porcelain"]);
            let rewritten = std::fs::read(root.join(".git/index")).expect("index");
            assert_ne!(index, rewritten, "git status did not rewrite the index");
            let mut memo = next_stop(memo, tmp.path());
            let third = walk(root, &mut memo).expect("third look");
            assert!(third.work.staged_from_memo, "skipHash={skip_hash}");
            assert_eq!(third.state, first.state);

            // Another version staged: the memo must not answer for it.
            write(root, "f1.txt", "staged again\n");
            git(root, &["add", "f1.txt"]);
            let mut memo = next_stop(memo, tmp.path());
            let fourth = walk(root, &mut memo).expect("fourth look");
            assert!(!fourth.work.staged_from_memo, "skipHash={skip_hash}");
            assert_ne!(fourth.state, first.state, "a new stage was missed");
        }
    }
}
