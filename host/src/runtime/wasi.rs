//! Linking WASI for a policy.
//!
//! wasmtime-wasi links all of WASI preview 1 at once: 46 host functions,
//! each registered with the engine, 1.3 million instructions or a quarter
//! of a read-only stop. A policy built from
//! Rust's standard library imports four of them (to write to stderr, read
//! its empty environment and exit), so a module whose WASI imports are
//! among those four gets just those, through wasmtime-wasi's own
//! implementation of each (the very code `add_to_linker_sync` links); any
//! other module gets all of WASI.

use super::StoreData;
use anyhow::Result;
use wasmtime::{AsContextMut, Caller, Extern, Linker, Module};
use wasmtime_wasi::p1::wasi_snapshot_preview1 as p1;
use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1;

const MODULE: &str = "wasi_snapshot_preview1";

/// The WASI functions linked one by one.
const FEW: [&str; 4] = ["environ_get", "environ_sizes_get", "fd_write", "proc_exit"];

/// Links the WASI functions `module` imports: only [`FEW`] when its WASI
/// imports are among them, all of WASI otherwise.
pub fn add_to_linker<H: Send + 'static>(
    linker: &mut Linker<StoreData<H>>,
    module: &Module,
) -> Result<()> {
    let few = module
        .imports()
        .filter(|i| i.module() == MODULE)
        .all(|i| FEW.contains(&i.name()));
    if !few {
        return wasmtime_wasi::p1::add_to_linker_sync(linker, |data| &mut data.wasi)
            .map_err(super::wasm);
    }
    // Each wrapper is what wasmtime-wasi's generated glue does for the
    // function: find the caller's memory, hand it and the WASI context to
    // the function's ABI entry point (run to completion when it is async).
    // A shared memory is refused, as the capabilities in link.rs refuse it.
    macro_rules! link {
        ($name:ident ( $($arg:ident),* ) -> $ret:ty, $($finish:tt)*) => {
            linker
                .func_wrap(
                    MODULE,
                    stringify!($name),
                    |mut caller: Caller<'_, StoreData<H>>, $($arg: i32),*| -> wasmtime::Result<$ret> {
                        let fuel = caller.as_context_mut().hostcall_fuel();
                        let Some(Extern::Memory(memory)) = caller.get_export("memory") else {
                            wasmtime::bail!("missing required memory export");
                        };
                        let (bytes, data) = memory.data_and_store_mut(&mut caller);
                        data.wasi.set_hostcall_fuel(fuel);
                        let mut memory = wiggle::GuestMemory::Unshared(bytes);
                        let called = p1::$name(&mut data.wasi, &mut memory, $($arg),*);
                        Ok(<$ret>::from(link!(@finish called $($finish)*)?))
                    },
                )
                .map_err(super::wasm)?;
        };
        (@finish $called:ident sync) => { $called };
        (@finish $called:ident async) => { wasmtime_wasi::runtime::in_tokio($called) };
    }
    link!(environ_get(a, b) -> i32, sync);
    link!(environ_sizes_get(a, b) -> i32, sync);
    link!(fd_write(a, b, c, d) -> i32, async);
    link!(proc_exit(a) -> (), sync);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{DEFAULT_POLICY, STRICT_POLICY, StoreData, Unavailable, engine};
    use super::*;
    use wasmtime::{Store, StoreLimits};
    use wasmtime_wasi::WasiCtxBuilder;

    /// The WASI functions `add_to_linker` defines for `wasm`.
    fn linked(wasm: &[u8]) -> Vec<String> {
        let engine = engine().expect("engine");
        let module = Module::new(&engine, wasm).expect("module");
        let mut linker = Linker::new(&engine);
        add_to_linker(&mut linker, &module).expect("link");
        let mut store = Store::new(
            &engine,
            StoreData {
                wasi: WasiCtxBuilder::new().build_p1(),
                limits: StoreLimits::default(),
                host: Unavailable,
                host_time: Default::default(),
            },
        );
        let mut names: Vec<String> = linker
            .iter(&mut store)
            .filter(|(m, _, _)| *m == MODULE)
            .map(|(_, name, _)| name.to_string())
            .collect();
        names.sort();
        names
    }

    /// The shipped policies take the short path (a new toolchain whose
    /// standard library imports a fifth function would quietly make every
    /// stop slower), and a module importing more gets all of WASI.
    #[test]
    fn the_shipped_policies_get_four_functions_and_others_all() {
        for policy in [DEFAULT_POLICY, STRICT_POLICY] {
            assert_eq!(linked(policy), FEW.map(String::from));
        }
        let more = wat::parse_str(
            r#"(module (import "wasi_snapshot_preview1" "random_get" (func (param i32 i32) (result i32))))"#,
        )
        .expect("WAT");
        let all = linked(&more);
        assert!(all.len() > 40, "{all:?}");
        assert!(all.iter().any(|n| n == "random_get"));
    }
}
