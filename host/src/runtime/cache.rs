//! The compiled-module cache: compiling a policy costs a few hundred
//! milliseconds, loading a compiled one about one. Entries live in
//! `<cache dir>/modules/<key>.cwasm`, keyed by the module's content and the
//! engine's compatibility hash, each with a `<key>.b3` holding the blake3 of
//! the entry. Both are written through a temp file and a rename.
//!
//! An entry is trusted only when its checksum matches, so a truncated or
//! damaged entry (or one caught half-replaced by a concurrent writer) is
//! rebuilt, never loaded. Failing to write an entry only costs speed.

use anyhow::{Result, anyhow};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

pub fn load(engine: &Engine, wasm: &[u8]) -> Result<Module> {
    let path = entry(&crate::settings::cache_dir(), engine, wasm);
    let sum = path.with_extension("b3");
    // Hashed and loaded through mappings of the file: reading ~1 MB into
    // fresh memory costs more in page faults than everything else here.
    let matches = |expected: String| {
        let mut hasher = blake3::Hasher::new();
        hasher
            .update_mmap(&path)
            .is_ok_and(|h| h.finalize().to_hex().as_str() == expected.trim())
    };
    if std::fs::read_to_string(&sum).is_ok_and(matches) {
        // SAFETY: these are the exact bytes `Module::serialize` wrote for
        // this engine (the checksum proves it), in the user's own 0700
        // cache; wasmtime still checks the header and engine compatibility.
        if let Ok(module) = unsafe { Module::deserialize_file(engine, &path) } {
            return Ok(module);
        }
    }
    let module = Module::new(engine, wasm)
        .map_err(|e| anyhow!("the policy is not a valid wasm module: {e}"))?;
    if let Ok(bytes) = module.serialize() {
        let _ = store(&path, &sum, &bytes);
    }
    Ok(module)
}

fn store(path: &Path, sum: &Path, bytes: &[u8]) -> Result<()> {
    crate::capability::state::private_dir(path.parent().expect("entries live in a directory"))?;
    crate::capability::state::write_atomic(path, bytes)?;
    crate::capability::state::write_atomic(sum, blake3::hash(bytes).to_hex().as_bytes())
}

fn entry(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    let mut hasher = Blake3(blake3::Hasher::new());
    wasm.hash(&mut hasher);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let key = hasher.0.finalize().to_hex();
    dir.join("modules").join(format!("{}.cwasm", &key[..32]))
}

/// Lets `std::hash::Hash` values feed a blake3 hasher.
struct Blake3(blake3::Hasher);

impl Hasher for Blake3 {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("only the blake3 digest is used")
    }
}
