//! `prove-it setup codex|gemini|copilot|qwen|pi|opencode [DIR] [--user]`: wire the gate
//! into another agent host's hook file, merging with the hooks already
//! there, and (for Codex) trust what it wrote, since Codex skips untrusted
//! hooks without a word. `prove-it doctor` reads the same files back
//! ([`check`]).
//!
//! pi and OpenCode have no hook files: `extension.rs` writes their file.
//! Claude Code needs none of this: its plugin carries its hooks.

use crate::agent::{Agent, HookEvent};
use crate::capability::git;
use crate::commands::extension;
use crate::fs::write_atomic;
use crate::settings::{self, Loaded};
use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The events each host is wired for, with the hook's timeout in seconds.
/// The stop's is long: `verify.sh` may run for `PROVE_IT_TIMEOUT` (300 s by
/// default) and a host that kills the hook first would end the turn unchecked.
fn events(agent: Agent) -> &'static [(HookEvent, u64)] {
    match agent {
        Agent::Codex => &[
            (HookEvent::SessionStart, 60),
            (HookEvent::UserPromptSubmit, 30),
            (HookEvent::Stop, 3600),
        ],
        Agent::Gemini => &[
            (HookEvent::SessionStart, 60),
            (HookEvent::BeforeAgent, 30),
            (HookEvent::AfterAgent, 3600),
        ],
        Agent::Copilot => &[
            (HookEvent::SessionStart, 60),
            (HookEvent::UserPromptSubmit, 30),
            (HookEvent::Stop, 3600),
        ],
        // Qwen's UserPromptSubmit is not a turn start (qwen.rs).
        Agent::Qwen => &[(HookEvent::SessionStart, 60), (HookEvent::Stop, 3600)],
        // Wired by a file of code (extension.rs); Claude Code by its plugin.
        Agent::Pi | Agent::Opencode | Agent::ClaudeCode => &[],
    }
}

/// Where a host keeps its hooks, for one repository or for the person.
struct Place {
    /// The hook file.
    file: PathBuf,
    /// The repository, when the hooks are the repository's own.
    repo: Option<PathBuf>,
}

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home(loaded: &Loaded) -> Result<PathBuf> {
    loaded
        .codex_dir
        .clone()
        .context("neither CODEX_HOME nor HOME is set, so Codex's config cannot be found")
}

/// `~/.gemini`, `~/.copilot`, `~/.qwen`.
fn home_dir(dir: &Option<PathBuf>, title: &str) -> Result<PathBuf> {
    dir.clone()
        .with_context(|| format!("HOME is not set, so {title}'s config cannot be found"))
}

fn place(agent: Agent, root: Option<&Path>, loaded: &Loaded) -> Result<Place> {
    let (file, repo) = match (agent, root) {
        (Agent::Codex, Some(root)) => (root.join(".codex/hooks.json"), Some(root)),
        (Agent::Codex, None) => (codex_home(loaded)?.join("hooks.json"), None),
        (Agent::Gemini, Some(root)) => (root.join(".gemini/settings.json"), Some(root)),
        (Agent::Gemini, None) => (
            home_dir(&loaded.gemini_dir, "Gemini")?.join("settings.json"),
            None,
        ),
        (Agent::Copilot, Some(root)) => (root.join(".github/hooks/prove-it.json"), Some(root)),
        (Agent::Copilot, None) => (
            home_dir(&loaded.copilot_dir, "Copilot")?.join("hooks/prove-it.json"),
            None,
        ),
        (Agent::Qwen, Some(root)) => (root.join(".qwen/settings.json"), Some(root)),
        (Agent::Qwen, None) => (
            home_dir(&loaded.qwen_dir, "Qwen")?.join("settings.json"),
            None,
        ),
        (Agent::ClaudeCode, _) => bail!(
            "Claude Code needs no setup: install the plugin (README.md shows the three lines)"
        ),
        (Agent::Pi | Agent::Opencode, _) => bail!(
            "{} has no hook file: its wiring is a file of code (extension.rs)",
            agent.adapter().title()
        ),
    };
    Ok(Place {
        file,
        repo: repo.map(Path::to_path_buf),
    })
}

/// The command line a hook runs: this binary, by its absolute path (the
/// hosts run hooks with their own PATH, which may not find it).
fn command_line(exe: &Path, agent: Agent, event: HookEvent) -> String {
    let name = event
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    format!(
        "{} hook --agent {} {name}",
        sh_quote(&exe.display().to_string()),
        agent.name()
    )
}

/// Quotes `text` for POSIX sh when it needs it.
fn sh_quote(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain && !text.is_empty() {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Whether a hook command is one prove-it wrote for `agent`.
fn is_ours(command: &str, agent: Agent) -> bool {
    command.contains(&format!(" hook --agent {} ", agent.name()))
}

/// One hook as the host's file holds it.
fn hook_entry(agent: Agent, command: &str, event: HookEvent, timeout_secs: u64) -> Value {
    match agent {
        // Gemini counts milliseconds and names each hook.
        Agent::Gemini => json!({
            "type": "command",
            "name": format!("prove-it {}", event.host_name()),
            "command": command,
            "timeout": timeout_secs * 1000,
        }),
        // Qwen counts seconds, but reads 1000 and over as milliseconds.
        Agent::Qwen if timeout_secs >= 1000 => {
            json!({"type": "command", "command": command, "timeout": timeout_secs * 1000})
        }
        _ => json!({"type": "command", "command": command, "timeout": timeout_secs}),
    }
}

pub fn execute(agent: Agent, dir: &Path, user: bool) -> Result<ExitCode> {
    let root = git::discover(dir).with_context(|| {
        format!(
            "`{}` is not inside a git repository: run this in the repository to gate",
            dir.display()
        )
    })?;
    let loaded = settings::from_env();
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot tell where this prove-it binary is")?;
    if extension::is_code(agent) {
        extension::install(agent, (!user).then_some(root.as_path()), &exe, &loaded)?;
        return Ok(ExitCode::SUCCESS);
    }
    let place = place(agent, (!user).then_some(root.as_path()), &loaded)?;
    let title = agent.adapter().title();

    let mut doc = read_json(&place.file)?;
    let mut wired = Vec::new();
    for (event, timeout) in events(agent) {
        let command = command_line(&exe, agent, *event);
        let entry = hook_entry(agent, &command, *event, *timeout);
        let group = merge(
            &mut doc,
            &place.file,
            agent,
            event.host_name(),
            entry.clone(),
        )?;
        wired.push((*event, group, entry));
    }
    if let Some(dir) = place.file.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let mut text = serde_json::to_string_pretty(&doc).context("cannot encode the hooks")?;
    text.push('\n');
    write_atomic(&place.file, text.as_bytes())?;
    outln!(
        "prove-it setup {}: {title} now runs the gate from `{}`:",
        agent.name(),
        place.file.display()
    );
    for (event, _, _) in &wired {
        outln!(
            "  {:<16} {}",
            event.host_name(),
            command_line(&exe, agent, *event)
        );
    }
    if agent == Agent::Codex {
        let config = codex_home(&loaded)?.join("config.toml");
        trust_codex(&config, &place, &wired)?;
        outln!(
            "  trusted in `{}` (Codex skips hooks it does not trust, silently){}",
            config.display(),
            if place.repo.is_some() {
                "; the repository is marked trusted there too (Codex ignores an untrusted repository's .codex/)"
            } else {
                ""
            }
        );
    }
    if agent == Agent::Gemini && place.repo.is_some() {
        outln!(
            "  Gemini runs a repository's hooks only in a trusted folder: trust this one when Gemini asks (or set GEMINI_CLI_TRUST_WORKSPACE=true)."
        );
    }
    if agent == Agent::Copilot && place.repo.is_some() {
        outln!(
            "  Copilot runs a repository's hooks only in a trusted folder: trust this one when Copilot asks; `copilot -p` needs --trust-folder, or COPILOT_ALLOW_ALL=true, or GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true, and skips them silently otherwise (`prove-it setup copilot --user` wires ~/.copilot/hooks, which always run)."
        );
    }
    if agent == Agent::Copilot {
        outln!(
            "  In `copilot -p` a yield, a skip or a gate error is shown as a hook warning (`! prove-it: ...`); `prove-it status` says every verdict."
        );
    }
    if agent == Agent::Qwen && place.repo.is_some() {
        outln!(
            "  Qwen runs a repository's hooks unless its folder trust is on and this folder is not trusted (then it skips them silently)."
        );
    }
    outln!(
        "The hooks name this binary by its path: run `prove-it setup {}` again if it moves. `prove-it doctor` checks the wiring.",
        agent.name()
    );
    Ok(ExitCode::SUCCESS)
}

/// The JSON in `file`, `{}` when there is none yet.
fn read_json(file: &Path) -> Result<Value> {
    match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => Ok(json!({})),
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "`{}` is not plain JSON (comments are not kept by a rewrite), so it was left as it is: fix it or add the hooks by hand (ADAPTERS.md shows them)",
                file.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    }
}

/// Puts `entry` in a group of its own under `hooks.<event>`, after taking out
/// any hook prove-it wrote there before; every other hook stays as it was.
/// Returns the group's index.
fn merge(doc: &mut Value, file: &Path, agent: Agent, event: &str, entry: Value) -> Result<usize> {
    let shape = || {
        format!(
            "`{}` has a `hooks` that is not in the host's shape, so it was left as it is",
            file.display()
        )
    };
    let root = doc.as_object_mut().with_context(shape)?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .with_context(shape)?;
    let groups = hooks
        .entry(event)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .with_context(shape)?;
    for group in groups.iter_mut() {
        if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            list.retain(|h| !h["command"].as_str().is_some_and(|c| is_ours(c, agent)));
        }
    }
    groups.retain(|g| g["hooks"].as_array().is_none_or(|l| !l.is_empty()));
    groups.push(json!({"hooks": [entry]}));
    Ok(groups.len() - 1)
}

/// Codex's name for an event in its trust keys.
fn snake(event: HookEvent) -> &'static str {
    match event {
        HookEvent::SessionStart => "session_start",
        HookEvent::UserPromptSubmit => "user_prompt_submit",
        _ => "stop",
    }
}

/// The key and hash under which Codex records that it trusts one hook.
fn codex_trust(file: &Path, event: HookEvent, group: usize, entry: &Value) -> (String, String) {
    let key = format!("{}:{}:{group}:0", file.display(), snake(event));
    // Codex hashes the hook as compact JSON with sorted keys (serde_json's
    // map is sorted) and its defaults filled in.
    let normal = json!({
        "event_name": snake(event),
        "hooks": [{
            "async": false,
            "command": entry["command"],
            "timeout": entry["timeout"],
            "type": "command",
        }],
    });
    let hash = Sha256::digest(normal.to_string().as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    (key, format!("sha256:{hex}"))
}

fn trust_codex(config: &Path, place: &Place, wired: &[(HookEvent, usize, Value)]) -> Result<()> {
    let text = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", config.display())),
    };
    let mut doc: toml_edit::DocumentMut = text.parse().with_context(|| {
        format!(
            "`{}` is not valid TOML, so the hooks could not be trusted: fix it and run this again",
            config.display()
        )
    })?;
    for (event, group, entry) in wired {
        let (key, hash) = codex_trust(&place.file, *event, *group, entry);
        let state = implicit_table(&mut doc, &["hooks", "state"])?;
        let mut table = toml_edit::Table::new();
        table.insert("trusted_hash", toml_edit::value(hash));
        state.insert(&key, toml_edit::Item::Table(table));
    }
    if let Some(repo) = &place.repo {
        let projects = implicit_table(&mut doc, &["projects"])?;
        let key = repo.display().to_string();
        if !projects.contains_key(&key) {
            let mut table = toml_edit::Table::new();
            table.insert("trust_level", toml_edit::value("trusted"));
            projects.insert(&key, toml_edit::Item::Table(table));
        }
    }
    if let Some(dir) = config.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    write_atomic(config, doc.to_string().as_bytes())
}

/// The table at `path` in `doc`, made (without a header of its own) when missing.
fn implicit_table<'a>(
    doc: &'a mut toml_edit::DocumentMut,
    path: &[&str],
) -> Result<&'a mut toml_edit::Table> {
    let mut table = doc.as_table_mut();
    for name in path {
        let item = table.entry(name).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        });
        table = item
            .as_table_mut()
            .with_context(|| format!("`{name}` in the Codex config is not a table"))?;
    }
    Ok(table)
}

pub use super::extension::Wiring;

/// Reads back what [`execute`] wrote, in the repository or the person's
/// config, and says whether the host would really run it.
pub fn check(agent: Agent, root: &Path, loaded: &Loaded) -> Wiring {
    if extension::is_code(agent) {
        return extension::check(agent, root, loaded);
    }
    let mut found = None;
    for place in [place(agent, Some(root), loaded), place(agent, None, loaded)]
        .into_iter()
        .flatten()
    {
        let Ok(doc) = read_json(&place.file) else {
            continue;
        };
        let mut ours = Vec::new();
        for (event, _) in events(agent) {
            let groups = doc["hooks"][event.host_name()].as_array().cloned();
            let hit = groups.iter().flatten().enumerate().find_map(|(g, group)| {
                let hook = group["hooks"].get(0)?;
                let command = hook["command"].as_str()?;
                is_ours(command, agent).then(|| (*event, g, hook.clone()))
            });
            ours.extend(hit);
        }
        if !ours.is_empty() {
            found = Some((place, ours));
            break;
        }
    }
    let Some((place, ours)) = found else {
        return Wiring {
            file: None,
            problem: None,
        };
    };
    let problem = wiring_problem(agent, &place, &ours, loaded);
    Wiring {
        file: Some(place.file),
        problem,
    }
}

/// What may still keep a host from running hooks that are wired and would
/// run: the trust that Copilot and Qwen ask for, which prove-it cannot
/// read or set (`None`: nothing known to stand in the way).
pub fn trust_caveat(agent: Agent, file: &Path, root: &Path, loaded: &Loaded) -> Option<String> {
    if extension::is_code(agent) {
        return extension::caveat(agent, file, root, loaded);
    }
    let in_repo = file.starts_with(root);
    match agent {
        Agent::Copilot if in_repo && !loaded.copilot_repo_hooks => Some(
            "untrusted in `copilot -p` unless run with --trust-folder (COPILOT_ALLOW_ALL=true and GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true are not set here): it skips a repository's hooks silently; `prove-it setup copilot --user` wires hooks that always run".to_string(),
        ),
        Agent::Qwen if in_repo => {
            let settings = read_json(&home_dir(&loaded.qwen_dir, "Qwen").ok()?.join("settings.json")).ok()?;
            (settings["security"]["folderTrust"]["enabled"] == true).then(|| {
                "Qwen's folder trust is on (~/.qwen/settings.json): it skips this repository's hooks silently unless you trusted this folder".to_string()
            })
        }
        _ => None,
    }
}

fn wiring_problem(
    agent: Agent,
    place: &Place,
    ours: &[(HookEvent, usize, Value)],
    loaded: &Loaded,
) -> Option<String> {
    let rerun = format!("run `prove-it setup {}`", agent.name());
    let missing: Vec<&str> = events(agent)
        .iter()
        .filter(|(e, _)| !ours.iter().any(|(o, _, _)| o == e))
        .map(|(e, _)| e.host_name())
        .collect();
    if !missing.is_empty() {
        return Some(format!("no {} hook: {rerun}", missing.join(", ")));
    }
    for (_, _, hook) in ours {
        let command = hook["command"].as_str().unwrap_or_default();
        let exe = command
            .split(" hook --agent ")
            .next()
            .unwrap_or_default()
            .trim_matches('\'');
        if !Path::new(exe).is_file() {
            return Some(format!(
                "the hooks run `{exe}`, which is not there: {rerun} with the prove-it you have now"
            ));
        }
    }
    if agent != Agent::Codex {
        return None;
    }
    let config = codex_home(loaded).ok()?.join("config.toml");
    let doc: toml_edit::DocumentMut = std::fs::read_to_string(&config)
        .unwrap_or_default()
        .parse()
        .ok()?;
    for (event, group, hook) in ours {
        let (key, hash) = codex_trust(&place.file, *event, *group, hook);
        let trusted = doc
            .get("hooks")
            .and_then(|h| h.get("state"))
            .and_then(|s| s.get(&key))
            .and_then(|t| t.get("trusted_hash"))
            .and_then(|h| h.as_str());
        if trusted != Some(hash.as_str()) {
            return Some(format!(
                "Codex does not trust the {} hook (it skips it without a word): {rerun}",
                event.host_name()
            ));
        }
    }
    if let Some(repo) = &place.repo {
        let level = doc
            .get("projects")
            .and_then(|p| p.get(repo.display().to_string()))
            .and_then(|t| t.get("trust_level"))
            .and_then(|l| l.as_str());
        if level != Some("trusted") {
            return Some(format!(
                "Codex does not trust this repository, so it ignores its .codex/: {rerun}, or `codex exec --trust` once"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_spaces_is_quoted_for_sh() {
        assert_eq!(sh_quote("/usr/bin/prove-it"), "/usr/bin/prove-it");
        assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn merging_keeps_other_hooks_and_replaces_its_own() {
        let file = Path::new("/r/.codex/hooks.json");
        let mut doc = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "lint"}]}]}, "x": 1});
        let ours = json!({"type": "command", "command": "/p hook --agent codex stop"});
        assert_eq!(
            merge(&mut doc, file, Agent::Codex, "Stop", ours.clone()).expect("merges"),
            1
        );
        assert_eq!(
            merge(&mut doc, file, Agent::Codex, "Stop", ours).expect("again"),
            1
        );
        assert_eq!(doc["hooks"]["Stop"][0]["hooks"][0]["command"], "lint");
        assert_eq!(doc["hooks"]["Stop"].as_array().expect("list").len(), 2);
        assert_eq!(doc["x"], 1);
    }
}
