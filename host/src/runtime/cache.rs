//! The compiled-module cache: compiling a policy costs a few hundred
//! milliseconds, loading a compiled one well under one. Entries live in
//! `<cache dir>/modules/<key>.cwasm`, keyed by the module's hash and the
//! engine's compatibility hash, each with a `<key>.b3` seal: the blake3 of
//! the entry and the entry file's stat data. Both are written through a
//! synced temp file and a rename.
//!
//! An entry is trusted only when it is sealed: its stat data is the one in
//! the seal (nothing wrote to it since), or else its content hashes to the
//! seal's checksum. So a truncated or damaged entry (or one caught
//! half-replaced by a concurrent writer) is rebuilt, never loaded, and an
//! untouched entry is not re-hashed at every stop. Failing to write an entry
//! only costs speed.

use crate::fs::{Stamp, private_dir, write_atomic, write_synced};
use anyhow::{Result, anyhow};
use std::borrow::Cow;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

/// Loads the module whose blake3 hash is `hash`; on a miss, compiles the
/// bytes `wasm` gives.
pub fn load<'m>(
    engine: &Engine,
    wasm: impl FnOnce() -> Result<Cow<'m, [u8]>>,
    hash: &str,
    cache_dir: &Path,
) -> Result<Module> {
    let path = entry(cache_dir, engine, hash);
    let seal_path = path.with_extension("b3");
    if let Some(file) = sealed(&path, &seal_path) {
        // SAFETY: these are the exact bytes `Module::serialize` wrote for
        // this engine (the seal proves it), in the user's own 0700 cache,
        // read from the file the seal was checked against; wasmtime still
        // checks the header and engine compatibility.
        if let Ok(module) = unsafe { Module::deserialize_open_file(engine, file) } {
            return Ok(module);
        }
    }
    let module = Module::new(engine, &*wasm()?)
        .map_err(|e| anyhow!("the policy is not a valid wasm module: {e}"))?;
    if let Ok(bytes) = module.serialize() {
        let _ = store(&path, &seal_path, &bytes);
    }
    Ok(module)
}

/// What a seal holds: the entry's checksum and its stat data when sealed.
struct Seal {
    blake3: String,
    stat: Option<Stamp>,
}

impl Seal {
    fn parse(text: &str) -> Option<Seal> {
        let mut words = text.split_whitespace();
        let blake3 = words.next()?.to_string();
        let stat: Vec<i64> = words.map(str::parse).collect::<Result<_, _>>().ok()?;
        Some(Seal {
            blake3,
            stat: <[i64; 6]>::try_from(stat).ok().map(Stamp::from),
        })
    }

    fn text(&self) -> String {
        let stat = self.stat.map_or(String::new(), |s| {
            <[i64; 6]>::from(s).map(|n| n.to_string()).join(" ")
        });
        format!("{} {stat}\n", self.blake3)
    }
}

/// The entry, opened, if its seal holds.
fn sealed(path: &Path, seal_path: &Path) -> Option<File> {
    let seal = Seal::parse(&std::fs::read_to_string(seal_path).ok()?)?;
    let mut file = File::open(path).ok()?;
    let stat = Stamp::of(&file.metadata().ok()?);
    if seal.stat == Some(stat) {
        return Some(file);
    }
    // Touched since it was sealed (or sealed by an older prove-it): trust
    // the content only, and reseal it so the next load is fast again.
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(&mut file).ok()?;
    if hasher.finalize().to_hex().as_str() != seal.blake3 {
        return None;
    }
    let resealed = Seal {
        blake3: seal.blake3,
        stat: Some(stat),
    };
    let _ = write_atomic(seal_path, resealed.text().as_bytes());
    file.seek(SeekFrom::Start(0)).ok()?;
    Some(file)
}

fn store(path: &Path, seal_path: &Path, bytes: &[u8]) -> Result<()> {
    private_dir(path.parent().expect("entries live in a directory"))?;
    // Synced: a seal must never outlive a crash that lost its entry's data.
    write_synced(path, bytes)?;
    let seal = Seal {
        blake3: blake3::hash(bytes).to_hex().to_string(),
        stat: std::fs::metadata(path).ok().map(|m| Stamp::of(&m)),
    };
    write_synced(seal_path, seal.text().as_bytes())
}

fn entry(dir: &Path, engine: &Engine, hash: &str) -> PathBuf {
    use std::hash::Hash;
    let mut hasher = Blake3(blake3::Hasher::new());
    hash.hash(&mut hasher);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let key = hasher.0.finalize().to_hex();
    dir.join("modules").join(format!("{}.cwasm", &key[..32]))
}

/// Lets `std::hash::Hash` values feed a blake3 hasher.
struct Blake3(blake3::Hasher);

impl std::hash::Hasher for Blake3 {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("only the blake3 digest is used")
    }
}
