//! The commit trailer: `prove-it setup trailer` wires two git hooks, and
//! `prove-it trailer`, which they run, adds one line to each commit
//! message, `Prove-It: <verdict> tree=<oid> ...`, from the gate's verdict
//! about exactly the commit's tree, or `Prove-It: unverified tree=<oid>`
//! when no verdict is. It is a claim from this machine: `prove-it ci`
//! reads it and judges for itself (SPEC.md, "The commit trailer").
//!
//! Two hooks, because neither covers every commit alone:
//! `prepare-commit-msg` runs under `--no-verify` too, but before the
//! editor, where a trailer in an empty message would make quitting the
//! editor commit instead of abort; `commit-msg` runs after the editor, and
//! is skipped by `--no-verify`. So `prepare-commit-msg` adds the trailer
//! when no editor opens (`GIT_EDITOR=:`), and `commit-msg` adds it, or
//! puts it right, after an editor, unless the message is empty.

use crate::capability::content;
use crate::capability::copy::git;
use crate::capability::git::discover;
use crate::capability::state;
use crate::commands::ci::TRAILER;
use crate::fs::{private_dir, write_atomic};
use crate::settings::{self, Loaded};
use crate::verdicts::{self, Record};
use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use prove_it_gate::abi::{Decision, Verdict};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The git hooks that add the trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrailerHook {
    PrepareCommitMsg,
    CommitMsg,
}

impl TrailerHook {
    const ALL: [TrailerHook; 2] = [TrailerHook::PrepareCommitMsg, TrailerHook::CommitMsg];

    fn name(self) -> &'static str {
        match self {
            TrailerHook::PrepareCommitMsg => "prepare-commit-msg",
            TrailerHook::CommitMsg => "commit-msg",
        }
    }
}

/// The line that marks a hook file as prove-it's.
const MARK: &str = "# prove-it: adds the Prove-It trailer to each commit message";

/// The content tree a stop's verdict record keeps: none unless the trailer
/// is set up; else the one kept just before this stop's `verify.sh` run;
/// else the one this session's last record kept for the same fingerprint
/// (a read-only stop hashes nothing); else the tree's as it is now.
pub fn content_for(
    state_dir: &Path,
    root: &Path,
    session_id: &str,
    decision: &Decision,
) -> Result<Option<String>> {
    let store = state::StateStore::new(state_dir, root, session_id, None);
    if !content::opted_in(store.repo_dir()) {
        return Ok(None);
    }
    if let Some(tree) = decision.tree.as_deref()
        && let Some(kept) = content::kept(&store.content_file(), tree)
    {
        return Ok(Some(kept));
    }
    if let Some(kept) =
        verdicts::kept_content_tree(state_dir, root, session_id, decision.tree.as_deref())
    {
        return Ok(Some(kept));
    }
    content::content_tree(root, store.repo_dir())
        .map(Some)
        .context("the commit trailer cannot name this tree")
}

/// `prove-it setup trailer [DIR]`.
pub fn setup(dir: &Path, user: bool) -> Result<ExitCode> {
    if user {
        bail!(
            "the trailer is set up one repository at a time (its hooks are the repository's): run `prove-it setup trailer` without --user in each"
        );
    }
    let root = discover(dir).with_context(|| {
        format!(
            "`{}` is not inside a git repository: run this in the repository whose commits should carry the trailer",
            dir.display()
        )
    })?;
    let loaded = settings::from_env();
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot tell where this prove-it binary is")?;
    let path = |args: &[&str]| -> Result<PathBuf> {
        let out = git(&root, args)?;
        Ok(PathBuf::from(String::from_utf8_lossy(&out).trim()))
    };
    let hooks = path(&["rev-parse", "--path-format=absolute", "--git-path", "hooks"])?;
    let common = path(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;

    let dirs = loaded.dirs.outside(&root, &mut Vec::new());
    let mark = content::marker(&state::repo_dir(&dirs.state, &root));
    if let Some(parent) = mark.parent() {
        private_dir(parent)?;
    }
    write_atomic(&mark, format!("{}\n", hooks.display()).as_bytes())?;

    outln!(
        "prove-it setup trailer: each commit here gets a `{TRAILER}:` line naming the gate's verdict on exactly its tree."
    );
    if hooks.starts_with(&common) {
        std::fs::create_dir_all(&hooks)
            .with_context(|| format!("cannot create `{}`", hooks.display()))?;
        for hook in TrailerHook::ALL {
            let said = write_hook(&hooks.join(hook.name()), hook, &exe)?;
            outln!("  {:<19} {said}", hook.name());
        }
    } else {
        // A hooks folder in the work tree (husky's `.husky`) is shared with
        // everyone who clones the repository, and one outside it may be
        // every repository's: neither is prove-it's to rewrite, and a hook
        // there naming this machine's binary would fail on theirs.
        let whose = if hooks.starts_with(&root) {
            "inside the repository, shared with everyone who clones it"
        } else {
            "outside the repository, perhaps shared by others"
        };
        outln!(
            "  core.hooksPath is `{}`, {whose}, so prove-it does not write there. Add one line to each hook yourself:",
            hooks.display()
        );
        for hook in TrailerHook::ALL {
            outln!("  {:<19} {}", hook.name(), hook_line(&exe, hook));
        }
    }
    outln!(
        "  verdicts in this repository now keep their content tree (the git tree of the files as they are, untracked ones included), in `{}`",
        state::repo_dir(&dirs.state, &root).display()
    );
    outln!(
        "A commit whose tree no verdict here is about (a partial commit, a rebase onto a newer base, an edit after the stop) says `{TRAILER}: unverified`. The trailer is a claim: `prove-it ci` reads it and judges the pull request for itself. The hooks name this binary by its path: run this again if it moves."
    );
    Ok(ExitCode::SUCCESS)
}

/// For `prove-it doctor`: `None` when the trailer is not set up here; else
/// whether both hooks run it (what they are, or what is wrong).
pub fn wiring(root: &Path, state_dir: &Path) -> Option<std::result::Result<String, String>> {
    if !content::opted_in(&state::repo_dir(state_dir, root)) {
        return None;
    }
    let hooks = match git(
        root,
        &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
    ) {
        Ok(out) => PathBuf::from(String::from_utf8_lossy(&out).trim()),
        Err(e) => return Some(Err(format!("{e:#}"))),
    };
    let mut missing = Vec::new();
    for hook in TrailerHook::ALL {
        let file = hooks.join(hook.name());
        let runs = std::fs::read_to_string(&file)
            .is_ok_and(|text| text.contains(&format!(" trailer {} ", hook.name())));
        let executable = file
            .metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
        if !(runs && executable) {
            missing.push(format!("`{}`", file.display()));
        }
    }
    Some(if missing.is_empty() {
        Ok(format!(
            "on: `{}` and `commit-msg` add the `{TRAILER}:` line",
            hooks.join("prepare-commit-msg").display()
        ))
    } else {
        Err(format!(
            "set up, but {} does not run it (or is not executable): commits get no `{TRAILER}:` line; run `prove-it setup trailer` again",
            missing.join(" and ")
        ))
    })
}

/// The line that runs the trailer from `hook`.
fn hook_line(exe: &Path, hook: TrailerHook) -> String {
    format!(
        "{} trailer {} --tree \"$(git write-tree 2>/dev/null)\" \"$@\" || :",
        sh_quote(&exe.display().to_string()),
        hook.name()
    )
}

/// Writes prove-it's hook at `file`, keeping a hook that is someone
/// else's as `<file>.before-prove-it`, which prove-it's runs first.
/// Returns what it did, for the person.
fn write_hook(file: &Path, hook: TrailerHook, exe: &Path) -> Result<String> {
    let chained = PathBuf::from(format!("{}.before-prove-it", file.display()));
    let existing = match std::fs::read(file) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    };
    let said = match existing {
        Some(text) if text.contains(MARK) => format!("`{}` (rewritten)", file.display()),
        Some(_) => {
            if chained.exists() {
                bail!(
                    "`{}` is not prove-it's, and `{}` is taken: move one of them and run this again",
                    file.display(),
                    chained.display()
                );
            }
            std::fs::rename(file, &chained).with_context(|| {
                format!(
                    "cannot move `{}` to `{}`",
                    file.display(),
                    chained.display()
                )
            })?;
            format!(
                "`{}` (the hook that was there is `{}` now, and runs first)",
                file.display(),
                chained.display()
            )
        }
        None => format!("`{}`", file.display()),
    };
    let name = hook.name();
    let exe_q = sh_quote(&exe.display().to_string());
    let script = format!(
        "#!/bin/sh\n\
         {MARK}\n\
         # (SPEC.md, \"The commit trailer\"). Written by `prove-it setup trailer`,\n\
         # which rewrites it. A hook that was here before runs first, from\n\
         # {name}.before-prove-it; its failure stops the commit, prove-it's never does.\n\
         if [ -e \"$0.before-prove-it\" ]; then\n\
         \t\"$0.before-prove-it\" \"$@\" || exit\n\
         fi\n\
         if [ -x {exe_q} ]; then\n\
         \t{line}\n\
         else\n\
         \techo \"prove-it: \"{exe_q}\" is gone, so this commit has no {TRAILER} trailer: run \\`prove-it setup trailer\\` again\" >&2\n\
         fi\n\
         exit 0\n",
        line = hook_line(exe, hook)
    );
    write_atomic(file, script.as_bytes())?;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make `{}` executable", file.display()))?;
    Ok(said)
}

/// Quotes `text` for POSIX sh.
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `prove-it trailer HOOK --tree OID FILE [SOURCE [COMMIT]]`, run by the
/// hooks: never fails the commit. What goes wrong is said on stderr, and
/// the commit has no trailer, which `prove-it ci` reports as absent.
pub fn execute(hook: TrailerHook, tree: &str, file: &Path) -> Result<ExitCode> {
    if let Err(e) = apply(hook, tree, file) {
        errln!("prove-it: this commit has no {TRAILER} trailer: {e:#}");
    }
    Ok(ExitCode::SUCCESS)
}

fn apply(hook: TrailerHook, tree: &str, file: &Path) -> Result<()> {
    let loaded = settings::from_env();
    // Before an editor, a trailer would make an untouched message commit.
    if hook == TrailerHook::PrepareCommitMsg && !loaded.commit_without_editor {
        return Ok(());
    }
    let cwd = std::env::current_dir().context("cannot tell the current directory")?;
    let root = discover(&cwd)
        .with_context(|| format!("`{}` is not inside a git repository", cwd.display()))?;
    let message = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the commit message `{}`", file.display()))?;
    // An empty message aborts the commit: a trailer would let it through.
    if hook == TrailerHook::CommitMsg && is_empty(&message, comment_char(&root)) {
        return Ok(());
    }
    if tree.is_empty() || !tree.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("its tree is unknown (`git write-tree` failed: is a merge conflict unresolved?)");
    }
    let value = value(&loaded, &root, tree);
    let file = file.display().to_string();
    let trailer = format!("{TRAILER}: {value}");
    git(
        &root,
        &[
            "interpret-trailers",
            "--in-place",
            "--if-exists",
            "replace",
            "--if-missing",
            "add",
            "--trailer",
            &trailer,
            &file,
        ],
    )?;
    Ok(())
}

/// What the trailer says: the verdict recorded about `tree`, or
/// `unverified`.
fn value(loaded: &Loaded, root: &Path, tree: &str) -> String {
    let dirs = loaded.dirs.outside(root, &mut Vec::new());
    let records = verdicts::about_content_tree(&dirs.state, root, tree);
    match pick(records) {
        Some(record) => {
            let word = record
                .verdict
                .and_then(|v| serde_json::to_value(v).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "unverified".to_string());
            format!(
                "{word} tree={tree} session={} at={}",
                record.session, record.time
            )
        }
        None => format!("unverified tree={tree}"),
    }
}

/// The record a trailer tells: the newest with a verdict about the work,
/// else the newest at all. `unchanged` only says a session changed
/// nothing; a verdict of another session on the same tree says more.
fn pick(mut records: Vec<Record>) -> Option<Record> {
    records.retain(|r| r.verdict.is_some());
    records.sort_by(|a, b| a.time.cmp(&b.time));
    let about_work = records
        .iter()
        .rposition(|r| r.verdict != Some(Verdict::Unchanged));
    match about_work {
        Some(i) => Some(records.swap_remove(i)),
        None => records.pop(),
    }
}

/// git's comment character here (`core.commentChar`, `#` by default).
fn comment_char(root: &Path) -> String {
    git(root, &["config", "--get", "core.commentChar"])
        .map(|out| String::from_utf8_lossy(&out).trim().to_string())
        .ok()
        .filter(|c| !c.is_empty() && c != "auto")
        .unwrap_or_else(|| "#".to_string())
}

/// Whether a message is empty as git reads it: nothing but comments and
/// blank lines before a scissors line.
fn is_empty(message: &str, comment: String) -> bool {
    let scissors = format!("{comment} ------------------------ >8 ------------------------");
    message
        .lines()
        .take_while(|l| *l != scissors)
        .filter(|l| !l.starts_with(&comment))
        .all(|l| l.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_of_comments_is_empty_and_one_line_is_not() {
        let hash = || "#".to_string();
        assert!(is_empty("\n# Please enter the commit message\n#\n", hash()));
        assert!(is_empty(
            "\n# ------------------------ >8 ------------------------\ndiff --git a/x b/x\n",
            hash()
        ));
        assert!(!is_empty("Fix the parser\n# comment\n", hash()));
        assert!(!is_empty("# not a comment here\n", ";".to_string()));
    }
}
