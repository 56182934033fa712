//! The capability imports: each [`Host`] method becomes one function in the
//! `prove_it` import module, speaking JSON through guest memory (see the ABI
//! in `prove_it_gate::abi`).

use super::{MESSAGE_BYTES, StoreData};
use anyhow::{Context, Result};
use prove_it_gate::abi::{Host, IMPORT_MODULE, Reply, export, import, pack};
use serde::Serialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use wasmtime::{AsContext, AsContextMut, Caller, Instance, Linker, Memory};

pub fn add_to_linker<H: Host + Send + 'static>(linker: &mut Linker<StoreData<H>>) -> Result<()> {
    json(linker, import::TREE_STATE, |h: &mut H, _: IgnoredAny| {
        h.tree_state()
    })?;
    json(linker, import::VERIFY_FACTS, |h: &mut H, _: IgnoredAny| {
        h.verify_facts()
    })?;
    json(linker, import::RUN_VERIFY, |h: &mut H, _: IgnoredAny| {
        h.run_verify()
    })?;
    json(linker, import::SESSION_READ, |h: &mut H, _: IgnoredAny| {
        h.session_read()
    })?;
    json(linker, import::SESSION_WRITE, |h: &mut H, r| {
        h.session_write(&r)
    })?;
    json(linker, import::PASSED_CHECK, |h: &mut H, r| {
        h.passed_check(&r)
    })?;
    json(linker, import::PASSED_RECORD, |h: &mut H, r| {
        h.passed_record(&r)
    })?;
    json(linker, import::LEDGER_APPEND, |h: &mut H, r| {
        h.ledger_append(&r)
    })?;
    json(linker, import::CHECK_CHANGES, |h: &mut H, _: IgnoredAny| {
        h.check_changes()
    })?;
    json(linker, import::REPLAY_CHECKS, |h: &mut H, r| {
        h.replay_checks(&r)
    })?;
    Ok(())
}

/// Links one import: read the JSON request, call `f`, hand back the reply.
fn json<H, Req, Resp>(
    linker: &mut Linker<StoreData<H>>,
    name: &'static str,
    f: fn(&mut H, Req) -> Reply<Resp>,
) -> Result<()>
where
    H: Host + Send + 'static,
    Req: DeserializeOwned + 'static,
    Resp: Serialize + 'static,
{
    linker
        .func_wrap(
            IMPORT_MODULE,
            name,
            move |mut caller: Caller<'_, StoreData<H>>,
                  ptr: i32,
                  len: i32|
                  -> wasmtime::Result<i64> {
                let memory = caller_memory(&mut caller)?;
                if len as u32 as usize > MESSAGE_BYTES {
                    wasmtime::bail!(
                        "`{name}` request of {len} bytes is over the {MESSAGE_BYTES} byte limit"
                    );
                }
                let request = read(&memory, &caller, ptr as u32, len as u32)?;
                let started = std::time::Instant::now();
                let reply: Reply<Resp> = match serde_json::from_slice::<Req>(&request) {
                    Ok(request) => f(&mut caller.data_mut().host, request),
                    Err(e) => Err(format!("`{name}` got a request it cannot read: {e}")),
                };
                caller.data_mut().host_time.push((name, started.elapsed()));
                let bytes = serde_json::to_vec(&reply)?;
                let alloc = caller
                    .get_export(export::ALLOC)
                    .and_then(|e| e.into_func())
                    .ok_or_else(|| {
                        wasmtime::format_err!("the policy has no `{}` export", export::ALLOC)
                    })?
                    .typed::<i32, i32>(&caller)?;
                let out = alloc.call(&mut caller, bytes.len() as i32)?;
                write(&memory, &mut caller, out, &bytes)?;
                Ok(pack(out as u32, bytes.len() as u32))
            },
        )
        .map_err(|e| anyhow::anyhow!("cannot link the import `{name}`: {e}"))?;
    Ok(())
}

fn caller_memory<T>(caller: &mut Caller<'_, T>) -> wasmtime::Result<Memory> {
    caller
        .get_export(export::MEMORY)
        .and_then(|e| e.into_memory())
        .ok_or_else(|| wasmtime::format_err!("the policy exports no `memory`"))
}

pub fn memory<T>(instance: &Instance, store: impl AsContextMut<Data = T>) -> Result<Memory> {
    instance
        .get_memory(store, export::MEMORY)
        .context("the policy exports no `memory`")
}

/// Copies `len` bytes at `ptr` out of guest memory, bounds checked.
pub fn read(
    memory: &Memory,
    store: impl AsContext,
    ptr: u32,
    len: u32,
) -> wasmtime::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    memory.read(store, ptr as usize, &mut buf).map_err(|_| {
        wasmtime::format_err!("the policy pointed outside its memory ({ptr}+{len})")
    })?;
    Ok(buf)
}

/// Copies `bytes` into guest memory at `ptr`, bounds checked.
pub fn write(
    memory: &Memory,
    store: impl AsContextMut,
    ptr: i32,
    bytes: &[u8],
) -> wasmtime::Result<()> {
    memory
        .write(store, ptr as u32 as usize, bytes)
        .map_err(|_| wasmtime::format_err!("the policy allocated outside its memory ({ptr})"))
}
