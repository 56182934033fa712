//! Fuzzing the host's side of the boundary: everything it decodes from a
//! module's memory (requests at a pointer the module chose, the pointer its
//! allocator returns for a reply, the packed decision slice and its JSON).
//! A hostile module is made for each case; whatever it does, running it
//! must end in a decision or an error, never a panic or a hang.

use super::run;
use proptest::prelude::*;
use prove_it_gate::abi::{
    ABI_VERSION, EventKind, Fingerprint, Host, LedgerEntry, Reply, SessionRead, SessionWrite,
    Settings, TreeState, VerifyFacts, VerifyOutcome, VerifyRun, import, pack,
};
use std::borrow::Cow;

/// A host whose capabilities all answer, so that every reply is written
/// back into the module's memory at the pointer it gives.
struct Answers;

impl super::Diagnose for Answers {}

impl Host for Answers {
    fn tree_state(&mut self) -> Reply<TreeState> {
        Ok(TreeState {
            head: None,
            fingerprint: "ab".repeat(32),
        })
    }
    fn verify_facts(&mut self) -> Reply<VerifyFacts> {
        Ok(VerifyFacts {
            exists: true,
            executable: true,
            hash: Some("cd".repeat(32)),
        })
    }
    fn run_verify(&mut self) -> Reply<VerifyRun> {
        Ok(VerifyRun {
            outcome: VerifyOutcome::Failed,
            exit_code: Some(1),
            duration_ms: 1,
            tail: vec!["x".repeat(400); 20],
            timeout_secs: 1,
            detail: None,
            notes: Vec::new(),
            tests_ran: None,
        })
    }
    fn session_read(&mut self) -> Reply<SessionRead> {
        Ok(SessionRead::default())
    }
    fn session_write(&mut self, _: &SessionWrite) -> Reply<()> {
        Ok(())
    }
    fn passed_check(&mut self, _: &Fingerprint) -> Reply<bool> {
        Ok(false)
    }
    fn passed_record(&mut self, _: &Fingerprint) -> Reply<()> {
        Ok(())
    }
    fn ledger_append(&mut self, _: &LedgerEntry) -> Reply<bool> {
        Err("off".into())
    }
}

const IMPORTS: [&str; 8] = [
    import::TREE_STATE,
    import::VERIFY_FACTS,
    import::RUN_VERIFY,
    import::SESSION_READ,
    import::SESSION_WRITE,
    import::PASSED_CHECK,
    import::PASSED_RECORD,
    import::LEDGER_APPEND,
];

/// What a hostile module does, all of it chosen by the fuzzer.
#[derive(Debug, Clone)]
struct Hostile {
    /// The bytes at address 0 of its memory: requests and decisions.
    data: Vec<u8>,
    /// Its memory's size in 64 KiB pages.
    pages: u32,
    /// Imports it calls, each with a request pointer and length.
    calls: Vec<(usize, i32, i32)>,
    /// What its `prove_it_alloc` returns, whatever it is asked for.
    alloc: i32,
    /// What its `prove_it_decide` returns (a packed pointer and length).
    decision: i64,
}

impl Hostile {
    fn wat(&self) -> String {
        let data: String = self.data.iter().map(|b| format!("\\{b:02x}")).collect();
        let calls: String = self
            .calls
            .iter()
            .map(|(i, ptr, len)| {
                format!(
                    "i32.const {ptr} i32.const {len} call ${} drop\n",
                    IMPORTS[i % IMPORTS.len()]
                )
            })
            .collect();
        let imports: String = IMPORTS
            .iter()
            .map(|name| {
                format!(
                    "(import \"prove_it\" \"{name}\" (func ${name} (param i32 i32) (result i64)))\n"
                )
            })
            .collect();
        format!(
            r#"(module
{imports}
  (memory (export "memory") {pages})
  (data (i32.const 0) "{data}")
  (func (export "prove_it_abi_version") (result i32) i32.const {ABI_VERSION})
  (func (export "prove_it_alloc") (param i32) (result i32) i32.const {alloc})
  (func (export "prove_it_decide") (param i32 i32) (result i64)
    {calls}
    i64.const {decision}))"#,
            pages = self.pages,
            alloc = self.alloc,
            decision = self.decision,
        )
    }
}

/// Bytes worth putting in a module's memory: JSON the host may half
/// understand, and noise.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(br#"{"action":"block","reason":"r","message":"m"}"#.to_vec()),
        Just(br#"{"action":"allow"}"#.to_vec()),
        Just(br#"{"fingerprint":"abcdef"}"#.to_vec()),
        Just(br#"{"value":{"baseline":null,"attempts":4294967295}}"#.to_vec()),
        Just(br#"{"claim":"","evidence_demanded":"","exit_code":null,"actual":[]}"#.to_vec()),
        Just(br#"{"action":"block","reason":"\ud800"}"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..256),
    ]
}

/// Pointers and lengths near the places where bounds are checked.
fn address() -> impl Strategy<Value = i32> {
    prop_oneof![
        0..64i32,
        Just(65_536 - 8),
        Just(65_536),
        Just(131_072 - 1),
        Just(i32::MAX),
        Just(-1),
        any::<i32>(),
    ]
}

fn decision(data_len: usize) -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(pack(0, data_len as u32)),
        (address(), address()).prop_map(|(p, l)| pack(p as u32, l as u32)),
        Just(pack(0, (1 << 20) + 1)),
        any::<i64>(),
    ]
}

fn hostile() -> impl Strategy<Value = Hostile> {
    data().prop_flat_map(|data| {
        let len = data.len();
        (
            Just(data),
            1u32..3,
            proptest::collection::vec((0usize..8, address(), address()), 0..4),
            address(),
            decision(len),
        )
            .prop_map(|(data, pages, calls, alloc, decision)| Hostile {
                data,
                pages,
                calls,
                alloc,
                decision,
            })
    })
}

fn options(cache_dir: &std::path::Path) -> super::RunOptions<'_> {
    super::RunOptions {
        cache_dir,
        timings: false,
    }
}

fn event() -> prove_it_gate::abi::Event {
    prove_it_gate::abi::Event {
        kind: EventKind::Stop,
        source: None,
        turn: None,
        may_be_retry: false,
        claim: Some("done".into()),
        repo: "/r".into(),
        settings: Settings::default(),
        notes: Vec::new(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// No module, however it points, allocates or encodes, makes the host
    /// panic: each run ends in a decision or an error that names the fault.
    #[test]
    fn a_hostile_module_ends_in_a_decision_or_an_error(module in hostile()) {
        let cache = tempfile::tempdir().expect("cache dir");
        let wasm = wat::parse_str(module.wat()).expect("valid wat");
        let hash = blake3::hash(&wasm).to_hex().to_string();
        match run(|| Ok(Cow::Owned(wasm.clone())), &hash, &event(), Answers, &options(cache.path())) {
            Ok(_) => {}
            Err(e) => {
                    let text = format!("{e:#}");
                    prop_assert!(!text.is_empty());
                }
        }
    }
}

/// The fuzzer's model of a decision that must load: a module that returns
/// exactly the JSON it holds is understood (so the cases above do reach the
/// decoding, not only the bounds checks).
#[test]
fn a_well_formed_decision_is_read() {
    let cache = tempfile::tempdir().expect("cache dir");
    let json = br#"{"action":"block","reason":"r"}"#.to_vec();
    let module = Hostile {
        decision: pack(0, json.len() as u32),
        data: json,
        pages: 1,
        calls: vec![(0, 0, 2)],
        alloc: 1024,
    };
    let wasm = wat::parse_str(module.wat()).expect("valid wat");
    let hash = blake3::hash(&wasm).to_hex().to_string();
    let decision = run(
        || Ok(Cow::Owned(wasm.clone())),
        &hash,
        &event(),
        Answers,
        &options(cache.path()),
    )
    .expect("decides");
    assert_eq!(decision.reason.as_deref(), Some("r"));
}
