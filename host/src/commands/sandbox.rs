//! What an agent host's sandbox keeps out of the agent's reach, read from
//! the host's own settings, for `prove-it doctor` (SPEC.md, "What the gate
//! defends against").
//!
//! The gate's state, its program and the plugin live in the person's own
//! account. An agent whose shell can write there can rewrite them, and no
//! check inside the gate can tell (the gate would be judging with what the
//! agent wrote). What keeps them out of reach is the host's sandbox: Claude
//! Code's (`sandbox.enabled`) and Codex CLI's (`sandbox_mode =
//! "workspace-write"`) let the agent's commands write the work tree and the
//! temp dir, not the person's home. Hooks run outside it, so the gate still
//! writes its state. This reads the settings; it cannot see a flag the host
//! is started with.

use crate::settings::Loaded;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the gate needs kept out of the agent's reach, by name.
pub struct Guarded {
    pub items: Vec<(&'static str, PathBuf)>,
}

impl Guarded {
    pub fn new(loaded: &Loaded) -> Guarded {
        let mut items = vec![
            ("the state dir", loaded.dirs.state.clone()),
            ("the policy cache", loaded.dirs.cache.clone()),
        ];
        if let Ok(exe) = std::env::current_exe() {
            items.push(("the program", exe));
        }
        if let Some(claude) = &loaded.claude_dir {
            items.push(("the plugin", claude.join("plugins")));
        }
        Guarded { items }
    }

    /// The items under one of `writable` (each with the root that lets the
    /// agent write it), in order.
    fn reachable(&self, writable: &[PathBuf]) -> Vec<String> {
        self.items
            .iter()
            .filter_map(|(what, path)| {
                let path = resolved(path);
                let root = writable
                    .iter()
                    .find(|root| path.starts_with(resolved(root)))?;
                Some(format!(
                    "{what} ({} is under `{}`)",
                    path.display(),
                    root.display()
                ))
            })
            .collect()
    }
}

/// `path` with symbolic links resolved as far as it exists, so that
/// `/tmp/x` and `/private/tmp/x` (macOS) compare as one.
fn resolved(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut head = path.as_path();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = head.canonicalize() {
            return tail.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                head = parent;
            }
            _ => return path,
        }
    }
}

/// The temp dirs every sandbox here lets commands write.
fn temp_dirs(tmpdir: Option<PathBuf>) -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("/tmp")];
    dirs.extend(tmpdir.filter(|t| t.is_absolute()));
    dirs
}

/// One finding: `Ok(text)` when the sandbox keeps everything out of reach,
/// `Err(text)` when it does not (a warning: the gate still runs).
pub type Finding = Result<String, String>;

/// A path as Claude Code's settings write it: `//abs` or `/abs` absolute,
/// `~/x` in the home folder, anything else from the repository's root.
/// Globs are cut at their first wildcard: `~/x/**` can write `~/x`.
fn claude_path(raw: &str, root: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let cut = raw.find(['*', '?', '[', '{']).map_or(raw, |at| &raw[..at]);
    let cut = cut.trim_end_matches('/');
    let path = if let Some(rest) = cut.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if cut.starts_with('/') {
        PathBuf::from(cut)
    } else if let Some(rest) = cut.strip_prefix("~/") {
        home?.join(rest)
    } else if cut == "~" {
        home?.to_path_buf()
    } else if cut.is_empty() && raw.starts_with('/') {
        PathBuf::from("/")
    } else {
        root.join(cut)
    };
    Some(path)
}

/// Whether Claude Code's sandbox keeps the gate out of the agent's shell.
pub fn claude_code(root: &Path, loaded: &Loaded, guarded: &Guarded) -> Finding {
    claude_code_from(
        &super::claude_code::settings(root, loaded),
        root,
        loaded.home.as_deref(),
        loaded.tmpdir.clone(),
        loaded.path.iter().any(|dir| dir.join("bwrap").is_file()),
        guarded,
    )
}

fn claude_code_from(
    layers: &[(PathBuf, Value)],
    root: &Path,
    home: Option<&Path>,
    tmpdir: Option<PathBuf>,
    has_bwrap: bool,
    guarded: &Guarded,
) -> Finding {
    let last = |get: &dyn Fn(&Value) -> Option<&Value>| -> Option<Value> {
        layers.iter().rev().find_map(|(_, doc)| get(doc).cloned())
    };
    let enabled = last(&|d| d.pointer("/sandbox/enabled")) == Some(Value::Bool(true));
    if !enabled {
        return Err(
            "Claude Code's sandbox is off: the agent's shell can rewrite the gate's state, program and plugin in your account. Turn it on with `\"sandbox\": {\"enabled\": true, \"allowUnsandboxedCommands\": false}` in ~/.claude/settings.json (or run /sandbox)".into(),
        );
    }
    let mut writable = vec![root.to_path_buf()];
    writable.extend(temp_dirs(tmpdir));
    for (_, doc) in layers {
        let lists = [
            doc.pointer("/sandbox/filesystem/allowWrite"),
            doc.pointer("/permissions/additionalDirectories"),
        ];
        for raw in lists
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
        {
            writable.extend(raw.as_str().and_then(|r| claude_path(r, root, home)));
        }
        // `Edit(path)` allow rules widen what sandboxed commands may write.
        let rules = doc.pointer("/permissions/allow").and_then(Value::as_array);
        for rule in rules.into_iter().flatten().filter_map(Value::as_str) {
            if let Some(inner) = rule.strip_prefix("Edit(").and_then(|r| r.strip_suffix(')')) {
                writable.extend(claude_path(inner, root, home));
            }
        }
    }
    let mut problems = guarded.reachable(&writable);
    if last(&|d| d.pointer("/sandbox/allowUnsandboxedCommands")) != Some(Value::Bool(false)) {
        problems.push("a command the sandbox stops may be run again outside it (set `sandbox.allowUnsandboxedCommands` to false)".into());
    }
    let excluded: Vec<String> = layers
        .iter()
        .filter_map(|(_, doc)| {
            doc.pointer("/sandbox/excludedCommands")?
                .as_array()
                .cloned()
        })
        .flatten()
        .filter_map(|c| c.as_str().map(|c| format!("`{c}`")))
        .collect();
    if !excluded.is_empty() {
        problems.push(format!(
            "{} run outside the sandbox (`sandbox.excludedCommands`)",
            excluded.join(", ")
        ));
    }
    if cfg!(target_os = "linux") && !has_bwrap {
        problems.push("bubblewrap (`bwrap`) is not installed, so Claude Code runs commands unsandboxed with a warning (install it, and set `sandbox.failIfUnavailable`)".into());
    }
    if problems.is_empty() {
        Ok("Claude Code's sandbox is on: the agent's shell cannot write the gate's state, program or plugin".into())
    } else {
        Err(format!(
            "Claude Code's sandbox is on, but the agent's shell can still reach the gate: {}",
            problems.join("; ")
        ))
    }
}

/// Whether Codex CLI's configured sandbox keeps the gate out of the
/// agent's commands: the person's config, then the repository's.
pub fn codex(root: &Path, loaded: &Loaded, guarded: &Guarded) -> Finding {
    let mut docs = Vec::new();
    if let Some(dir) = &loaded.codex_dir {
        docs.push(dir.join("config.toml"));
    }
    docs.push(root.join(".codex/config.toml"));
    let docs: Vec<toml_edit::DocumentMut> = docs
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok()?.parse().ok())
        .collect();
    codex_from(&docs, root, loaded.tmpdir.clone(), guarded)
}

fn codex_from(
    docs: &[toml_edit::DocumentMut],
    root: &Path,
    tmpdir: Option<PathBuf>,
    guarded: &Guarded,
) -> Finding {
    let last = |key: &str| -> Option<toml_edit::Item> {
        docs.iter().rev().find_map(|d| {
            let mut item = d.as_item();
            for part in key.split('.') {
                item = item.get(part)?;
            }
            Some(item.clone())
        })
    };
    let text = |key: &str| last(key).and_then(|i| i.as_str().map(str::to_string));
    let flag = |key: &str| last(key).and_then(|i| i.as_bool()) == Some(true);
    const LAUNCH: &str = "(a `--sandbox` or `--dangerously-bypass-approvals-and-sandbox` flag at launch overrides it)";
    match text("sandbox_mode").as_deref() {
        Some("read-only") => Ok(format!(
            "Codex's sandbox_mode is read-only: its commands cannot write the gate's state or program {LAUNCH}"
        )),
        Some("workspace-write") => {
            let mut writable = vec![root.to_path_buf()];
            let temps = temp_dirs(tmpdir);
            if !flag("sandbox_workspace_write.exclude_slash_tmp") {
                writable.push(temps[0].clone());
            }
            if !flag("sandbox_workspace_write.exclude_tmpdir_env_var") {
                writable.extend(temps.into_iter().skip(1));
            }
            for doc in docs {
                let roots = doc
                    .get("sandbox_workspace_write")
                    .and_then(|t| t.get("writable_roots"))
                    .and_then(|r| r.as_array());
                writable.extend(
                    roots
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str().map(PathBuf::from)),
                );
            }
            let problems = guarded.reachable(&writable);
            if problems.is_empty() {
                Ok(format!(
                    "Codex's sandbox_mode is workspace-write: its commands cannot write the gate's state or program {LAUNCH}"
                ))
            } else {
                Err(format!(
                    "Codex's sandbox_mode is workspace-write, but its commands can still write {} {LAUNCH}",
                    problems.join(", ")
                ))
            }
        }
        Some(other) => Err(format!(
            "Codex's sandbox_mode is {other}: its commands can rewrite the gate's state and program; set `sandbox_mode = \"workspace-write\"` in ~/.codex/config.toml"
        )),
        None => Err(format!(
            "no sandbox_mode in Codex's config: its commands reach the gate's state and program when it is started without a sandbox; set `sandbox_mode = \"workspace-write\"` in ~/.codex/config.toml {LAUNCH}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guarded(state: &str) -> Guarded {
        Guarded {
            items: vec![
                ("the state dir", PathBuf::from(state)),
                ("the program", PathBuf::from("/opt/bin/prove-it")),
            ],
        }
    }

    fn claude(layers: &[Value], tmpdir: Option<&str>, state: &str) -> Finding {
        let layers: Vec<(PathBuf, Value)> = layers
            .iter()
            .map(|v| (PathBuf::from("s"), v.clone()))
            .collect();
        claude_code_from(
            &layers,
            Path::new("/repo"),
            Some(Path::new("/home/u")),
            tmpdir.map(PathBuf::from),
            true,
            &guarded(state),
        )
    }

    const STATE: &str = "/home/u/.local/state/prove-it";

    #[test]
    fn claude_codes_sandbox_off_is_said() {
        let found = claude(&[json!({})], None, STATE).expect_err("off");
        assert!(found.contains("sandbox is off"), "{found}");
        let found = claude(
            &[
                json!({"sandbox": {"enabled": true}}),
                json!({"sandbox": {"enabled": false}}),
            ],
            None,
            STATE,
        )
        .expect_err("the later layer turns it off");
        assert!(found.contains("sandbox is off"), "{found}");
    }

    #[test]
    fn claude_codes_sandbox_on_and_closed_keeps_the_gate_out() {
        let on = json!({"sandbox": {"enabled": true, "allowUnsandboxedCommands": false}});
        let found = claude(std::slice::from_ref(&on), None, STATE).expect("closed");
        assert!(found.contains("cannot write"), "{found}");
        if cfg!(target_os = "linux") {
            let found = claude_code_from(
                &[(PathBuf::from("s"), on)],
                Path::new("/repo"),
                None,
                None,
                false,
                &guarded(STATE),
            )
            .expect_err("no bubblewrap");
            assert!(found.contains("bubblewrap"), "{found}");
        }
    }

    #[test]
    fn what_widens_claude_codes_sandbox_is_named() {
        let base = json!({"sandbox": {"enabled": true, "allowUnsandboxedCommands": false}});
        for (layer, needle) in [
            (
                json!({"sandbox": {"filesystem": {"allowWrite": ["~/.local/state/**"]}}}),
                "the state dir",
            ),
            (
                json!({"permissions": {"allow": ["Edit(//home/u/.local/**)"]}}),
                "the state dir",
            ),
            (
                json!({"permissions": {"additionalDirectories": ["/opt"]}}),
                "the program",
            ),
            (
                json!({"sandbox": {"allowUnsandboxedCommands": true}}),
                "outside it",
            ),
            (
                json!({"sandbox": {"excludedCommands": ["git"]}}),
                "`git` run outside",
            ),
        ] {
            let found = claude(&[base.clone(), layer.clone()], None, STATE)
                .expect_err(&format!("{layer} widens it"));
            assert!(found.contains(needle), "{layer}: {found}");
        }
        let found = claude(&[base], Some("/home/u/.local"), STATE).expect_err("TMPDIR");
        assert!(found.contains("the state dir"), "{found}");
        let found = claude(&[json!({"sandbox": {"enabled": true}})], None, "/tmp/state")
            .expect_err("state in /tmp");
        assert!(found.contains("the state dir (/tmp/state"), "{found}");
    }

    fn codex(configs: &[&str], state: &str) -> Finding {
        let docs: Vec<toml_edit::DocumentMut> =
            configs.iter().map(|c| c.parse().expect("toml")).collect();
        codex_from(&docs, Path::new("/repo"), None, &guarded(state))
    }

    #[test]
    fn codexs_sandbox_mode_is_read_from_its_config() {
        assert!(
            codex(&[], STATE)
                .expect_err("unset")
                .contains("no sandbox_mode")
        );
        assert!(codex(&["sandbox_mode = \"danger-full-access\""], STATE).is_err());
        assert!(codex(&["sandbox_mode = \"read-only\""], STATE).is_ok());
        assert!(codex(&["sandbox_mode = \"workspace-write\""], STATE).is_ok());
        let found = codex(&["sandbox_mode = \"workspace-write\""], "/tmp/s").expect_err("/tmp");
        assert!(found.contains("the state dir"), "{found}");
        assert!(
            codex(
                &["sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nexclude_slash_tmp = true"],
                "/tmp/s"
            )
            .is_ok()
        );
        let found = codex(
            &[
                "sandbox_mode = \"workspace-write\"",
                "[sandbox_workspace_write]\nwritable_roots = [\"/home/u\"]",
            ],
            STATE,
        )
        .expect_err("a writable root over the state dir");
        assert!(found.contains("the state dir"), "{found}");
        assert!(
            codex(
                &[
                    "sandbox_mode = \"workspace-write\"",
                    "sandbox_mode = \"danger-full-access\""
                ],
                STATE
            )
            .is_err(),
            "the repository's config is read after the person's"
        );
    }
}
