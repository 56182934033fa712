//! What the checks load that git does not show: caches that answer for
//! source by its modification time, and git's replace refs. Every run of
//! `verify.sh` the gate makes (the stop's, the replay's) asks this room
//! first, so that what runs is built from the files as they are.
//!
//! - **Modification times set back.** Python's bytecode and Cargo's build
//!   output count as fresh while the source's modification time and size
//!   say so; `touch -d` can set a time back, and the change time it leaves
//!   cannot be. A file the session changed whose modification time is
//!   older than its change time gets a current one before the run.
//! - **Python's bytecode** is read and written under a folder of the
//!   gate's own (`PYTHONPYCACHEPREFIX`, which pytest's assertion rewriting
//!   honours too), never from the tree's `__pycache__`; an entry older
//!   than its source's last change is removed first.
//! - **Replace refs** are not followed by git or gix in this process or
//!   anything it starts (`settings::read_objects_as_stored`, and
//!   `git::discover::open`).
//!
//! It never writes a file's content: at most its modification time.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A gap between change and modification time this small is a write
/// followed by a `chmod` or a rename, and is put right without a word;
/// a larger one, or a time before the session's start, is said by name.
const SAID_FROM_NS: i128 = 1_000_000_000;

/// What was done before a run: its environment and what to tell.
#[derive(Debug, Default)]
pub struct Prepared {
    pub env: Vec<(&'static str, OsString)>,
    pub notes: Vec<String>,
}

/// Gets the work tree at `root` ready for a run of its checks: the
/// `changed` paths (relative) whose modification time is older than their
/// change time get a current one, and Python's bytecode is pointed at the
/// gate's folder in `cache` ([`python_cache`]). `since`: the session's start, in
/// nanoseconds since the epoch, when known.
pub fn prepare(root: &Path, changed: &[String], since: Option<i128>, cache: &Path) -> Prepared {
    let mut prepared = Prepared::default();
    let mut said = Vec::new();
    for rel in changed {
        let path = root.join(rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let (mtime, ctime) = (
            nanos(meta.mtime(), meta.mtime_nsec()),
            nanos(meta.ctime(), meta.ctime_nsec()),
        );
        if mtime >= ctime {
            continue;
        }
        match touch(&path) {
            Ok(()) => {
                if ctime - mtime >= SAID_FROM_NS || since.is_some_and(|s| mtime < s) {
                    said.push(rel.as_str());
                }
            }
            Err(e) => prepared.notes.push(format!(
                "prove-it: `{rel}` has a modification time older than its last change, and it could not be given a current one ({e}): a build cache may answer for its old content."
            )),
        }
    }
    if !said.is_empty() {
        prepared.notes.push(format!(
            "prove-it: {} changed with a modification time set back, so a cache could take {} for the old content: given a current time before `./verify.sh` ran: {}.",
            count(said.len(), "file"),
            if said.len() == 1 { "it" } else { "them" },
            quoted(&said)
        ));
    }
    let prefix = python_cache(cache);
    forget_stale_bytecode(&prefix, root);
    prepared
        .env
        .push(("PYTHONPYCACHEPREFIX", prefix.into_os_string()));
    prepared
}

/// The folder Python's bytecode goes to. One for every tree: Python
/// mirrors each source's absolute path below it, so trees do not mix, and
/// the standard library's bytecode is written once.
pub fn python_cache(cache: &Path) -> PathBuf {
    cache.join("pycache")
}

/// Removes what `prefix` holds for the tree at `root` (a throwaway copy
/// that is gone).
pub fn forget_python_cache(prefix: &Path, root: &Path) {
    let _ = std::fs::remove_dir_all(mirrored(prefix, root));
}

/// Where Python keeps the bytecode of the folder `dir` under `prefix`:
/// the folder's absolute path below it.
fn mirrored(prefix: &Path, dir: &Path) -> PathBuf {
    prefix.join(dir.strip_prefix("/").unwrap_or(dir))
}

/// Folders of installed packages, whose bytecode is left to Python.
const PACKAGE_DIRS: [&str; 4] = [".venv", "venv", "site-packages", "node_modules"];

/// Removes each bytecode file under `prefix` for the tree at `root` whose
/// source changed after it was written (by change time, which no one can
/// set back) or is gone: Python's own check, by modification time and
/// size, can be fooled.
fn forget_stale_bytecode(prefix: &Path, root: &Path) {
    let top = mirrored(prefix, root);
    let mut dirs = vec![top.clone()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                // An environment's own packages are not the project's
                // code, and can be thousands of files to look at.
                if !PACKAGE_DIRS.contains(&entry.file_name().to_str().unwrap_or("")) {
                    dirs.push(path);
                }
                continue;
            }
            let Some(source) = source_of(&path, &top, root) else {
                continue;
            };
            let stale = match (entry.metadata(), std::fs::metadata(&source)) {
                (Ok(pyc), Ok(src)) => {
                    nanos(src.ctime(), src.ctime_nsec()) >= nanos(pyc.mtime(), pyc.mtime_nsec())
                }
                _ => true,
            };
            if stale {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// The source file of the bytecode file `pyc` (`NAME.TAG.pyc`, the tag
/// naming the interpreter and maybe pytest's rewriting) under `top`, the
/// mirror of `root`.
fn source_of(pyc: &Path, top: &Path, root: &Path) -> Option<PathBuf> {
    let name = pyc.file_name()?.to_str()?;
    let stem = name.strip_suffix(".pyc")?;
    let module = stem.split('.').next()?;
    let dir = pyc.parent()?.strip_prefix(top).ok()?;
    Some(root.join(dir).join(format!("{module}.py")))
}

/// Gives `path` a current modification time (its access time is kept).
fn touch(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("a path with a NUL byte"))?;
    let times = [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
    ];
    // SAFETY: `c` is a NUL-terminated path and `times` two timespecs, as
    // utimensat asks; it does not follow a symlink (checked above as a file).
    let done = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn nanos(secs: i64, nsec: i64) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(nsec)
}

fn count(n: usize, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    }
}

/// The first few paths, quoted, and how many more.
fn quoted(paths: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut text: Vec<String> = paths.iter().take(SHOWN).map(|p| format!("`{p}`")).collect();
    if paths.len() > SHOWN {
        text.push(format!("and {} more", paths.len() - SHOWN));
    }
    text.join(", ")
}

/// The ignored files of the tree at `root`, each a file of its own (not
/// in a folder that is ignored whole: build output, an environment,
/// `__pycache__`): a `conftest.py` or a runner's configuration that an
/// ignore rule hides is still loaded by the runner, so whichever the
/// check list names are checks. An ignore rule that hides itself (a
/// `.gitignore` that names itself) is among them.
pub fn ignored_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let list = super::copy::git(
        root,
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ],
    )?;
    Ok(list
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty() && !p.ends_with(b"/"))
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Ignored files at most kept from a session's start, to tell those that
/// appeared since (a tree with more is not told).
pub const IGNORED_KEPT: usize = 10_000;

/// One line for each file of `now` (ignored files, relative) that was not
/// among `start`'s and that an ignore rule the session added hides. Git
/// says which rule hides each (`git check-ignore -v`); `was_there` says
/// whether the file that holds it (`SOURCE` as git names it) had that
/// line at the session's start (`None`: not known; then a `.gitignore`
/// among `changed` or itself new and hidden, or an excludes file when
/// `excludes_changed`, counts as the session's). Such a file is the
/// session's work that `git status` does not show.
pub fn hidden_by_the_session(
    root: &Path,
    start: &[String],
    now: &[String],
    changed: &[String],
    excludes_changed: bool,
    was_there: impl Fn(&str, &str) -> Option<bool>,
) -> Vec<String> {
    let appeared: Vec<&String> = now.iter().filter(|p| !start.contains(p)).collect();
    if appeared.is_empty() {
        return Vec::new();
    }
    let mut args = vec!["check-ignore", "-v", "--no-index", "--"];
    args.extend(appeared.iter().map(|p| p.as_str()));
    // Exit 1 means none is ignored any more: nothing to say.
    let Ok(out) = super::copy::git(root, &args) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for line in String::from_utf8_lossy(&out).lines() {
        // `SOURCE:LINE:PATTERN<TAB>PATH`
        let Some((rule, path)) = line.split_once('\t') else {
            continue;
        };
        let mut parts = rule.splitn(3, ':');
        let (Some(source), Some(number), Some(pattern)) =
            (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let in_tree = !Path::new(source).is_absolute() && !source.starts_with(".git/");
        let sessions = match was_there(source, pattern) {
            Some(there) => !there,
            None if in_tree => {
                changed.iter().any(|c| c == source) || appeared.iter().any(|a| *a == source)
            }
            None => excludes_changed,
        };
        if sessions {
            lines.push(format!(
                "`{path}`: appeared during the session, ignored by `{pattern}` ({source}, line {number}), a rule the session added or changed: `git status` does not show it"
            ));
        }
    }
    lines
}

/// Folders inside a work tree that hold an environment the checks run
/// with: Python's virtual environments and Node's packages.
const ENVIRONMENT_DIRS: [&str; 3] = [".venv", "venv", "node_modules"];

/// What each environment inside the tree holds, by entry: a Python
/// environment's `site-packages` entries (a `.pth` file and
/// `sitecustomize.py` by their content: Python runs them at start-up) and
/// `pyvenv.cfg`; Node's top-level packages (scoped ones by name) and its
/// `.package-lock.json`. Enough to see a package or a start-up hook added
/// or removed; an edit inside an installed package is not looked for.
pub type Environments =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// [`Environments`] of the tree at `root` now.
pub fn environments(root: &Path) -> Environments {
    let mut out = Environments::new();
    for dir in ENVIRONMENT_DIRS {
        let top = root.join(dir);
        if !top.is_dir() {
            continue;
        }
        let mut entries = std::collections::BTreeMap::new();
        let add_dir =
            |dir: &Path, prefix: &str, entries: &mut std::collections::BTreeMap<String, String>| {
                let Ok(read) = std::fs::read_dir(dir) else {
                    return;
                };
                for entry in read.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let hooks = name.ends_with(".pth")
                        || name == "sitecustomize.py"
                        || name == "usercustomize.py"
                        || name == ".package-lock.json"
                        || name == "pyvenv.cfg";
                    let what = match hooks {
                        true => std::fs::read(entry.path())
                            .map(|b| blake3::hash(&b).to_hex()[..16].to_string())
                            .unwrap_or_else(|_| "unreadable".into()),
                        false => String::new(),
                    };
                    entries.insert(format!("{prefix}{name}"), what);
                }
            };
        if dir == "node_modules" {
            add_dir(&top, "", &mut entries);
            let scoped: Vec<String> = entries
                .keys()
                .filter(|k| k.starts_with('@'))
                .cloned()
                .collect();
            for scope in scoped {
                add_dir(&top.join(&scope), &format!("{scope}/"), &mut entries);
            }
        } else {
            if let Ok(cfg) = std::fs::read(top.join("pyvenv.cfg")) {
                entries.insert(
                    "pyvenv.cfg".into(),
                    blake3::hash(&cfg).to_hex()[..16].to_string(),
                );
            }
            for lib in ["lib", "lib64"] {
                let Ok(read) = std::fs::read_dir(top.join(lib)) else {
                    continue;
                };
                for python in read.flatten() {
                    let site = python.path().join("site-packages");
                    let prefix = format!(
                        "{lib}/{}/site-packages/",
                        python.file_name().to_string_lossy()
                    );
                    add_dir(&site, &prefix, &mut entries);
                }
            }
        }
        out.insert(dir.to_string(), entries);
    }
    out
}

/// The tracked files whose change accounts for an environment's: a
/// dependency list or a lockfile.
fn accounts_for_environment(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "pyproject.toml"
            | "setup.py"
            | "setup.cfg"
            | "Pipfile"
            | "Pipfile.lock"
            | "poetry.lock"
            | "uv.lock"
            | "pdm.lock"
            | "package.json"
            | "package-lock.json"
            | "npm-shrinkwrap.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "bun.lock"
            | "bun.lockb"
    ) || (name.ends_with(".txt")
        && (name.starts_with("requirements") || name.starts_with("constraints")))
}

/// One line for each environment inside the tree that changed between
/// `start` and `now` with no changed tracked file (`changed`) that
/// accounts for it: what the checks ran with is not what a fresh checkout
/// installs.
pub fn unaccounted_environments(
    start: &Environments,
    now: &Environments,
    changed: &[String],
) -> Vec<String> {
    if changed.iter().any(|p| accounts_for_environment(p)) {
        return Vec::new();
    }
    let empty = std::collections::BTreeMap::new();
    let mut lines = Vec::new();
    let dirs: std::collections::BTreeSet<&String> = start.keys().chain(now.keys()).collect();
    for dir in dirs {
        let (a, b) = (
            start.get(dir).unwrap_or(&empty),
            now.get(dir).unwrap_or(&empty),
        );
        if a == b {
            continue;
        }
        let mut said = Vec::new();
        for (name, what) in b {
            match a.get(name) {
                None => said.push(format!("`{name}` added")),
                Some(old) if old != what => said.push(format!("`{name}` changed")),
                Some(_) => {}
            }
        }
        said.extend(
            a.keys()
                .filter(|n| !b.contains_key(*n))
                .map(|n| format!("`{n}` removed")),
        );
        let more = said.len().saturating_sub(5);
        said.truncate(5);
        if more > 0 {
            said.push(format!("and {more} more"));
        }
        lines.push(format!("`{dir}` inside the tree changed during the session ({}), and no tracked dependency list or lockfile changed with it", said.join(", ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytecode_is_traced_to_its_source_by_module_name() {
        let top = Path::new("/cache/x/repo");
        let root = Path::new("/repo");
        assert_eq!(
            source_of(
                Path::new("/cache/x/repo/tests/test_a.cpython-312-pytest-8.3.2.pyc"),
                top,
                root
            ),
            Some(PathBuf::from("/repo/tests/test_a.py"))
        );
        assert_eq!(
            source_of(Path::new("/cache/x/repo/calc.cpython-312.pyc"), top, root),
            Some(PathBuf::from("/repo/calc.py"))
        );
        assert_eq!(
            source_of(Path::new("/cache/x/repo/notes.txt"), top, root),
            None
        );
    }

    #[test]
    fn a_time_set_back_is_made_current_and_said() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::write(root.join("a.py"), "x = 1\n").expect("write");
        std::fs::write(root.join("b.py"), "y = 1\n").expect("write");
        let old = std::process::Command::new("touch")
            .args(["-d", "2001-01-01", "a.py"])
            .current_dir(root)
            .status()
            .expect("touch");
        assert!(old.success());
        let cache = tempfile::tempdir().expect("cache");
        let prepared = prepare(root, &["a.py".into(), "b.py".into()], None, cache.path());
        let a = std::fs::metadata(root.join("a.py")).expect("a.py");
        assert!(a.mtime() > 1_000_000_000, "a.py keeps its old time");
        assert_eq!(prepared.notes.len(), 1, "{:?}", prepared.notes);
        assert!(prepared.notes[0].contains("`a.py`"), "{:?}", prepared.notes);
        assert!(
            !prepared.notes[0].contains("`b.py`"),
            "{:?}",
            prepared.notes
        );
        assert_eq!(prepared.env[0].0, "PYTHONPYCACHEPREFIX");
    }
}
