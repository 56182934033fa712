//! The ledger: one JSON line per caught false completion, appended to
//! `ledger.jsonl` in the ledger dir (0700) with mode 0600. Off unless
//! `PROVE_IT_LEDGER=1`; it never leaves the disk.

use anyhow::{Context, Result};
use prove_it_gate::abi::LedgerEntry;
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
        ts: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        repo: &root.to_string_lossy(),
        exit_code: entry.exit_code,
        claim: &claim,
        evidence_demanded: &cut(&entry.evidence_demanded, LINE_CHARS),
        actual: &actual,
    };
    let mut line = serde_json::to_vec(&row).context("cannot encode a ledger row")?;
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
