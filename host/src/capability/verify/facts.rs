//! The facts about `verify.sh` at the work tree root: whether it exists, is
//! executable, and its content hash.

use crate::fs::hash_file;
use anyhow::{Context, Result};
use prove_it_gate::abi::VerifyFacts;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The name of the proof, at the work tree root.
pub const VERIFY_SH: &str = "verify.sh";

/// `verify.sh` at the root, now.
pub fn verify_facts(root: &Path) -> Result<VerifyFacts> {
    let path = root.join(VERIFY_SH);
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(VerifyFacts {
                exists: false,
                executable: false,
                hash: None,
            });
        }
        Err(e) => return Err(e).with_context(|| format!("cannot stat `{}`", path.display())),
    };
    if !meta.is_file() {
        return Ok(VerifyFacts {
            exists: true,
            executable: false,
            hash: None,
        });
    }
    let hash = hash_file(&path)?;
    Ok(VerifyFacts {
        exists: true,
        executable: meta.permissions().mode() & 0o111 != 0,
        hash: Some(hash),
    })
}
