//! What `prove-it ci` concluded, as a reviewer reads it (Markdown), as a
//! program reads it (JSON, SPEC.md "In CI") and as GitHub shows it on the
//! lines of the diff (`::warning` annotations).

use super::claim::Claim;
use super::judge::Judged;
use super::revisions::Revisions;
use super::said::run_said;
use super::said::seconds;
use prove_it_gate::abi::{CheckChanges, Verdict, VerifyOutcome, VerifyRun};
use serde::Serialize;
use serde_json::json;
use std::path::Path;

/// CI's verdict on a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CiVerdict {
    /// `verify.sh` passes on the head, with the checks as the base has them.
    Verified,
    /// It passes; the pull request changed checks, and the base's checks
    /// pass against its code too (or it only added tests).
    VerifiedChecksChanged,
    /// It passes only with checks the pull request changed: the base's
    /// checks fail against its code.
    Weakened,
    /// It passes; the code holds lines that only make sense to fool a test.
    Suspect,
    /// It passes; the base's checks fail against the new code and pass on
    /// the base's: the pull request changed behaviour they pinned.
    BehaviourChanged,
    /// `verify.sh` fails on the head.
    Failed,
    /// The base has an executable `verify.sh`; the head has none.
    Disarmed,
    /// The base's policy refused the pull request for another reason.
    Refused,
    /// The base has no executable `verify.sh`: nothing to judge against.
    NoBaseline,
    /// Something kept CI from judging (the base not in the clone...).
    CouldNotJudge,
}

impl CiVerdict {
    pub fn name(self) -> &'static str {
        match self {
            CiVerdict::Verified => "verified",
            CiVerdict::VerifiedChecksChanged => "verified_checks_changed",
            CiVerdict::Weakened => "weakened",
            CiVerdict::Suspect => "suspect",
            CiVerdict::BehaviourChanged => "behaviour_changed",
            CiVerdict::Failed => "failed",
            CiVerdict::Disarmed => "disarmed",
            CiVerdict::Refused => "refused",
            CiVerdict::NoBaseline => "no_baseline",
            CiVerdict::CouldNotJudge => "could_not_judge",
        }
    }

    /// For the headline.
    fn shout(self) -> &'static str {
        match self {
            CiVerdict::Verified => "verified",
            CiVerdict::VerifiedChecksChanged => "verified, checks changed",
            CiVerdict::Weakened => "WEAKENED",
            CiVerdict::Suspect => "SUSPECT",
            CiVerdict::BehaviourChanged => "BEHAVIOUR CHANGED",
            CiVerdict::Failed => "FAILED",
            CiVerdict::Disarmed => "DISARMED",
            CiVerdict::Refused => "REFUSED",
            CiVerdict::NoBaseline => "no baseline",
            CiVerdict::CouldNotJudge => "could not judge",
        }
    }

    /// 0 verified, 1 not verified, 2 could not judge.
    pub fn exit_code(self) -> u8 {
        match self {
            CiVerdict::Verified | CiVerdict::VerifiedChecksChanged => 0,
            CiVerdict::NoBaseline | CiVerdict::CouldNotJudge => 2,
            _ => 1,
        }
    }

    /// A verdict about checks the pull request changed.
    fn about_checks(self) -> bool {
        matches!(
            self,
            CiVerdict::Weakened | CiVerdict::Suspect | CiVerdict::BehaviourChanged
        )
    }
}

fn failed(run: &VerifyRun) -> bool {
    run.outcome != VerifyOutcome::Passed
}

fn checks_changed(checks: &Option<CheckChanges>) -> bool {
    checks
        .as_ref()
        .is_some_and(|c| !c.files.is_empty() || !c.git_config.is_empty())
}

/// CI's verdict from what the base's policy decided and what ran.
pub fn verdict(judged: &Judged) -> CiVerdict {
    if !judged.base_armed {
        return CiVerdict::NoBaseline;
    }
    let Some(decision) = &judged.decision else {
        return CiVerdict::CouldNotJudge;
    };
    match decision.verdict {
        Some(Verdict::Verified) if checks_changed(&judged.checks) => {
            CiVerdict::VerifiedChecksChanged
        }
        Some(Verdict::Verified) => CiVerdict::Verified,
        Some(Verdict::Weakened) => CiVerdict::Weakened,
        Some(Verdict::Suspect) => CiVerdict::Suspect,
        Some(Verdict::BehaviourChanged) => CiVerdict::BehaviourChanged,
        Some(Verdict::DisarmRefused) => CiVerdict::Disarmed,
        Some(Verdict::Blocked) => match (&judged.head_run, &judged.replay) {
            (Some(run), _) if failed(run) => CiVerdict::Failed,
            // A policy that refuses a weakened pass (strict) blocks it.
            (_, Some(replay)) if failed(&replay.run) => CiVerdict::Weakened,
            _ => CiVerdict::Refused,
        },
        _ => CiVerdict::CouldNotJudge,
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Everything the three outputs are made from.
pub struct Report<'a> {
    pub verdict: CiVerdict,
    pub revs: Option<&'a Revisions>,
    pub judged: Option<&'a Judged>,
    pub claim: Option<&'a Claim>,
    /// For could-not-judge: why, and what to do.
    pub cannot: Option<(String, String)>,
}

fn run_json(what: &str, run: &VerifyRun) -> serde_json::Value {
    json!({
        "what": what,
        "outcome": run.outcome,
        "exit_code": run.exit_code,
        "duration_ms": run.duration_ms,
        "timeout_secs": run.timeout_secs,
        "detail": run.detail,
        "tail": run.tail,
    })
}

impl<'a> Report<'a> {
    /// The report of a pull request that could not be judged: why, and
    /// what to do.
    pub fn cannot(revs: Option<&'a Revisions>, why_next: (String, String)) -> Report<'a> {
        Report {
            verdict: CiVerdict::CouldNotJudge,
            revs,
            judged: None,
            claim: None,
            cannot: Some(why_next),
        }
    }

    /// The runs, in the order they ran: the head's, then the replay's
    /// (the base's checks on the head's code), its control (the head's
    /// checks in the same copy) and the base's checks on the base's code.
    fn runs(&self) -> Vec<(&'static str, &VerifyRun)> {
        let mut runs = Vec::new();
        let Some(judged) = self.judged else {
            return runs;
        };
        if let Some(run) = &judged.head_run {
            runs.push(("head", run));
        }
        if let Some(replay) = &judged.replay {
            runs.push(("base_checks_on_head", &replay.run));
            if let Some(run) = &replay.control {
                runs.push(("control", run));
            }
            if let Some(run) = &replay.start {
                runs.push(("base_checks_on_base", run));
            }
            // The differential: the base's and the head's checks, each run
            // with one failing test planted in the head's code.
            if let Some(d) = &replay.differential {
                runs.push(("base_checks_with_planted_test", &d.start));
                if let Some(now) = &d.now {
                    runs.push(("head_checks_with_planted_test", now));
                }
            }
        }
        runs
    }

    pub fn json(&self) -> serde_json::Value {
        let rev = |r: &super::revisions::Rev| json!({"commit": r.commit, "tree": r.tree});
        let judged = self.judged;
        json!({
            "prove_it": crate::settings::HOST_VERSION,
            "verdict": self.verdict.name(),
            "exit_code": self.verdict.exit_code(),
            "base": self.revs.map(|r| json!({
                "ref": r.base_ref,
                "from": r.base_from,
                "commit": r.base.commit,
                "tree": r.base.tree,
            })),
            "head": self.revs.map(|r| json!({
                "commit": r.head.commit,
                "tree": r.head.tree,
                "tip": rev(&r.tip),
                "dirty": r.dirty,
            })),
            "policy": judged.map(|j| j.policy.clone()),
            "checks_origin": judged.map(|j| j.origin.clone()),
            "runs": self.runs().into_iter().map(|(what, run)| run_json(what, run)).collect::<Vec<_>>(),
            "checks": judged.and_then(|j| j.checks.clone()),
            "restored": judged.and_then(|j| j.replay.as_ref().map(|r| r.restored.clone())),
            "changed_files": judged.and_then(|j| j.changed.as_ref().map(Vec::len)),
            "claim": self.claim,
            "message": judged.and_then(|j| j.decision.as_ref()).map(gate_text),
            "problems": judged.map(|j| j.problems.clone()).unwrap_or_default(),
            "could_not_judge": self.cannot.as_ref().map(|(why, next)| json!({"why": why, "next": next})),
        })
    }

    /// The Markdown a reviewer reads.
    pub fn summary(&self) -> String {
        let mut md = String::new();
        let on = match self.revs {
            // A base asked for by its commit (GitHub's event) is named once.
            Some(r)
                if r.base_ref.len() >= 7 && r.base_ref.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                format!(
                    " (judged by CI on {}, base {})",
                    short(&r.head.commit),
                    short(&r.base.commit)
                )
            }
            Some(r) => format!(
                " (judged by CI on {}, base {}@{})",
                short(&r.head.commit),
                r.base_ref,
                short(&r.base.commit)
            ),
            None => String::new(),
        };
        md.push_str(&format!("### prove-it: {}{on}\n\n", self.verdict.shout()));
        if let Some((why, next)) = &self.cannot {
            md.push_str(&format!(
                "CI could not judge this pull request: {why}.\n\nNext: {next}.\n"
            ));
            return md;
        }
        let Some(judged) = self.judged else {
            return md;
        };
        let head = judged.head_run.as_ref();
        let head_said = head
            .map(run_said)
            .unwrap_or_else(|| "did not run".to_string());
        let head_took = head.map_or(String::new(), |r| format!("in {}", seconds(r.duration_ms)));
        match self.verdict {
            CiVerdict::Verified => md.push_str(&format!(
                "`./verify.sh` passes on this pull request ({head_took}), with the checks as the base has them.\n"
            )),
            CiVerdict::VerifiedChecksChanged => {
                let how = match &judged.replay {
                    Some(replay) => format!(
                        "the base's checks pass against its code too ({}){}",
                        run_said(&replay.run),
                        match &replay.differential {
                            Some(d) if d.now.is_some() => format!(
                                ", and the changed checks still work: both sets failed on {}, planted in a copy of its code",
                                d.planted
                            ),
                            _ => String::new(),
                        }
                    ),
                    None => "it only added tests, which never weaken the checks".to_string(),
                };
                md.push_str(&format!(
                    "`./verify.sh` passes on this pull request ({head_took}). It changed checks; {how}.\n"
                ));
            }
            // The base's checks pass on its code, but caught a planted
            // failing test the head's checks let through.
            CiVerdict::Weakened
                if judged.replay.as_ref().is_some_and(|r| {
                    r.run.outcome == VerifyOutcome::Passed && r.differential.is_some()
                }) =>
            {
                let d = judged
                    .replay
                    .as_ref()
                    .and_then(|r| r.differential.as_ref())
                    .expect("checked above");
                md.push_str(&format!(
                    "`./verify.sh` passes on this pull request ({head_took}), and so do the base's checks, but the pull request's checks can no longer fail: {} was planted in a copy of its code, the base's checks failed on it ({}), and the pull request's checks passed with it:\n\n",
                    d.planted,
                    run_said(&d.start)
                ));
                md.push_str(&fenced(&failing_or_tail(&d.start.tail)));
            }
            CiVerdict::Weakened | CiVerdict::BehaviourChanged => {
                md.push_str(&format!(
                    "`./verify.sh` passes on this pull request ({head_took}), but the base's checks fail against its code"
                ));
                if self.verdict == CiVerdict::BehaviourChanged {
                    md.push_str(
                        ", and pass on the base's code: the pull request changed behaviour the checks pinned, and the checks with it",
                    );
                }
                md.push_str(":\n\n");
                if let Some(replay) = &judged.replay {
                    md.push_str(&fenced(&failing_or_tail(&replay.run.tail)));
                }
            }
            CiVerdict::Suspect => {
                md.push_str(&format!(
                    "`./verify.sh` passes on this pull request ({head_took}), but its code holds lines that only make sense to fool a test:\n\n"
                ));
                if let Some(checks) = &judged.checks {
                    for line in &checks.suspect {
                        md.push_str(&format!("- {line}\n"));
                    }
                }
            }
            CiVerdict::Failed => {
                md.push_str(&format!(
                    "`./verify.sh` fails on this pull request: {head_said}. Its last lines:\n\n"
                ));
                if let Some(run) = head {
                    md.push_str(&fenced(&run.tail));
                }
            }
            CiVerdict::Disarmed => {
                let how = match &judged.head_facts {
                    Some(f) if f.exists => "makes it not executable",
                    _ => "deletes it",
                };
                md.push_str(&format!(
                    "The base has an executable `verify.sh`; this pull request {how}, so nothing would check the next one.\n"
                ));
            }
            CiVerdict::NoBaseline => {
                md.push_str(
                    "The base has no executable `verify.sh`, so there is nothing to judge this pull request against",
                );
                match head {
                    Some(run) => md.push_str(&format!(
                        ". Its own `verify.sh` {}: that says only what the pull request's own checks say.\n",
                        run_said(run)
                    )),
                    None => md.push_str(".\n"),
                }
            }
            CiVerdict::Refused | CiVerdict::CouldNotJudge => {
                md.push_str("The base's policy did not verify this pull request:\n\n");
                if let Some(decision) = &judged.decision {
                    md.push_str(&fenced_text(&gate_text(decision)));
                }
            }
        }
        if let Some(checks) = judged
            .checks
            .as_ref()
            .filter(|_| checks_changed(&judged.checks))
        {
            md.push('\n');
            md.push_str(&checks_table(checks));
            if let Some(r) = self.revs {
                let paths: Vec<&str> = checks.files.iter().map(|f| f.path.as_str()).collect();
                md.push_str(&format!(
                    "\nRead: `git diff {}...{} -- {}`\n",
                    short(&r.base.commit),
                    short(&r.head.commit),
                    paths.join(" ")
                ));
            }
        }
        if let Some(code) = judged
            .checks
            .as_ref()
            .map(|c| &c.code)
            .filter(|c| !c.is_empty())
        {
            md.push_str("\nIn the code:\n");
            for line in code {
                md.push_str(&format!("- {}\n", line));
            }
        }
        if matches!(
            self.verdict,
            CiVerdict::Weakened | CiVerdict::BehaviourChanged
        ) {
            md.push_str(
                "\nIf the task asked for this new behaviour, the change may be right: a code owner's approval records that.\n",
            );
        }
        if let Some(r) = self.revs.filter(|r| !r.dirty.is_empty()) {
            md.push_str(&format!(
                "\nThe work tree judged differs from the head commit in {} tracked file(s) a CI step changed: {}.\n",
                r.dirty.len(),
                r.dirty.iter().take(5).map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        if let Some(problem) = judged.checks.as_ref().and_then(|c| c.problem.as_ref()) {
            md.push_str(&format!(
                "\nNote: the checks could not all be compared: {problem}.\n"
            ));
        }
        for problem in &judged.problems {
            md.push_str(&format!("\nNote: {problem}.\n"));
        }
        if let Some(claim) = self.claim {
            md.push_str(&format!(
                "\nClaim from the agent's machine: {}.\n",
                claim.said()
            ));
        }
        if let Some(replay) = judged
            .replay
            .as_ref()
            .filter(|_| self.verdict.about_checks())
        {
            md.push_str(&format!(
                "\n<details><summary>The base's checks against this pull request's code: {}</summary>\n\n",
                run_said(&replay.run)
            ));
            if !replay.restored.is_empty() {
                md.push_str("Put back as the base has them:\n");
                for line in &replay.restored {
                    md.push_str(&format!("- {line}\n"));
                }
                md.push('\n');
            }
            md.push_str(&fenced(&replay.run.tail));
            md.push_str("</details>\n");
        }
        md
    }

    /// GitHub's `::warning` lines, on the lines where a check was weakened.
    pub fn annotations(&self, root: &Path) -> Vec<String> {
        let Some(checks) = self
            .judged
            .and_then(|j| j.checks.as_ref())
            .filter(|_| self.verdict.about_checks())
        else {
            return Vec::new();
        };
        let title = format!("prove-it: {}", self.verdict.shout());
        let mut out = Vec::new();
        for file in &checks.files {
            let text = std::fs::read_to_string(root.join(&file.path)).unwrap_or_default();
            if file.evidence.is_empty() {
                let what = format!("check {:?}: read its diff", file.change).to_lowercase();
                out.push(warning(&file.path, None, &title, &what));
            }
            for evidence in &file.evidence {
                let line = quoted(evidence).and_then(|(q, _)| line_of(&text, q));
                out.push(warning(&file.path, line, &title, evidence));
            }
        }
        // These lines name their file first, in backticks.
        for line in checks.suspect.iter().chain(&checks.code) {
            let Some((path, rest)) = quoted(line).filter(|(p, _)| root.join(p).is_file()) else {
                continue;
            };
            let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
            let at = quoted(rest).and_then(|(q, _)| line_of(&text, q));
            out.push(warning(path, at, &title, line));
        }
        out
    }
}

/// What the policy said, as a person reads it.
fn gate_text(decision: &prove_it_gate::abi::Decision) -> String {
    [decision.message.as_deref(), decision.reason.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines naming failing tests, else the whole tail.
fn failing_or_tail(tail: &[String]) -> Vec<String> {
    let failing = prove_it_gate::policy::failing_lines(tail);
    if failing.is_empty() {
        tail.to_vec()
    } else {
        failing
    }
}

fn fenced(lines: &[String]) -> String {
    fenced_text(&lines.join("\n"))
}

fn fenced_text(text: &str) -> String {
    let fence = if text.contains("```") { "~~~~" } else { "```" };
    format!("{fence}text\n{}\n{fence}\n", text.trim_end())
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn checks_table(checks: &CheckChanges) -> String {
    let mut md = String::from("| check changed | how | evidence |\n|---|---|---|\n");
    for f in &checks.files {
        let mut evidence: Vec<String> = f.evidence.clone();
        if !f.tests_added.is_empty() {
            evidence.push(format!("tests added: {}", f.tests_added.join(", ")));
        }
        if !f.tests_modified.is_empty() {
            evidence.push(format!("tests changed: {}", f.tests_modified.join(", ")));
        }
        let evidence = match evidence.is_empty() {
            true => "nothing stands out: read its diff".to_string(),
            false => evidence.join("<br>"),
        };
        let how = format!("{} {:?}", f.kind.said(), f.change).to_lowercase();
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            cell(&f.path),
            how,
            cell(&evidence)
        ));
    }
    for g in &checks.git_config {
        md.push_str(&format!(
            "| {} | git configuration | {} |\n",
            cell(&g.what),
            cell(&g.evidence.join("<br>"))
        ));
    }
    md
}

/// The text between the first pair of backticks, and what follows them.
fn quoted(line: &str) -> Option<(&str, &str)> {
    let (_, after) = line.split_once('`')?;
    let (quote, rest) = after.split_once('`')?;
    Some((quote, rest)).filter(|(q, _)| !q.is_empty())
}

/// The first line of `text` that holds `quote` (a quote may be cut with
/// `…`: its start is looked for), 1-based.
fn line_of(text: &str, quote: &str) -> Option<usize> {
    let needle = quote.trim_end_matches('…').trim();
    if needle.is_empty() {
        return None;
    }
    text.lines()
        .position(|l| l.contains(needle) || l.replace('`', "'").contains(needle))
        .map(|i| i + 1)
}

/// One `::warning` line, escaped as GitHub's workflow commands want.
fn warning(file: &str, line: Option<usize>, title: &str, message: &str) -> String {
    let prop = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
            .replace(':', "%3A")
            .replace(',', "%2C")
    };
    let data = message
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    let line = line.map(|n| format!(",line={n}")).unwrap_or_default();
    format!(
        "::warning file={}{line},title={}::{data}",
        prop(file),
        prop(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quote_is_found_on_its_line() {
        let text = "import unittest\n\n@unittest.skip(\"later\")\ndef test_a():\n";
        let evidence = "skip marker added: `@unittest.skip(\"later\")`";
        let (quote, _) = quoted(evidence).expect("a quote");
        assert_eq!(quote, "@unittest.skip(\"later\")");
        assert_eq!(line_of(text, quote), Some(3));
        // A file named past non-ASCII text is cut at its backticks.
        assert_eq!(quoted("é `ç.py`: x `y`"), Some(("ç.py", ": x `y`")));
        assert_eq!(line_of(text, "assert x == 1"), None);
    }

    #[test]
    fn a_warning_escapes_what_github_reads_as_syntax() {
        assert_eq!(
            warning("a,b:c.py", Some(2), "prove-it: WEAKENED", "50% of it\nnext"),
            "::warning file=a%2Cb%3Ac.py,line=2,title=prove-it%3A WEAKENED::50%25 of it%0Anext"
        );
    }
}
