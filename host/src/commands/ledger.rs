//! `prove-it ledger`: a period of the ledger as a story: claims caught, how
//! many the agent then fixed and after how many blocks, turns that ended
//! unverified, the failures that recur, `verify.sh`'s time, and weekly
//! counts as a chart. `--json` gives the same figures to tools.
//!
//! A line that is not a row (malformed, or cut short by a crash) is skipped
//! and counted, never fatal.

use crate::capability::ledger;
use crate::settings;
use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

const WEEK: Duration = Duration::from_secs(7 * 24 * 3600);
/// The rule of thumb for `verify.sh`: it runs at every turn end.
const MINUTE_MS: u64 = 60_000;
/// Recurring failures listed.
const TOP: usize = 5;

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub ledger: PathBuf,
    pub days: u32,
    pub repo: Option<PathBuf>,
    /// Rows read in the period (for the repository, when one is named).
    pub rows: usize,
    /// Lines skipped: not JSON, or not a row.
    pub malformed: usize,
    /// False completions caught: the agent ended its turn, `verify.sh` failed.
    pub caught: usize,
    /// Turns that then passed after one or more blocks.
    pub fixed: usize,
    /// How many blocks the fixed turns took: blocks -> turns.
    pub fixed_after: BTreeMap<u32, usize>,
    /// Turns that ended unverified because the gate gave up.
    pub yielded: usize,
    /// Passes made possible only by the session's changes to its checks.
    pub weakened: usize,
    /// Passes whose code may special-case the tests.
    pub suspect: usize,
    /// Passes that changed what tests expect (they passed at the start).
    pub behaviour_changed: usize,
    /// Passes whose changed checks could not be judged.
    pub not_judged: usize,
    pub skipped: usize,
    pub disarm_refused: usize,
    pub gate_errors: usize,
    /// Caught claims whose `verify.sh` ran out of time.
    pub timeouts: usize,
    pub recurring: Vec<Failure>,
    pub verify: Timing,
    pub weeks: Vec<Week>,
}

#[derive(Debug, Serialize)]
pub struct Failure {
    /// The failing line, digits replaced by `N` so that counts group.
    pub line: String,
    /// Caught claims it appeared in.
    pub count: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct Timing {
    pub runs: usize,
    pub median_ms: Option<u64>,
    pub slowest_ms: Option<u64>,
    /// Runs longer than a minute.
    pub over_a_minute: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct Week {
    /// The first day of the week (UTC), `YYYY-MM-DD`.
    pub from: String,
    pub caught: usize,
    pub fixed: usize,
    pub yielded: usize,
    pub verify_median_ms: Option<u64>,
}

pub fn execute(days: u32, repo: Option<&Path>, json: bool) -> Result<ExitCode> {
    let loaded = settings::from_env();
    let file = ledger::path(&loaded.dirs.ledger);
    let repo = repo
        .map(|dir| {
            crate::capability::git::discover(dir)
                .with_context(|| format!("`{}` is not inside a git repository", dir.display()))
        })
        .transpose()?;
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if json {
                outln!(
                    "{}",
                    serde_json::to_string(&Report::empty(&file, days, repo))?
                );
            } else {
                outln!(
                    "prove-it ledger: nothing recorded yet at `{}`. Set PROVE_IT_LEDGER=1 (in the environment the agent host runs in) to keep one.",
                    file.display()
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    };
    let report = summarize(&text, &file, days, repo, SystemTime::now());
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        out!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

impl Report {
    fn empty(file: &Path, days: u32, repo: Option<PathBuf>) -> Report {
        Report {
            ledger: file.to_path_buf(),
            days,
            repo,
            ..Report::default()
        }
    }
}

/// The figures for the `days` before `now` in the ledger `text`.
pub fn summarize(
    text: &str,
    file: &Path,
    days: u32,
    repo: Option<PathBuf>,
    now: SystemTime,
) -> Report {
    let mut report = Report::empty(file, days, repo);
    let period = Duration::from_secs(u64::from(days) * 24 * 3600);
    let start = now.checked_sub(period).unwrap_or(SystemTime::UNIX_EPOCH);
    let week_count = days.div_ceil(7).max(1) as usize;
    let mut weeks: Vec<(Week, Vec<u64>)> = (0..week_count)
        .map(|i| {
            let from = start + WEEK * i as u32;
            let day = humantime::format_rfc3339(from).to_string();
            (
                Week {
                    from: day[..10].to_string(),
                    ..Week::default()
                },
                Vec::new(),
            )
        })
        .collect();
    let mut times = Vec::new();
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((ts, row)) = parse(line) else {
            report.malformed += 1;
            continue;
        };
        if ts < start || ts > now {
            continue;
        }
        if let Some(only) = &report.repo
            && row["repo"].as_str().map(Path::new) != Some(only.as_path())
        {
            continue;
        }
        report.rows += 1;
        let index = ts.duration_since(start).unwrap_or_default().as_secs() / WEEK.as_secs();
        let week = &mut weeks[(index as usize).min(week_count - 1)];
        let ms = row["verify_ms"].as_u64();
        if let Some(ms) = ms {
            times.push(ms);
            week.1.push(ms);
        }
        match row["kind"].as_str().unwrap_or("caught") {
            "caught" => {
                report.caught += 1;
                week.0.caught += 1;
                let mut seen = std::collections::BTreeSet::new();
                for line in row["actual"].as_array().into_iter().flatten() {
                    let Some(line) = line.as_str() else { continue };
                    if line.contains("timed out after") {
                        report.timeouts += 1;
                    }
                    seen.insert(normalize(line));
                }
                for line in seen {
                    *failures.entry(line).or_default() += 1;
                }
            }
            "verdict" => match row["verdict"].as_str().unwrap_or_default() {
                "verified" => {
                    let blocks = row["attempts"].as_u64().unwrap_or(0) as u32;
                    if blocks > 0 {
                        report.fixed += 1;
                        week.0.fixed += 1;
                        *report.fixed_after.entry(blocks).or_default() += 1;
                    }
                }
                "yielded" => {
                    report.yielded += 1;
                    week.0.yielded += 1;
                }
                "weakened" => report.weakened += 1,
                "suspect" => report.suspect += 1,
                "behaviour_changed" => report.behaviour_changed += 1,
                "not_judged" => report.not_judged += 1,
                "skipped" => report.skipped += 1,
                "disarm_refused" => report.disarm_refused += 1,
                "gate_error" => report.gate_errors += 1,
                _ => {}
            },
            _ => report.malformed += 1,
        }
    }
    let mut recurring: Vec<Failure> = failures
        .into_iter()
        .filter(|(line, count)| *count >= 2 && !line.is_empty())
        .map(|(line, count)| Failure { line, count })
        .collect();
    recurring.sort_by(|a, b| b.count.cmp(&a.count).then(a.line.cmp(&b.line)));
    recurring.truncate(TOP);
    report.recurring = recurring;
    report.verify = Timing {
        runs: times.len(),
        median_ms: median(&mut times.clone()),
        slowest_ms: times.iter().copied().max(),
        over_a_minute: times.iter().filter(|ms| **ms > MINUTE_MS).count(),
    };
    report.weeks = weeks
        .into_iter()
        .map(|(mut week, mut ms)| {
            week.verify_median_ms = median(&mut ms);
            week
        })
        .collect();
    report
}

/// A row's time and fields, or `None` when the line is not a row.
fn parse(line: &str) -> Option<(SystemTime, Value)> {
    let row: Value = serde_json::from_str(line).ok()?;
    let ts = humantime::parse_rfc3339(row["ts"].as_str()?).ok()?;
    row["repo"].as_str()?;
    Some((ts, row))
}

/// Numbers become `N`, so "3 failed, 41 passed" and "2 failed, 40 passed"
/// count as one failure; digits inside a word (an error code, `E0308`) stay.
fn normalize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut previous: Option<char> = None;
    let mut in_number = false;
    for c in line.trim().chars() {
        let starts_number = !previous.is_some_and(|p| p.is_alphanumeric() && !in_number);
        if c.is_ascii_digit() && (in_number || starts_number) {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

fn median(values: &mut [u64]) -> Option<u64> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The report for a person.
pub fn render(r: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let scope = match &r.repo {
        Some(repo) => format!("in {}", repo.display()),
        None => "all repositories".to_string(),
    };
    let _ = writeln!(
        out,
        "prove-it ledger: the last {} days, {scope} ({})",
        r.days,
        r.ledger.display()
    );
    if r.rows == 0 {
        let _ = writeln!(out, "  nothing recorded in this period.");
    }
    let _ = writeln!(
        out,
        "  caught     {}: the agent ended its turn and verify.sh failed",
        plural(r.caught, "false completion", "false completions")
    );
    let after: Vec<String> = r
        .fixed_after
        .iter()
        .map(|(blocks, n)| format!("{n} after {}", plural(*blocks as usize, "block", "blocks")))
        .collect();
    let _ = writeln!(
        out,
        "  fixed      {} then passed in the same turn{}",
        plural(r.fixed, "turn", "turns"),
        if after.is_empty() {
            String::new()
        } else {
            format!(" ({})", after.join(", "))
        }
    );
    let _ = writeln!(
        out,
        "  yielded    {} ended UNVERIFIED: the gate gave up",
        plural(r.yielded, "turn", "turns")
    );
    let _ = writeln!(
        out,
        "  weakened   {} only with checks the session changed (the checks at its start failed)",
        plural(r.weakened, "pass", "passes")
    );
    let _ = writeln!(
        out,
        "  suspect    {} whose code may special-case the tests",
        plural(r.suspect, "pass", "passes")
    );
    let _ = writeln!(
        out,
        "  behaviour  {} that changed what tests expect (they passed at the start)",
        plural(r.behaviour_changed, "pass", "passes")
    );
    let _ = writeln!(
        out,
        "  not judged {} whose changed checks could not be judged",
        plural(r.not_judged, "pass", "passes")
    );
    let _ = writeln!(
        out,
        "  also       {} skipped (PROVE_IT_SKIP=1), {} refused disarm, {} timed out, {}",
        r.skipped,
        r.disarm_refused,
        r.timeouts,
        plural(r.gate_errors, "gate error", "gate errors")
    );
    match (r.verify.median_ms, r.verify.slowest_ms) {
        (Some(median), Some(slowest)) => {
            let _ = writeln!(
                out,
                "  verify.sh  {}, median {}, slowest {}{}",
                plural(r.verify.runs, "run", "runs"),
                seconds(median),
                seconds(slowest),
                if r.verify.over_a_minute > 0 {
                    format!(
                        "; {} over a minute, the rule of thumb for a check that runs at every turn end",
                        r.verify.over_a_minute
                    )
                } else {
                    String::new()
                }
            );
        }
        _ => {
            let _ = writeln!(out, "  verify.sh  no timed runs recorded");
        }
    }
    if !r.recurring.is_empty() {
        let _ = writeln!(out, "  recurring failures (in how many caught claims):");
        for f in &r.recurring {
            let _ = writeln!(out, "    {:>3}×  {}", f.count, f.line);
        }
    }
    let widest = r
        .weeks
        .iter()
        .map(|w| w.caught + w.yielded)
        .max()
        .unwrap_or(0)
        .max(1);
    let _ = writeln!(
        out,
        "  by week (█ caught, ▒ yielded; fixed; verify.sh median):"
    );
    for w in &r.weeks {
        let scale = |n: usize| (n * 30).div_ceil(widest);
        let bar = format!(
            "{}{}",
            "█".repeat(scale(w.caught)),
            "▒".repeat(scale(w.yielded))
        );
        let _ = writeln!(
            out,
            "    {}  {bar:<30} {} caught, {} yielded, {} fixed{}",
            w.from,
            w.caught,
            w.yielded,
            w.fixed,
            w.verify_median_ms
                .map(|ms| format!(", {}", seconds(ms)))
                .unwrap_or_default()
        );
    }
    if r.malformed > 0 {
        let _ = writeln!(
            out,
            "  {} skipped (not a row: torn by a crash, or edited)",
            plural(r.malformed, "line", "lines")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_group_and_codes_stay() {
        assert_eq!(
            super::normalize("test result: 3 failed, 41 passed"),
            "test result: N failed, N passed"
        );
        assert_eq!(
            super::normalize("error[E0308]: mismatched types at 12:4"),
            "error[E0308]: mismatched types at N:N"
        );
    }
}
