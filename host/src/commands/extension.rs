//! `prove-it setup pi|opencode [DIR] [--user]`: the hosts that are
//! extended with code, not hook files. Each gets one file of prove-it's
//! own (pi's extension, OpenCode's plugin) that names this binary by its
//! path; the other files in that folder are left as they are. `prove-it
//! doctor` reads it back ([`check`]).

use crate::agent::{Agent, opencode, pi};
use crate::fs::write_atomic;
use crate::settings::Loaded;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The line of the file that names the binary.
const BINARY_LINE: &str = "const PROVE_IT = ";

/// The file's template: `__PROVE_IT__` (in quotes) and `__VERSION__` are
/// filled in.
fn template(agent: Agent) -> Option<&'static str> {
    match agent {
        Agent::Pi => Some(pi::EXTENSION),
        Agent::Opencode => Some(opencode::PLUGIN),
        _ => None,
    }
}

/// Whether `agent` is wired by a file of code (this module) rather than
/// a hook file.
pub fn is_code(agent: Agent) -> bool {
    template(agent).is_some()
}

/// Where the file goes: in the repository at `root`, or for the person.
pub fn file(agent: Agent, root: Option<&Path>, loaded: &Loaded) -> Result<PathBuf> {
    let dir = |dir: &Option<PathBuf>, what: &str| {
        dir.clone()
            .with_context(|| format!("HOME is not set, so {what} cannot be found"))
    };
    Ok(match (agent, root) {
        (Agent::Pi, Some(root)) => root.join(".pi/extensions/prove-it.ts"),
        (Agent::Pi, None) => {
            dir(&loaded.pi_dir, "pi's agent directory")?.join("extensions/prove-it.ts")
        }
        (Agent::Opencode, Some(root)) => root.join(".opencode/plugins/prove-it.js"),
        (Agent::Opencode, None) => {
            dir(&loaded.opencode_dir, "OpenCode's config directory")?.join("plugins/prove-it.js")
        }
        _ => bail!("{} is not extended with code", agent.adapter().title()),
    })
}

/// The file's text for this binary.
fn text(agent: Agent, exe: &Path) -> Result<String> {
    let template = template(agent).context("no file to write")?;
    let path = exe
        .to_str()
        .context("this binary's path is not valid UTF-8, so no script can name it")?;
    Ok(template
        .replace("\"__PROVE_IT__\"", &Value::from(path).to_string())
        .replace("__VERSION__", env!("CARGO_PKG_VERSION")))
}

/// Whether `text` is a file prove-it wrote (for any version).
fn is_ours(text: &str) -> bool {
    text.starts_with("// prove-it ") && text.contains(BINARY_LINE)
}

/// Writes the file; says what it did. A file of that name that is not
/// prove-it's is left as it is.
pub fn install(agent: Agent, root: Option<&Path>, exe: &Path, loaded: &Loaded) -> Result<()> {
    let file = file(agent, root, loaded)?;
    let before = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    };
    if let Some(before) = &before
        && !is_ours(before)
    {
        bail!(
            "`{}` is not prove-it's, so it was left as it is: move it away and run this again",
            file.display()
        );
    }
    let text = text(agent, exe)?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let how = match &before {
        Some(before) if *before == text => "unchanged",
        Some(_) => "rewritten",
        None => "written",
    };
    write_atomic(&file, text.as_bytes())?;
    let title = agent.adapter().title();
    outln!(
        "prove-it setup {}: {title} now runs the gate from `{}` ({how}):",
        agent.name(),
        file.display()
    );
    for event in agent.adapter().events() {
        let name = clap::ValueEnum::to_possible_value(event)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        outln!(
            "  {:<28} {} hook --agent {} {name}",
            event.host_name(),
            exe.display(),
            agent.name()
        );
    }
    match agent {
        Agent::Pi if root.is_some() => outln!(
            "  pi loads a project's extensions only in a trusted project: its TUI asks; `pi -p` skips them silently unless run with -a (or with \"defaultProjectTrust\": \"always\" in its settings.json). `prove-it setup pi --user` installs one that always loads."
        ),
        Agent::Pi => outln!("  pi loads a user extension in every project, with no trust asked."),
        Agent::Opencode => outln!(
            "  OpenCode loads plugins with no prompt (`opencode run --pure` skips them). A block reaches the agent as a new message of the session, sent by the plugin: the person sees it as one."
        ),
        _ => {}
    }
    outln!(
        "The file names this binary by its path: run `prove-it setup {}` again if it moves. `prove-it doctor` checks the wiring.",
        agent.name()
    );
    Ok(())
}

/// What `prove-it doctor` says about one host in the repository at `root`
/// (for a host gated by an extension here; `super::setup` says it for the
/// others with the same type).
pub struct Wiring {
    /// Where the gate is wired (a hook file), if anywhere.
    pub file: Option<PathBuf>,
    /// Why the wiring would not run, when it would not.
    pub problem: Option<String>,
}

/// Reads back what [`install`] wrote, in the repository or the person's
/// config, and says whether the host would run it.
pub fn check(agent: Agent, root: &Path, loaded: &Loaded) -> Wiring {
    for file in [file(agent, Some(root), loaded), file(agent, None, loaded)]
        .into_iter()
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if !is_ours(&text) {
            continue;
        }
        let problem = named_binary(&text)
            .filter(|exe| !Path::new(exe).is_file())
            .map(|exe| {
                format!(
                    "it runs `{exe}`, which is not there: run `prove-it setup {}` with the prove-it you have now",
                    agent.name()
                )
            })
            .or_else(|| untrusted(agent, &file, root, loaded, true));
        return Wiring {
            file: Some(file),
            problem,
        };
    }
    Wiring {
        file: None,
        problem: None,
    }
}

/// What may keep a wired file from running, or from being this version's
/// (`None`: nothing known).
pub fn caveat(agent: Agent, file: &Path, root: &Path, loaded: &Loaded) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let version = text
        .strip_prefix("// prove-it ")?
        .split(':')
        .next()
        .unwrap_or_default();
    if version != env!("CARGO_PKG_VERSION") {
        return Some(format!(
            "`{}` was written by prove-it {version}, this is {}: run `prove-it setup {}` again",
            file.display(),
            env!("CARGO_PKG_VERSION"),
            agent.name()
        ));
    }
    untrusted(agent, file, root, loaded, false)
}

/// The binary a file names.
fn named_binary(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with(BINARY_LINE))?;
    let quoted = line.strip_prefix(BINARY_LINE)?.trim_end_matches(';');
    serde_json::from_str(quoted).ok()
}

/// pi's project trust for a project extension: `refused` asks only
/// whether pi was told never to trust this project (then it never runs
/// the file); otherwise whether it is trusted without being asked.
fn untrusted(
    agent: Agent,
    file: &Path,
    root: &Path,
    loaded: &Loaded,
    refused: bool,
) -> Option<String> {
    if agent != Agent::Pi || !file.starts_with(root) {
        return None;
    }
    let dir = loaded.pi_dir.as_ref()?;
    let decision = saved_trust(&dir.join("trust.json"), root);
    if refused {
        return (decision == Some(false)).then(|| {
            format!(
                "pi was told not to trust this project (`{}`), so it never loads its extensions: trust it with /trust in pi, or run `prove-it setup pi --user`",
                dir.join("trust.json").display()
            )
        });
    }
    let always = std::fs::read_to_string(dir.join("settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|s| s["defaultProjectTrust"] == "always");
    (decision.is_none() && !always).then(|| {
        "pi has not been told to trust this project: its TUI asks, and `pi -p` skips the extension silently unless run with -a. Trust it once with /trust in pi, or run `prove-it setup pi --user`".to_string()
    })
}

/// The nearest decision in pi's `trust.json` for `dir` or a folder above.
fn saved_trust(trust: &Path, dir: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(trust).ok()?;
    let saved: Value = serde_json::from_str(&text).ok()?;
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find_map(|d| saved.get(d.to_str()?)?.as_bool())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_names_the_binary_as_a_js_string() {
        for agent in [Agent::Pi, Agent::Opencode] {
            let text = text(agent, Path::new("/a \"b\"/prove-it")).expect("text");
            assert!(is_ours(&text), "{agent:?}");
            assert_eq!(named_binary(&text).as_deref(), Some("/a \"b\"/prove-it"));
            assert!(!text.contains("__"), "{agent:?}: a placeholder is left");
        }
    }
}
