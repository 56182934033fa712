//! `prove-it status`: the last verdict the gate reached in a repository,
//! for scripts and CI after a headless run. Exit 0 only when the work is
//! proven: verified or unchanged, and the tree is still the one judged.

use crate::capability::git;
use crate::settings;
use crate::verdicts::{self, Record};
use anyhow::{Result, anyhow};
use prove_it_gate::abi::Verdict;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

/// Exit code: verified or unchanged, on the tree judged.
const PROVEN: u8 = 0;
/// Exit code: any other verdict, or a tree that changed since.
const NOT_PROVEN: u8 = 1;
/// Exit code: nothing recorded, or the repository cannot be read.
const UNKNOWN: u8 = 2;

pub fn execute(dir: &Path, session: Option<&str>, as_json: bool) -> Result<ExitCode> {
    let (code, report) = match look(dir, session) {
        Ok(found) => found,
        Err(e) => (
            UNKNOWN,
            json!({ "verdict": null, "proven": false, "error": format!("{e:#}") }),
        ),
    };
    if as_json {
        outln!("{report}");
    } else {
        print_text(&report);
    }
    Ok(ExitCode::from(code))
}

fn look(dir: &Path, session: Option<&str>) -> Result<(u8, serde_json::Value)> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let root = git::discover(&dir)
        .ok_or_else(|| anyhow!("{} is not inside a git repository", dir.display()))?;
    let loaded = settings::from_env();
    let dirs = loaded.dirs.outside(&root, &mut Vec::new());
    let Some(record) = verdicts::load(&dirs.state, &root, session)? else {
        let whose = session.map_or(String::new(), |id| format!(" for session {id}"));
        return Ok((
            UNKNOWN,
            json!({
                "verdict": null,
                "proven": false,
                "repo": root,
                "error": format!("no verdict is recorded{whose}: no stop has been judged here (is the gate installed, and verify.sh executable?)"),
            }),
        ));
    };
    // A tree that cannot be read now is not the tree that was judged.
    let now = git::tree_state(&root, &mut git::Memo::fresh(&dirs.git_excludes)).ok();
    let same_tree = record.tree.is_some()
        && record.tree.as_deref() == now.as_ref().map(|t| t.fingerprint.as_str());
    let proven = record.verdict.is_some_and(Verdict::proven) && same_tree;
    let code = if proven { PROVEN } else { NOT_PROVEN };
    Ok((code, report(&record, same_tree, proven)))
}

fn report(record: &Record, same_tree: bool, proven: bool) -> serde_json::Value {
    json!({
        "verdict": record.verdict,
        "proven": proven,
        "repo": record.repo,
        "session": record.session,
        "agent": record.agent,
        "time": record.time,
        "tree": record.tree,
        "tree_unchanged_since": same_tree,
        "said": record.said,
        "checks": record.checks,
    })
}

fn print_text(report: &serde_json::Value) {
    let text = |key: &str| report[key].as_str().unwrap_or("").to_string();
    if let Some(error) = report["error"].as_str() {
        outln!("prove-it status: unknown: {error}");
        return;
    }
    let verdict = match report["verdict"].as_str() {
        Some("verified") => "verified: ./verify.sh passed on this tree",
        Some("weakened") => {
            "WEAKENED: ./verify.sh passed only with checks the session changed (the checks as they were at its start fail)"
        }
        Some("suspect") => {
            "SUSPECT: ./verify.sh passed, but the code the session changed may special-case the tests"
        }
        Some("behaviour_changed") => {
            "behaviour changed: ./verify.sh passed; the session changed what tests expect (they passed at its start): read them"
        }
        Some("not_judged") => {
            "NOT JUDGED: ./verify.sh passed, but whether the checks the session changed made it pass could not be found out"
        }
        Some("unchanged") => "unchanged: the session did not change the repository",
        Some("blocked") => "blocked: ./verify.sh failed and the agent was sent back",
        Some("disarm_refused") => "disarm refused: verify.sh was removed or made unexecutable",
        Some("yielded") => "yielded UNVERIFIED: the turn ended without passing verification",
        Some("skipped") => "skipped: PROVE_IT_SKIP=1, verify.sh was not run",
        Some("gate_error") => "gate error: the turn was NOT verified",
        _ => "no verdict stated by the policy",
    };
    outln!("prove-it status: {verdict}");
    outln!("  repository  {}", text("repo"));
    outln!("  session     {}", text("session"));
    outln!("  at          {}", text("time"));
    let tree = report["tree"].as_str().map_or("unknown".to_string(), |t| {
        t.chars().take(12).collect::<String>()
    });
    let since = if report["tree_unchanged_since"] == true {
        "the tree is still the same"
    } else {
        "the tree has CHANGED since: this verdict is not about it"
    };
    outln!("  tree        {tree} ({since})");
    if let Some(said) = report["said"].as_str() {
        outln!("  said        {said}");
    }
    for file in report["checks"]["files"].as_array().into_iter().flatten() {
        outln!(
            "  check       `{}` ({}, {})",
            file["path"].as_str().unwrap_or("?"),
            serde_json::from_value::<prove_it_gate::abi::CheckKind>(file["kind"].clone())
                .map_or("?", |kind| kind.said()),
            file["change"].as_str().unwrap_or("?")
        );
        for line in file["evidence"].as_array().into_iter().flatten() {
            outln!("                - {}", line.as_str().unwrap_or(""));
        }
    }
    for line in report["checks"]["suspect"].as_array().into_iter().flatten() {
        outln!("  code        {}", line.as_str().unwrap_or(""));
    }
    if report["proven"] != true {
        outln!("  NOT proven: exit 1");
    }
}
