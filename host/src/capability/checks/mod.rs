//! What counts as a check, and what a session changed in its checks
//! (SPEC.md, "Weakened checks"). One job a file: [`list`] parses and
//! matches `.prove-it/checks`, [`sections`], [`inline`] and [`doctest`] find the
//! check parts of manifests and of Rust and Python source, [`evidence`] reads an edit for
//! skip markers and the like; this file pins the list at a session's
//! start and compares the checks with it at a stop.
//!
//! It only reads. Putting the old checks back happens in a throwaway copy
//! (`capability::replay`), never in the person's tree.

mod cheats;
pub mod defaults;
mod doctest;
pub mod evidence;
mod inline;
pub mod list;
mod sections;

use super::git;
use anyhow::{Context, Result};
use list::{Class, List};
use prove_it_gate::abi::{CheckChange, CheckChanges, CheckKind, FileChange, GitConfigChange};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The largest check file kept at a session's start (beyond it, a replay
/// cannot put it back, and says so), and all of them together.
const KEEP_FILE_BYTES: usize = 4 << 20;
const KEEP_TOTAL_BYTES: usize = 16 << 20;
/// Changed code files read for evidence at most.
const CODE_FILES: usize = 200;
/// Files larger than this are not read for evidence.
const EVIDENCE_BYTES: u64 = 1 << 20;

/// A file's bytes and its executable bit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Content {
    /// The bytes as text when they are UTF-8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// else as hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hex: Option<String>,
    pub exec: bool,
}

impl Content {
    pub fn new(bytes: Vec<u8>, exec: bool) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => Content {
                text: Some(text),
                hex: None,
                exec,
            },
            Err(e) => Content {
                text: None,
                hex: Some(e.into_bytes().iter().map(|b| format!("{b:02x}")).collect()),
                exec,
            },
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        match (&self.text, &self.hex) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(hex)) => (0..hex.len() / 2)
                .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                .collect(),
            (None, None) => Vec::new(),
        }
    }

    /// The text, when it is text.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    fn len(&self) -> usize {
        self.text.as_ref().map_or(0, String::len) + self.hex.as_ref().map_or(0, |h| h.len() / 2)
    }

    /// What is at `path` on disk now (`None`: nothing, or not a file).
    pub fn on_disk(path: &Path) -> Result<Option<Content>> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => meta,
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", path.display())),
        };
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read `{}`", path.display()))?;
        Ok(Some(Content::new(
            bytes,
            meta.permissions().mode() & 0o111 != 0,
        )))
    }
}

/// The checks in force for one session, pinned at its start: the list,
/// and what each check that differed from HEAD then held (the rest is in
/// the starting commit).
#[derive(Debug, Serialize, Deserialize)]
pub struct Pinned {
    /// Where the list comes from, for the person.
    pub origin: String,
    pub list: String,
    /// Each check path that differed from HEAD at the start: what it held
    /// (`None`: nothing, it was deleted).
    pub dirty: BTreeMap<String, Option<Content>>,
    /// Check paths that differed from HEAD at the start but were too large
    /// to keep.
    #[serde(default)]
    pub unkept: Vec<String>,
    /// Git's configuration of the checks at the start (`None`: pinned by
    /// a version that did not keep it).
    #[serde(default)]
    pub git: Option<git::config::Settings>,
    /// The environments inside the tree at the start (`None`: pinned by a
    /// version that did not look, or in CI, where there are none).
    #[serde(default)]
    pub environments: Option<super::loads::Environments>,
    /// The ignored files at the start (`None`: not kept, or more than
    /// [`super::loads::IGNORED_KEPT`]), to tell those that appeared since.
    #[serde(default)]
    pub ignored: Option<Vec<String>>,
}

/// The list in force at a session that starts at `head`: the committed
/// `.prove-it/checks` there (its `@defaults` line expanded), else the
/// built-in defaults of every stack family; then what `verify.sh` at
/// `head` runs ([`defaults::derive`]). Read from the commit only, never
/// the work tree. Also says where it comes from.
pub fn list_at(root: &Path, head: Option<&str>) -> Result<(String, String)> {
    let (text, origin, _) = list_with_derived(root, head)?;
    Ok((text, origin))
}

/// [`list_at`], with the derived lines and why each is there.
pub fn list_with_derived(
    root: &Path,
    head: Option<&str>,
) -> Result<(String, String, Vec<defaults::Derived>)> {
    let commit = git::Commit::open(root, head)?;
    let committed = match &commit {
        Some(commit) => commit.file(list::FILE)?,
        None => None,
    };
    let (mut text, mut origin) = match committed {
        Some((bytes, _)) => {
            let text = String::from_utf8_lossy(&bytes);
            let with = if text.lines().any(|l| l.trim() == defaults::DEFAULTS_LINE) {
                " (with the built-in defaults)"
            } else {
                ""
            };
            (
                defaults::expand(&text),
                format!("`{}` as committed{with}", list::FILE),
            )
        }
        None => (
            defaults::builtin(),
            format!(
                "no `{}` committed: the built-in defaults (every stack's test files and configuration)",
                list::FILE
            ),
        ),
    };
    let derived = defaults::derive(commit.as_ref(), &text);
    if !derived.is_empty() {
        const NAMED: usize = 5;
        let mut named: Vec<String> = derived
            .iter()
            .take(NAMED)
            .map(|d| format!("`{}`", d.line))
            .collect();
        if derived.len() > NAMED {
            named.push(format!("{} more", derived.len() - NAMED));
        }
        origin.push_str(&format!(
            ", and from what `verify.sh` runs: {}",
            named.join(", ")
        ));
    }
    text.push_str(&defaults::render(&derived));
    Ok((text, origin, derived))
}

/// Files of each kind `prove-it doctor` names (it counts them all).
const NAMED_IN_DOCTOR: usize = 10;

/// What counts as a check in a repository now, for `prove-it doctor`.
pub struct Inventory {
    /// Where the list a session starting now would pin comes from.
    pub origin: String,
    /// `.prove-it/checks` in the work tree is not the one a session pins
    /// (not committed, or changed since).
    pub uncommitted: bool,
    /// Lines of the list that cannot be used.
    pub problems: Vec<String>,
    /// Per kind of check: its name, how many tracked files, a few of them.
    pub kinds: Vec<(&'static str, usize, Vec<String>)>,
    /// The lines what `verify.sh` runs adds, and why.
    pub derived: Vec<defaults::Derived>,
    /// The git configuration keys that are checks: the built-in ones and
    /// those the list's `[git-config]` section names.
    pub git_keys: Vec<String>,
}

/// The tracked files of the repository at `root` that count as checks,
/// by the list a session starting now would pin.
pub fn inventory(root: &Path) -> Result<Inventory> {
    let head = git::tree_state(root, &mut git::Memo::default())?.head;
    let (text, origin, derived) = list_with_derived(root, head.as_deref())?;
    let in_tree = std::fs::read(root.join(list::FILE)).ok();
    let committed = git::file_at(root, head.as_deref(), list::FILE)?.map(|(b, _)| b);
    let (list, problems) = List::parse(&text);
    let mut kinds: Vec<(&'static str, usize, Vec<String>)> = vec![
        ("tests", 0, Vec::new()),
        ("configuration", 0, Vec::new()),
        ("check sections", 0, Vec::new()),
        ("inline tests", 0, Vec::new()),
    ];
    for path in git::tracked_paths(root)? {
        let (k, name) = match list.classify(&path) {
            Some(Class::Test) => (0, path),
            Some(Class::Config) => (1, path),
            // The file with the sections it names: only those are checks.
            Some(Class::Sections(names)) => {
                let held = std::fs::read_to_string(root.join(&path))
                    .ok()
                    .and_then(|text| sections::extract(&path, &text, &names).ok());
                let present: Vec<String> = match held {
                    Some(found) => found
                        .into_iter()
                        .filter_map(|(name, text)| text.map(|_| name))
                        .collect(),
                    None => names,
                };
                if present.is_empty() {
                    continue;
                }
                (2, format!("{path} [{}]", present.join("], [")))
            }
            // Only a source file that holds tests (a `#[cfg(test)]`
            // module, a doctest) has inline tests.
            Some(Class::Inline) => {
                let holds = std::fs::metadata(root.join(&path))
                    .is_ok_and(|m| m.len() <= EVIDENCE_BYTES)
                    && std::fs::read_to_string(root.join(&path))
                        .is_ok_and(|text| !inline::tests_of(&path, &text).trim().is_empty());
                if !holds {
                    continue;
                }
                (3, path)
            }
            None => continue,
        };
        kinds[k].1 += 1;
        if kinds[k].2.len() < NAMED_IN_DOCTOR {
            kinds[k].2.push(name);
        }
    }
    Ok(Inventory {
        origin,
        uncommitted: in_tree.is_some() && in_tree != committed,
        problems,
        kinds,
        derived,
        git_keys: git::config::KEYS
            .iter()
            .map(|k| k.to_string())
            .chain(list.git_keys)
            .collect(),
    })
}

/// Pins the checks at a session's start: the list at `head`, and the
/// start of each check among `dirty` (the paths differing from HEAD), and
/// git's configuration of the checks (`git_user`: git's folder for the
/// user's own attributes and excludes files).
pub fn pin<'a>(
    root: &Path,
    head: Option<&str>,
    dirty: impl Iterator<Item = &'a String>,
    git_user: Option<&Path>,
) -> Result<Pinned> {
    let (text, origin) = list_at(root, head)?;
    let (list, _) = List::parse(&text);
    let mut pinned = Pinned {
        origin,
        git: Some(git::config::settings(root, &list.git_keys, git_user)?),
        list: text,
        dirty: BTreeMap::new(),
        unkept: Vec::new(),
        environments: None,
        ignored: None,
    };
    let mut total = 0;
    for path in dirty {
        if list.classify(path).is_none() {
            continue;
        }
        let content = Content::on_disk(&root.join(path))?;
        let size = content.as_ref().map_or(0, Content::len);
        if size > KEEP_FILE_BYTES || total + size > KEEP_TOTAL_BYTES {
            pinned.unkept.push(path.clone());
            continue;
        }
        total += size;
        pinned.dirty.insert(path.clone(), content);
    }
    Ok(pinned)
}

/// What a replay needs: each check the session changed, and git's
/// configuration of the checks at the start and now when it differs.
#[derive(Debug, Clone, Default)]
pub struct Replayable {
    pub files: Vec<Found>,
    pub git: Option<(git::config::Settings, git::config::Settings)>,
    /// How to rebuild the tree as it was at the session's start.
    pub start: StartTree,
    /// What the checks read that is not a check (data, fixtures,
    /// snapshots in a test folder) and the session changed: put back with
    /// the checks, so that the old checks run with the inputs they were
    /// written for ([`test_input`]).
    pub inputs: Vec<Input>,
    /// Where the differential plants its failing test (`super::differential`).
    pub canary: Option<Canary>,
}

/// A test file of the start's checks to plant a failing test in.
#[derive(Debug, Clone)]
pub struct Canary {
    pub path: String,
    /// Its start content, when the session changed it.
    pub start: Option<Content>,
    /// Where the session moved it: a test file it added with the same name
    /// (the checks as the session left them are asked there).
    pub moved_to: Option<String>,
    /// When the session changed configuration (a linter's, a type
    /// checker's, a runner's): a source file to plant a type and lint
    /// defect in.
    pub code: Option<String>,
}

/// A file a check reads, as it was at the session's start.
#[derive(Debug, Clone)]
pub struct Input {
    pub path: String,
    /// `None`: the session added it.
    pub start: Option<Content>,
}

/// Folders of tests: a file there that is neither a check nor source
/// code is something a check reads (a `spec` folder may hold code under
/// test, so code there is not taken).
const TEST_FOLDERS: &[&str] = &["test", "tests", "__tests__", "spec", "specs"];

/// Folders of test data: all in them is what checks read, code too (a
/// fixture project).
const DATA_FOLDERS: &[&str] = &[
    "testdata",
    "test_data",
    "fixtures",
    "__fixtures__",
    "__snapshots__",
    "snapshots",
];

/// Inputs put back at most: a session that rewrites more is replayed with
/// its new inputs, and that is said.
const INPUTS: usize = 5_000;

/// Source code: never an input beside a check (Go's `calc.go` beside
/// `calc_test.go` is the code under test).
const CODE: &[&str] = &[
    "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go", "rs", "java", "kt",
    "rb", "php", "c", "h", "cc", "cpp", "hpp", "cs", "swift", "scala", "ex", "exs", "vue",
    "svelte",
];

/// Whether `path` (not a check) is an input of the checks: in a folder of
/// test data; or, not being source code, in a folder of tests or in the
/// folder of a check the replay puts back (or below it).
fn test_input(path: &str, put_back: &[&str]) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let code = name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| CODE.contains(&ext));
    let within = |folders: &[&str]| dir.split('/').any(|part| folders.contains(&part));
    within(DATA_FOLDERS)
        || !code && within(TEST_FOLDERS)
        || !code
            && put_back.iter().any(|check| {
                let of = check.rsplit_once('/').map_or("", |(d, _)| d);
                !of.is_empty() && (dir == of || dir.starts_with(&format!("{of}/")))
            })
}

/// The tree at the session's start, as the changed paths' start contents:
/// what HEAD held then, or for a check that already differed, what was
/// kept of it. A code file that already differed was not kept, and then
/// the start cannot be rebuilt (`unknown` says why).
#[derive(Debug, Clone)]
pub struct StartTree {
    pub head: Option<String>,
    /// Every path the session changed.
    pub paths: Vec<String>,
    /// The start contents kept at the start (`None`: absent then).
    pub kept: BTreeMap<String, Option<Content>>,
    pub unknown: Option<String>,
}

impl Default for StartTree {
    fn default() -> Self {
        StartTree {
            head: None,
            paths: Vec::new(),
            kept: BTreeMap::new(),
            unknown: Some("the session's start is not known path by path".to_string()),
        }
    }
}

impl StartTree {
    /// Puts the start contents back in the copy at `copy`, from the
    /// person's repository at `root`.
    pub fn rebuild(&self, root: &Path, copy: &Path) -> Result<()> {
        let commit = git::Commit::open(root, self.head.as_deref())?;
        for path in &self.paths {
            let content = match self.kept.get(path) {
                Some(kept) => kept.clone(),
                None => match &commit {
                    Some(commit) => commit.file(path)?.map(|(b, x)| Content::new(b, x)),
                    None => None,
                },
            };
            write_file(&copy.join(path), content.as_ref())
                .with_context(|| format!("cannot put back `{path}` as it was at the start"))?;
        }
        Ok(())
    }
}

/// Makes the file at `path` hold `content` (`None`: removes it).
pub fn write_file(path: &Path, content: Option<&Content>) -> std::io::Result<()> {
    let Some(content) = content else {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // Never through a link: writing would change what it points to, maybe
    // outside the tree, and leave the link in place.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(path)?;
    }
    std::fs::write(path, content.bytes())?;
    let mode = if content.exec { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// One check the session changed, with what a replay needs.
#[derive(Debug, Clone)]
pub struct Found {
    pub change: CheckChange,
    pub class: Class,
    /// What it held at the session's start (`None`: nothing).
    pub start: Option<Content>,
}

/// What the session changed in its checks: each changed path (from
/// `changes::changed_since`) that the pinned list names, compared with its
/// start; lint suppressions added to the other changed files; and the
/// changed paths an index flag hides from `git diff`.
/// `dirty_at_start` is the start's snapshot: the paths that differed from
/// HEAD then; `git_user` is as for [`pin`].
pub fn changes(
    root: &Path,
    pinned: &Pinned,
    head_at_start: Option<&str>,
    dirty_at_start: &BTreeMap<String, String>,
    changed: &[String],
    ignored: &[String],
    git_user: Option<&Path>,
) -> Result<(Replayable, CheckChanges)> {
    let (list, problems) = List::parse(&pinned.list);
    // Checks git does not show: ignored configuration and hooks now (a
    // `conftest.py`: the runner loads it all the same), and those kept at
    // the start (one deleted since is a change too). Not ignored test
    // files: a run may rewrite one (a log under `tests/`) at every stop,
    // and an added test never weakens. Never read as code.
    let mut all = changed.to_vec();
    for path in ignored.iter().chain(pinned.dirty.keys()) {
        if matches!(list.classify(path), Some(Class::Config)) && !all.contains(path) {
            all.push(path.clone());
        }
    }
    let looked = all.as_slice();
    let mut report = CheckChanges {
        origin: pinned.origin.clone(),
        base: head_at_start.map(str::to_string),
        ..CheckChanges::default()
    };
    let mut notes: Vec<String> = problems
        .into_iter()
        .map(|p| format!("`{}` {p}", list::FILE))
        .collect();
    let mut found = Vec::new();
    let commit = git::Commit::open(root, head_at_start)?;
    // Lint suppressions are looked for in this many changed files at most
    // (a session that rewrites thousands of files is not read whole).
    let mut code_files = CODE_FILES;
    let mut tests = TestLines::new(root, &list, changed);
    // Changed files that are not checks: maybe what a check reads.
    let mut others = Vec::new();
    for path in looked {
        // `Some(suppressions)`: the file is code, read for its lint
        // suppressions (when `true`) and code-side cheats.
        let code = match list.classify(path) {
            // Not a check.
            None => {
                others.push(path.as_str());
                Some(true)
            }
            Some(class) => {
                let start = match pinned.dirty.get(path) {
                    Some(kept) => kept.clone(),
                    // An ignored one (test data, say) is said only when
                    // git shows it changed too: it is there at every stop.
                    None if pinned.unkept.contains(path) => {
                        if changed.contains(path) {
                            notes.push(format!(
                                "`{path}` was too large to keep at the session's start"
                            ));
                        }
                        continue;
                    }
                    None => match &commit {
                        Some(commit) => commit.file(path)?.map(|(b, x)| Content::new(b, x)),
                        None => None,
                    },
                };
                let now = Content::on_disk(&root.join(path))?;
                let inline = class == Class::Inline;
                // A check that became a link reads as gone (the runner
                // would read whatever the link points to): put back whole.
                let link = std::fs::read_link(root.join(path)).ok();
                let tests_changed = match compare(path, class, start, now) {
                    Some(mut f) => {
                        if let Some(target) = link {
                            f.change.evidence.insert(
                                0,
                                format!("turned into a symbolic link to `{}`", target.display()),
                            );
                        }
                        found.push(f);
                        true
                    }
                    None => false,
                };
                // A file with inline tests (Rust, Python's doctests) is
                // code too; its lint suppressions are said with its tests
                // when those changed.
                inline.then_some(!tests_changed)
            }
        };
        if let Some(suppressions) = code
            && let Some((notes, suspect)) = code_evidence(
                root,
                path,
                &commit,
                dirty_at_start,
                &mut code_files,
                &mut tests,
                suppressions,
            )?
        {
            report.code.extend(notes);
            report.suspect.extend(suspect);
        }
    }
    if code_files == 0 {
        // Said, so that a session cannot hide a cheat behind 200 others.
        report.code.push(format!(
            "only the first {CODE_FILES} changed code files were read for lint suppressions and code-side cheats; read `git diff` for the rest"
        ));
    }
    // A person reading `git diff` would not see these paths' changes: say
    // so, on the check or among the code's notes.
    for (path, flag) in git::hidden_paths(root)? {
        if !changed.contains(&path) {
            continue;
        }
        let undo = flag.split(',').next().unwrap_or(&flag);
        let line = format!(
            "marked {flag}, so `git status` and `git diff` do not show its changes (`git update-index --no-{undo} {path}` shows them)"
        );
        match found.iter_mut().find(|f| f.change.path == path) {
            Some(f) => f.change.evidence.push(line),
            None => report.code.push(format!("`{path}`: {line}")),
        }
    }
    runner_configs_swapped(&mut found);
    report.files = found.iter().map(|f| f.change.clone()).collect();
    if let Some(start) = &pinned.environments {
        report.environment = super::loads::unaccounted_environments(
            start,
            &super::loads::environments(root),
            changed,
        );
    }
    let mut git_config = None;
    match &pinned.git {
        Some(start) => {
            let named: Vec<String> = start
                .keys
                .keys()
                .filter(|k| !git::config::KEYS.contains(&k.as_str()))
                .cloned()
                .collect();
            let now = git::config::settings(root, &named, git_user)?;
            for change in git::config::changes(start, &now) {
                report.git_config.push(GitConfigChange {
                    what: change.what,
                    evidence: change.evidence,
                });
            }
            if !report.git_config.is_empty() {
                git_config = Some((start.clone(), now));
            }
        }
        None => notes.push(
            "git's configuration of the checks was not kept at this session's start (it began before this version of prove-it)".to_string(),
        ),
    }
    if let Some(start) = &pinned.ignored {
        let excludes_changed = report.git_config.iter().any(|c| c.what.contains("exclude"));
        // Whether the rule's line was in its file at the session's start:
        // a `.gitignore` as the starting commit held it, the excludes
        // files as they were kept.
        let has_line = |text: &str, pattern: &str| text.lines().any(|l| l.trim() == pattern);
        let was_there = |source: &str, pattern: &str| -> Option<bool> {
            let kept = pinned.git.as_ref().and_then(|g| {
                g.files
                    .iter()
                    .find(|(name, k)| name.as_str() == source || k.path == Path::new(source))
                    .map(|(_, k)| k)
            });
            if let Some(kept) = kept {
                return match (&kept.text, &kept.digest) {
                    (Some(text), _) => Some(has_line(text, pattern)),
                    (None, None) => Some(false),
                    (None, Some(_)) => None,
                };
            }
            if source.starts_with(".git/") || Path::new(source).is_absolute() {
                return None;
            }
            if dirty_at_start.contains_key(source) {
                return None;
            }
            let held = match &commit {
                Some(commit) => commit.file(source).ok()?,
                None => None,
            };
            Some(held.is_some_and(|(bytes, _)| has_line(&String::from_utf8_lossy(&bytes), pattern)))
        };
        report.code.extend(super::loads::hidden_by_the_session(
            root,
            start,
            ignored,
            changed,
            excludes_changed,
            was_there,
        ));
    }
    if !notes.is_empty() {
        report.problem = Some(notes.join("; "));
    }
    let mut start = StartTree {
        head: head_at_start.map(str::to_string),
        paths: changed.to_vec(),
        kept: BTreeMap::new(),
        unknown: None,
    };
    for path in changed.iter().filter(|p| dirty_at_start.contains_key(*p)) {
        match pinned.dirty.get(path) {
            Some(kept) => {
                start.kept.insert(path.clone(), kept.clone());
            }
            None => {
                start.unknown.get_or_insert_with(|| {
                    format!("`{path}` already differed from the last commit when the session began, and only checks are kept as they were then")
                });
            }
        }
    }
    let inputs = inputs(&found, &others, &commit, dirty_at_start, &mut report)?;
    // Only a stop that replays plants anything (the tracked files are
    // listed for it).
    let canary = match report.replay_needed() {
        true => canary_target(root, &list, &found)?,
        false => None,
    };
    Ok((
        Replayable {
            files: found,
            git: git_config,
            start,
            inputs,
            canary,
        },
        report,
    ))
}

/// Where the differential plants its failing test: a test file the session
/// changed, as it was at the start; else the first tracked test file it
/// can plant in. `None` when nothing changed (no replay) or none fits.
fn canary_target(root: &Path, list: &List, found: &[Found]) -> Result<Option<Canary>> {
    if found.is_empty() {
        return Ok(None);
    }
    let configured = found
        .iter()
        .any(|f| matches!(f.change.kind, CheckKind::Config | CheckKind::Section));
    let tracked = git::tracked_paths(root)?;
    let code = configured
        .then(|| {
            tracked
                .iter()
                .find(|p| {
                    // Source code: not a check, or one whose test parts only
                    // are (a Python module with doctests).
                    matches!(list.classify(p), None | Some(Class::Inline))
                        && super::differential::lintable(p)
                })
                .cloned()
        })
        .flatten();
    let changed = found.iter().find(|f| {
        f.change.kind == CheckKind::Test
            && f.change.change != FileChange::Added
            && f.start.is_some()
            && super::differential::plantable(&f.change.path)
    });
    if let Some(f) = changed {
        let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let moved_to = (f.change.change == FileChange::Deleted)
            .then(|| {
                found.iter().find(|a| {
                    a.change.change == FileChange::Added
                        && a.change.kind == CheckKind::Test
                        && name(&a.change.path) == name(&f.change.path)
                })
            })
            .flatten()
            .map(|a| a.change.path.clone());
        return Ok(Some(Canary {
            path: f.change.path.clone(),
            start: f.start.clone(),
            moved_to,
            code,
        }));
    }
    Ok(tracked
        .into_iter()
        .find(|p| {
            matches!(list.classify(p), Some(Class::Test)) && super::differential::plantable(p)
        })
        .map(|path| Canary {
            path,
            start: None,
            moved_to: None,
            code,
        }))
}

/// A runner's configuration added where another's was deleted (a
/// `vitest.config.ts` for a `.mocharc.yml`): said on the added one, in words.
fn runner_configs_swapped(found: &mut [Found]) {
    const CONFIGS: &[(&str, &str)] = &[
        ("vitest.config.", "vitest"),
        ("vitest.workspace.", "vitest"),
        ("jest.config.", "jest"),
        (".mocharc", "mocha"),
        ("ava.config.", "ava"),
        ("karma.conf.", "karma"),
        ("playwright.config.", "playwright"),
        ("pytest.ini", "pytest"),
        ("tox.ini", "tox"),
        ("noxfile.py", "nox"),
        (".config/nextest.toml", "nextest"),
    ];
    let runner = |path: &str| {
        let name = path.rsplit('/').next().unwrap_or(path);
        CONFIGS
            .iter()
            .find(|(start, _)| name.starts_with(start) || path.ends_with(start))
            .map(|(_, runner)| *runner)
    };
    let gone: Vec<&str> = found
        .iter()
        .filter(|f| f.change.change == FileChange::Deleted)
        .filter_map(|f| runner(&f.change.path))
        .collect();
    for f in found.iter_mut() {
        if f.change.change != FileChange::Added {
            continue;
        }
        if let Some(new) = runner(&f.change.path)
            && let Some(old) = gone.iter().find(|old| **old != new)
        {
            f.change.evidence.insert(
                0,
                format!(
                    "test runner replaced: `{old}` -> `{new}` (its configuration added, the old runner's deleted; the old tests may not run at all on what was rewritten for the new runner)"
                ),
            );
        }
    }
}

/// The changed files among `others` that the checks the replay puts back
/// read ([`test_input`]), with what they held at the session's start.
/// None when no check is put back; one that already differed at the start
/// is left as it is (its start was not kept).
fn inputs(
    found: &[Found],
    others: &[&str],
    commit: &Option<git::Commit>,
    dirty_at_start: &BTreeMap<String, String>,
    report: &mut CheckChanges,
) -> Result<Vec<Input>> {
    let put_back: Vec<&str> = found
        .iter()
        .filter(|f| f.change.change != FileChange::Added)
        .map(|f| f.change.path.as_str())
        .collect();
    if put_back.is_empty() {
        return Ok(Vec::new());
    }
    let paths: Vec<&str> = others
        .iter()
        .copied()
        .filter(|p| test_input(p, &put_back) && !dirty_at_start.contains_key(*p))
        .collect();
    if paths.len() > INPUTS {
        report.code.push(format!(
            "{} changed files in test folders: more than {INPUTS}, so the replay runs the old checks with them as they are now",
            paths.len()
        ));
        return Ok(Vec::new());
    }
    paths
        .into_iter()
        .map(|path| {
            let start = match commit {
                Some(commit) => commit.file(path)?.map(|(b, x)| Content::new(b, x)),
                None => None,
            };
            Ok(Input {
                path: path.to_string(),
                start,
            })
        })
        .collect()
}

/// What a changed code file says: its notes (lint suppressions added with
/// `suppressions`, weak code-side findings) and its suspect lines (strong
/// findings), each naming the file. Read from a file of a readable size,
/// against what HEAD held at the start: a file that already differed then
/// is passed over (its start is not kept), and so is every file past the
/// first `budget` (a session that rewrites thousands of files is not read
/// whole).
fn code_evidence(
    root: &Path,
    path: &str,
    commit: &Option<git::Commit>,
    dirty_at_start: &BTreeMap<String, String>,
    budget: &mut usize,
    tests: &mut TestLines,
    suppressions: bool,
) -> Result<Option<(Vec<String>, Vec<String>)>> {
    let small = std::fs::metadata(root.join(path)).is_ok_and(|m| m.len() <= EVIDENCE_BYTES);
    if *budget == 0 || !small || dirty_at_start.contains_key(path) {
        return Ok(None);
    }
    *budget -= 1;
    let start = match commit {
        Some(commit) => commit.file(path)?.map(|(b, x)| Content::new(b, x)),
        None => None,
    };
    let Some(now) = Content::on_disk(&root.join(path))? else {
        return Ok(None);
    };
    let Some(new) = now.text() else {
        return Ok(None);
    };
    let old = start.as_ref().and_then(Content::text);
    let (mut notes, mut suspect) = (Vec::new(), Vec::new());
    if suppressions {
        for line in evidence::of_code(old, new) {
            notes.push(format!("`{path}`: {line}"));
        }
    }
    for found in cheats::of_code(path, old, new, tests) {
        let line = format!("`{path}`: {}", found.line);
        match found.strong {
            true => suspect.push(line),
            false => notes.push(line),
        }
    }
    Ok(Some((notes, suspect)))
}

/// The test files' lines, read the first time a literal is looked up
/// (most sessions add no literal pair worth looking for).
struct TestLines<'a> {
    root: &'a Path,
    list: &'a List,
    changed: &'a [String],
    files: Option<Vec<(String, String)>>,
}

impl<'a> TestLines<'a> {
    /// Test files read at most, and their bytes together.
    const MAX_FILES: usize = 2000;
    const MAX_BYTES: u64 = 32 << 20;

    fn new(root: &'a Path, list: &'a List, changed: &'a [String]) -> Self {
        TestLines {
            root,
            list,
            changed,
            files: None,
        }
    }

    fn load(&self) -> Vec<(String, String)> {
        let mut paths = git::tracked_paths(self.root).unwrap_or_default();
        paths.extend(self.changed.iter().cloned());
        paths.sort();
        paths.dedup();
        let mut out = Vec::new();
        let mut bytes = 0;
        for path in paths {
            if out.len() >= Self::MAX_FILES || bytes >= Self::MAX_BYTES {
                break;
            }
            if self.list.classify(&path) != Some(Class::Test) {
                continue;
            }
            let file = self.root.join(&path);
            let Ok(meta) = std::fs::metadata(&file) else {
                continue;
            };
            if !meta.is_file() || meta.len() > EVIDENCE_BYTES {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&file) {
                bytes += meta.len();
                out.push((path, text));
            }
        }
        out
    }
}

impl cheats::Tests for TestLines<'_> {
    fn holding(&mut self, input: &str, output: &str) -> Option<String> {
        if self.files.is_none() {
            self.files = Some(self.load());
        }
        for (path, text) in self.files.as_deref().unwrap_or_default() {
            if let Some(n) = text
                .lines()
                .position(|l| l.contains(input) && l.contains(output))
            {
                return Some(format!("{path}:{}", n + 1));
            }
        }
        None
    }
}

/// A check's start and now compared: `None` when its check part did not
/// change.
fn compare(
    path: &str,
    class: Class,
    start: Option<Content>,
    now: Option<Content>,
) -> Option<Found> {
    let change = match (&start, &now) {
        (None, None) => return None,
        (None, Some(_)) => FileChange::Added,
        (Some(_), None) => FileChange::Deleted,
        (Some(a), Some(b)) if a == b => return None,
        (Some(_), Some(_)) => FileChange::Modified,
    };
    let old = start.as_ref().and_then(Content::text);
    let new = now.as_ref().and_then(Content::text);
    let big = |c: &Option<&str>| c.is_some_and(|t| t.len() as u64 > EVIDENCE_BYTES);
    let readable = !big(&old) && !big(&new);
    let (kind, evidence, class) = match &class {
        Class::Test | Class::Config => {
            let evidence = if readable {
                evidence::of_file(path, old, new, class == Class::Test)
            } else {
                Vec::new()
            };
            // A "test" the session added that is really a hook (a Go
            // TestMain that exits 0, a setup file that sets the exit code)
            // is left out of a replay, as configuration is.
            let hook = change == FileChange::Added
                && evidence.iter().any(|e| e.starts_with(evidence::HOOK));
            if class == Class::Test && !hook {
                (CheckKind::Test, evidence, class)
            } else {
                (CheckKind::Config, evidence, Class::Config)
            }
        }
        Class::Sections(names) => {
            let pick = |text: Option<&str>| match text {
                Some(text) => sections::extract(path, text, names).map(Some),
                None => Ok(None),
            };
            match (pick(old), pick(new)) {
                (Ok(a), Ok(b)) => {
                    if a == b {
                        return None;
                    }
                    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
                    let mut evidence = Vec::new();
                    for name in names {
                        let (x, y) = (
                            a.get(name).cloned().flatten(),
                            b.get(name).cloned().flatten(),
                        );
                        if x != y {
                            if let (Some(x), Some(y)) = (&x, &y) {
                                for line in evidence::runner_changes(x, y) {
                                    evidence.push(format!("[{name}] {line}"));
                                }
                            }
                            for line in evidence::of_file(path, x.as_deref(), y.as_deref(), false) {
                                let line = line.replace(
                                    "in a file this session added",
                                    "in a section this session added",
                                );
                                evidence.push(format!("[{name}] {line}"));
                            }
                        }
                    }
                    (CheckKind::Section, evidence, class)
                }
                // Unreadable as sections (say, JSON with comments): the
                // whole file is the check.
                _ => (
                    CheckKind::Config,
                    evidence::of_file(path, old, new, false),
                    Class::Config,
                ),
            }
        }
        Class::Inline => {
            let tests = |t: Option<&str>| t.map(|t| inline::tests_of(path, t));
            let (a, b) = (tests(old), tests(new));
            if a == b
                || (a.as_deref().unwrap_or("").is_empty() && b.as_deref().unwrap_or("").is_empty())
            {
                return None;
            }
            let mut evidence = evidence::of_file(path, a.as_deref(), b.as_deref(), true);
            if let Some(new) = new {
                evidence.extend(evidence::of_code(old, new));
            }
            (CheckKind::Inline, evidence, class)
        }
    };
    // What the diff did to the tests, by name: said in the notes, and a
    // test file that only gained whole new tests is judged as an added
    // one (no replay).
    let tests = match (kind, old, new) {
        (CheckKind::Test | CheckKind::Inline, Some(old), Some(new)) if readable => {
            evidence::test_changes(path, old, new)
        }
        (CheckKind::Test | CheckKind::Inline, None, Some(new)) if readable => {
            evidence::test_changes(path, "", new)
        }
        _ => evidence::TestChanges::default(),
    };
    let tests_added_only = tests.added_only && kind == CheckKind::Test && evidence.is_empty();
    // Every changed check shows what changed, even when no rule names it:
    // its first changed lines.
    let mut evidence = evidence;
    if evidence.is_empty() && readable && !tests_added_only {
        match (change, old, new) {
            (FileChange::Modified, Some(old), Some(new)) => {
                evidence = evidence::lines_changed(old, new);
            }
            (FileChange::Added, None, Some(new)) if tests.added.is_empty() => {
                let n = new.lines().count();
                evidence.push(format!(
                    "added, {n} line{}, no test named in it",
                    if n == 1 { "" } else { "s" }
                ));
            }
            _ => {}
        }
    }
    Some(Found {
        change: CheckChange {
            path: path.to_string(),
            kind,
            change,
            tests_added_only,
            evidence,
            tests_added: tests.added,
            tests_modified: tests.modified,
        },
        class,
        start,
    })
}

/// The file a replay writes for `found` in a copy whose current version of
/// it is `now` (`None`: delete it there; the copy keeps `now` as is when
/// the result equals it). Also says what it did.
pub fn restored(found: &Found, now: Option<&Content>) -> Result<(Option<Content>, Vec<String>)> {
    let path = &found.change.path;
    let at_start = || {
        let how = if now.is_none() {
            "put back (deleted)"
        } else {
            "as at the start"
        };
        (found.start.clone(), vec![format!("`{path}` {how}")])
    };
    let exec = now.is_some_and(|n| n.exec);
    let old = found.start.as_ref().and_then(Content::text);
    Ok(
        match (
            &found.class,
            found.change.change,
            now.and_then(Content::text),
        ) {
            // Adding a test never weakens.
            (Class::Test | Class::Inline, FileChange::Added, _) => (now.cloned(), Vec::new()),
            (Class::Sections(names), _, Some(new)) => {
                let text = sections::put_back(path, new, old.unwrap_or(""), names)?;
                let said = format!("`{path}`: {} as at the start", names.join(", "));
                (Some(Content::new(text.into_bytes(), exec)), vec![said])
            }
            (Class::Inline, _, Some(new)) if old.is_some() => {
                let (text, said) = inline::put_back(path, new, old.unwrap_or(""));
                let said = said.into_iter().map(|s| format!("`{path}`: {s}")).collect();
                (Some(Content::new(text.into_bytes(), exec)), said)
            }
            (_, FileChange::Added, _) => (None, vec![format!("`{path}` left out (added)")]),
            _ => at_start(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(text: &str) -> Option<Content> {
        Some(Content::new(text.as_bytes().to_vec(), false))
    }

    #[test]
    fn content_round_trips_bytes() {
        let bytes = vec![0xff, 0x00, b'a'];
        assert_eq!(Content::new(bytes.clone(), true).bytes(), bytes);
        assert_eq!(Content::new(b"ok".to_vec(), false).text(), Some("ok"));
    }

    #[test]
    fn a_manifest_edit_outside_the_check_sections_is_no_check_change() {
        let old = "[project]\ndependencies = []\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let new = old.replace("[]", "[\"requests\"]");
        let class = Class::Sections(vec!["tool.pytest".into()]);
        assert!(compare("pyproject.toml", class.clone(), content(old), content(&new)).is_none());
        let narrowed = old.replace("-q", "-q -k 'not test_add'");
        let f = compare("pyproject.toml", class, content(old), content(&narrowed)).expect("change");
        assert_eq!(f.change.kind, CheckKind::Section);
        assert!(
            f.change
                .evidence
                .iter()
                .any(|e| e.contains("[tool.pytest] runner option")),
            "{:?}",
            f.change.evidence
        );
    }

    #[test]
    fn code_only_edits_in_rust_are_no_check_change() {
        let old = "pub fn f() -> i32 { 1 }\n#[cfg(test)]\nmod tests { #[test] fn t() { assert_eq!(super::f(), 1); } }\n";
        let new = old.replace("{ 1 }", "{ 2 - 1 }");
        assert!(compare("src/lib.rs", Class::Inline, content(old), content(&new)).is_none());
        let weak = new.replace("assert_eq!(super::f(), 1);", "");
        let f = compare("src/lib.rs", Class::Inline, content(old), content(&weak)).expect("change");
        let (back, said) = restored(&f, content(&weak).as_ref()).expect("restored");
        let back = back.expect("a file").text().expect("text").to_string();
        assert!(
            back.contains("2 - 1") && back.contains("assert_eq!(super::f(), 1);"),
            "{back}"
        );
        assert!(!said.is_empty());
    }

    #[test]
    fn what_checks_read_is_told_from_the_code_under_test() {
        let put_back = ["pkg/calc_test.go", "tests/test_calc.py"];
        for input in [
            "fixtures/cases.json",
            "testdata/app/main.py",
            "src/__snapshots__/x.snap",
            "tests/data/big.csv",
            "spec/golden.txt",
            "pkg/golden.txt",
        ] {
            assert!(test_input(input, &put_back), "{input}");
        }
        for code in [
            "pkg/calc.go",
            "spec/parser.py",
            "src/calc.py",
            "golden.txt",
            "docs/a.md",
        ] {
            assert!(!test_input(code, &put_back), "{code}");
        }
    }

    #[test]
    fn added_tests_stay_and_added_config_is_left_out() {
        let test = compare(
            "tests/test_new.py",
            Class::Test,
            None,
            content("def test_x(): pass\n"),
        )
        .expect("added");
        assert_eq!(
            restored(&test, content("x").as_ref()).expect("r").0,
            content("x")
        );
        let hook = compare(
            "conftest.py",
            Class::Config,
            None,
            content("def pytest_runtest_makereport(): pass\n"),
        )
        .expect("added");
        assert_eq!(restored(&hook, content("x").as_ref()).expect("r").0, None);
    }
}
