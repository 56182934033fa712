//! Whether Claude Code would run prove-it in a repository, read from its
//! own files, for `prove-it doctor`: the plugin (installed, and enabled by
//! the settings that apply here) or hooks wired by hand in a settings file.
//!
//! Claude Code loads a plugin when `~/.claude/plugins/installed_plugins.json`
//! lists it for this repository (scope `user`, or `project`/`local` with
//! this repository's path) and the last settings file that names it in
//! `enabledPlugins` says `true`: `claude plugin disable --scope local`
//! writes `false` into `.claude/settings.local.json`, and only that
//! repository stops running it. `disableAllHooks: true` stops every hook,
//! the plugin's included.

use crate::settings::Loaded;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The plugin's name as Claude Code keys it: plugin@marketplace.
pub const PLUGIN: &str = "prove-it@whynext";

/// Claude Code's settings, in the order it applies them (later wins for
/// one value; lists add up): the person's, the repository's, the
/// repository's local ones, then the managed ones an administrator sets.
pub fn settings(root: &Path, loaded: &Loaded) -> Vec<(PathBuf, Value)> {
    let mut files = Vec::new();
    if let Some(dir) = &loaded.claude_dir {
        files.push(dir.join("settings.json"));
    }
    files.push(root.join(".claude/settings.json"));
    files.push(root.join(".claude/settings.local.json"));
    files.push(PathBuf::from(if cfg!(target_os = "macos") {
        "/Library/Application Support/ClaudeCode/managed-settings.json"
    } else {
        "/etc/claude-code/managed-settings.json"
    }));
    files
        .into_iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(&file).ok()?;
            let doc = serde_json::from_str(&text).ok()?;
            Some((file, doc))
        })
        .collect()
}

/// The plugin as Claude Code would load it in one repository.
pub enum Plugin {
    /// Not installed for this repository.
    NotInstalled,
    /// Installed (these versions), but the settings that apply here do
    /// not enable it: the file that says so last, if any says so.
    Disabled {
        versions: Vec<String>,
        by: Option<PathBuf>,
    },
    /// Installed and enabled here, by this settings file.
    Enabled { versions: Vec<String>, by: PathBuf },
}

pub fn plugin(root: &Path, loaded: &Loaded, layers: &[(PathBuf, Value)]) -> Plugin {
    let versions = installed_versions(root, loaded);
    if versions.is_empty() {
        return Plugin::NotInstalled;
    }
    let last = layers.iter().rev().find_map(|(file, doc)| {
        let on = doc["enabledPlugins"].get(PLUGIN)?;
        Some((file.clone(), on.as_bool() == Some(true)))
    });
    match last {
        Some((by, true)) => Plugin::Enabled { versions, by },
        Some((by, false)) => Plugin::Disabled {
            versions,
            by: Some(by),
        },
        None => Plugin::Disabled { versions, by: None },
    }
}

/// The versions `installed_plugins.json` lists for this repository: each
/// install of scope `user`, and those of another scope made in this
/// repository. Both of its layouts are read: one install per plugin
/// (version 1) or a list of them (version 2).
fn installed_versions(root: &Path, loaded: &Loaded) -> Vec<String> {
    let Some(dir) = &loaded.claude_dir else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(dir.join("plugins/installed_plugins.json")) else {
        return Vec::new();
    };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let installs = match &doc["plugins"][PLUGIN] {
        Value::Array(list) => list.clone(),
        one @ Value::Object(_) => vec![one.clone()],
        _ => Vec::new(),
    };
    let here = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut versions: Vec<String> = installs
        .iter()
        .filter(
            |install| match install["scope"].as_str().unwrap_or("user") {
                "user" | "managed" => true,
                _ => install["projectPath"].as_str().is_some_and(|p| {
                    std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p)) == here
                }),
            },
        )
        .map(|install| install["version"].as_str().unwrap_or("?").to_string())
        .collect();
    versions.sort();
    versions.dedup();
    versions
}

/// Hooks that run `prove-it hook ...`, wired by hand in one settings file.
pub struct HandWired {
    pub file: PathBuf,
    /// The events wired, by Claude Code's names.
    pub events: Vec<&'static str>,
    /// The program a Stop hook runs, as written.
    pub program: Option<String>,
}

/// The events a hand-wired gate needs, by Claude Code's names.
pub const EVENTS: [&str; 3] = ["SessionStart", "UserPromptSubmit", "Stop"];

/// Every settings file here that wires prove-it's hooks by hand.
pub fn hand_wired(layers: &[(PathBuf, Value)]) -> Vec<HandWired> {
    layers
        .iter()
        .filter_map(|(file, doc)| {
            let mut events = Vec::new();
            let mut program = None;
            for event in EVENTS {
                let commands = doc["hooks"][event]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
                    .filter_map(|hook| hook["command"].as_str().map(str::to_string));
                for command in commands {
                    let Some(at) = command.find(" hook ") else {
                        continue;
                    };
                    let exe = command[..at].trim().trim_matches(['\'', '"']);
                    if Path::new(exe)
                        .file_name()
                        .is_none_or(|name| name != "prove-it")
                    {
                        continue;
                    }
                    if !events.contains(&event) {
                        events.push(event);
                    }
                    if event == "Stop" {
                        program = Some(exe.to_string());
                    }
                }
            }
            (!events.is_empty()).then(|| HandWired {
                file: file.clone(),
                events,
                program,
            })
        })
        .collect()
}

/// Where a hook's program is found: a path as written (the shell that
/// runs it expands `~/`, `$HOME/` and `$CLAUDE_PROJECT_DIR/`), or a bare
/// name on `path`.
pub fn find_program(program: &str, root: &Path, loaded: &Loaded) -> Option<PathBuf> {
    if program.contains('/') {
        let home = ["~/", "$HOME/", "${HOME}/"]
            .iter()
            .find_map(|p| program.strip_prefix(p));
        let project = ["$CLAUDE_PROJECT_DIR/", "${CLAUDE_PROJECT_DIR}/"]
            .iter()
            .find_map(|p| program.strip_prefix(p));
        let program = match (home, project) {
            (Some(rest), _) => loaded.home.as_ref()?.join(rest),
            (_, Some(rest)) => root.join(rest),
            _ => PathBuf::from(program),
        };
        return program.is_file().then_some(program);
    }
    loaded
        .path
        .iter()
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// The settings file that turns every hook off here, if one does (the last
/// one to say `disableAllHooks`).
pub fn all_hooks_off(layers: &[(PathBuf, Value)]) -> Option<PathBuf> {
    layers
        .iter()
        .rev()
        .find_map(|(file, doc)| Some((file, doc.get("disableAllHooks")?.as_bool()?)))
        .and_then(|(file, off)| off.then(|| file.clone()))
}
