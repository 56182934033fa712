//! The throwaway copy of a work tree: where `prove-it canary` plants its
//! defects and where the replay puts the session's starting checks back
//! (`super::replay`). A detached `git worktree` of HEAD in a temp dir, with
//! the person's staged and unstaged changes, untracked files and small
//! ignored files (generated code the checks need) laid over it, their
//! dependency folders linked in, and a build cache of its own
//! ([`build_caches`]). The person's own work tree is only read.
//!
//! The copy is removed when it is dropped, and when the canary is
//! interrupted (Ctrl-C, SIGTERM, SIGHUP): a signal thread kills the running
//! `verify.sh`, removes the copy and exits. A copy left by a process that
//! was killed outright (kill -9, or a hook its host timed out) is removed
//! by the next copy made of that repository.

mod own_code;

use crate::capability::verify;
use anyhow::{Context, Result, bail};
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Ignored folders that hold what the checks run with, not what they
/// check. They are linked into the copy, not copied: a `verify.sh` that
/// runs `npm test` or `.venv/bin/pytest` finds its tools there too.
const DEPENDENCY_DIRS: [&str; 3] = ["node_modules", ".venv", "venv"];

/// The temp dir's name starts with this and the process id of its maker.
const PREFIX: &str = "prove-it-canary-";

/// What to remove: the temp dir holding the copy, and the worktree's
/// record in the repository's git dir.
#[derive(Clone)]
struct Leftovers {
    temp: PathBuf,
    admin: Option<PathBuf>,
}

impl Leftovers {
    /// Removes both; never fails (there is nothing more to do if it can't).
    fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.temp);
        if let Some(admin) = &self.admin {
            let _ = std::fs::remove_dir_all(admin);
        }
    }
}

/// The copy the signal thread must remove if the canary is interrupted.
static PENDING: Mutex<Option<Leftovers>> = Mutex::new(None);

/// Set by the signal thread before it cleans up and exits.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// When the canary has been interrupted, waits here for the signal thread
/// to finish cleaning up and end the process: the main thread, seeing its
/// `verify.sh` killed and its copy gone, must not report that as a result.
pub fn halt_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

pub struct Copy {
    /// The copy's work tree.
    pub root: PathBuf,
    /// A folder beside the copy (not in it) for the canary's own files.
    pub scratch: PathBuf,
    /// What every run in the copy needs to import the copy's code, not the
    /// work tree's ([`own_code`]).
    pub redirect: own_code::Redirect,
    leftovers: Leftovers,
}

impl Drop for Copy {
    fn drop(&mut self) {
        self.leftovers.remove();
        if let Ok(mut pending) = PENDING.lock() {
            *pending = None;
        }
    }
}

/// From now on, Ctrl-C, SIGTERM and SIGHUP kill the running `verify.sh`,
/// remove the copy and end the canary with 130.
pub fn clean_up_on_signals() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot set up the clean-up on Ctrl-C")?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            verify::stop_running();
            let pending = PENDING.lock().ok().and_then(|mut p| p.take());
            if let Some(leftovers) = pending {
                leftovers.remove();
            }
            errln!("\nprove-it canary: interrupted; the throwaway copy is removed.");
            std::process::exit(130);
        }
    });
    Ok(())
}

/// Makes the copy of `repo`'s work tree (see the module's comment).
pub fn make(repo: &Path) -> Result<Copy> {
    let common = PathBuf::from(text(&git(repo, &["rev-parse", "--git-common-dir"])?));
    let common = if common.is_absolute() {
        common
    } else {
        repo.join(common)
    };
    remove_stale(&common);
    if git(repo, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).is_err() {
        bail!(
            "this repository has no commit yet, and the throwaway copy is made from one; commit once (`git commit`), then run the canary again"
        );
    }

    let temp = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .tempdir()
        .context("cannot make a temp dir for the throwaway copy")?
        .keep();
    let name = repo.file_name().map_or_else(
        || "copy".into(),
        |n| {
            n.to_string_lossy()
                .replace(|c: char| c.is_whitespace(), "-")
        },
    );
    let root = temp.join(&name);
    let scratch = temp.join("canary");
    let mut leftovers = Leftovers { temp, admin: None };
    *PENDING.lock().unwrap_or_else(|p| p.into_inner()) = Some(leftovers.clone());
    // The copy exists from here on: every exit removes it.
    let mut copy = Copy {
        root: root.clone(),
        scratch,
        redirect: own_code::Redirect::default(),
        leftovers: leftovers.clone(),
    };
    std::fs::create_dir_all(&copy.scratch).context("cannot make the canary's scratch dir")?;

    // The person's own hooks (post-checkout, say) stay out of it.
    git(
        repo,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "worktree",
            "add",
            "--detach",
            "--quiet",
            &root.to_string_lossy(),
            "HEAD",
        ],
    )
    .context("cannot make a throwaway worktree of HEAD")?;
    let admin = PathBuf::from(text(&git(&root, &["rev-parse", "--git-dir"])?));
    leftovers.admin = Some(if admin.is_absolute() {
        admin
    } else {
        root.join(admin)
    });
    *PENDING.lock().unwrap_or_else(|p| p.into_inner()) = Some(leftovers.clone());
    copy.leftovers = leftovers;

    // Staged changes into the copy's index and tree, then unstaged ones
    // into its tree: `git diff --check` sees what it sees in the original.
    let diff = |cached: bool| -> Result<Vec<u8>> {
        // A mode change counts whatever `core.fileMode` says (the gate
        // compares modes regardless: `tracked::Rules::strict`).
        let mut args = vec![
            "-c",
            "core.fileMode=true",
            "diff",
            "--binary",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-relative",
            "--ignore-submodules=all",
            "--src-prefix=a/",
            "--dst-prefix=b/",
        ];
        if cached {
            args.push("--cached");
        }
        git(repo, &args)
    };
    let staged = diff(true)?;
    if !staged.is_empty() {
        apply(&root, &staged, true).context("cannot copy your staged changes")?;
    }
    let unstaged = diff(false)?;
    if !unstaged.is_empty() {
        apply(&root, &unstaged, false).context("cannot copy your unstaged changes")?;
    }
    copy_flagged(repo, &root)?;
    copy_untracked(repo, &root)?;
    copy_ignored(repo, &root)?;
    for dir in DEPENDENCY_DIRS {
        let from = repo.join(dir);
        let to = root.join(dir);
        if from.is_dir() && std::fs::symlink_metadata(&to).is_err() {
            if dir == "node_modules"
                && let Some(said) = own_code::node_modules(repo, &root)?
            {
                copy.redirect.said.extend(said);
                continue;
            }
            std::os::unix::fs::symlink(&from, &to)
                .with_context(|| format!("cannot link `{dir}` into the copy"))?;
        }
    }
    let own = own_code::redirect(repo, &root)?;
    copy.redirect.env.extend(own.env);
    copy.redirect.said.extend(own.said);
    Ok(copy)
}

/// Removes copies whose maker is gone (killed outright): their temp dir
/// and their worktree record.
fn remove_stale(common: &Path) {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(gitdir) = std::fs::read_to_string(entry.path().join("gitdir")) else {
            continue;
        };
        // `<temp>/<name>/.git`: the temp dir is two levels up.
        let Some(temp) = Path::new(gitdir.trim()).parent().and_then(Path::parent) else {
            continue;
        };
        let Some(pid) = temp
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.split('-').next())
            .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            Leftovers {
                temp: temp.to_path_buf(),
                admin: Some(entry.path()),
            }
            .remove();
        }
    }
}

/// Applies a patch in the copy (`index`: to its index too).
fn apply(root: &Path, patch: &[u8], index: bool) -> Result<()> {
    let mut args = vec!["apply", "--whitespace=nowarn"];
    if index {
        args.push("--index");
    }
    let mut child = Command::new("git")
        .args(&args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run git")?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let written = stdin.write_all(patch);
    drop(stdin);
    let out = child.wait_with_output().context("cannot run git")?;
    if !out.status.success() {
        bail!("git apply: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    written.context("cannot hand git the patch")
}

/// Copies the tracked files `git diff` looks past: those marked
/// assume-unchanged (`git update-index --assume-unchanged`) or
/// skip-worktree, as they are in the work tree (one gone from it is gone
/// from the copy), but skip-worktree files a sparse checkout left out.
/// Otherwise the copy would hold HEAD's version of a file the agent broke
/// and then hid.
fn copy_flagged(repo: &Path, root: &Path) -> Result<()> {
    let sparse = git(repo, &["config", "--bool", "core.sparseCheckout"])
        .is_ok_and(|out| text(&out) == "true");
    let list = git(repo, &["ls-files", "-z", "-v"])?;
    for line in list.split(|&b| b == 0) {
        // `TAG PATH`: a lowercase tag is assume-unchanged, `S` skip-worktree.
        let [tag, b' ', path @ ..] = line else {
            continue;
        };
        let assumed = tag.is_ascii_lowercase();
        let skipped = tag.eq_ignore_ascii_case(&b'S');
        if !assumed && !skipped {
            continue;
        }
        use std::os::unix::ffi::OsStrExt;
        let rel = Path::new(std::ffi::OsStr::from_bytes(path));
        if std::fs::symlink_metadata(repo.join(rel)).is_ok() {
            copy_file(repo, root, rel)?;
        } else if assumed || !sparse {
            match std::fs::remove_file(root.join(rel)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot copy `{}`", rel.display()));
                }
            }
        }
    }
    Ok(())
}

/// Copies the files git does not track and does not ignore.
fn copy_untracked(repo: &Path, root: &Path) -> Result<()> {
    let list = git(repo, &["ls-files", "-z", "--others", "--exclude-standard"])?;
    for rel in listed_files(&list) {
        copy_file(repo, root, rel)?;
    }
    Ok(())
}

/// Ignored files are copied when they are small files of their own, not
/// folders: generated code and data the checks need (a `_version.py` a
/// build wrote, compiled translations), not build output or caches (an
/// ignored folder is listed whole and left out). At most this many, of at
/// most this size each, and this much in all.
const IGNORED_FILES: usize = 2_000;
const IGNORED_FILE_BYTES: u64 = 1 << 20;
const IGNORED_BYTES: u64 = 32 << 20;

/// Copies the small ignored files (see [`IGNORED_FILES`]).
fn copy_ignored(repo: &Path, root: &Path) -> Result<()> {
    let list = super::loads::ignored_files(repo)?;
    let (mut count, mut bytes) = (0, 0);
    for rel in list.iter().map(Path::new) {
        let Ok(meta) = std::fs::symlink_metadata(repo.join(rel)) else {
            continue;
        };
        if !meta.is_file() || meta.len() > IGNORED_FILE_BYTES {
            continue;
        }
        if count == IGNORED_FILES || bytes + meta.len() > IGNORED_BYTES {
            break;
        }
        count += 1;
        bytes += meta.len();
        copy_file(repo, root, rel)?;
    }
    Ok(())
}

/// The paths of a `git ls-files -z` listing, but folders (a nested
/// repository, an ignored folder), which end in `/`.
fn listed_files(list: &[u8]) -> impl Iterator<Item = &Path> {
    use std::os::unix::ffi::OsStrExt;
    list.split(|&b| b == 0)
        .filter(|p| !p.is_empty() && !p.ends_with(b"/"))
        .map(|p| Path::new(std::ffi::OsStr::from_bytes(p)))
}

/// Copies `rel` from `repo` into the copy at `root`, mode and all (a
/// symlink as a symlink).
fn copy_file(repo: &Path, root: &Path, rel: &Path) -> Result<()> {
    let (from, to) = (repo.join(rel), root.join(rel));
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot copy `{}`", rel.display()))?;
    }
    let meta = std::fs::symlink_metadata(&from)
        .with_context(|| format!("cannot read `{}`", rel.display()))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&from)?;
        std::os::unix::fs::symlink(target, &to)
    } else {
        std::fs::copy(&from, &to).and_then(|_| {
            std::fs::set_permissions(
                &to,
                std::fs::Permissions::from_mode(meta.permissions().mode()),
            )
        })
    }
    .with_context(|| format!("cannot copy `{}` into the copy", rel.display()))
}

/// `git ARGS` in `dir`; its stdout, or an error with what git said.
pub fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git (the canary's copy is a `git worktree`)")?;
    if !out.status.success() {
        bail!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_string()
}

/// The environment that points a copy's builds at a build cache of their
/// own, kept between copies of the same repository (under `cache`), so
/// only the first copy builds the dependencies: Cargo's target dir.
///
/// Never the person's own target dir (`target/`, or their
/// `CARGO_TARGET_DIR`): Cargo fingerprints a workspace's own crates by
/// paths relative to the workspace and by file times, so a build of the
/// copy's sources (a planted defect, the old tests) written there would
/// look fresh to the person's next `cargo build` and be used in place of
/// their own code. Node's `node_modules` and Python's `.venv` are linked
/// instead ([`DEPENDENCY_DIRS`]): the checks only read them. Go's build
/// cache is shared by Go itself, and checks each entry by its inputs.
pub fn build_caches(repo: &Path, cache: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    let mut env = Vec::new();
    if repo.join("Cargo.toml").is_file() {
        let key = blake3::hash(repo.as_os_str().as_encoded_bytes()).to_hex();
        let dir = cache.join("copies").join(&key[..16]).join("cargo-target");
        env.push(("CARGO_TARGET_DIR", dir.into_os_string()));
    }
    env
}
