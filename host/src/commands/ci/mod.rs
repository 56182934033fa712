//! `prove-it ci`: the gate's judgement of a pull request, run where the
//! agent cannot reach (SPEC.md, "In CI"). Stateless: the checks and the
//! policy are the base commit's, `verify.sh` runs on the head, and when the
//! pull request changed checks the base's are replayed against its code,
//! by the same capabilities the hook uses. What the agent's machine said
//! (a trailer) is shown beside the verdict and never changes it.

mod claim;
pub use claim::TRAILER;
mod judge;
mod report;
mod revisions;
mod said;

use crate::capability::git;
use crate::settings;
use anyhow::{Context, Result};
use report::Report;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `prove-it ci`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// A folder inside the checkout.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// What the pull request merges into (a branch or commit, e.g. origin/main).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The pull request's commit; must be the one checked out (HEAD).
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,
    /// Write the whole verdict as JSON here (SPEC.md, "In CI").
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Append the reviewer's Markdown summary here.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Print GitHub's `::warning file=,line=::` lines on the lines where a check was weakened.
    #[arg(long)]
    pub annotations: bool,
}

pub fn execute(options: &Options) -> Result<ExitCode> {
    let mut loaded = settings::from_env();
    for note in &loaded.notes {
        errln!("{note}");
    }
    let summary = options
        .summary
        .clone()
        .or_else(|| loaded.ci.github_step_summary.clone());
    let dir = std::path::absolute(&options.dir).unwrap_or_else(|_| options.dir.clone());
    let Some(root) = git::discover(&dir) else {
        let cannot = (
            format!("{} is not inside a git repository", dir.display()),
            "run it in a checkout of the pull request".to_string(),
        );
        return finish(
            &dir,
            options,
            summary.as_deref(),
            Report::cannot(None, cannot),
        );
    };
    loaded.dirs = loaded.dirs.outside(&root, &mut Vec::new());
    let revs = match revisions::resolve(
        &root,
        options.base.as_deref(),
        options.head.as_deref(),
        &loaded.ci,
    ) {
        Ok(revs) => revs,
        Err(cannot) => {
            let report = Report::cannot(None, (cannot.why, cannot.next));
            return finish(&root, options, summary.as_deref(), report);
        }
    };
    errln!(
        "prove-it ci: judging {} against the base {} ({}, from {})",
        &revs.head.commit[..12.min(revs.head.commit.len())],
        &revs.base.commit[..12.min(revs.base.commit.len())],
        revs.base_ref,
        revs.base_from
    );
    let judged = match judge::judge(&root, &revs, &loaded) {
        Ok(judged) => judged,
        Err(e) => {
            let why = format!("the gate failed: {e:#}");
            let next = "run `prove-it doctor` in the checkout, and report it if it persists";
            let report = Report::cannot(Some(&revs), (why, next.to_string()));
            return finish(&root, options, summary.as_deref(), report);
        }
    };
    if let Some(paths) = &judged.rewritten {
        let why = format!(
            "`./verify.sh` changed tracked files while it ran on the pull request ({}), so what CI would judge after it is not the pull request's files",
            paths
                .iter()
                .take(5)
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let next = "run a check that rewrites files (a formatter or a linter with --fix) in its check mode, or as a step before prove-it";
        let report = Report {
            judged: Some(&judged),
            ..Report::cannot(Some(&revs), (why, next.to_string()))
        };
        return finish(&root, options, summary.as_deref(), report);
    }
    let verdict = report::verdict(&judged);
    let claim = claim::read(&root, &revs, verdict.exit_code() == 0);
    finish(
        &root,
        options,
        summary.as_deref(),
        Report {
            verdict,
            revs: Some(&revs),
            judged: Some(&judged),
            claim: Some(&claim),
            cannot: None,
        },
    )
}

/// Writes every output asked for; the exit code is the verdict's. An
/// output that cannot be written is said and makes the run fail: a
/// verdict nobody can read is not one.
fn finish(
    root: &Path,
    options: &Options,
    summary: Option<&Path>,
    report: Report,
) -> Result<ExitCode> {
    let markdown = report.summary();
    outln!("{}", markdown.trim_end());
    if options.annotations {
        for line in report.annotations(root) {
            outln!("{line}");
        }
    }
    let mut code = report.verdict.exit_code();
    if let Some(path) = &options.json {
        let text = serde_json::to_string_pretty(&report.json())? + "\n";
        if let Err(e) = std::fs::write(path, text) {
            errln!(
                "prove-it ci: cannot write the JSON to `{}`: {e}",
                path.display()
            );
            code = code.max(2);
        }
    }
    if let Some(path) = summary {
        // GitHub's step summary is appended to, as every step's is.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(format!("{markdown}\n").as_bytes()))
            .with_context(|| format!("cannot write the summary to `{}`", path.display()));
        if let Err(e) = written {
            errln!("prove-it ci: {e:#}");
            code = code.max(2);
        }
    }
    Ok(ExitCode::from(code))
}
