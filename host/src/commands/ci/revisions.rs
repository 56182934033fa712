//! Which commits a pull request is judged between: the base (where it
//! branched from what it merges into) and the head (the commit checked
//! out). Git answers through `git` itself, which knows a shallow clone's
//! limits as gix's merge-base does not say them.

use crate::capability::copy::git;
use crate::settings::CiEnv;
use std::path::Path;

/// One commit and its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rev {
    pub commit: String,
    pub tree: String,
}

#[derive(Debug, Clone)]
pub struct Revisions {
    /// The merge base of the base asked for and the head: what the pull
    /// request changes is what differs from it.
    pub base: Rev,
    /// The base as asked for (a branch, a commit), for people.
    pub base_ref: String,
    /// Where that came from (`--base`, `GITHUB_BASE_REF`...).
    pub base_from: String,
    /// The commit checked out: its files are the ones judged.
    pub head: Rev,
    /// The pull request's own tip: the head, or in a merge checkout (the
    /// head merges the base into it) its second parent. Its message holds
    /// the agent machine's claim.
    pub tip: Rev,
    /// Tracked files the work tree changed from the head (a CI step wrote
    /// them): judged as they are, and said.
    pub dirty: Vec<String>,
}

/// Why a pull request cannot be judged, and what to do.
#[derive(Debug, Clone)]
pub struct CannotJudge {
    pub why: String,
    pub next: String,
}

fn cannot(why: impl Into<String>, next: impl Into<String>) -> CannotJudge {
    CannotJudge {
        why: why.into(),
        next: next.into(),
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The commit `rev` names, if this clone has it.
fn commit(root: &Path, rev: &str) -> Option<String> {
    let spec = format!("{rev}^{{commit}}");
    git(root, &["rev-parse", "--verify", "--quiet", &spec])
        .ok()
        .map(text)
        .filter(|c| !c.is_empty())
}

fn rev(root: &Path, commit: String) -> Result<Rev, CannotJudge> {
    let spec = format!("{commit}^{{tree}}");
    let tree = git(root, &["rev-parse", "--verify", &spec])
        .map(text)
        .map_err(|e| cannot(format!("cannot read the tree of {commit}: {e:#}"), FETCH))?;
    Ok(Rev { commit, tree })
}

const FETCH: &str = "fetch the history the pull request branched from: with actions/checkout, set `fetch-depth: 0`; in any other CI, `git fetch --unshallow` (or fetch the base branch)";

/// The base to judge against: `--base`, else the CI's own variables.
fn asked_base(base: Option<&str>, ci: &CiEnv) -> Result<(String, String), CannotJudge> {
    if let Some(base) = base {
        return Ok((base.to_string(), "--base".to_string()));
    }
    if let Some(path) = &ci.github_event_path
        && let Ok(bytes) = std::fs::read(path)
        && let Ok(event) = serde_json::from_slice::<serde_json::Value>(&bytes)
    {
        for (pointer, name) in [
            ("/pull_request/base/sha", "the pull request's base.sha"),
            ("/merge_group/base_sha", "the merge group's base_sha"),
        ] {
            if let Some(sha) = event.pointer(pointer).and_then(|v| v.as_str()) {
                return Ok((sha.to_string(), format!("{name} in GITHUB_EVENT_PATH")));
            }
        }
    }
    if let Some(branch) = &ci.github_base_ref {
        return Ok((format!("origin/{branch}"), "GITHUB_BASE_REF".to_string()));
    }
    if let Some(sha) = &ci.gitlab_diff_base_sha {
        return Ok((sha.clone(), "CI_MERGE_REQUEST_DIFF_BASE_SHA".to_string()));
    }
    if let Some(branch) = &ci.gitlab_target_branch {
        return Ok((
            format!("origin/{branch}"),
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME".to_string(),
        ));
    }
    Err(cannot(
        "no base to judge the pull request against: no --base, and no pull request in the CI's variables",
        "pass the branch it merges into: `prove-it ci --base origin/main`",
    ))
}

/// The commits a pull request checked out at `root` is judged between.
pub fn resolve(
    root: &Path,
    base: Option<&str>,
    head: Option<&str>,
    ci: &CiEnv,
) -> Result<Revisions, CannotJudge> {
    let checked_out = commit(root, "HEAD").ok_or_else(|| {
        cannot(
            "this repository has no commit checked out",
            "check out the pull request's commit",
        )
    })?;
    if let Some(asked) = head {
        match commit(root, asked) {
            Some(c) if c == checked_out => {}
            Some(c) => {
                return Err(cannot(
                    format!(
                        "--head {asked} is {c}, not the commit checked out ({checked_out}), and the checks run on the files here"
                    ),
                    format!("check it out first: `git checkout --detach {asked}`"),
                ));
            }
            None => {
                return Err(cannot(
                    format!("--head {asked} is not a commit in this clone"),
                    FETCH,
                ));
            }
        }
    }
    let shallow = git(root, &["rev-parse", "--is-shallow-repository"])
        .map(text)
        .is_ok_and(|s| s == "true");
    let shallow_said = if shallow {
        " (this is a shallow clone)"
    } else {
        ""
    };
    let (base_ref, base_from) = asked_base(base, ci)?;
    let Some(tip_of_base) = commit(root, &base_ref) else {
        return Err(cannot(
            format!("the base `{base_ref}` (from {base_from}) is not in this clone{shallow_said}"),
            FETCH,
        ));
    };
    let merge_base = git(root, &["merge-base", &tip_of_base, &checked_out])
        .map(text)
        .ok()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            cannot(
                format!(
                    "the pull request and the base `{base_ref}` have no common history in this clone{shallow_said}"
                ),
                FETCH,
            )
        })?;
    let parents = git(root, &["rev-list", "--parents", "-n", "1", &checked_out])
        .map(text)
        .unwrap_or_default();
    let parents: Vec<&str> = parents.split_whitespace().skip(1).collect();
    let tip = match parents[..] {
        [first, second] if first == merge_base => second.to_string(),
        _ => checked_out.clone(),
    };
    let dirty = dirty(root);
    Ok(Revisions {
        base: rev(root, merge_base)?,
        base_ref,
        base_from,
        head: rev(root, checked_out)?,
        tip: rev(root, tip)?,
        dirty,
    })
}

/// The tracked paths the work tree changed from HEAD.
pub fn dirty(root: &Path) -> Vec<String> {
    git(
        root,
        &["status", "--porcelain=v1", "-z", "--untracked-files=no"],
    )
    .map(|out| {
        out.split(|b| *b == 0)
            .filter(|entry| entry.len() > 3)
            .map(|entry| String::from_utf8_lossy(&entry[3..]).to_string())
            .collect()
    })
    .unwrap_or_default()
}

/// Every file git does not track, ignored or not (a folder with no
/// tracked file in it is one entry, ending in `/`): what `verify.sh` adds
/// beside the pull request's files.
pub fn untracked(root: &Path) -> std::collections::BTreeSet<String> {
    git(root, &["ls-files", "-z", "--others", "--directory"])
        .map(|out| {
            out.split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// HEAD and every tracked file's content, as one value: what `verify.sh`
/// must leave as it found it (`None`: git cannot say).
pub fn tracked_state(root: &Path) -> Option<(String, Vec<u8>)> {
    let head = commit(root, "HEAD")?;
    let diff = git(
        root,
        &["diff", "--binary", "--no-ext-diff", "--no-textconv", "HEAD"],
    )
    .ok()?;
    Some((head, diff))
}
