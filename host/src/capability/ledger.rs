//! The ledger: JSON lines appended to `ledger.jsonl` in the ledger dir
//! (0700) with mode 0600. Off unless `PROVE_IT_LEDGER=1`; it never leaves
//! the disk. Two kinds of row: `caught` (a false completion, written by the
//! policy with the claim and the failing lines; rows without a `kind` are
//! these) and `verdict` (every stop that ran `verify.sh` or ended unproven,
//! written by the host). `prove-it ledger` reads them back.

use anyhow::{Context, Result};
use prove_it_gate::abi::{Decision, LedgerEntry, Verdict};
use serde::Serialize;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const LEDGER_FILE: &str = "ledger.jsonl";

/// A policy writes the claim and the lines; a row stays a row.
const CLAIM_CHARS: usize = 2_000;
const ACTUAL_LINES: usize = 20;
const LINE_CHARS: usize = 400;

/// One row as written: the policy's entry plus what only the host knows.
#[derive(Serialize)]
struct Row<'a> {
    ts: String,
    kind: &'static str,
    repo: &'a str,
    exit_code: Option<i32>,
    claim: &'a str,
    evidence_demanded: &'a str,
    actual: &'a [String],
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(LEDGER_FILE)
}

/// Appends one row for `entry` caught in the work tree `root`.
pub fn append(dir: &Path, root: &Path, entry: &LedgerEntry) -> Result<()> {
    crate::fs::private_dir(dir)?;
    let claim = cut(&entry.claim, CLAIM_CHARS);
    let actual: Vec<String> = entry
        .actual
        .iter()
        .take(ACTUAL_LINES)
        .map(|l| cut(l, LINE_CHARS))
        .collect();
    let row = Row {
        ts: now(),
        kind: "caught",
        repo: &root.to_string_lossy(),
        exit_code: entry.exit_code,
        claim: &claim,
        evidence_demanded: &cut(&entry.evidence_demanded, LINE_CHARS),
        actual: &actual,
    };
    write_row(dir, &row)
}

/// A verdict as the ledger keeps it.
#[derive(Serialize)]
struct VerdictRow<'a> {
    ts: String,
    kind: &'static str,
    repo: &'a str,
    verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verify_ms: Option<u64>,
    /// For a weakened pass: the checks the session changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Vec<String>>,
}

/// Appends the verdict of one stop in `root`, when it is one the ledger
/// keeps: every stop that ran `verify.sh`, and every stop that ended
/// unproven. (An unchanged tree, or a tree that passed before, is not.)
pub fn append_verdict(dir: &Path, root: &Path, decision: &Decision) -> Result<()> {
    let Some(verdict) = decision.verdict else {
        return Ok(());
    };
    let keep = match verdict {
        Verdict::Unchanged => false,
        Verdict::Verified => decision.verify_ms.is_some(),
        _ => true,
    };
    if !keep {
        return Ok(());
    }
    write_row(
        dir,
        &VerdictRow {
            ts: now(),
            kind: "verdict",
            repo: &root.to_string_lossy(),
            verdict,
            attempts: decision.attempts,
            verify_ms: decision.verify_ms,
            checks: decision
                .checks
                .as_ref()
                .map(|c| c.files.iter().map(|f| f.path.clone()).collect()),
        },
    )
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn write_row(dir: &Path, row: &impl Serialize) -> Result<()> {
    crate::fs::private_dir(dir)?;
    let mut line = serde_json::to_vec(row).context("cannot encode a ledger row")?;
    line.push(b'\n');
    let path = path(dir);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot open the ledger `{}`", path.display()))?;
    // One write of the whole line: O_APPEND keeps rows from two sessions whole.
    file.write_all(&line)
        .with_context(|| format!("cannot append to the ledger `{}`", path.display()))
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}
