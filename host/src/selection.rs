//! Which policy is in force for a session.
//!
//! The person chooses: `PROVE_IT_POLICY` (`default`, `strict`, or the path of
//! a `.wasm` module, relative to the repository root), else
//! `.prove-it/policy.wasm` in the repository, else the default policy.
//!
//! The choice is pinned at the first event the host sees for a session: a
//! custom module is copied into the state dir under its content hash and
//! the session keeps using that copy. An agent that writes or swaps a module
//! mid-session changes nothing for the session; the user is told.
//!
//! At later events nothing is read or hashed that need not be: the pinned
//! copy is read only when its compiled form is not in the module cache, and
//! the chosen file (to tell the user it changed) is hashed again only when
//! its stat data differs from when it was last hashed.

use crate::capability::state;
use crate::fs::{Stamp, StampedHash, private_dir, write_atomic};
use crate::runtime::{
    self, DEFAULT_POLICY, DEFAULT_POLICY_HASH, STRICT_POLICY, STRICT_POLICY_HASH,
};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The variable that names the policy (read by `settings`).
pub const POLICY_VAR: &str = "PROVE_IT_POLICY";
/// The per-repository policy module, relative to the root.
pub const REPO_POLICY: &str = ".prove-it/policy.wasm";
/// Largest module read.
const MODULE_BYTES: u64 = 64 << 20;

/// The policies built into the host: name, module, blake3 hash.
const BUILTIN: [(&str, &[u8], &str); 2] = [
    ("default", DEFAULT_POLICY, DEFAULT_POLICY_HASH),
    ("strict", STRICT_POLICY, STRICT_POLICY_HASH),
];

pub struct Policy {
    /// For people: `default`, `strict`, or the module's path and origin.
    pub label: String,
    module: Module,
    /// Content hash (hex).
    pub hash: String,
}

/// Where a policy's module bytes are.
enum Module {
    /// Built into the host.
    BuiltIn(&'static [u8]),
    /// Read from a file.
    Read(Vec<u8>),
    /// A session's pinned copy in the state dir, read only when the module
    /// must be compiled: the compiled form is cached under the hash.
    Stored(PathBuf),
}

impl Policy {
    pub fn default_policy() -> Self {
        builtin("default").expect("the default policy is built in")
    }

    /// A module read from a file, labelled for people.
    pub fn from_file(label: String, bytes: Vec<u8>) -> Self {
        Policy {
            label,
            hash: hash(&bytes),
            module: Module::Read(bytes),
        }
    }

    /// The module's bytes. A stored copy is checked against the pinned
    /// hash when read: a copy changed in the state dir is refused, never
    /// compiled and cached under the hash it no longer has.
    pub fn bytes(&self) -> anyhow::Result<Cow<'_, [u8]>> {
        match &self.module {
            Module::BuiltIn(bytes) => Ok(Cow::Borrowed(bytes)),
            Module::Read(bytes) => Ok(Cow::Borrowed(bytes)),
            Module::Stored(path) => {
                let bytes = read_module(path).with_context(|| {
                    format!("cannot read the session's copy `{}`", path.display())
                })?;
                if hash(&bytes) != self.hash {
                    anyhow::bail!(
                        "the session's copy `{}` was changed since it was pinned; start a new session to pin the policy again",
                        path.display()
                    );
                }
                Ok(Cow::Owned(bytes))
            }
        }
    }

    /// The module's size in bytes (for people).
    pub fn size(&self) -> u64 {
        match &self.module {
            Module::BuiltIn(bytes) => bytes.len() as u64,
            Module::Read(bytes) => bytes.len() as u64,
            Module::Stored(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }

    /// Runs this policy on `event` (see [`runtime::run`]).
    pub fn run<H: prove_it_gate::abi::Host + runtime::Diagnose + Send + 'static>(
        &self,
        event: &prove_it_gate::abi::Event,
        host: H,
        options: &runtime::RunOptions,
    ) -> anyhow::Result<prove_it_gate::abi::Decision> {
        runtime::run(|| self.bytes(), &self.hash, event, host, options)
    }

    /// Loads this policy without running it (see [`runtime::check`]).
    pub fn check(&self, cache_dir: &Path) -> anyhow::Result<runtime::ModuleInfo> {
        runtime::check(|| self.bytes(), &self.hash, cache_dir)
    }

    pub fn is_default(&self) -> bool {
        self.label == "default"
    }

    /// Where this policy's session state lives (`None`: the default's).
    pub fn namespace(&self) -> Option<&str> {
        (!self.is_default()).then_some(self.hash.as_str())
    }
}

/// What the host remembers for a session.
#[derive(Serialize, Deserialize)]
struct Pin {
    label: String,
    hash: String,
    /// The chosen module file as last hashed (pins written before this
    /// field have none: the file is hashed once more).
    #[serde(default)]
    seen: Option<Seen>,
}

/// A module file's path, and its content hash by its stat data.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
struct Seen {
    path: PathBuf,
    #[serde(flatten)]
    known: StampedHash,
}

/// A built-in policy by name.
pub fn builtin(name: &str) -> Option<Policy> {
    let (label, bytes, hash) = BUILTIN.iter().find(|(n, _, _)| *n == name)?;
    Some(Policy {
        label: label.to_string(),
        module: Module::BuiltIn(bytes),
        hash: hash.to_string(),
    })
}

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// What the person chooses: a built-in policy, or a module file.
enum Choice {
    BuiltIn(Policy),
    File { path: PathBuf, origin: &'static str },
}

impl Choice {
    /// The choice now, given `named`, the value of [`POLICY_VAR`].
    fn now(root: &Path, named: Option<&str>) -> Choice {
        match named.map(str::trim).filter(|v| !v.is_empty()) {
            Some(name) if builtin(name).is_some() => {
                Choice::BuiltIn(builtin(name).expect("checked"))
            }
            Some(path) => Choice::File {
                path: root.join(path),
                origin: POLICY_VAR,
            },
            None if root.join(REPO_POLICY).exists() => Choice::File {
                path: root.join(REPO_POLICY),
                origin: REPO_POLICY,
            },
            None => Choice::BuiltIn(Policy::default_policy()),
        }
    }

    fn label(path: &Path, origin: &str) -> String {
        format!("`{}` (from {origin})", path.display())
    }

    fn unreadable(path: &Path, origin: &str, e: impl std::fmt::Display) -> String {
        format!(
            "the policy `{}` (from {origin}) cannot be read: {e}",
            path.display()
        )
    }
}

/// The policy the person chooses now (not pinned), read.
pub fn chosen(root: &Path, named: Option<&str>) -> Result<Policy, String> {
    match Choice::now(root, named) {
        Choice::BuiltIn(policy) => Ok(policy),
        Choice::File { path, origin } => {
            let bytes = read_module(&path).map_err(|e| Choice::unreadable(&path, origin, e))?;
            Ok(Policy::from_file(Choice::label(&path, origin), bytes))
        }
    }
}

/// The hash of the module file at `path`: `seen`'s when the file's stat
/// data is the one `seen` recorded; else the file is read and hashed, and
/// `seen` records it once the file has settled.
fn file_hash(path: &Path, seen: &mut Option<Seen>) -> std::io::Result<String> {
    let stamp = Stamp::of(&std::fs::metadata(path)?);
    let known = seen.as_ref().filter(|s| s.path == path).map(|s| &s.known);
    let (hash, remember) = StampedHash::get(stamp, known, || read_module(path).map(|b| hash(&b)))?;
    *seen = remember.map(|known| Seen {
        path: path.to_path_buf(),
        known,
    });
    Ok(hash)
}

fn read_module(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MODULE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MODULE_BYTES {
        return Err(std::io::Error::other(format!(
            "it is over {} MiB",
            MODULE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// The policy in force for `session_id` in the work tree `root`, pinning it
/// on first sight; `named` is the value of [`POLICY_VAR`]. Problems become
/// `notes` for the user; the fallback is always the default policy, never
/// no policy.
pub fn in_force(
    root: &Path,
    session_id: &str,
    state_dir: &Path,
    named: Option<&str>,
    notes: &mut Vec<String>,
) -> Policy {
    let pin_path = state::pin_file(state_dir, root, session_id);
    let owner = state::Owner::session(session_id, root);
    let choice = Choice::now(root, named);
    let kept = std::fs::read(&pin_path)
        .ok()
        .map(|bytes| state::unseal::<Pin>(&owner, &bytes));
    if let Some(Err(why)) = &kept {
        notes.push(format!(
            "prove-it: this session's policy pin `{}` cannot be used ({why}); the policy chosen now is pinned in its place.",
            pin_path.display()
        ));
    }
    if let Some(Ok(mut pin)) = kept {
        let policy = builtin(&pin.label).unwrap_or_else(|| Policy {
            label: pin.label.clone(),
            hash: pin.hash.clone(),
            module: Module::Stored(stored(state_dir, &pin.hash)),
        });
        let seen_before = pin.seen.clone();
        let now = match &choice {
            Choice::BuiltIn(now) => Ok((now.label.clone(), now.hash.clone())),
            Choice::File { path, origin } => file_hash(path, &mut pin.seen)
                .map(|hash| (Choice::label(path, origin), hash))
                .map_err(|e| Choice::unreadable(path, origin, e)),
        };
        match now {
            Ok((label, hash)) if hash != policy.hash => notes.push(format!(
                "prove-it: the policy changed since this session started (now {label}); this session keeps {}. The change applies from the next session.",
                policy.label
            )),
            Ok(_) => {}
            // Said at every event while it lasts: the person chose a
            // policy that is not the one deciding.
            Err(e) => notes.push(format!(
                "prove-it: {e}; this session uses the {} policy.",
                policy.label
            )),
        }
        if pin.seen != seen_before {
            // Only a speed-up: a pin whose `seen` cannot be updated still
            // pins, and the file is hashed again next time.
            if let Ok(bytes) = state::seal(&owner, &pin) {
                let _ = write_atomic(&pin_path, &bytes);
            }
        }
        return policy;
    }
    let policy = match choice {
        Choice::BuiltIn(policy) => policy,
        Choice::File { path, origin } => match read_module(&path) {
            Ok(bytes) => Policy::from_file(Choice::label(&path, origin), bytes),
            Err(e) => {
                notes.push(format!(
                    "prove-it: {}; the default policy is in force.",
                    Choice::unreadable(&path, origin, e)
                ));
                Policy::default_policy()
            }
        },
    };
    if let Err(e) = pin(state_dir, &pin_path, &owner, &policy) {
        notes.push(format!(
            "prove-it: could not remember which policy this session uses: {e:#}"
        ));
    }
    policy
}

fn stored(state_dir: &Path, hash: &str) -> PathBuf {
    state_dir.join("policies").join(format!("{hash}.wasm"))
}

fn pin(
    state_dir: &Path,
    pin_path: &Path,
    owner: &state::Owner,
    policy: &Policy,
) -> anyhow::Result<()> {
    if builtin(&policy.label).is_none() {
        let copy = stored(state_dir, &policy.hash);
        private_dir(copy.parent().expect("in the policies dir"))?;
        if !copy.exists() {
            write_atomic(&copy, &policy.bytes()?)?;
        }
    }
    private_dir(pin_path.parent().expect("in the sessions dir"))?;
    // `seen` is filled at the next event, which hashes the file once more: a
    // stat taken here, apart from the read, could belong to other bytes if
    // the file is being written.
    let pin = Pin {
        label: policy.label.clone(),
        hash: policy.hash.clone(),
        seen: None,
    };
    write_atomic(pin_path, &state::seal(owner, &pin)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The chosen module file is hashed again only when its stat data
    /// changed, and remembered only once it has settled.
    #[test]
    fn a_module_file_is_rehashed_only_when_its_stat_changes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("policy.wasm");
        std::fs::write(&path, b"first").expect("write");
        prove_it_test_support::age(&path, Duration::from_secs(60));

        let mut seen = None;
        assert_eq!(file_hash(&path, &mut seen).expect("hash"), hash(b"first"));
        assert!(seen.is_some(), "a settled file is remembered");

        // Unchanged stat: the remembered hash is trusted, the file not read
        // (a planted hash comes back).
        seen.as_mut().expect("seen").known.hash = "planted".into();
        assert_eq!(file_hash(&path, &mut seen).expect("hash"), "planted");

        // Written now: hashed again, and not remembered while it is fresh.
        std::fs::write(&path, b"second").expect("write");
        assert_eq!(file_hash(&path, &mut seen).expect("hash"), hash(b"second"));
        assert!(seen.is_none(), "a file written just now is not remembered");

        // What was remembered for another path is not used for this one,
        // even with this file's very stat data.
        let stamp = Stamp::of(&std::fs::metadata(&path).expect("stat"));
        let mut other = Some(Seen {
            path: dir.path().join("other.wasm"),
            known: StampedHash {
                stamp,
                hash: "planted".into(),
            },
        });
        assert_eq!(file_hash(&path, &mut other).expect("hash"), hash(b"second"));
    }
}
