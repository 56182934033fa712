//! `prove-it policy new|check|run`: for people writing their own policy.

use super::hook::Run;
use crate::agent::{Agent, HookEvent};
use crate::capability::git;
use crate::selection::{self, Policy};
use crate::settings;
use anyhow::{Context, Result, bail};
use prove_it_gate::abi::{ABI_VERSION, Event};
use std::path::Path;
use std::process::ExitCode;

/// `policy check FILE`: is it a valid module this prove-it can run?
pub fn check(file: &str) -> Result<ExitCode> {
    let policy = load(file)?;
    let loaded = settings::from_env();
    outln!(
        "policy {} ({} KiB, blake3 {})",
        policy.label,
        policy.size() / 1024,
        &policy.hash[..16]
    );
    match policy.check(&loaded.dirs.cache) {
        Ok(info) => {
            outln!("  ABI version {ABI_VERSION}: compatible");
            outln!("  imports: {}", info.imports.join(", "));
            outln!("  exports: {}", info.exports.join(", "));
            outln!(
                "result: usable. Select it with PROVE_IT_POLICY={file} (or put it at .prove-it/policy.wasm)."
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            outln!("result: NOT usable: {e:#}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `policy run FILE`: one event on the repository here, with throwaway
/// state, printing the decision and each agent host's answer.
pub fn run(file: &str, hook_event: HookEvent, claim: &str, dir: &Path) -> Result<ExitCode> {
    let kind = hook_event.kind();
    let policy = load(file)?;
    let root = git::discover(dir)
        .with_context(|| format!("`{}` is not inside a git repository", dir.display()))?;
    let state = tempfile::tempdir().context("cannot make a throwaway state dir")?;
    let loaded = settings::from_env();
    // A dry run: its state and any ledger row are thrown away with it.
    let mut dirs = loaded.dirs.clone();
    dirs.state = state.path().join("state");
    dirs.ledger = state.path().join("ledger");
    let event = Event {
        kind,
        source: Some("startup".into()),
        turn: None,
        may_be_retry: false,
        claim: Some(claim.to_string()),
        repo: root.display().to_string(),
        settings: loaded.settings.clone(),
        notes: loaded.notes.clone(),
    };
    outln!(
        "policy {} on {} ({kind:?}, fresh state: no baseline)",
        policy.label,
        root.display()
    );
    let run = Run {
        root: &root,
        session_id: "prove-it-policy-run",
        loaded: &loaded,
        dirs: &dirs,
        walk: Default::default(),
    };
    let decision = super::hook::decide(&policy, &event, &run)?.with_notes(&event.notes);
    outln!(
        "decision: {}",
        serde_json::to_string_pretty(&decision).context("cannot show the decision")?
    );
    for agent in Agent::ALL {
        let adapter = agent.adapter();
        // The same event as each host names it (a Stop is Gemini's AfterAgent).
        let Some(event) = adapter.events().iter().find(|e| e.kind() == kind) else {
            continue;
        };
        match adapter.answer(*event, &decision) {
            Some(answer) => outln!("{} would receive: {answer}", adapter.title()),
            None => outln!("{} would receive: nothing (a quiet allow)", adapter.title()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `policy new NAME`: a Rust crate that builds into a working policy.
pub fn new(name: &str, gate_path: Option<&Path>) -> Result<ExitCode> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    if !valid {
        bail!(
            "`{name}` is not a crate name: use lowercase letters, digits, `-` and `_`, starting with a letter"
        );
    }
    let dir = Path::new(name);
    if dir.exists() {
        bail!("`{name}` already exists; choose another name or remove it");
    }
    let gate = match gate_path {
        Some(path) => {
            let path = std::path::absolute(path).context("cannot resolve --gate-path")?;
            format!("{{ path = {:?} }}", path.display().to_string())
        }
        None => format!(
            "{{ git = \"https://github.com/Why-Next/prove-it\", tag = \"v{}\" }}",
            settings::HOST_VERSION
        ),
    };
    let wasm = format!(
        "target/wasm32-wasip1/release/{}.wasm",
        name.replace('-', "_")
    );
    std::fs::create_dir_all(dir.join("src")).with_context(|| format!("cannot create `{name}`"))?;
    let files = [
        ("Cargo.toml", template::cargo_toml(name, &gate)),
        ("src/lib.rs", template::LIB_RS.to_string()),
        ("README.md", template::readme(name, &wasm)),
        (".gitignore", "/target\n".to_string()),
    ];
    for (file, text) in files {
        std::fs::write(dir.join(file), text)
            .with_context(|| format!("cannot write `{name}/{file}`"))?;
    }
    outln!("created the policy crate `{name}/`. Next:");
    outln!("  rustup target add wasm32-wasip1");
    outln!("  cd {name} && cargo build --release --target wasm32-wasip1");
    outln!("  prove-it policy check {wasm}");
    outln!("  prove-it policy run {wasm}        # in a repository");
    outln!("  export PROVE_IT_POLICY=$PWD/{wasm}");
    Ok(ExitCode::SUCCESS)
}

/// A built-in policy by name, or a module file.
fn load(file: &str) -> Result<Policy> {
    if let Some(policy) = selection::builtin(file) {
        return Ok(policy);
    }
    let bytes = std::fs::read(file).with_context(|| format!("cannot read the policy `{file}`"))?;
    Ok(Policy::from_file(format!("`{file}`"), bytes))
}

mod template {
    pub fn cargo_toml(name: &str, gate: &str) -> String {
        format!(
            r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
prove-it-gate = {gate}

[profile.release]
opt-level = "s"

# Not part of any surrounding workspace.
[workspace]
"#
        )
    }

    pub const LIB_RS: &str = r#"//! A prove-it policy. It gets each hook event and decides, asking the host
//! for facts through `Host` (see POLICY.md in prove-it for the whole ABI).

use prove_it_gate::abi::{Decision, Event, EventKind, Host};
use prove_it_gate::policy::{Rules, decide_with};

/// Start from the contract's rules and change what you need.
pub fn decide(event: &Event, host: &mut impl Host) -> Decision {
    let decision = decide_with(event, host, Rules::DEFAULT);
    if event.kind == EventKind::Stop {
        // Your rules here: e.g. look at `host.tree_state()`, or block with
        // `Decision::block("why, and what to do")`.
    }
    decision
}

#[cfg(target_arch = "wasm32")]
prove_it_gate::policy_module!(decide);
"#;

    pub fn readme(name: &str, wasm: &str) -> String {
        format!(
            "# {name}\n\nA prove-it policy.\n\n```sh\nrustup target add wasm32-wasip1\ncargo build --release --target wasm32-wasip1\nprove-it policy check {wasm}\nprove-it policy run {wasm}    # inside a git repository: one Stop, fresh state\nexport PROVE_IT_POLICY=$PWD/{wasm}\n```\n\nThe policy in force is fixed when a session starts.\n"
        )
    }
}
