//! Running a policy module: engine, module cache, sandbox limits, linking.
//!
//! The sandbox: fuel bounds the instructions a module may run, a store
//! limiter caps its memory, the engine caps its stack, and replies are size
//! checked. WASI is linked with nothing granted (no directories, environment,
//! arguments or stdin; a frozen clock; stderr captured up to a cap). Only
//! the capabilities in [`link`] are imports.

mod cache;
#[cfg(test)]
mod fuzz;
mod link;
mod wasi;

use anyhow::{Context, Result, anyhow, bail};
use prove_it_gate::abi::{ABI_VERSION, ABI_VERSION_MIN, Decision, Event, Host, export, unpack};
use std::borrow::Cow;
use std::path::Path;
use wasmtime::{Config, Engine, Linker, Memory, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

/// The default policy, built from `policies/default/` for `wasm32-wasip1` by
/// build.rs.
pub const DEFAULT_POLICY: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/prove_it_default.wasm"));

/// The blake3 hash of [`DEFAULT_POLICY`] (hex), from build.rs.
pub const DEFAULT_POLICY_HASH: &str = env!("PROVE_IT_DEFAULT_POLICY_BLAKE3");

/// The `strict` policy, built from `policies/strict/` by build.rs.
pub const STRICT_POLICY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prove_it_strict.wasm"));
/// The blake3 hash of [`STRICT_POLICY`] (hex), from build.rs.
pub const STRICT_POLICY_HASH: &str = env!("PROVE_IT_STRICT_POLICY_BLAKE3");

/// Instructions (roughly) a policy may run per event. The default policy
/// uses at most about 250,000 (a first block that writes the ledger); a
/// spinning module is stopped in well under a second.
pub const FUEL: u64 = 50_000_000;
/// Linear memory a policy may grow to.
pub const MEMORY_BYTES: usize = 64 << 20;
/// Native stack a policy may use.
pub const STACK_BYTES: usize = 512 << 10;
/// Largest request or decision that may cross the boundary.
pub const MESSAGE_BYTES: usize = 1 << 20;
/// What a policy may write to stderr (kept for error messages).
const STDERR_BYTES: usize = 16 << 10;

/// What the store holds for one run.
pub struct StoreData<H> {
    wasi: WasiP1Ctx,
    limits: StoreLimits,
    host: H,
    /// Time spent inside each capability call, in call order (for
    /// [`RunOptions::timings`]).
    host_time: Vec<(&'static str, std::time::Duration)>,
}

/// How a policy is run.
pub struct RunOptions<'a> {
    /// Where compiled modules are cached.
    pub cache_dir: &'a Path,
    /// Print one JSON line on stderr saying where the time went
    /// (`PROVE_IT_TIMINGS`, for the benchmark).
    pub timings: bool,
}

/// What a host may add to the `PROVE_IT_TIMINGS` line: not part of the
/// ABI, the policy never sees it.
pub trait Diagnose {
    /// JSON members (`"name":value`, comma-separated), or nothing.
    fn diagnostics(&self) -> String {
        String::new()
    }
}

/// Runs the module whose blake3 hash is `hash` on `event` with `host` as
/// its capabilities. `module` gives its wasm bytes, asked for only when the
/// compiled form is not in the cache.
pub fn run<'m, H: Host + Diagnose + Send + 'static>(
    module: impl FnOnce() -> Result<Cow<'m, [u8]>>,
    hash: &str,
    event: &Event,
    host: H,
    options: &RunOptions,
) -> Result<Decision> {
    let started = std::time::Instant::now();
    let engine = engine()?;
    let module = cache::load(&engine, module, hash, options.cache_dir)?;
    let mut linker: Linker<StoreData<H>> = Linker::new(&engine);
    wasi::add_to_linker(&mut linker, &module)?;
    link::add_to_linker(&mut linker)?;

    let stderr = MemoryOutputPipe::new(STDERR_BYTES);
    let wasi = WasiCtxBuilder::new()
        .stderr(stderr.clone())
        .wall_clock(Frozen)
        .monotonic_clock(Frozen)
        .build_p1();
    // A failed grow stops the module (trap_on_grow_failure): a module left
    // to handle the failure itself could turn it into anything.
    let limits = StoreLimitsBuilder::new()
        .memory_size(MEMORY_BYTES)
        .trap_on_grow_failure(true)
        .instances(1)
        .tables(4)
        .memories(1)
        .build();
    let mut store = Store::new(
        &engine,
        StoreData {
            wasi,
            limits,
            host,
            host_time: Default::default(),
        },
    );
    store.limiter(|data| &mut data.limits);
    store.set_fuel(FUEL).map_err(wasm)?;

    let loaded = started.elapsed();
    let result = call(&linker, &mut store, &module, event).map_err(|e| with_stderr(e, &stderr));
    if options.timings {
        // One JSON line on stderr for the benchmark: where the time went.
        let total = started.elapsed();
        let calls = &store.data().host_time;
        let host: std::time::Duration = calls.iter().map(|(_, t)| *t).sum();
        let policy = total.saturating_sub(loaded).saturating_sub(host);
        let calls = calls
            .iter()
            .map(|(name, t)| format!(r#"["{name}",{}]"#, t.as_micros()))
            .collect::<Vec<_>>()
            .join(",");
        let extra = store.data().host.diagnostics();
        let extra = if extra.is_empty() {
            extra
        } else {
            format!(",{extra}")
        };
        errln!(
            r#"{{"prove_it_timings":{{"load_us":{},"policy_us":{},"host_us":{},"calls_us":[{calls}],"fuel":{},"peak_kib":{}{extra}}}}}"#,
            loaded.as_micros(),
            policy.as_micros(),
            host.as_micros(),
            FUEL - store.get_fuel().unwrap_or(0),
            peak_kib().map_or("null".to_string(), |k| k.to_string())
        );
    }
    result
}

/// What a module imports and exports, as `module.name`.
pub struct ModuleInfo {
    pub imports: Vec<String>,
    pub exports: Vec<String>,
}

/// Loads the module (from the cache when it can; see [`run`]), links it
/// and checks its ABI version, without deciding anything: for `doctor` and
/// `policy check`.
pub fn check<'m>(
    module: impl FnOnce() -> Result<Cow<'m, [u8]>>,
    hash: &str,
    cache_dir: &Path,
) -> Result<ModuleInfo> {
    let engine = engine()?;
    let module = cache::load(&engine, module, hash, cache_dir)?;
    let info = ModuleInfo {
        imports: module
            .imports()
            .map(|i| format!("{}.{}", i.module(), i.name()))
            .collect(),
        exports: module.exports().map(|e| e.name().to_string()).collect(),
    };
    let mut linker: Linker<StoreData<Unavailable>> = Linker::new(&engine);
    wasi::add_to_linker(&mut linker, &module)?;
    link::add_to_linker(&mut linker)?;
    let data = StoreData {
        wasi: WasiCtxBuilder::new().build_p1(),
        limits: StoreLimits::default(),
        host: Unavailable,
        host_time: Default::default(),
    };
    let mut store = Store::new(&engine, data);
    store.set_fuel(FUEL).map_err(wasm)?;
    let instance = linker
        .instantiate(&mut store, &module)
        .map_err(|e| wasm(e).context("cannot load the policy"))?;
    let version = instance
        .get_typed_func::<(), i32>(&mut store, export::ABI_VERSION)
        .map_err(|e| wasm(e).context("the policy has no usable ABI version export"))?
        .call(&mut store, ())
        .map_err(wasm)?;
    check_version(version)?;
    Ok(info)
}

/// A module built for an ABI this host speaks: [`ABI_VERSION`], or an older
/// one it still runs ([`ABI_VERSION_MIN`]).
fn check_version(version: i32) -> Result<()> {
    if !(ABI_VERSION_MIN..=ABI_VERSION).contains(&version) {
        bail!(
            "the policy is built for ABI {version}, this prove-it speaks ABI {ABI_VERSION_MIN} to {ABI_VERSION}"
        );
    }
    Ok(())
}

/// A host that grants nothing (for loading a policy without running it).
struct Unavailable;

/// Every capability answers that it is not available (the trait's own
/// answers): loading a policy to check it runs nothing.
impl Host for Unavailable {}
impl Diagnose for Unavailable {}

fn engine() -> Result<Engine> {
    let mut config = Config::new();
    config.consume_fuel(true);
    config.max_wasm_stack(STACK_BYTES);
    // A policy runs for well under a millisecond, but compiling it is the
    // first stop's whole cost: compile fast rather than optimise, on every
    // core.
    config.cranelift_opt_level(wasmtime::OptLevel::None);
    config.parallel_compilation(true);
    // Unwind tables for the system unwinder, which never walks a policy's
    // frames (wasmtime catches a host function's panic before it reaches
    // them, and takes its own backtraces). Registering and deregistering
    // them with musl's unwinder was a third of a read-only stop's
    // instructions.
    config.native_unwind_info(false);
    Engine::new(&config).map_err(|e| wasm(e).context("cannot start the wasm engine"))
}

fn call<H: Host + Send + 'static>(
    linker: &Linker<StoreData<H>>,
    store: &mut Store<StoreData<H>>,
    module: &wasmtime::Module,
    event: &Event,
) -> Result<Decision> {
    let instance = linker
        .instantiate(&mut *store, module)
        .map_err(|e| wasm(e).context("cannot load the policy"))?;
    let version = instance
        .get_typed_func::<(), i32>(&mut *store, export::ABI_VERSION)
        .map_err(|e| {
            wasm(e).context(format!(
                "the policy has no usable `{}` export: it is not a prove-it policy",
                export::ABI_VERSION
            ))
        })?
        .call(&mut *store, ())
        .map_err(wasm)?;
    check_version(version)?;
    if let Ok(init) = instance.get_typed_func::<(), ()>(&mut *store, export::INITIALIZE) {
        init.call(&mut *store, ()).map_err(wasm)?;
    }
    let memory = link::memory(&instance, &mut *store)?;
    let alloc = instance
        .get_typed_func::<i32, i32>(&mut *store, export::ALLOC)
        .map_err(|e| {
            wasm(e).context(format!(
                "the policy has no usable `{}` export",
                export::ALLOC
            ))
        })?;
    let decide = instance
        .get_typed_func::<(i32, i32), i64>(&mut *store, export::DECIDE)
        .map_err(|e| {
            wasm(e).context(format!(
                "the policy has no usable `{}` export",
                export::DECIDE
            ))
        })?;

    let bytes = serde_json::to_vec(event).context("cannot encode the event")?;
    let len = i32::try_from(bytes.len()).context("the event is too large")?;
    let ptr = alloc.call(&mut *store, len).map_err(wasm)?;
    link::write(&memory, &mut *store, ptr, &bytes).map_err(wasm)?;
    let packed = decide.call(&mut *store, (ptr, len)).map_err(wasm)?;
    let (ptr, len) = unpack(packed);
    let out = read_decision(&memory, store, ptr, len)?;
    serde_json::from_slice(&out).context("the policy returned a decision that is not valid JSON")
}

fn read_decision<T>(memory: &Memory, store: &Store<T>, ptr: u32, len: u32) -> Result<Vec<u8>> {
    if len as usize > MESSAGE_BYTES {
        bail!("the policy returned {len} bytes; the limit is {MESSAGE_BYTES}");
    }
    link::read(memory, store, ptr, len).map_err(|e| anyhow!("{e}"))
}

/// Names what went wrong inside the module in words a user can act on.
fn wasm(error: wasmtime::Error) -> anyhow::Error {
    // wasmtime's limiter says this in words only (`forcing trap when
    // growing memory to N bytes`): its message is the one thing to go by.
    if format!("{error:#}").contains("growing memory") {
        return anyhow!(
            "the policy tried to grow its memory past its limit, {} MiB of memory, so it was stopped",
            MEMORY_BYTES >> 20
        );
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            anyhow!("the policy ran out of fuel ({FUEL} units) and was stopped")
        }
        Some(Trap::StackOverflow) => {
            anyhow!("the policy overflowed its {} KiB stack", STACK_BYTES >> 10)
        }
        Some(trap) => anyhow!("the policy trapped: {trap}"),
        None => anyhow!("{error:#}"),
    }
}

/// Adds what the policy printed to stderr (a Rust panic message, say).
fn with_stderr(error: anyhow::Error, stderr: &MemoryOutputPipe) -> anyhow::Error {
    let said = String::from_utf8_lossy(&stderr.contents())
        .trim()
        .to_string();
    if said.is_empty() {
        return error;
    }
    error.context(format!(
        "the policy printed: {}",
        said.chars().take(500).collect::<String>()
    ))
}

/// A clock that never moves: the policy has no clock of its own.
struct Frozen;

impl wasmtime_wasi::HostWallClock for Frozen {
    fn resolution(&self) -> std::time::Duration {
        std::time::Duration::from_secs(1)
    }
    fn now(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for Frozen {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// This process's own peak memory (Linux: VmHWM). Measured from outside,
/// a child's peak also counts its parent's size when it was forked, so a
/// test in a large test process could not tell the hook's own.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prove_it_gate::abi::{IMPORT_MODULE, import};

    /// The cache is keyed by these hashes: one that did not match its
    /// module would serve a stale compiled policy after an upgrade.
    #[test]
    fn built_in_hashes_are_the_modules_hashes() {
        for (module, hash) in [
            (DEFAULT_POLICY, DEFAULT_POLICY_HASH),
            (STRICT_POLICY, STRICT_POLICY_HASH),
        ] {
            assert_eq!(blake3::hash(module).to_hex().as_str(), hash);
        }
    }

    #[test]
    fn default_policy_imports_only_capabilities_and_wasi() {
        let engine = engine().expect("engine");
        let module =
            wasmtime::Module::new(&engine, DEFAULT_POLICY).expect("the shipped policy compiles");
        let capabilities = [
            import::TREE_STATE,
            import::VERIFY_FACTS,
            import::RUN_VERIFY,
            import::SESSION_READ,
            import::SESSION_WRITE,
            import::PASSED_CHECK,
            import::PASSED_RECORD,
            import::LEDGER_APPEND,
            import::CHECK_CHANGES,
            import::REPLAY_CHECKS,
        ];
        for item in module.imports() {
            match item.module() {
                m if m == IMPORT_MODULE => {
                    assert!(capabilities.contains(&item.name()), "{}", item.name())
                }
                // std's own needs; the WASI context grants nothing.
                "wasi_snapshot_preview1" => {}
                other => panic!("unexpected import module {other}"),
            }
        }
        let exports: Vec<&str> = module.exports().map(|e| e.name()).collect();
        for name in [
            export::ABI_VERSION,
            export::ALLOC,
            export::DECIDE,
            export::MEMORY,
        ] {
            assert!(
                exports.contains(&name),
                "missing export {name} in {exports:?}"
            );
        }
    }
}
