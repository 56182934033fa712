//! `prove-it canary`: proves that `verify.sh` can fail. In a throwaway copy
//! of the work tree it runs `verify.sh` once as is (it must pass, or there
//! is nothing to learn), then plants one known defect at a time and runs it
//! again, as the gate would at a turn end: a defect that `verify.sh` lets
//! through is a check that cannot fail.
//!
//! One job a file: `copy` makes and removes the copy, `defects` chooses
//! and plants the defects; this file runs them and reports.
//!
//! Exit codes: 0 every planted defect made `verify.sh` fail; 1 at least one
//! did not; 2 the canary could not judge (no `verify.sh`, no commit, a
//! `verify.sh` that fails in the copy before any defect is planted).

mod defects;

pub use defects::Kind;

use crate::capability::{copy, git, verify};
use crate::stacks;
use anyhow::{Context, Result, bail};
use defects::{Defect, Files};
use prove_it_gate::abi::{VerifyOutcome, VerifyRun};
use serde_json::json;
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

pub fn execute(dir: &Path, json: bool, skip: &[Kind]) -> ExitCode {
    match run(dir, json, skip) {
        Ok(code) => code,
        Err(e) => {
            copy::halt_if_interrupted();
            errln!("prove-it canary: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// One planted defect and what `verify.sh` did with it.
struct Finding {
    defect: Defect,
    run: VerifyRun,
    /// `verify.sh` rewrote (or removed) the planted file.
    rewritten: bool,
}

impl Finding {
    fn caught(&self) -> bool {
        self.run.outcome == VerifyOutcome::Failed
    }

    /// Why it matters that it was not caught (`None` when it was).
    fn meaning(&self) -> Option<String> {
        if self.caught() {
            return None;
        }
        let d = &self.defect;
        Some(match self.run.outcome {
            VerifyOutcome::TimedOut => format!(
                "verify.sh ran out of time ({} s, PROVE_IT_TIMEOUT) with {} in `{}`: the gate would block, but no check was seen to catch it",
                self.run.timeout_secs,
                d.kind.defect(),
                d.file
            ),
            VerifyOutcome::CouldNotStart => format!(
                "verify.sh could not start: {}",
                self.run.detail.as_deref().unwrap_or("no detail")
            ),
            _ if self.rewritten => format!(
                "verify.sh rewrote `{}` (a formatter, or a linter with auto-fix on) and exited 0: {} was fixed, not failed on. A check that fixes instead of failing proves nothing at a turn end; run it in check mode (`ruff check` without `--fix`, `ruff format --check`, `cargo fmt --check`, `prettier --check`)",
                d.file,
                d.kind.defect()
            ),
            _ if d.on.is_some() => format!(
                "{} in `{}` does not fail verify.sh, although it runs `{}`: that check does not cover `{}`, or does not fail on this (its configuration leaves the file out, or counts this as a warning, not an error)",
                capitalized(d.kind.defect()),
                d.file,
                d.on.as_deref().unwrap_or_default(),
                d.file
            ),
            _ => {
                let check = match (&d.stack, &d.check) {
                    (Some(stack), Some(check)) => format!(" (for {stack}: `{check}`)"),
                    (None, Some(check)) => format!(" (`{check}`)"),
                    _ => String::new(),
                };
                format!(
                    "{} in `{}` does not fail verify.sh: it exited 0 with it in place; {}{check}",
                    capitalized(d.kind.defect()),
                    d.file,
                    d.kind.catcher()
                )
            }
        })
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + chars.as_str()
    })
}

fn run(dir: &Path, json: bool, skip: &[Kind]) -> Result<ExitCode> {
    let loaded = crate::settings::from_env();
    for note in &loaded.notes {
        errln!("{note}");
    }
    let timeout = Duration::from_secs(loaded.settings.timeout_secs);
    let repo = git::discover(dir).with_context(|| {
        format!(
            "`{}` is not inside a git repository; the canary tests a repository's verify.sh",
            dir.display()
        )
    })?;
    if !repo.join(verify::VERIFY_SH).is_file() {
        bail!(
            "`{}` has no verify.sh, so there is nothing to test; `prove-it init` writes one",
            repo.display()
        );
    }
    let found = stacks::detect(&repo);
    let say = |line: &str| errln!("canary: {line}");
    say(&format!("testing ./verify.sh of {}", repo.display()));

    copy::clean_up_on_signals()?;
    say(
        "making a throwaway copy (HEAD, your uncommitted changes and untracked files; your tree is not touched)",
    );
    let copy = copy::make(&repo)?;
    let files = Files::new(&copy.root, listed(&copy.root)?);
    let verify_text =
        std::fs::read_to_string(copy.root.join(verify::VERIFY_SH)).unwrap_or_default();
    let (plan, notes) = defects::plan(&files, &found, skip, &verify_text);

    // The copy's builds go to a cache of their own, kept for the next copy.
    let mut caches = copy::build_caches(&repo, &loaded.dirs.cache);
    // And what makes the copy import its own code, not your tree's.
    caches.extend(copy.redirect.env.iter().cloned());
    for said in &copy.redirect.said {
        say(said);
    }
    say("running ./verify.sh in the copy as it is (it must pass before any defect is planted)");
    let baseline = verify::run_with(&copy.root, timeout, &caches);
    copy::halt_if_interrupted();
    if baseline.outcome != VerifyOutcome::Passed {
        let mut message = format!(
            "./verify.sh does not pass in the throwaway copy before any defect is planted ({}), so the canary cannot tell what catches what.",
            describe(&baseline)
        );
        for line in baseline.tail.iter().rev().take(10).rev() {
            message.push_str(&format!("\n  | {line}"));
        }
        message.push_str(
            "\nIf ./verify.sh passes in your own tree, the copy lacks something it needs: ignored folders (build output, caches) and large ignored files are not copied; node_modules, .venv and venv are linked.",
        );
        if json {
            outln!(
                "{}",
                json!({
                    "repository": repo.display().to_string(),
                    "baseline": run_json(&baseline),
                    "defects": [],
                    "error": message,
                })
            );
        }
        bail!("{message}");
    }
    say(&format!("it passes ({})", describe(&baseline)));

    let base = git::changes::snapshot_of(
        git::walk(&copy.root, &mut git::Memo::default()).context("cannot read the copy")?,
    );
    let mut findings = Vec::new();
    let total = plan.len();
    for (n, defect) in plan.into_iter().enumerate() {
        let stack = defect
            .stack
            .as_deref()
            .map_or_else(String::new, |s| format!(" ({s})"));
        say(&format!(
            "[{}/{total}] {}{stack} in {}: running ./verify.sh",
            n + 1,
            defect.kind.defect(),
            defect.file
        ));
        let planted = defect.plant(&copy.root).with_context(|| {
            format!("cannot plant {} in `{}`", defect.kind.defect(), defect.file)
        })?;
        let mut env = changed_env(&copy, base.as_ref());
        env.extend(caches.iter().cloned());
        let run = verify::run_with(&copy.root, timeout, &env);
        copy::halt_if_interrupted();
        let rewritten = planted.rewritten();
        planted
            .remove()
            .with_context(|| format!("cannot take the defect out of `{}` again", defect.file))?;
        findings.push(Finding {
            defect,
            run,
            rewritten,
        });
    }
    drop(copy);

    let all = findings.iter().all(Finding::caught);
    if json {
        print_json(&repo, &baseline, &findings, &notes);
    } else {
        print_table(&findings, &notes);
    }
    Ok(if all && !findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The copy's files the canary may plant in: tracked, or untracked and not
/// ignored.
fn listed(root: &Path) -> Result<Vec<String>> {
    let out = copy::git(
        root,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    )?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| std::str::from_utf8(p).ok())
        .map(str::to_string)
        .collect())
}

/// What the gate gives `verify.sh` at a turn end: the session began at the
/// copy as it was made, and the defect is what the turn changed.
fn changed_env(
    copy: &copy::Copy,
    base: Option<&git::changes::Snapshot>,
) -> Vec<(&'static str, OsString)> {
    let Some(base) = base else {
        return Vec::new();
    };
    let Ok(now) = git::walk(&copy.root, &mut git::Memo::default()) else {
        return Vec::new();
    };
    let Ok(Some(paths)) = git::changes::changed_since(&copy.root, base, now) else {
        return Vec::new();
    };
    let list = copy.scratch.join("changed-files");
    let text: String = paths.iter().map(|p| format!("{p}\n")).collect();
    if std::fs::write(&list, text).is_err() {
        return Vec::new();
    }
    let mut env = vec![("PROVE_IT_CHANGED_FILES", list.into_os_string())];
    if let Some(head) = &base.head {
        env.push(("PROVE_IT_BASE", head.into()));
    }
    env
}

fn describe(run: &VerifyRun) -> String {
    let secs = format!("{:.1} s", run.duration_ms as f64 / 1000.0);
    match (run.outcome, run.exit_code) {
        (VerifyOutcome::Passed, _) => format!("exit 0, {secs}"),
        (VerifyOutcome::Failed, Some(code)) => format!("exit {code}, {secs}"),
        (VerifyOutcome::TimedOut, _) => format!("timed out after {} s", run.timeout_secs),
        _ => format!(
            "{}, {secs}",
            run.detail.as_deref().unwrap_or("no exit code")
        ),
    }
}

fn run_json(run: &VerifyRun) -> serde_json::Value {
    json!({
        "outcome": run.outcome,
        "exit_code": run.exit_code,
        "duration_ms": run.duration_ms,
    })
}

fn print_json(repo: &Path, baseline: &VerifyRun, findings: &[Finding], notes: &[String]) {
    let defects: Vec<_> = findings
        .iter()
        .map(|f| {
            let mut record = json!({
                "kind": f.defect.kind,
                "stack": f.defect.stack,
                "file": f.defect.file,
                "caught": f.caught(),
                "rewritten": f.rewritten,
                "meaning": f.meaning(),
                "check": f.defect.check,
                "check_in_verify_sh": f.defect.on,
                "tail": f.run.tail,
            });
            if let (Some(record), serde_json::Value::Object(run)) =
                (record.as_object_mut(), run_json(&f.run))
            {
                record.extend(run);
            }
            record
        })
        .collect();
    let caught = findings.iter().filter(|f| f.caught()).count();
    outln!(
        "{}",
        json!({
            "repository": repo.display().to_string(),
            "baseline": run_json(baseline),
            "defects": defects,
            "planted": findings.len(),
            "caught": caught,
            "all_caught": caught == findings.len() && !findings.is_empty(),
            "notes": notes,
        })
    );
}

fn print_table(findings: &[Finding], notes: &[String]) {
    let rows: Vec<[String; 4]> = findings
        .iter()
        .map(|f| {
            let what = match &f.defect.stack {
                Some(stack) => format!("{} ({stack})", f.defect.kind.defect()),
                None => f.defect.kind.defect().to_string(),
            };
            let verdict = if f.caught() { "caught" } else { "NOT CAUGHT" };
            let verb = match f.run.outcome {
                VerifyOutcome::Passed => "passed".to_string(),
                VerifyOutcome::Failed => format!("failed ({})", describe(&f.run)),
                _ => describe(&f.run),
            };
            [what, f.defect.file.clone(), verb, verdict.to_string()]
        })
        .collect();
    let header = [
        "planted defect".to_string(),
        "in".to_string(),
        "verify.sh".to_string(),
        "".to_string(),
    ];
    let width = |i: usize| {
        rows.iter()
            .chain([&header])
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    for row in [&header].into_iter().chain(&rows) {
        let line = format!(
            "{:w0$}  {:w1$}  {:w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        outln!("{}", line.trim_end());
    }
    for note in notes {
        outln!("note: {note}");
    }
    let missed: Vec<String> = findings.iter().filter_map(Finding::meaning).collect();
    outln!();
    if findings.is_empty() {
        outln!("No defect could be planted, so nothing is proven about verify.sh.");
    } else if missed.is_empty() {
        outln!(
            "Every planted defect ({}) made verify.sh fail: its checks can fail.",
            findings.len()
        );
    } else {
        outln!(
            "{} of {} planted defects made verify.sh fail. What the others mean:",
            findings.len() - missed.len(),
            findings.len()
        );
        for meaning in missed {
            outln!("- {meaning}.");
        }
        let off = findings
            .iter()
            .any(|f| !f.caught() && !f.rewritten && f.defect.on.is_none());
        if off {
            outln!(
                "Switch a check on in verify.sh (see it fail once on purpose first), then run `prove-it canary` again."
            );
        } else {
            outln!(
                "The checks that would catch them already run: make them cover those files and fail on these defects, then run `prove-it canary` again."
            );
        }
    }
}
