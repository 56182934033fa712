//! The person's settings: `PROVE_IT_*` environment variables and the
//! directories prove-it keeps things in.
//!
//! This is the one place that reads `PROVE_IT_*` variables: everything else
//! receives the values, so a test or a dry run can never reach the person's
//! real state by accident. The policy gets its part in its event. A bad
//! value is never fatal: the default applies and the user is told.

use prove_it_gate::abi::Settings;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Settings plus the complaints about values that could not be used.
pub struct Loaded {
    /// What the policy is told.
    pub settings: Settings,
    pub dirs: Dirs,
    /// `PROVE_IT_POLICY`: `default`, `strict`, or a module path (trimmed;
    /// `None` when unset or blank).
    pub policy: Option<String>,
    /// `PROVE_IT_TIMINGS`: print where a hook's time went, on stderr.
    pub timings: bool,
    /// `PROVE_IT_PLUGIN_VERSION`, set by the plugin's launcher.
    pub plugin_version: Option<String>,
    /// `PROVE_IT_BIN_SOURCE`, set by the launcher: how it chose this binary
    /// (`PROVE_IT_BIN`, `downloaded`, `PATH` or `built`).
    pub bin_source: Option<String>,
    /// `PROVE_IT_INSTALL_NOTE`, set by the launcher when it has just
    /// downloaded this binary: the line that says so, shown once.
    pub install_note: Option<String>,
    /// Claude Code's configuration directory: `CLAUDE_CONFIG_DIR`, else
    /// `~/.claude` (for `doctor`, which looks for the installed plugin).
    pub claude_dir: Option<PathBuf>,
    /// Codex CLI's configuration directory: `CODEX_HOME`, else `~/.codex`
    /// (for `setup` and `doctor`).
    pub codex_dir: Option<PathBuf>,
    /// Gemini CLI's configuration directory: `~/.gemini`.
    pub gemini_dir: Option<PathBuf>,
    /// Copilot CLI's configuration directory: `~/.copilot`.
    pub copilot_dir: Option<PathBuf>,
    /// Qwen Code's configuration directory: `~/.qwen`.
    pub qwen_dir: Option<PathBuf>,
    /// pi's agent directory: `PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
    pub pi_dir: Option<PathBuf>,
    /// OpenCode's configuration directory: `$XDG_CONFIG_HOME/opencode`,
    /// else `~/.config/opencode`.
    pub opencode_dir: Option<PathBuf>,
    /// `HOME`, `TMPDIR` and the folders of `PATH`: where an agent host's
    /// sandbox lets commands write, and whether its helper is installed
    /// (for `doctor`).
    pub home: Option<PathBuf>,
    pub tmpdir: Option<PathBuf>,
    pub path: Vec<PathBuf>,
    /// `COPILOT_CLI=1`: Copilot CLI runs this hook, whatever host its
    /// command line names (Copilot also runs Claude Code's hooks from
    /// `.claude/settings.json`).
    pub under_copilot: bool,
    /// `GIT_EDITOR=:`, which git sets for its commit hooks when no editor
    /// will open on the message (for `prove-it trailer`).
    pub commit_without_editor: bool,
    /// What Copilot CLI needs to run a repository's hooks in `copilot -p`:
    /// `COPILOT_ALLOW_ALL=true` or `GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true`
    /// (for `doctor`).
    pub copilot_repo_hooks: bool,
    /// What the CI that runs `prove-it ci` says about the pull request.
    pub ci: CiEnv,
    pub notes: Vec<String>,
}

/// The CI's own variables that `prove-it ci` takes its defaults from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiEnv {
    /// `GITHUB_ACTIONS=true`: annotations are GitHub's `::warning` lines.
    pub github: bool,
    /// `GITHUB_BASE_REF`: the branch a pull request merges into.
    pub github_base_ref: Option<String>,
    /// `GITHUB_EVENT_PATH`: the event's JSON, which names the base commit
    /// of a pull request or a merge group.
    pub github_event_path: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: where the job's Markdown summary goes.
    pub github_step_summary: Option<PathBuf>,
    /// GitLab's `CI_MERGE_REQUEST_DIFF_BASE_SHA`: the merge request's base.
    pub gitlab_diff_base_sha: Option<String>,
    /// GitLab's `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`.
    pub gitlab_target_branch: Option<String>,
}

/// Reads settings from the process environment.
pub fn from_env() -> Loaded {
    from_lookup(|name| std::env::var_os(name))
}

/// Reads settings through `lookup` (the environment, or a test's map).
pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Loaded {
    let defaults = Settings::default();
    let mut notes = Vec::new();
    let dirs = Dirs::from_lookup(&lookup, &mut notes);
    let mut get = |name: &str| -> Option<String> {
        let raw = lookup(name)?;
        match raw.into_string() {
            Ok(value) => Some(value.trim().to_string()),
            Err(_) => {
                notes.push(format!(
                    "prove-it: `{name}` is not valid UTF-8; using its default."
                ));
                None
            }
        }
    };
    let policy = get("PROVE_IT_POLICY").filter(|v| !v.is_empty());
    let timings = lookup("PROVE_IT_TIMINGS").is_some();
    let plugin_version = get(PLUGIN_VERSION_VAR);
    let bin_source = get("PROVE_IT_BIN_SOURCE").filter(|v| !v.is_empty());
    let install_note = get("PROVE_IT_INSTALL_NOTE").filter(|v| !v.is_empty());
    let claude_dir = lookup("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| lookup("HOME").map(|home| PathBuf::from(home).join(".claude")));
    let home = lookup("HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    let codex_dir = lookup("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".codex")));
    let gemini_dir = home.as_ref().map(|home| home.join(".gemini"));
    let copilot_dir = home.as_ref().map(|home| home.join(".copilot"));
    let qwen_dir = home.as_ref().map(|home| home.join(".qwen"));
    let pi_dir = lookup("PI_CODING_AGENT_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".pi/agent")));
    let opencode_dir = lookup("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(|dir| PathBuf::from(dir).join("opencode"))
        .or_else(|| home.as_ref().map(|home| home.join(".config/opencode")));
    let tmpdir = lookup("TMPDIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let path = lookup("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let under_copilot = lookup("COPILOT_CLI").is_some_and(|v| v == "1");
    let commit_without_editor = lookup("GIT_EDITOR").is_some_and(|v| v == ":");
    let copilot_repo_hooks = ["COPILOT_ALLOW_ALL", "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS"]
        .iter()
        .any(|name| lookup(name).is_some_and(|v| v == "true"));
    let ci = CiEnv {
        github: get("GITHUB_ACTIONS").is_some_and(|v| v == "true"),
        github_base_ref: get("GITHUB_BASE_REF").filter(|v| !v.is_empty()),
        github_event_path: get("GITHUB_EVENT_PATH")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        github_step_summary: get("GITHUB_STEP_SUMMARY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        gitlab_diff_base_sha: get("CI_MERGE_REQUEST_DIFF_BASE_SHA").filter(|v| !v.is_empty()),
        gitlab_target_branch: get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME").filter(|v| !v.is_empty()),
    };
    let skip = get("PROVE_IT_SKIP");
    let ledger = get("PROVE_IT_LEDGER");
    let max_blocks = get("PROVE_IT_MAX_BLOCKS");
    let timeout = get("PROVE_IT_TIMEOUT");
    let settings = Settings {
        skip: flag("PROVE_IT_SKIP", skip, &mut notes),
        ledger: flag("PROVE_IT_LEDGER", ledger, &mut notes),
        max_blocks: number(
            "PROVE_IT_MAX_BLOCKS",
            max_blocks,
            (0, 1000),
            defaults.max_blocks,
            &mut notes,
        ),
        timeout_secs: number(
            "PROVE_IT_TIMEOUT",
            timeout,
            (1, MAX_TIMEOUT_SECS),
            defaults.timeout_secs,
            &mut notes,
        ),
    };
    Loaded {
        settings,
        dirs,
        policy,
        timings,
        plugin_version,
        bin_source,
        install_note,
        claude_dir,
        codex_dir,
        gemini_dir,
        copilot_dir,
        qwen_dir,
        pi_dir,
        opencode_dir,
        home,
        tmpdir,
        path,
        under_copilot,
        commit_without_editor,
        copilot_repo_hooks,
        ci,
        notes,
    }
}

fn flag(name: &str, value: Option<String>, notes: &mut Vec<String>) -> bool {
    match value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("" | "0" | "false" | "no" | "off") => false,
        Some("1" | "true" | "yes" | "on") => true,
        Some(other) => {
            notes.push(format!(
                "prove-it: `{name}={other}` is not understood (use 1 or 0); treating it as off."
            ));
            false
        }
    }
}

/// The plugin's Stop hook timeout is 3600 s; the gate must end a slow
/// `verify.sh` itself, before Claude Code gives up on the hook.
pub const MAX_TIMEOUT_SECS: u64 = 3000;

fn number<T>(
    name: &str,
    value: Option<String>,
    (min, max): (T, T),
    default: T,
    notes: &mut Vec<String>,
) -> T
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return default;
    };
    match value.parse::<T>() {
        Ok(n) if n >= min && n <= max => n,
        _ => {
            notes.push(format!(
                "prove-it: `{name}={value}` is not a whole number from {min} to {max}; using {default}."
            ));
            default
        }
    }
}

/// The `GIT_*` variables that make git (and gix) read another repository,
/// index or object store than the one found from the working directory.
const REPOSITORY_VARS: [&str; 9] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/// Removes [`REPOSITORY_VARS`] from this process's environment. The gate
/// judges the repository it finds from the event's `cwd` and runs that
/// repository's `verify.sh` there. With `GIT_WORK_TREE` (say, a dotfiles
/// setup) left in place, gix would fingerprint another directory, which
/// never changes, while `verify.sh`'s own `git` commands would check yet
/// another: a silent pass. Removed once, here, both are about the
/// repository the gate found. Configuration variables (`GIT_CONFIG_*`) stay.
///
/// # Safety
/// Call before any other thread exists (first thing in `main`): changing
/// the environment races with threads that read it.
pub unsafe fn scrub_repository_vars() {
    for var in REPOSITORY_VARS {
        if std::env::var_os(var).is_some() {
            // SAFETY: the caller guarantees no other thread exists.
            unsafe { std::env::remove_var(var) };
        }
    }
}

/// Sets `GIT_NO_REPLACE_OBJECTS` for this process, so that every git it
/// starts (the replay's copy, a pinned check read back, `verify.sh`'s own
/// `git diff --check`) reads objects as stored, as a fresh clone does
/// (it fetches no `refs/replace/`), never as a replace ref made in the
/// session says.
///
/// # Safety
/// Call before any other thread exists (first thing in `main`).
pub unsafe fn read_objects_as_stored() {
    // SAFETY: the caller guarantees no other thread exists.
    unsafe { std::env::set_var("GIT_NO_REPLACE_OBJECTS", "1") };
}

/// Where the `verify.sh` this process starts looks for code to import, by
/// the variables it inherits: `PYTHONPATH`, `NODE_PATH` and `VIRTUAL_ENV`
/// (for the throwaway copy, which must import its own code).
pub struct ImportPaths {
    pub python_path: Option<String>,
    pub node_path: Option<String>,
    pub virtual_env: Option<PathBuf>,
}

pub fn import_paths() -> ImportPaths {
    ImportPaths {
        python_path: std::env::var("PYTHONPATH").ok(),
        node_path: std::env::var("NODE_PATH").ok(),
        virtual_env: std::env::var_os("VIRTUAL_ENV").map(PathBuf::from),
    }
}

/// Set by the plugin's launcher to the plugin's version.
pub const PLUGIN_VERSION_VAR: &str = "PROVE_IT_PLUGIN_VERSION";

/// This host's version.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

impl Loaded {
    /// A message for the user when the plugin and this host are different
    /// versions (the policy ships in the host, the hooks in the plugin).
    pub fn version_mismatch(&self) -> Option<String> {
        version_mismatch(self.plugin_version.as_deref()?)
    }
}

fn version_mismatch(plugin: &str) -> Option<String> {
    if plugin == HOST_VERSION || plugin == "unknown" || plugin.is_empty() {
        return None;
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "prove-it".into());
    Some(format!(
        "prove-it: the plugin is version {plugin} but the installed `prove-it` ({exe}) is {HOST_VERSION}. Run `git checkout v{plugin} && ./install.sh` in your prove-it checkout (or install {plugin} another way), then restart Claude Code."
    ))
}

/// The directories prove-it keeps things in, each absolute and outside the
/// work tree it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// Session state, passed states, pins, git memo: `PROVE_IT_STATE_DIR`,
    /// else `$XDG_STATE_HOME/prove-it`, else `~/.local/state/prove-it`.
    pub state: PathBuf,
    /// Compiled policies: `PROVE_IT_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/prove-it`, else `~/.cache/prove-it`.
    pub cache: PathBuf,
    /// The ledger: `PROVE_IT_LEDGER_DIR`, else `~/.prove-it`.
    pub ledger: PathBuf,
    /// Git's own global excludes file when `core.excludesFile` is not set:
    /// `$XDG_CONFIG_HOME/git/ignore`, else `~/.config/git/ignore`. The memo
    /// of untracked files watches it (a rule added there hides files).
    pub git_excludes: PathBuf,
    /// The person's `GIT_CONFIG_COUNT`: settings a replay passes git go
    /// after the ones the person's environment passes.
    pub git_config_count: usize,
    /// What each would be without its `PROVE_IT_*` variable.
    defaults: [PathBuf; 3],
}

/// The variables that name the three directories, in [`Dirs`] order.
const DIR_VARS: [&str; 3] = [
    "PROVE_IT_STATE_DIR",
    "PROVE_IT_CACHE_DIR",
    "PROVE_IT_LEDGER_DIR",
];

impl Dirs {
    /// Reads the directories through `lookup`. A relative path is refused:
    /// it would be resolved against whatever directory the hook runs in,
    /// which follows the agent's `cd`, and inside a work tree every write
    /// of state would be a change to it.
    fn from_lookup(lookup: &impl Fn(&str) -> Option<OsString>, notes: &mut Vec<String>) -> Dirs {
        let absolute = |name: &str| {
            lookup(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        // Relative XDG values are to be ignored (XDG Base Directory spec).
        let home = absolute("HOME").unwrap_or_else(std::env::temp_dir);
        let xdg = |var: &str, fallback: &str| {
            absolute(var)
                .map(|base| base.join("prove-it"))
                .unwrap_or_else(|| home.join(fallback).join("prove-it"))
        };
        let defaults = [
            xdg("XDG_STATE_HOME", ".local/state"),
            xdg("XDG_CACHE_HOME", ".cache"),
            home.join(".prove-it"),
        ];
        let [state, cache, ledger] = std::array::from_fn(|i| {
            let var = DIR_VARS[i];
            match lookup(var).filter(|v| !v.is_empty()).map(PathBuf::from) {
                Some(path) if path.is_absolute() => path,
                Some(path) => {
                    notes.push(format!(
                        "prove-it: `{var}={}` is not an absolute path, so it is not used; using `{}`. Set it to an absolute path.",
                        path.display(),
                        defaults[i].display()
                    ));
                    defaults[i].clone()
                }
                None => defaults[i].clone(),
            }
        });
        let git_excludes = absolute("XDG_CONFIG_HOME")
            .unwrap_or_else(|| home.join(".config"))
            .join("git/ignore");
        let git_config_count = lookup("GIT_CONFIG_COUNT")
            .and_then(|n| n.to_str()?.parse().ok())
            .unwrap_or(0);
        Dirs {
            state,
            cache,
            ledger,
            git_excludes,
            git_config_count,
            defaults,
        }
    }

    /// These directories for the work tree at `root`: one inside it is
    /// replaced by its default (or, when that is inside too, a folder in the
    /// temp dir), and the user is told. Written inside the tree, state would
    /// change the tree at every stop: read-only sessions would be blocked
    /// and a passed state would never match again.
    pub fn outside(&self, root: &Path, notes: &mut Vec<String>) -> Dirs {
        let mut out = self.clone();
        let fields = [&mut out.state, &mut out.cache, &mut out.ledger];
        for (i, dir) in fields.into_iter().enumerate() {
            if !inside(dir, root) {
                continue;
            }
            let kind = ["state", "cache", "ledger"][i];
            let replacement = if inside(&self.defaults[i], root) {
                std::env::temp_dir().join(format!("prove-it-{}-{kind}", user_id()))
            } else {
                self.defaults[i].clone()
            };
            notes.push(format!(
                "prove-it: the {kind} directory `{}` is inside the work tree `{}`, where every write would count as a change; using `{}`. Set `{}` to a directory outside your repositories.",
                dir.display(),
                root.display(),
                replacement.display(),
                DIR_VARS[i]
            ));
            *dir = replacement;
        }
        out
    }
}

/// Whether `dir` (which may not exist yet) lies in the work tree at `root`
/// (a resolved path), however either is spelled.
fn inside(dir: &Path, root: &Path) -> bool {
    dir.starts_with(root) || resolved(dir).starts_with(root)
}

/// `path` with symlinks resolved as far as it exists.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn user_id() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(pairs: &[(&str, &str)]) -> Loaded {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_without_environment() {
        let loaded = load(&[("HOME", "/home/me")]);
        assert_eq!(loaded.settings, Settings::default());
        assert!(loaded.notes.is_empty());
        assert_eq!(
            loaded.dirs.state,
            Path::new("/home/me/.local/state/prove-it")
        );
        assert_eq!(loaded.dirs.cache, Path::new("/home/me/.cache/prove-it"));
        assert_eq!(loaded.dirs.ledger, Path::new("/home/me/.prove-it"));
    }

    /// Issue 14, defect 3: a relative state dir (easy to write in
    /// settings.json's `env`) would put state wherever the hook runs.
    #[test]
    fn relative_dirs_are_refused_and_reported() {
        let loaded = load(&[
            ("HOME", "/home/me"),
            ("XDG_STATE_HOME", "relative/xdg"),
            ("PROVE_IT_STATE_DIR", ".prove-it-state"),
            ("PROVE_IT_CACHE_DIR", "cache"),
            ("PROVE_IT_LEDGER_DIR", "/abs/ledger"),
        ]);
        assert_eq!(
            loaded.dirs.state,
            Path::new("/home/me/.local/state/prove-it")
        );
        assert_eq!(loaded.dirs.cache, Path::new("/home/me/.cache/prove-it"));
        assert_eq!(loaded.dirs.ledger, Path::new("/abs/ledger"));
        assert_eq!(loaded.notes.len(), 2, "{:?}", loaded.notes);
        assert!(loaded.notes[0].contains("PROVE_IT_STATE_DIR=.prove-it-state"));
        assert!(loaded.notes[0].contains("not an absolute path"));
    }

    #[test]
    fn a_dir_inside_the_work_tree_is_replaced() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = std::fs::canonicalize(tmp.path()).expect("root");
        let home = root.join("home");
        let inside_state = root.join("repo/.state");
        let loaded = load(&[
            ("HOME", home.to_str().expect("utf-8")),
            ("PROVE_IT_STATE_DIR", inside_state.to_str().expect("utf-8")),
        ]);
        let repo = root.join("repo");
        let mut notes = Vec::new();
        let dirs = loaded.dirs.outside(&repo, &mut notes);
        assert_eq!(dirs.state, home.join(".local/state/prove-it"));
        assert_eq!(dirs.cache, loaded.dirs.cache);
        assert_eq!(notes.len(), 1, "{notes:?}");
        // A work tree at HOME (dotfiles): the defaults are inside too.
        let loaded = load(&[("HOME", home.to_str().expect("utf-8"))]);
        let mut notes = Vec::new();
        let dirs = loaded.dirs.outside(&home, &mut notes);
        assert!(!dirs.state.starts_with(&home), "{dirs:?}");
        assert!(!dirs.cache.starts_with(&home), "{dirs:?}");
        assert!(!dirs.ledger.starts_with(&home), "{dirs:?}");
        assert_eq!(notes.len(), 3, "{notes:?}");
    }

    #[test]
    fn values_are_read() {
        let loaded = load(&[
            ("PROVE_IT_SKIP", "1"),
            ("PROVE_IT_LEDGER", "true"),
            ("PROVE_IT_MAX_BLOCKS", "0"),
            ("PROVE_IT_TIMEOUT", "7"),
        ]);
        let s = loaded.settings;
        assert!(s.skip && s.ledger);
        assert_eq!((s.max_blocks, s.timeout_secs), (0, 7));
    }

    #[test]
    fn bad_values_fall_back_and_are_reported() {
        let loaded = load(&[
            ("PROVE_IT_MAX_BLOCKS", "many"),
            ("PROVE_IT_TIMEOUT", "0"),
            ("PROVE_IT_SKIP", "maybe"),
        ]);
        assert_eq!(loaded.settings, Settings::default());
        assert_eq!(loaded.notes.len(), 3, "{:?}", loaded.notes);
        let too_long = load(&[("PROVE_IT_TIMEOUT", "3601")]);
        assert_eq!(too_long.settings.timeout_secs, 300);
        assert_eq!(too_long.notes.len(), 1);
    }
}
