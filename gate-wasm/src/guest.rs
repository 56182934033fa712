//! Guest-side glue for policy modules built for `wasm32-wasip1`.
//!
//! [`Imports`] implements [`Host`] over the host's imports, and
//! [`policy_module!`](crate::policy_module) defines the exports. A custom
//! policy is a `cdylib` that calls `prove_it_gate::policy_module!(my_decide);`
//! with `fn my_decide(&Event, &mut impl Host) -> Decision`.

use crate::abi::{
    CheckChanges, Decision, Event, Fingerprint, Host, LedgerEntry, Replay, ReplayRequest, Reply,
    SessionRead, SessionWrite, TreeState, VerifyFacts, VerifyRun, pack, unpack,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

#[link(wasm_import_module = "prove_it")]
unsafe extern "C" {
    fn tree_state(ptr: *const u8, len: usize) -> i64;
    fn verify_facts(ptr: *const u8, len: usize) -> i64;
    fn run_verify(ptr: *const u8, len: usize) -> i64;
    fn session_read(ptr: *const u8, len: usize) -> i64;
    fn session_write(ptr: *const u8, len: usize) -> i64;
    fn passed_check(ptr: *const u8, len: usize) -> i64;
    fn passed_record(ptr: *const u8, len: usize) -> i64;
    fn ledger_append(ptr: *const u8, len: usize) -> i64;
    fn check_changes(ptr: *const u8, len: usize) -> i64;
    fn replay_checks(ptr: *const u8, len: usize) -> i64;
}

/// Allocates `len` bytes the host may fill; ownership passes back to the guest
/// through [`take`].
pub fn alloc(len: usize) -> *mut u8 {
    Box::into_raw(vec![0u8; len].into_boxed_slice()) as *mut u8
}

/// Takes back a buffer made by [`alloc`] (or handed out by [`give`]).
///
/// # Safety
/// `ptr/len` must come from `alloc(len)` and not have been taken before.
pub unsafe fn take(ptr: *mut u8, len: usize) -> Vec<u8> {
    // SAFETY: the caller promises ptr/len is a leaked Box<[u8]> of this length.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) }.into_vec()
}

/// Leaks `bytes` and returns them packed, for the host to read.
pub fn give(bytes: Vec<u8>) -> i64 {
    let len = bytes.len();
    let ptr = Box::into_raw(bytes.into_boxed_slice()) as *mut u8;
    pack(ptr as u32, len as u32)
}

/// Calls one import with a JSON request and decodes its JSON reply.
fn call<Req: Serialize, Resp: DeserializeOwned>(
    import: unsafe extern "C" fn(*const u8, usize) -> i64,
    request: &Req,
) -> Reply<Resp> {
    let bytes = serde_json::to_vec(request).map_err(|e| format!("cannot encode request: {e}"))?;
    // SAFETY: the import reads `bytes` during the call only and returns a
    // buffer it allocated through `prove_it_alloc`, which we now own.
    let reply = unsafe {
        let (ptr, len) = unpack(import(bytes.as_ptr(), bytes.len()));
        take(ptr as *mut u8, len as usize)
    };
    serde_json::from_slice::<Reply<Resp>>(&reply)
        .map_err(|e| format!("cannot decode reply: {e}"))?
}

/// The host's capabilities, as seen from inside a module.
pub struct Imports;

#[derive(Serialize)]
struct Empty {}

impl Host for Imports {
    fn tree_state(&mut self) -> Reply<TreeState> {
        call(tree_state, &Empty {})
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        call(verify_facts, &Empty {})
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        call(run_verify, &Empty {})
    }
    fn session_read(&mut self) -> Reply<SessionRead> {
        call(session_read, &Empty {})
    }
    fn session_write(&mut self, request: &SessionWrite) -> Reply<()> {
        call(session_write, request)
    }
    fn passed_check(&mut self, request: &Fingerprint) -> Reply<bool> {
        call(passed_check, request)
    }
    fn passed_record(&mut self, request: &Fingerprint) -> Reply<()> {
        call(passed_record, request)
    }
    fn ledger_append(&mut self, request: &LedgerEntry) -> Reply<bool> {
        call(ledger_append, request)
    }
    fn check_changes(&mut self) -> Reply<CheckChanges> {
        call(check_changes, &Empty {})
    }
    fn replay_checks(&mut self, request: &ReplayRequest) -> Reply<Replay> {
        call(replay_checks, request)
    }
}

/// Runs `decide` on the event at `ptr/len` and returns the packed decision.
/// Used by [`policy_module!`](crate::policy_module); not called directly.
///
/// # Safety
/// `ptr/len` must come from `prove_it_alloc(len)`.
pub unsafe fn run_decide(
    ptr: *mut u8,
    len: usize,
    decide: fn(&Event, &mut Imports) -> Decision,
) -> i64 {
    // SAFETY: forwarded from the caller.
    let bytes = unsafe { take(ptr, len) };
    let decision = match serde_json::from_slice::<Event>(&bytes) {
        Ok(event) => decide(&event, &mut Imports),
        Err(e) => Decision::allow_with(format!(
            "prove-it: the policy could not read its event ({e}); this turn was not verified"
        )),
    };
    give(serde_json::to_vec(&decision).expect("a Decision always serializes"))
}

/// Defines the exports of a policy module around `decide`.
#[macro_export]
macro_rules! policy_module {
    ($decide:path) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn prove_it_abi_version() -> i32 {
            $crate::abi::ABI_VERSION
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn prove_it_alloc(len: usize) -> *mut u8 {
            $crate::guest::alloc(len)
        }

        /// # Safety
        /// Called by the host with a buffer from `prove_it_alloc`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn prove_it_decide(ptr: *mut u8, len: usize) -> i64 {
            // Not named `decide`: that would shadow a caller's own `decide`
            // and call itself forever.
            fn __prove_it_entry(
                event: &$crate::abi::Event,
                host: &mut $crate::guest::Imports,
            ) -> $crate::abi::Decision {
                $decide(event, host)
            }
            // SAFETY: the host passes a buffer it got from prove_it_alloc.
            unsafe { $crate::guest::run_decide(ptr, len, __prove_it_entry) }
        }
    };
}
