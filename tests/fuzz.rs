//! The hook as a whole process against odd and hostile input: the corpus
//! in `tests/corpus/hook-input/` (real hook inputs of each agent host, and
//! shapes found to matter), then random mutations of it. Every run must
//! end within its time, exit 0, and print nothing or one JSON answer of
//! the known fields.

use crate::util::{Sandbox, hook_command};
use proptest::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const EVENTS: [&str; 3] = ["session-start", "user-prompt-submit", "stop"];
const ANSWER_FIELDS: [&str; 3] = ["decision", "reason", "systemMessage"];
/// Far above any one hook run here; a run past it is a hang.
const LIMIT: Duration = Duration::from_secs(60);

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/hook-input");
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the corpus")
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).expect("read")))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "corpus at {}", dir.display());
    files
}

/// `bytes` with `@REPO@` replaced by `root`.
fn placed(bytes: &[u8], root: &Path) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains("@REPO@") || std::str::from_utf8(bytes).is_err() {
        return bytes.to_vec();
    }
    text.replace("@REPO@", &root.display().to_string())
        .into_bytes()
}

/// Runs one hook with `stdin`, checking the rules every run keeps.
fn survives(
    root: &Path,
    env: &std::collections::BTreeMap<String, String>,
    event: &str,
    stdin: &[u8],
) -> Result<(), String> {
    let mut child = hook_command(root, env, event)
        .spawn()
        .map_err(|e| e.to_string())?;
    // A hook may answer before reading all of its input; that is fine.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let started = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            return Err(format!("{event}: no answer within {LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let shown = || {
        format!(
            "{event} with {:?}\nstatus {}\nstdout {}\nstderr {}",
            String::from_utf8_lossy(stdin),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    if out.status.code() != Some(0) {
        return Err(format!("exit code is not 0: {}", shown()));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.trim().is_empty() {
        return Ok(());
    }
    match serde_json::from_str::<serde_json::Value>(&stdout) {
        Ok(serde_json::Value::Object(answer)) => {
            match answer.keys().find(|k| !ANSWER_FIELDS.contains(&k.as_str())) {
                Some(key) => Err(format!("unknown answer field {key}: {}", shown())),
                None => Ok(()),
            }
        }
        _ => Err(format!("stdout is not one JSON object: {}", shown())),
    }
}

/// A sandbox with an armed repository whose tree has failing work in it, so
/// that any input naming it reaches the gate's whole path.
fn armed() -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("if [ -e broken ]; then echo 'test result: 1 failed'; exit 1; fi");
    repo.write("broken", "x");
    let root = repo.root.clone();
    (sb, root)
}

#[test]
fn every_corpus_input_gets_an_answer() {
    let (sb, root) = armed();
    for (path, bytes) in corpus() {
        for event in EVENTS {
            if let Err(e) = survives(&root, &sb.env, event, &placed(&bytes, &root)) {
                panic!("{}: {e}", path.display());
            }
        }
    }
}

/// A mutation of one corpus input: bytes flipped, cut, or spliced in.
#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, byte: u8 },
    Cut { at: usize },
    Insert { at: usize, bytes: Vec<u8> },
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Flip { at, byte } => {
                if let Some(b) = bytes.get_mut(at % len) {
                    *b ^= byte;
                }
            }
            Mutation::Cut { at } => bytes.truncate(at % len),
            Mutation::Insert { at, bytes: new } => {
                let at = (at % len).min(bytes.len());
                bytes.splice(at..at, new.iter().copied());
            }
        }
    }
    bytes
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop_oneof![
        Just(b"\"".to_vec()),
        Just(b"null".to_vec()),
        Just(b"{}".to_vec()),
        Just(b"\\u0000".to_vec()),
        Just(b"\"cwd\":\"/\",".to_vec()),
        Just(b"\"session_id\":\"../../x\",".to_vec()),
        Just(vec![0xff, 0xfe]),
        proptest::collection::vec(any::<u8>(), 1..16),
    ];
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Cut { at }),
        (any::<usize>(), interesting).prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_corpus_inputs_get_an_answer(
        pick in any::<usize>(),
        event in 0usize..3,
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        let files = corpus();
        let (sb, root) = armed();
        let (_, bytes) = &files[pick % files.len()];
        let input = mutate(placed(bytes, &root), &mutations);
        if let Err(e) = survives(&root, &sb.env, EVENTS[event], &input) {
            prop_assert!(false, "{}", e);
        }
    }
}
