//! The compiled-module cache: compiling a policy costs a few hundred
//! milliseconds, loading a compiled one about one. Entries live in
//! `<cache dir>/modules/<key>.cwasm`, keyed by the module's content and the
//! engine's compatibility hash, written through a temp file and a rename.
//! An entry that does not load is rebuilt; failing to write one only costs
//! speed.

use anyhow::{Result, anyhow};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

pub fn load(engine: &Engine, wasm: &[u8]) -> Result<Module> {
    let path = entry(&crate::settings::cache_dir(), engine, wasm);
    if path.is_file() {
        // SAFETY: the file is one we wrote with `Module::serialize` into a
        // 0700 directory of the user's own; wasmtime checks its header and
        // engine compatibility, and anything it refuses is rebuilt below.
        match unsafe { Module::deserialize_file(engine, &path) } {
            Ok(module) => return Ok(module),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let module = Module::new(engine, wasm)
        .map_err(|e| anyhow!("the policy is not a valid wasm module: {e}"))?;
    if let Ok(bytes) = module.serialize() {
        let _ = store(&path, &bytes);
    }
    Ok(module)
}

fn store(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::capability::state::private_dir(path.parent().expect("entries live in a directory"))?;
    crate::capability::state::write_atomic(path, bytes)
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
