//! Session state and the passed-state memory, outside the work tree.
//!
//! Layout under the state dir (0700 directories, 0600 files):
//! `repos/<repo key>/repo` (the root path, for people),
//! `repos/<repo key>/sessions/<session key>.json` (the policy's JSON),
//! `repos/<repo key>/passed/<fingerprint>` (empty: this state passed),
//! and the host's own: `sessions/<session key>.pin.json` (the policy in
//! force), `sessions/<session key>.verdict.json` and `last-verdict.json`
//! (the last verdicts, for `prove-it status`).
//! Keys are hashes: a session id never becomes part of a path. Every write
//! is a temp file renamed into place, so two stops at once cannot tear a
//! file, and two sessions never share one.

use crate::fs::{private_dir, write_atomic};
use anyhow::{Context, Result, bail};
use prove_it_gate::abi::SessionRead;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most session state a policy may save.
pub const SESSION_BYTES: usize = 256 << 10;

/// Passed states kept per repository; the oldest go first.
const PASSED_KEEP: usize = 256;

/// Sessions kept per repository (their state, pins and set-aside files),
/// the most recently active first. Pruned when a new session writes its
/// first state there, so the state dir stays bounded however many sessions
/// come and go. A pruned session that comes back has an unknown baseline:
/// its next stop counts as changed and says so, never a silent pass.
const SESSIONS_KEEP: usize = 256;
/// A session whose files were not touched for this long is forgotten.
const SESSION_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);
/// A temp file this old was left by a write that was killed.
const TEMP_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

pub struct StateStore {
    repo_dir: PathBuf,
    session_file: PathBuf,
    session_key: String,
    owner: Owner,
}

/// Whom a state file belongs to: written into each one and checked at each
/// read, so a file copied from another session or another repository is
/// never taken for this one's (SPEC.md, "State"). `session` is `None` for
/// what a repository's sessions share (passed states, the git memo).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub session: Option<String>,
    pub repo: PathBuf,
}

impl Owner {
    pub fn session(session_id: &str, root: &Path) -> Self {
        Owner {
            session: Some(session_id.to_string()),
            repo: root.to_path_buf(),
        }
    }

    pub fn repo(root: &Path) -> Self {
        Owner {
            session: None,
            repo: root.to_path_buf(),
        }
    }

    fn said(&self) -> String {
        match &self.session {
            Some(id) => format!("session `{id}` in `{}`", self.repo.display()),
            None => format!("`{}`", self.repo.display()),
        }
    }
}

/// A state file's content: its owner, then its state.
#[derive(Serialize, Deserialize)]
struct Sealed<T> {
    owner: Owner,
    state: T,
}

#[derive(Deserialize)]
struct OwnerOnly {
    owner: Owner,
}

const NOT_JSON: &str = "it is not valid JSON";

/// `state`, as the file of `owner` holds it.
pub fn seal<T: Serialize>(owner: &Owner, state: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(&Sealed {
        owner: owner.clone(),
        state,
    })
    .context("cannot encode the state")
}

/// The state in `bytes`, if they are `owner`'s; else why not, said for a
/// person ("it belongs to session `b` in `/repo`").
pub fn unseal<T: DeserializeOwned>(owner: &Owner, bytes: &[u8]) -> std::result::Result<T, String> {
    match serde_json::from_slice::<OwnerOnly>(bytes) {
        Err(_) if serde_json::from_slice::<serde_json::Value>(bytes).is_err() => {
            return Err(NOT_JSON.to_string());
        }
        Err(_) => {
            return Err(
                "it names no session or repository it belongs to (an older prove-it wrote it, or something else did)"
                    .to_string(),
            );
        }
        Ok(found) if found.owner != *owner => {
            return Err(format!(
                "it belongs to {}, not to {}",
                found.owner.said(),
                owner.said()
            ));
        }
        Ok(_) => {}
    }
    serde_json::from_slice::<Sealed<T>>(bytes)
        .map(|sealed| sealed.state)
        .map_err(|e| format!("its state is unreadable: {e}"))
}

impl StateStore {
    /// The store for one session in one work tree. `namespace` keeps the
    /// state of each policy apart (`None`: the default policy's).
    pub fn new(state_dir: &Path, root: &Path, session_id: &str, namespace: Option<&str>) -> Self {
        let repo_dir = repo_dir(state_dir, root);
        let name = match namespace {
            None => format!("{}.json", key(session_id.as_bytes())),
            Some(ns) => format!("{}.{}.json", key(session_id.as_bytes()), key(ns.as_bytes())),
        };
        let session_file = repo_dir.join("sessions").join(name);
        StateStore {
            repo_dir,
            session_file,
            session_key: key(session_id.as_bytes()),
            owner: Owner::session(session_id, root),
        }
    }

    /// Where the host keeps this session's [`super::git::changes::Snapshot`]
    /// (host-owned, like the pin: no policy reads or writes it).
    pub fn base_file(&self) -> PathBuf {
        self.host_file("base.json")
    }

    /// Where the list of changed paths is written for `verify.sh`.
    pub fn changed_file(&self) -> PathBuf {
        self.host_file("changed")
    }

    /// Where the host keeps the content tree of the tree this session's
    /// last `verify.sh` run was given (`super::content`).
    pub fn content_file(&self) -> PathBuf {
        self.host_file("content.json")
    }

    /// This repository's state folder.
    pub fn repo_dir(&self) -> &Path {
        &self.repo_dir
    }

    /// Where the host pins this session's checks (`super::checks::Pinned`).
    pub fn checks_file(&self) -> PathBuf {
        self.host_file("checks.json")
    }

    /// A host-owned file of this session, `<session key>.<suffix>`.
    fn host_file(&self, suffix: &str) -> PathBuf {
        self.repo_dir
            .join("sessions")
            .join(format!("{}.{suffix}", self.session_key))
    }

    /// Where [`super::git::Memo`] is kept for this work tree.
    pub fn git_memo_file(&self) -> PathBuf {
        self.repo_dir.join("git-memo.json")
    }

    pub fn read_session(&self) -> Result<SessionRead> {
        let bytes = match std::fs::read(&self.session_file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SessionRead::default()),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot read `{}`", self.session_file.display()));
            }
        };
        match unseal(&self.owner, &bytes) {
            Ok(value) => Ok(SessionRead {
                value: Some(value),
                problem: None,
            }),
            Err(why) => {
                // Kept for a person to look at; never taken for this
                // session's.
                let aside = set_aside(&self.session_file, &why);
                Ok(SessionRead {
                    value: None,
                    problem: Some(format!("`{}`: {why}{aside}", self.session_file.display())),
                })
            }
        }
    }

    /// The host-owned file `path` of this session, if it is this
    /// session's: `Ok(None)` when there is none; `Err` says why it cannot
    /// be used (it is left in place: every read says so again).
    pub fn read_own<T: DeserializeOwned>(
        &self,
        path: &Path,
    ) -> std::result::Result<Option<T>, String> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        };
        unseal(&self.owner, &bytes)
            .map(Some)
            .map_err(|why| format!("`{}`: {why}", path.display()))
    }

    /// Writes `state` to this session's host-owned file `path`.
    pub fn write_own<T: Serialize>(&self, path: &Path, state: &T) -> Result<()> {
        write_atomic(path, &seal(&self.owner, state)?)
    }

    pub fn write_session(&self, value: &serde_json::Value, root: &Path) -> Result<()> {
        let bytes = seal(&self.owner, value).context("cannot encode session state")?;
        if bytes.len() > SESSION_BYTES {
            bail!(
                "session state of {} bytes is over the {SESSION_BYTES} byte limit",
                bytes.len()
            );
        }
        self.ensure_repo_dir(root)?;
        let new = !self.session_file.exists();
        write_atomic(&self.session_file, &bytes)?;
        if new {
            prune_sessions(&self.repo_dir.join("sessions"));
        }
        Ok(())
    }

    /// Whether the tree state `fingerprint` passed here: a record of this
    /// repository's (one copied from another, or from an older prove-it,
    /// counts as none).
    pub fn passed(&self, fingerprint: &str) -> Result<bool> {
        let owner = Owner::repo(&self.owner.repo);
        Ok(std::fs::read(self.passed_path(fingerprint)?)
            .is_ok_and(|bytes| unseal::<String>(&owner, &bytes).is_ok_and(|f| f == fingerprint)))
    }

    pub fn record_passed(&self, fingerprint: &str, root: &Path) -> Result<()> {
        self.ensure_repo_dir(root)?;
        let bytes = seal(&Owner::repo(root), &fingerprint)?;
        write_atomic(&self.passed_path(fingerprint)?, &bytes)?;
        self.prune_passed();
        Ok(())
    }

    fn passed_path(&self, fingerprint: &str) -> Result<PathBuf> {
        // The policy chooses this string: only plain hex may become a name.
        let ok = !fingerprint.is_empty()
            && fingerprint.len() <= 128
            && fingerprint.bytes().all(|b| b.is_ascii_hexdigit());
        if !ok {
            bail!("a fingerprint must be 1 to 128 hex digits");
        }
        Ok(self.repo_dir.join("passed").join(fingerprint))
    }

    fn prune_passed(&self) {
        let Ok(entries) = std::fs::read_dir(self.repo_dir.join("passed")) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if files.len() <= PASSED_KEEP {
            return;
        }
        files.sort();
        for (_, path) in &files[..files.len() - PASSED_KEEP] {
            let _ = std::fs::remove_file(path);
        }
    }

    fn ensure_repo_dir(&self, root: &Path) -> Result<()> {
        for dir in [self.repo_dir.join("sessions"), self.repo_dir.join("passed")] {
            private_dir(&dir)?;
        }
        let label = self.repo_dir.join("repo");
        if !label.exists() {
            write_atomic(&label, root.as_os_str().as_encoded_bytes())?;
        }
        Ok(())
    }
}

/// Forgets the sessions in `dir` beyond the [`SESSIONS_KEEP`] most recently
/// active, and those idle past [`SESSION_MAX_AGE`]; removes temp files
/// left by killed writes. A session's files share its key, the name up to
/// the first `.`; the newest of them dates the session.
fn prune_sessions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let age = |time: std::time::SystemTime| now.duration_since(time).unwrap_or_default();
    let mut sessions: std::collections::HashMap<String, (std::time::SystemTime, Vec<PathBuf>)> =
        Default::default();
    for entry in entries.flatten() {
        let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp") {
            if age(modified) > TEMP_MAX_AGE {
                let _ = std::fs::remove_file(entry.path());
            }
            continue;
        }
        let key = name.split('.').next().unwrap_or_default().to_string();
        let session = sessions.entry(key).or_insert((modified, Vec::new()));
        session.0 = session.0.max(modified);
        session.1.push(entry.path());
    }
    let mut by_age: Vec<(std::time::SystemTime, Vec<PathBuf>)> = sessions.into_values().collect();
    by_age.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (rank, (modified, files)) in by_age.into_iter().enumerate() {
        if rank >= SESSIONS_KEEP || age(modified) > SESSION_MAX_AGE {
            for file in files {
                let _ = std::fs::remove_file(file);
            }
        }
    }
}

/// Renames `path` for a person to look at (`<path>.corrupt` when it is not
/// JSON, else `<path>.foreign`); says where.
fn set_aside(path: &Path, why: &str) -> String {
    let mut aside = path.as_os_str().to_owned();
    aside.push(if why.starts_with(NOT_JSON) {
        ".corrupt"
    } else {
        ".foreign"
    });
    let aside = PathBuf::from(aside);
    if std::fs::rename(path, &aside).is_ok() {
        format!(" (kept as `{}`)", aside.display())
    } else {
        String::new()
    }
}

/// The state folder of the work tree at `root`.
pub fn repo_dir(state_dir: &Path, root: &Path) -> PathBuf {
    state_dir
        .join("repos")
        .join(key(root.as_os_str().as_encoded_bytes()))
}

/// The work trees in which `session_id` has the default policy's state,
/// which every session keeps from its start whatever policy decides (see
/// `hook::decide`). Read from the `repo` label of each repository's state
/// folder: one stat per repository prove-it has state for. Trees that are
/// gone, or no longer git work trees, are left out. No state dir yet is
/// no repository; one that cannot be read is an error.
pub fn session_roots(state_dir: &Path, session_id: &str) -> Result<Vec<PathBuf>> {
    use std::os::unix::ffi::OsStringExt;
    let name = format!("{}.json", key(session_id.as_bytes()));
    let repos = state_dir.join("repos");
    let entries = match std::fs::read_dir(&repos) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot read the state dir `{}`", repos.display()));
        }
    };
    let mut roots: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|dir| dir.join("sessions").join(&name).exists())
        .filter_map(|dir| std::fs::read(dir.join("repo")).ok())
        .filter_map(|label| std::fs::canonicalize(std::ffi::OsString::from_vec(label)).ok())
        .filter(|root| root.join(".git").exists())
        .collect();
    roots.sort();
    roots.dedup();
    Ok(roots)
}

/// A host-owned file of one session in one work tree, named
/// `<session key>.<suffix>` so that it is pruned with the session.
pub fn session_file(state_dir: &Path, root: &Path, session_id: &str, suffix: &str) -> PathBuf {
    repo_dir(state_dir, root)
        .join("sessions")
        .join(format!("{}.{suffix}", key(session_id.as_bytes())))
}

/// Where the host pins the policy of one session (host-owned: no policy can
/// read or write it).
pub fn pin_file(state_dir: &Path, root: &Path, session_id: &str) -> PathBuf {
    session_file(state_dir, root, session_id, "pin.json")
}

/// A short, path-safe key for any bytes.
fn key(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..32].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prove_it_test_support::age;

    #[test]
    fn a_state_file_is_read_only_by_its_owner() {
        let root = Path::new("/r");
        let mine = Owner::session("s", root);
        let sealed = seal(&mine, &serde_json::json!({"baseline": "ab"})).expect("seal");
        let read: serde_json::Value = unseal(&mine, &sealed).expect("mine");
        assert_eq!(read["baseline"], "ab");
        let other_session = unseal::<serde_json::Value>(&Owner::session("t", root), &sealed);
        assert!(
            other_session
                .unwrap_err()
                .contains("belongs to session `s` in `/r`")
        );
        let other_repo =
            unseal::<serde_json::Value>(&Owner::session("s", Path::new("/q")), &sealed);
        assert!(other_repo.is_err());
        // What an older prove-it wrote: no owner, never taken as this one's.
        let legacy = unseal::<serde_json::Value>(&mine, br#"{"baseline":"ab"}"#);
        assert!(legacy.unwrap_err().contains("names no session"));
        assert_eq!(
            unseal::<serde_json::Value>(&mine, b"{ torn").unwrap_err(),
            NOT_JSON
        );
    }

    /// The state dir stays bounded however many sessions come: over 1,000
    /// sessions, one repository keeps at most [`SESSIONS_KEEP`], the most
    /// recent, and none idle past [`SESSION_MAX_AGE`].
    #[test]
    fn sessions_are_pruned_by_count_and_age() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("repo");
        let value = serde_json::json!({"baseline": "ab"});
        let store = |id: &str| StateStore::new(&tmp.path().join("state"), &root, id, None);
        // An old session, with a pin and a set-aside file of its own.
        store("old").write_session(&value, &root).expect("write");
        let sessions = repo_dir(&tmp.path().join("state"), &root).join("sessions");
        let old_key = key(b"old");
        std::fs::write(sessions.join(format!("{old_key}.pin.json")), "{}").expect("pin");
        for entry in std::fs::read_dir(&sessions).expect("dir").flatten() {
            age(&entry.path(), SESSION_MAX_AGE * 2);
        }
        // A temp file a killed write left an hour and more ago.
        let temp = sessions.join(".tmpKILLED");
        std::fs::write(&temp, "half").expect("temp");
        age(&temp, TEMP_MAX_AGE * 2);
        store("new").write_session(&value, &root).expect("write");
        let names = || -> Vec<String> {
            std::fs::read_dir(&sessions)
                .expect("dir")
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        };
        assert!(
            !names()
                .iter()
                .any(|n| n.starts_with(&old_key) || n.starts_with(".tmp")),
            "{:?}",
            names()
        );
        let last = SESSIONS_KEEP + 20;
        for i in 0..=last {
            store(&format!("s{i}"))
                .write_session(&value, &root)
                .expect("write");
        }
        assert_eq!(names().len(), SESSIONS_KEEP);
        let last_name = format!("s{last}");
        assert!(names().contains(&format!("{}.json", key(last_name.as_bytes()))));
        // Rewriting a kept session does not prune (only a new one does).
        store(&last_name)
            .write_session(&value, &root)
            .expect("write");
        assert_eq!(names().len(), SESSIONS_KEEP);
    }
}
