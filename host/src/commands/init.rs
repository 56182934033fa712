//! `prove-it init`: what `/prove-it:init` runs. Detects the stack(s), writes
//! a `verify.sh` whose only active check is `git diff --check` (the stack's
//! checks are there, commented out), runs it to show it pass, then runs a
//! copy with `exit 1` appended to show the gate refusing a turn.
//!
//! It never overwrites an existing `verify.sh`, and it leaves nothing in the
//! tree but `verify.sh` (the demo copy lives in a temp dir).

use crate::capability::{checks, git, verify};
use crate::stacks::{self, Stack};
use anyhow::{Context, Result, bail};
use prove_it_gate::abi::{VerifyOutcome, VerifyRun};
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// How long init lets each run of the new `verify.sh` take.
const RUN_LIMIT: Duration = Duration::from_secs(60);

pub fn execute(dir: &Path) -> Result<()> {
    let root = git::discover(dir).with_context(|| {
        format!(
            "`{}` is not inside a git repository; prove-it judges git state, so run `git init` first",
            dir.display()
        )
    })?;
    let path = root.join(verify::VERIFY_SH);
    outln!("prove-it init in {}", root.display());
    let mut found = stacks::detect(&root);
    let from_ci = as_ci_runs_them(&root, &mut found);
    write_checks_list(&root)?;
    if path.exists() {
        outln!(
            "\n`verify.sh` already exists, so it was left untouched. Run it by hand (`./verify.sh`) and `prove-it doctor` to see whether this repository is gated."
        );
        return Ok(());
    }

    if found.is_empty() {
        outln!("stacks: none recognised; verify.sh gets the universal check only");
    } else {
        for stack in &found {
            outln!("stack: {} ({})", stack.name, stack.evidence);
        }
    }
    for line in &from_ci {
        outln!("{line}");
    }
    std::fs::write(&path, script(&found))
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make `{}` executable", path.display()))?;
    let offered: usize = found.iter().map(|s| s.checks.len()).sum();
    outln!(
        "wrote verify.sh: 1 active check (`git diff --check`), {offered} more for your stack(s) commented out"
    );

    outln!("\n$ ./verify.sh");
    let run = verify::run(&root, RUN_LIMIT);
    show(&run);
    if run.outcome != VerifyOutcome::Passed {
        bail!(
            "the new verify.sh did not pass; `git diff --check` found whitespace errors in uncommitted changes (fix them, then run ./verify.sh)"
        );
    }
    outln!("passed: a turn that ends in this state is let through.");

    demo(&root, &path)?;

    outln!(
        "\nNext:\n\
         - Commit verify.sh and .prove-it/checks, so every session starts armed and knows its checks.\n\
         - Switch on the commented checks ONE at a time: run it by hand, see it pass, make it fail once on purpose and see ./verify.sh fail, then uncomment it.\n\
         - Run `prove-it canary` to see which defects verify.sh lets through (it plants them in a throwaway copy), and again after each check you switch on.\n\
         - Keep verify.sh to about a minute; slow checks and checks that need secrets belong in CI.\n\
         - Until a check is switched on, the gate proves only what is active: today, that uncommitted changes have no whitespace errors."
    );
    Ok(())
}

/// Writes `.prove-it/checks` for the stacks found, unless there is one:
/// which files are checks, so that a pass bought by weakening them is
/// reported (SPEC.md, "Weakened checks").
fn write_checks_list(root: &Path) -> Result<()> {
    let path = root.join(checks::list::FILE);
    if path.exists() {
        outln!(
            "`{}` already exists, so it was left untouched",
            checks::list::FILE
        );
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make `{}`", dir.display()))?;
    }
    let text = format!("{CHECKS_HEADER}{}\n", checks::defaults::DEFAULTS_LINE);
    std::fs::write(&path, text).with_context(|| format!("cannot write `{}`", path.display()))?;
    outln!(
        "wrote {}: which files are checks (tests, runner and linter configuration); a pass that only the session's changes to them made possible is reported as weakened",
        checks::list::FILE
    );
    Ok(())
}

/// The head of a new `.prove-it/checks`.
const CHECKS_HEADER: &str = "\
# .prove-it/checks: which files are checks (tests, runner and linter
# configuration), not the code they judge. When a session changes them and
# ./verify.sh passes, prove-it runs the checks as they were at the session's
# start against the code as it is; if those fail, the pass is reported as
# weakened, not verified (SPEC.md, \"Weakened checks\").
# Sessions read this file from the commit they start at: edit it, commit it.
#
# [tests]   test files and folders: a test the session adds never weakens
# [config]  configuration and hooks; `FILE [SECTION]` names one section only
# [inline]  source files whose own test parts are checks (Rust #[cfg(test)]
#           and doc tests, Python doctests)
# Patterns are .gitignore's. A leading `!` takes paths out; verify.sh, this
# file, .gitattributes and what verify.sh runs (the package scripts it
# calls, their tools' configuration) are always checks.
#
# `@defaults` stands for prove-it's built-in list: every stack's test files
# and folders and its runner, linter and type-checker configuration
# (`prove-it doctor` lists the files it names here). Add your own below it:
# a test folder with an unusual name, say, under `[tests]`.
";

/// Runs a copy of `verify.sh` with `exit 1` appended, from a temp dir, and
/// shows what the gate would tell the agent.
fn demo(root: &Path, path: &Path) -> Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("prove-it-demo-")
        .tempdir()
        .context("cannot make a temp dir for the demo")?;
    let copy = dir.path().join("verify-demo.sh");
    let mut body = std::fs::read_to_string(path).context("cannot read the new verify.sh")?;
    body.push_str("\n# prove-it init demo: a check that fails\necho 'demo: 1 failed'\nexit 1\n");
    std::fs::write(&copy, body).context("cannot write the demo copy")?;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
        .context("cannot make the demo copy executable")?;

    outln!("\ndemo: the same script with `exit 1` appended (a temp copy, removed afterwards)");
    let run = verify::run_script(&copy, root, RUN_LIMIT);
    show(&run);
    if run.outcome == VerifyOutcome::Passed {
        bail!(
            "the demo copy passed although it ends in `exit 1`; the gate cannot be shown refusing"
        );
    }
    outln!("the gate would refuse the turn and tell the agent:");
    for line in prove_it_gate::policy::failed_run_reason(&run, 1, 3).lines() {
        outln!("  | {line}");
    }
    Ok(())
}

fn show(run: &VerifyRun) {
    for line in &run.tail {
        outln!("  {line}");
    }
    let code = run
        .exit_code
        .map_or_else(|| "none".to_string(), |c| c.to_string());
    outln!("  (exit {code}, {} ms)", run.duration_ms);
}

/// Each suggested check that the project's own CI runs too, as CI runs it:
/// a tool's flags there are the ones its code is known to pass (a crate
/// whose CI runs `cargo clippy` without `--all-targets` may well fail with
/// it). Read from the `run:` steps of `.github/workflows/*.yml`; says
/// which it took, and from where.
fn as_ci_runs_them(root: &Path, found: &mut [Stack]) -> Vec<String> {
    let mut runs: Vec<(String, String)> = Vec::new();
    let Ok(entries) = std::fs::read_dir(root.join(".github/workflows")) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|n| n.ends_with(".yml") || n.ends_with(".yaml")) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for command in run_steps(&text) {
            runs.push((command, format!(".github/workflows/{name}")));
        }
    }
    let mut said = Vec::new();
    for stack in found.iter_mut() {
        for check in stack.checks.iter_mut() {
            let tool = tool_of(check);
            let Some((command, from)) = runs
                .iter()
                .find(|(command, _)| tool_of(command) == tool && command != check)
            else {
                continue;
            };
            said.push(format!(
                "suggested as `{from}` runs it: `{command}` (instead of `{check}`)"
            ));
            *check = command.clone();
        }
    }
    said
}

/// The commands of a workflow's `run:` steps, one per line (a block's
/// lines each), leaving out those that use the workflow's own expressions
/// (`${{ ... }}`) or continue on the next line.
fn run_steps(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if let Some(at) = block {
            if t.is_empty() {
                continue;
            }
            if indent > at {
                out.push(t.to_string());
                continue;
            }
            block = None;
        }
        let t = t.strip_prefix("- ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("run:") else {
            continue;
        };
        let rest = rest.trim();
        if rest.starts_with('|') || rest.starts_with('>') {
            block = Some(indent);
        } else if !rest.is_empty() {
            out.push(rest.trim_matches(|c| c == '"' || c == '\'').to_string());
        }
    }
    out.retain(|c| !c.contains("${{") && !c.ends_with('\\') && !c.starts_with('#'));
    out
}

/// A command's tool and subcommand: `cargo clippy`, `npm run lint`,
/// `python -m pytest`, `go vet` (the words before its first option).
fn tool_of(command: &str) -> Vec<&str> {
    let words: Vec<&str> = command
        .split_whitespace()
        .take_while(|w| !w.starts_with('-') || *w == "-m")
        .collect();
    let n = match words.first() {
        Some(&"npm" | &"pnpm" | &"yarn") if words.get(1) == Some(&"run") => 3,
        Some(&"python" | &"python3") if words.get(1) == Some(&"-m") => 3,
        _ => 2,
    };
    words.into_iter().take(n).collect()
}

/// The text of a new `verify.sh` for `found`.
pub fn script(found: &[Stack]) -> String {
    let mut text = String::from(
        "#!/usr/bin/env bash\n\
         # verify.sh: the proof this repository demands before a coding agent may\n\
         # end its turn. prove-it runs it from the repository root whenever a turn\n\
         # changed the repository; exit 0 lets the turn end. Keep it to about a\n\
         # minute: slow checks, and checks that need secrets, belong in CI.\n\
         #\n\
         # Switch on ONE check at a time: run it by hand, see it pass, make it fail\n\
         # once on purpose and see this script fail, then uncomment it here.\n\
         set -euo pipefail\n\
         cd \"$(git rev-parse --show-toplevel)\"\n\
         \n\
         # Whitespace errors in uncommitted changes.\n\
         git diff --check\n",
    );
    for stack in found {
        let _ = write!(text, "\n# {} ({})\n", stack.name, stack.evidence);
        for check in &stack.checks {
            let _ = writeln!(text, "# {check}");
        }
    }
    text.push_str(CHANGED_FILES_INTRO);
    let (stack, example) = found
        .iter()
        .find_map(|stack| {
            CHANGED_FILES_EXAMPLES
                .iter()
                .find(|(key, _)| *key == stack.key)
                .map(|(_, example)| (Some(stack), *example))
        })
        .unwrap_or((None, CHANGED_FILES_ANY));
    // The stack's own test command, as suggested above (`npm test`,
    // `pnpm test`, ...), or Node's own runner.
    let test = stack
        .and_then(|stack| stack.checks.iter().find(|check| check.contains("test")))
        .map_or("node --test", String::as_str);
    text.push_str(&example.replace("{test}", test));
    text
}

/// How a slow check can run only on what the session changed (SPEC.md,
/// "The changed files"), then an example in the repository's own stack.
const CHANGED_FILES_INTRO: &str = "\n\
# A slow check, on only what the session changed: when prove-it runs this\n\
# script, PROVE_IT_CHANGED_FILES names a file listing every changed path,\n\
# one per line, and PROVE_IT_BASE is the commit the session began at. Run\n\
# by hand, neither is set: check everything. For example,\n";

/// The example, by stack family.
const CHANGED_FILES_EXAMPLES: &[(&str, &str)] = &[
    (
        "python",
        "# the tests of the folders the session touched:\n\
# if [ -n \"${PROVE_IT_CHANGED_FILES:-}\" ]; then\n\
#   while IFS= read -r path; do dirname \"$path\"; done < \"$PROVE_IT_CHANGED_FILES\" | sort -u |\n\
#     while IFS= read -r dir; do [ ! -d \"$dir/tests\" ] || python -m pytest -q \"$dir/tests\"; done\n\
# else\n\
#   python -m pytest -q\n\
# fi\n",
    ),
    (
        "node",
        "# the tests, only when the session changed JavaScript or TypeScript:\n\
# if [ -z \"${PROVE_IT_CHANGED_FILES:-}\" ] ||\n\
#   grep -qE '\\.(js|mjs|cjs|jsx|ts|mts|cts|tsx)$' \"$PROVE_IT_CHANGED_FILES\"; then\n\
#   {test}\n\
# fi\n",
    ),
    (
        "go",
        "# the packages whose Go files the session touched:\n\
# if [ -n \"${PROVE_IT_CHANGED_FILES:-}\" ]; then\n\
#   grep '\\.go$' \"$PROVE_IT_CHANGED_FILES\" | while IFS= read -r file; do echo \"./$(dirname \"$file\")\"; done | sort -u |\n\
#     while IFS= read -r pkg; do [ ! -d \"$pkg\" ] || go test \"$pkg\"; done\n\
# else\n\
#   go test ./...\n\
# fi\n",
    ),
    (
        "rust",
        "# the tests, unless the session changed no Rust source or manifest:\n\
# if [ -n \"${PROVE_IT_CHANGED_FILES:-}\" ] && ! grep -qE '\\.rs$|Cargo\\.(toml|lock)$' \"$PROVE_IT_CHANGED_FILES\"; then\n\
#   echo \"no Rust source changed: cargo test skipped\"\n\
# else\n\
#   cargo test\n\
# fi\n",
    ),
];

/// The example for a repository of no stack with one.
const CHANGED_FILES_ANY: &str = "# shellcheck on the shell scripts the session touched:\n\
# if [ -n \"${PROVE_IT_CHANGED_FILES:-}\" ]; then\n\
#   grep '\\.sh$' \"$PROVE_IT_CHANGED_FILES\" | while IFS= read -r file; do [ ! -f \"$file\" ] || shellcheck \"$file\"; done\n\
# fi\n";
