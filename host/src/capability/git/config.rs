//! What git-run checks read from outside the tree (SPEC.md, "Git's
//! configuration of the checks"): git's configuration, the repository's
//! `info/attributes` and `info/exclude`, and the attributes and excludes
//! files that configuration names (or git's defaults for them). The agent
//! can write every one of them, and `git diff --check` obeys them: `* -whitespace`
//! in `info/attributes` silences it.
//!
//! The fingerprint hashes all of it ([`digest`]), so a change to any of it
//! is a change. A session's start keeps the values that are evidence and
//! that a replay puts back ([`Settings`]).

use super::discover::open;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The keys always kept at a session's start: those that configure what
/// `git diff --check` reports and which files git sees.
pub const KEYS: [&str; 3] = [
    "core.whitespace",
    "core.attributesFile",
    "core.excludesFile",
];

/// The files, each by the name a person reads it under.
const INFO_ATTRIBUTES: &str = ".git/info/attributes";
const INFO_EXCLUDE: &str = ".git/info/exclude";
const ATTRIBUTES_FILE: &str = "core.attributesFile";
const EXCLUDES_FILE: &str = "core.excludesFile";

/// Files larger than this are kept by their digest only.
const KEEP_BYTES: usize = 256 << 10;

/// Where each file is, for `repo`. `user` is git's folder for a user's own
/// attributes and excludes files when the configuration names none
/// (`$XDG_CONFIG_HOME/git`, else `~/.config/git`: the folder of
/// [`crate::settings::Dirs::git_excludes`]).
fn files(repo: &gix::Repository, user: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
    let config = repo.config_snapshot();
    let common = repo.common_dir();
    let mut out = vec![
        (INFO_ATTRIBUTES, common.join("info/attributes")),
        (INFO_EXCLUDE, common.join("info/exclude")),
    ];
    let default = |name: &str| user.map(|dir| dir.join(name));
    for (role, key, name) in [
        (ATTRIBUTES_FILE, "core.attributesFile", "attributes"),
        (EXCLUDES_FILE, "core.excludesFile", "ignore"),
    ] {
        if let Some(path) = config
            .trusted_path(key)
            .ok()
            .flatten()
            .or_else(|| default(name))
        {
            out.push((role, path));
        }
    }
    out
}

/// What one file holds: its bytes, `None` when there is none, or an error's
/// kind (an unreadable file is not an absent one).
fn read(path: &Path) -> std::result::Result<Option<Vec<u8>>, std::io::ErrorKind> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.kind()),
    }
}

/// The digest of everything this module watches: the whole configuration
/// as gix resolved it (every level, includes followed), and each file's
/// path and bytes. No process, a few small reads.
pub(super) fn digest(repo: &gix::Repository, user: Option<&Path>) -> String {
    let mut hasher = blake3::Hasher::new();
    // The configuration files a session can write (the repository's own,
    // the user's), section by section. Not the system's (root's), nor what
    // a process's environment or command line passes: those differ between
    // the hook and a `prove-it status` run in another shell, and the agent
    // cannot set them for the hook.
    use gix::config::Source;
    let snapshot = repo.config_snapshot();
    for section in snapshot.plumbing().sections() {
        let source = section.meta().source;
        if matches!(
            source,
            Source::Local | Source::Worktree | Source::User | Source::Git
        ) {
            hasher.update(format!("\0{source:?}\0").as_bytes());
            hasher.update(&section.to_bstring());
        }
    }
    for (role, path) in files(repo, user) {
        // By content, not by path: `prove-it status` run with another HOME
        // must see the same tree when the files hold the same.
        hasher.update(format!("\0{role}\0").as_bytes());
        match read(&path) {
            Ok(Some(bytes)) => {
                hasher.update(b"file\0");
                hasher.update(&bytes);
            }
            Ok(None) => {
                hasher.update(b"absent");
            }
            Err(kind) => {
                hasher.update(format!("unreadable {kind:?}").as_bytes());
            }
        }
    }
    hasher.finalize().to_hex().to_string()
}

/// What a session's start kept: the values of [`KEYS`] and of the keys the
/// checks list names, and each file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Each key's value as git reads it (the last one wins; `None`: unset).
    pub keys: BTreeMap<String, Option<String>>,
    /// Each file by its name ([`INFO_ATTRIBUTES`]...).
    pub files: BTreeMap<String, Kept>,
}

/// One file as a session's start found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    pub path: PathBuf,
    /// Its text (`None`: there was no such file).
    pub text: Option<String>,
    /// Its digest, when it was too large or not text to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl Kept {
    fn of(path: PathBuf) -> Kept {
        let (text, digest) = match read(&path) {
            Ok(None) => (None, None),
            Ok(Some(bytes)) if bytes.len() <= KEEP_BYTES => match String::from_utf8(bytes) {
                Ok(text) => (Some(text), None),
                Err(e) => (None, Some(blake3::hash(e.as_bytes()).to_hex().to_string())),
            },
            Ok(Some(bytes)) => (None, Some(blake3::hash(&bytes).to_hex().to_string())),
            Err(kind) => (None, Some(format!("unreadable {kind:?}"))),
        };
        Kept { path, text, digest }
    }
}

/// The settings of the repository at `root` now: [`KEYS`] and `named`
/// (`user`: as for [`files`]).
pub fn settings(root: &Path, named: &[String], user: Option<&Path>) -> Result<Settings> {
    let repo = open(root)?;
    let config = repo.config_snapshot();
    let mut keys = BTreeMap::new();
    for key in KEYS
        .iter()
        .map(|k| k.to_string())
        .chain(named.iter().cloned())
    {
        let value = config
            .string(key.as_str())
            .map(|v| String::from_utf8_lossy(&v).into_owned());
        keys.insert(key, value);
    }
    let files = files(&repo, user)
        .into_iter()
        .map(|(role, path)| (role.to_string(), Kept::of(path)))
        .collect();
    Ok(Settings { keys, files })
}

/// One difference between a session's start and now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `core.whitespace`, or a file's name (`.git/info/attributes`).
    pub what: String,
    /// One line each: the old and new value, or the lines added and removed.
    pub evidence: Vec<String>,
}

/// What differs between `start` and `now`, key by key and file by file.
pub fn changes(start: &Settings, now: &Settings) -> Vec<Change> {
    let shown = |v: &Option<String>| match v {
        Some(v) => format!("`{v}`"),
        None => "unset".to_string(),
    };
    let mut out = Vec::new();
    for (key, old) in &start.keys {
        let new = now.keys.get(key).cloned().flatten();
        if *old != new {
            out.push(Change {
                what: format!("`git config {key}`"),
                evidence: vec![format!("{} -> {}", shown(old), shown(&new))],
            });
        }
    }
    for (name, old) in &start.files {
        let Some(new) = now.files.get(name) else {
            continue;
        };
        if old == new {
            continue;
        }
        let what = if name.starts_with(".git/") {
            format!("`{name}`")
        } else {
            format!("`{}` (`{name}`)", new.path.display())
        };
        let mut evidence = Vec::new();
        if old.path != new.path {
            evidence.push(format!(
                "now `{}`, was `{}`",
                new.path.display(),
                old.path.display()
            ));
        }
        match (&old.text, &new.text) {
            (None, None) if old.digest.is_none() && new.digest.is_none() => {}
            (old_text, new_text) if old.digest.is_none() && new.digest.is_none() => {
                let lines = |t: &Option<String>| -> Vec<String> {
                    t.as_deref()
                        .unwrap_or("")
                        .lines()
                        .map(str::to_string)
                        .collect()
                };
                let (was, is) = (lines(old_text), lines(new_text));
                match (old_text, new_text) {
                    (None, Some(_)) => evidence.push("added".to_string()),
                    (Some(_), None) => evidence.push("deleted".to_string()),
                    _ => {}
                }
                for line in is.iter().filter(|l| !was.contains(l)).take(5) {
                    evidence.push(format!("line added: `{}`", line.trim()));
                }
                for line in was.iter().filter(|l| !is.contains(l)).take(5) {
                    evidence.push(format!("line removed: `{}`", line.trim()));
                }
            }
            _ => evidence.push("changed (too large or not text to show)".to_string()),
        }
        out.push(Change { what, evidence });
    }
    out
}

/// Environment variables for a process, by name.
pub type Env = Vec<(String, std::ffi::OsString)>;

/// What a replay must set so that git reads the start's settings: the
/// configuration to pass (`GIT_CONFIG_COUNT`...), and, when a file of the
/// repository's own git dir changed, a stand-in git dir for
/// `GIT_COMMON_DIR` made in `aside`: links to everything in the real one
/// but `info/`, whose changed files hold their start text. `first`: the
/// `GIT_CONFIG_COUNT` the person's environment sets (the last one wins).
pub fn replay_env(
    root: &Path,
    start: &Settings,
    now: &Settings,
    aside: &Path,
    first: usize,
) -> Result<(Env, Vec<String>)> {
    use anyhow::Context;
    let mut config: Vec<(String, String)> = Vec::new();
    let mut said = Vec::new();
    let mut common_files = Vec::new();
    for (key, old) in &start.keys {
        let new = now.keys.get(key).cloned().flatten();
        if *old == new {
            continue;
        }
        if key.eq_ignore_ascii_case("core.attributesFile")
            || key.eq_ignore_ascii_case("core.excludesFile")
        {
            // Put back below, with the file itself.
            continue;
        }
        config.push((key.clone(), old.clone().unwrap_or_default()));
        said.push(match old {
            Some(v) => format!("`git config {key}` as it was at the start (`{v}`)"),
            None => format!("`git config {key}` empty (it was unset at the start)"),
        });
    }
    for (name, old) in &start.files {
        let Some(new) = now.files.get(name) else {
            continue;
        };
        if old == new {
            continue;
        }
        if old.digest.is_some() {
            anyhow::bail!(
                "`{}` was too large or not text to keep at the session's start, so it cannot be put back",
                old.path.display()
            );
        }
        if name.starts_with(".git/") {
            common_files.push((name.trim_start_matches(".git/info/").to_string(), old));
            said.push(format!("`{name}` as it was at the start"));
            continue;
        }
        let at = aside.join(format!("start-{}", name.replace('.', "-")));
        std::fs::write(&at, old.text.as_deref().unwrap_or(""))
            .with_context(|| format!("cannot write `{}`", at.display()))?;
        config.push((name.clone(), at.display().to_string()));
        said.push(format!("`{name}` as it was at the start"));
    }
    let mut env: Env = Vec::new();
    if !common_files.is_empty() {
        let repo = open(root)?;
        let shadow = aside.join("git-common-dir");
        shadow_common_dir(repo.common_dir(), &shadow, &common_files)
            .context("cannot make the stand-in git dir for the replay")?;
        env.push(("GIT_COMMON_DIR".into(), shadow.into_os_string()));
    }
    if !config.is_empty() {
        for (i, (key, value)) in config.iter().enumerate() {
            let n = first + i;
            env.push((format!("GIT_CONFIG_KEY_{n}"), key.into()));
            env.push((format!("GIT_CONFIG_VALUE_{n}"), value.into()));
        }
        env.push((
            "GIT_CONFIG_COUNT".into(),
            (first + config.len()).to_string().into(),
        ));
    }
    Ok((env, said))
}

/// `shadow`: a git dir that links every entry of `common` but `info/`,
/// and an `info/` that links every entry but `files`, which hold their
/// kept text (or are absent, as they were).
fn shadow_common_dir(common: &Path, shadow: &Path, files: &[(String, &Kept)]) -> Result<()> {
    use std::os::unix::fs::symlink;
    std::fs::create_dir_all(shadow.join("info"))?;
    for entry in std::fs::read_dir(common)? {
        let entry = entry?;
        if entry.file_name() != "info" {
            symlink(entry.path(), shadow.join(entry.file_name()))?;
        }
    }
    if let Ok(info) = std::fs::read_dir(common.join("info")) {
        for entry in info {
            let entry = entry?;
            let name = entry.file_name();
            if !files.iter().any(|(f, _)| name == f.as_str()) {
                symlink(entry.path(), shadow.join("info").join(name))?;
            }
        }
    }
    for (name, kept) in files {
        if let Some(text) = &kept.text {
            std::fs::write(shadow.join("info").join(name), text)?;
        }
    }
    Ok(())
}
