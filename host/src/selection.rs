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

use crate::capability::state::{self, private_dir, write_atomic};
use crate::runtime::{
    self, DEFAULT_POLICY, DEFAULT_POLICY_HASH, STRICT_POLICY, STRICT_POLICY_HASH,
};
use crate::settings;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The variable that names the policy.
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
    pub bytes: Cow<'static, [u8]>,
    /// Content hash (hex).
    pub hash: String,
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
            bytes: Cow::Owned(bytes),
        }
    }

    /// Runs this policy on `event` (see [`runtime::run`]).
    pub fn run<H: prove_it_gate::abi::Host + Send + 'static>(
        &self,
        event: &prove_it_gate::abi::Event,
        host: H,
    ) -> anyhow::Result<prove_it_gate::abi::Decision> {
        runtime::run(&self.bytes, &self.hash, event, host)
    }

    /// Loads this policy without running it (see [`runtime::check`]).
    pub fn check(&self) -> anyhow::Result<runtime::ModuleInfo> {
        runtime::check(&self.bytes, &self.hash)
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
}

/// A built-in policy by name.
pub fn builtin(name: &str) -> Option<Policy> {
    let (label, bytes, hash) = BUILTIN.iter().find(|(n, _, _)| *n == name)?;
    Some(Policy {
        label: label.to_string(),
        bytes: Cow::Borrowed(bytes),
        hash: hash.to_string(),
    })
}

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The policy the person chooses now (not pinned).
pub fn chosen(root: &Path) -> Result<Policy, String> {
    let named = std::env::var(POLICY_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let (path, origin) = match named.as_deref().map(str::trim) {
        Some(name) if builtin(name).is_some() => return Ok(builtin(name).expect("checked")),
        Some(path) => (root.join(path), POLICY_VAR),
        None if root.join(REPO_POLICY).exists() => (root.join(REPO_POLICY), REPO_POLICY),
        None => return Ok(Policy::default_policy()),
    };
    let bytes = read_module(&path).map_err(|e| {
        format!(
            "the policy `{}` (from {origin}) cannot be read: {e}",
            path.display()
        )
    })?;
    Ok(Policy::from_file(
        format!("`{}` (from {origin})", path.display()),
        bytes,
    ))
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
/// on first sight. Problems become `notes` for the user; the fallback is
/// always the default policy, never no policy.
pub fn in_force(root: &Path, session_id: &str, notes: &mut Vec<String>) -> Policy {
    let state_dir = settings::state_dir();
    let pin_path = state::pin_file(&state_dir, root, session_id);
    let now = chosen(root);
    if let Some(pin) = std::fs::read(&pin_path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Pin>(&b).ok())
    {
        let pinned = match builtin(&pin.label) {
            Some(policy) => Ok(policy),
            None => read_module(&stored(&state_dir, &pin.hash))
                .map(|bytes| Policy {
                    label: pin.label.clone(),
                    hash: pin.hash.clone(),
                    bytes: Cow::Owned(bytes),
                })
                .map_err(|e| e.to_string()),
        };
        return match pinned {
            Ok(policy) => {
                match &now {
                    Ok(now) if now.hash != policy.hash => notes.push(format!(
                        "prove-it: the policy changed since this session started (now {}); this session keeps {}. The change applies from the next session.",
                        now.label, policy.label
                    )),
                    Ok(_) => {}
                    // Said at every event while it lasts: the person chose
                    // a policy that is not the one deciding.
                    Err(e) => notes.push(format!("prove-it: {e}; this session uses the {} policy.", policy.label)),
                }
                policy
            }
            Err(e) => {
                notes.push(format!(
                    "prove-it: this session's policy {} could not be loaded from the state dir ({e}); the default policy is in force.",
                    pin.label
                ));
                Policy::default_policy()
            }
        };
    }
    let policy = now.unwrap_or_else(|e| {
        notes.push(format!("prove-it: {e}; the default policy is in force."));
        Policy::default_policy()
    });
    if let Err(e) = pin(&state_dir, &pin_path, &policy) {
        notes.push(format!(
            "prove-it: could not pin this session's policy: {e:#}"
        ));
    }
    policy
}

fn stored(state_dir: &Path, hash: &str) -> PathBuf {
    state_dir.join("policies").join(format!("{hash}.wasm"))
}

fn pin(state_dir: &Path, pin_path: &Path, policy: &Policy) -> anyhow::Result<()> {
    if builtin(&policy.label).is_none() {
        let copy = stored(state_dir, &policy.hash);
        private_dir(copy.parent().expect("in the policies dir"))?;
        if !copy.exists() {
            write_atomic(&copy, &policy.bytes)?;
        }
    }
    private_dir(pin_path.parent().expect("in the sessions dir"))?;
    let pin = Pin {
        label: policy.label.clone(),
        hash: policy.hash.clone(),
    };
    write_atomic(pin_path, &serde_json::to_vec(&pin)?)
}
