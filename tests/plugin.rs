//! The plugin bundle inside the real Claude Code CLI: the validator, the
//! marketplace install from a checkout, and a real session whose installed
//! Stop hook blocks; plus the launcher's answers when things are missing.

use crate::claude::{ClaudeHome, ScriptedModel, Step, claude_bin, clean_copy, workspace};
use crate::util::{BIN, Sandbox};
use serde_json::Value;
use std::process::Command;

fn read_json(rel: &str) -> Value {
    let text =
        std::fs::read_to_string(workspace().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not valid JSON: {e}"))
}

#[test]
fn shipped_manifests_parse_and_name_one_version() {
    let plugin = read_json(".claude-plugin/plugin.json");
    let market = read_json("marketplace.json");
    let hooks = read_json("plugin/hooks.json");
    let host_version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        plugin["version"], host_version,
        "plugin.json and Cargo.toml must name one version"
    );
    assert_eq!(market["name"], "whynext");
    assert_eq!(market["plugins"][0]["name"], "prove-it");
    assert_eq!(market["plugins"][0]["version"], host_version);
    assert_eq!(
        read_json(".claude-plugin/marketplace.json"),
        market,
        "the marketplace file is the same in both places"
    );
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        let hook = &hooks["hooks"][event][0]["hooks"][0];
        let command = hook["command"].as_str().expect("command");
        assert!(
            // sh, not the execute bit (installs have dropped it); quoted
            // for paths with spaces.
            command.starts_with("sh \"${CLAUDE_PLUGIN_ROOT}/plugin/prove-it\" hook "),
            "{command}"
        );
    }
    // The spinner says what runs: a stop may run verify.sh for minutes,
    // and the first session start downloads the host.
    for event in ["SessionStart", "Stop"] {
        let status = hooks["hooks"][event][0]["hooks"][0]["statusMessage"]
            .as_str()
            .unwrap_or_default();
        assert!(status.starts_with("prove-it: "), "{event}: {status:?}");
    }
    // prove-it, not Claude Code, must end a slow verify.sh: the hook outlives
    // the longest PROVE_IT_TIMEOUT the host accepts (3000 s).
    let stop_timeout = hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"]
        .as_u64()
        .expect("timeout");
    assert!(stop_timeout > 3000, "Stop hook timeout {stop_timeout} s");
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn the_real_validator_has_nothing_to_report() {
    let root = workspace();
    let plugin_json = root.join(".claude-plugin/plugin.json");
    for args in [
        vec![
            "plugin",
            "validate",
            "--strict",
            root.to_str().expect("utf-8"),
        ],
        vec![
            "plugin",
            "validate",
            "--strict",
            plugin_json.to_str().expect("utf-8"),
        ],
        vec![
            "plugin",
            "validate",
            "--strict",
            "--profile",
            "directory",
            root.to_str().expect("utf-8"),
        ],
    ] {
        let out = Command::new(claude_bin())
            .args(&args)
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .output()
            .expect("claude");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "claude {args:?} failed:\n{text}");
        assert!(text.contains("Validation passed"), "{text}");
        // The plugin downloads its host: the hosts it reaches are declared.
        if !args.contains(&"--profile") {
            assert!(text.contains("github.com (declared)"), "{text}");
        }
        assert!(
            !text.contains('⚠') && !text.to_lowercase().contains("warning"),
            "claude {args:?} warned:\n{text}"
        );
    }
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn installs_from_a_checkout_through_the_marketplace() {
    let home = ClaudeHome::with_plugin_installed();
    let installed = home.installed_plugin();
    for file in [
        ".claude-plugin/plugin.json",
        "plugin/hooks.json",
        "plugin/prove-it",
        "commands/init.md",
        "commands/ledger.md",
        "commands/canary.md",
    ] {
        assert!(
            installed.join(file).is_file(),
            "{file} missing from {}",
            installed.display()
        );
    }
    let list = home.cli(&["plugin", "list"]);
    assert!(list.contains("prove-it@whynext"), "{list}");
}

/// doctor reads what the real CLI wrote: gated once the plugin is
/// installed; not gated in the one repository where `claude plugin disable
/// --scope local` turned it off, while another repository stays gated.
#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn doctor_reads_the_plugin_as_the_real_cli_installs_and_disables_it() {
    let home = ClaudeHome::with_plugin_installed();
    let sb = Sandbox::new();
    let (repo, other) = (sb.repo("r"), sb.repo("other"));
    let mut env = sb.env.clone();
    env.insert("HOME".into(), home.home().display().to_string());
    let doctor = |repo: &crate::util::Repo| {
        repo.arm("exit 0");
        let out = crate::util::prove_it(&repo.root, &env, &["doctor", "--no-run"])
            .output()
            .expect("doctor");
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), said)
    };
    let (code, said) = doctor(&repo);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("installed (") && said.contains("result: gated in Claude Code"),
        "{said}"
    );
    home.cli_in(
        &repo.root,
        &["plugin", "disable", "prove-it@whynext", "--scope", "local"],
    );
    assert!(
        home.cli_in(&repo.root, &["plugin", "list"])
            .contains("disabled")
    );
    let (code, said) = doctor(&repo);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains(".claude/settings.local.json` sets enabledPlugins")
            && said.contains("result: not gated"),
        "{said}"
    );
    let (code, said) = doctor(&other);
    assert_eq!(code, Some(0), "{said}");
}

#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn a_real_session_is_blocked_by_the_installed_stop_hook_until_verify_passes() {
    let home = ClaudeHome::with_plugin_installed();
    blocked_once_then_fixed(&home, &Sandbox::new());
}

/// One `claude -p` turn in a new repository whose `verify.sh` fails while
/// `broken` exists: the agent breaks it, claims success, is sent back with
/// the failing lines, fixes it, and the turn ends quietly.
fn blocked_once_then_fixed(home: &ClaudeHome, sb: &Sandbox) -> crate::claude::Session {
    let repo = sb.repo("r");
    repo.arm("if [ -e broken ]; then echo 'test result: FAILED. 1 failed, 41 passed'; exit 1; fi");
    let model = ScriptedModel::start(vec![
        Step::Bash("echo oops > broken"),
        Step::Say("All tests pass. Ready to merge."),
        Step::Bash("rm broken"),
        Step::Say("Fixed the failing test; verify.sh passes now."),
    ]);
    let session = home.session(&repo.root, &model, "make the change", &[], false);
    assert!(session.status.success(), "{}", session.dump());

    let answers = session.stop_answers();
    assert_eq!(
        answers.len(),
        1,
        "one block, then a quiet allow\n{}",
        session.dump()
    );
    assert_eq!(answers[0]["decision"], "block");
    let reason = answers[0]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("attempt 1 of 3") && reason.contains("1 failed, 41 passed"),
        "{reason}"
    );
    assert_eq!(
        session.hook_responses("Stop").len(),
        2,
        "{}",
        session.dump()
    );
    // The agent was really told: the block reason reached the model.
    assert!(
        model.told().contains("attempt 1 of 3"),
        "the model never saw the block"
    );
    assert!(!repo.path("broken").exists());
    session
}

/// Runs the hooks.json command line for `event` through a shell, as Claude
/// Code does, with the plugin root at `root`.
fn launch(
    root: &std::path::Path,
    event: &str,
    env: &[(&str, &str)],
    stdin: &str,
) -> std::process::Output {
    use std::io::Write;
    let command = prove_it_test_support::hook_command_line(root, event);
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &command])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", root.join("no-home"))
        .env("CLAUDE_PLUGIN_ROOT", root)
        // Where no release is: a test never reaches the real one.
        .env("PROVE_IT_DOWNLOAD_URL", crate::download::closed_url())
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("sh");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("stdin");
    child.wait_with_output().expect("launcher")
}

/// The repo's sandbox settings plus the host the launcher should find.
fn host_env(repo: &crate::util::Repo) -> Vec<(&str, &str)> {
    let mut env: Vec<(&str, &str)> = repo
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    env.push(("PROVE_IT_BIN", BIN));
    env
}

/// A plugin copy in a path with spaces, its launcher without execute bits.
fn plugin_copy(sb: &Sandbox) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let root = sb.tmp.path().join("plugin cache/prove it");
    clean_copy(&workspace(), &root);
    std::fs::set_permissions(
        root.join("plugin/prove-it"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    root
}

#[test]
fn launcher_without_the_host_says_what_to_run_and_exits_0() {
    let sb = Sandbox::new();
    let root = plugin_copy(&sb);
    for event in ["session-start", "stop"] {
        let out = launch(&root, event, &[], "{}");
        assert_eq!(
            out.status.code(),
            Some(0),
            "never 127: Claude Code would let the stop through"
        );
        let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let message = answer["systemMessage"].as_str().expect("message");
        let (verdict, next) = match event {
            // The session start tried to download it, and says how else.
            "session-start" => ("NOT gated", "./install.sh"),
            _ => ("NOT verified", "fetch"),
        };
        assert!(
            message.contains("installed") && message.contains(verdict) && message.contains(next),
            "{message}"
        );
    }
    // A bad PROVE_IT_BIN is the same: told, not crashed, and not advised
    // to set PROVE_IT_BIN.
    let out = launch(
        &root,
        "stop",
        &[("PROVE_IT_BIN", "/nowhere/prove-it")],
        "{}",
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("NOT verified")
            && text.contains(
                "PROVE_IT_BIN is set to /nowhere/prove-it, which is not an executable file"
            ),
        "{text}"
    );

    // Nor is a hook run without HOME (the launcher looks under it).
    let out = Command::new("sh")
        .args([
            "-c",
            &format!(
                "unset HOME; {}",
                prove_it_test_support::hook_command_line(&root, "stop")
            ),
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("CLAUDE_PLUGIN_ROOT", &root)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("sh");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("NOT verified"),
        "{out:?}"
    );
}

#[test]
fn launcher_works_with_spaces_and_dropped_execute_bits() {
    let sb = Sandbox::new();
    let root = plugin_copy(&sb);
    let repo = sb.repo("r");
    repo.arm_counting();
    let env = host_env(&repo);
    let input = |active: bool| {
        serde_json::json!({"session_id": "s", "cwd": repo.root, "source": "startup", "stop_hook_active": active}).to_string()
    };
    let out = launch(&root, "session-start", &env, &input(false));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    repo.write("broken", "x");
    let out = launch(&root, "stop", &env, &input(false));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(answer["decision"], "block", "{answer}");
}

#[test]
fn a_host_of_another_version_is_reported_at_start_and_stop() {
    let sb = Sandbox::new();
    let root = plugin_copy(&sb);
    let manifest = root.join(".claude-plugin/plugin.json");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace(&format!("\"{}\"", env!("CARGO_PKG_VERSION")), "\"9.9.9\""),
    )
    .expect("write");
    let repo = sb.repo("r");
    repo.arm_counting();
    let env = host_env(&repo);
    let input = serde_json::json!({"session_id": "s", "cwd": repo.root, "source": "startup", "stop_hook_active": false}).to_string();
    for event in ["session-start", "stop"] {
        let out = launch(&root, event, &env, &input);
        let answer: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{event}: no answer"));
        let message = answer["systemMessage"].as_str().expect("message");
        assert!(
            message.contains("plugin is version 9.9.9") && message.contains("install.sh"),
            "{message}"
        );
    }
}

/// The plugin downloading the release archive release/build.sh built: these
/// need `PROVE_IT_RELEASE_DIR`, so ./verify.sh --full runs them after the
/// archives are built (while they build, the rest of the suite runs).
mod release_archive {
    use super::*;

    /// A site holding the release archive release/build.sh built for this
    /// machine (or, with `bad_sum`, the same archive with a wrong .sha256).
    fn release_site(sb: &Sandbox, bad_sum: bool) -> std::path::PathBuf {
        let version = env!("CARGO_PKG_VERSION");
        let name = format!("prove-it-{version}-{}.tar.gz", crate::download::target());
        let site = sb.tmp.path().join("site");
        let folder = site.join(format!("v{version}"));
        std::fs::create_dir_all(&folder).expect("mkdir");
        let from = crate::release::release_dir();
        std::fs::copy(from.join(&name), folder.join(&name)).expect("archive");
        let sum = if bad_sum {
            format!("{}  {name}\n", "ab".repeat(32))
        } else {
            std::fs::read_to_string(from.join(format!("{name}.sha256"))).expect("sha256")
        };
        std::fs::write(folder.join(format!("{name}.sha256")), sum).expect("sha256");
        site
    }

    fn serve(site: &std::path::Path) -> crate::download::FileServer {
        crate::download::FileServer::start(site, std::time::Duration::ZERO)
    }

    /// Installed host binaries (`.../bin/VERSION/prove-it`) under `dir`.
    fn installed_hosts(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        find(dir, "prove-it")
            .into_iter()
            .filter(|p| {
                p.parent()
                    .and_then(|v| v.parent())
                    .is_some_and(|b| b.ends_with("bin"))
            })
            .collect()
    }

    /// The files named `name` under `dir`, at any depth.
    fn find(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                found.extend(find(&path, name));
            } else if entry.file_name() == name {
                found.push(path);
            }
        }
        found
    }

    #[test]
    #[ignore = "slow suite: the real Claude Code CLI and the release archive (./verify.sh --full)"]
    fn without_rust_the_first_session_downloads_the_host_and_is_gated() {
        for tool in ["prove-it", "cargo", "rustc"] {
            for dir in ["/usr/bin", "/bin"] {
                let path = std::path::Path::new(dir).join(tool);
                assert!(
                    !path.exists(),
                    "{} exists: the test needs a PATH without it",
                    path.display()
                );
            }
        }
        let sb = Sandbox::new();
        let server = serve(&release_site(&sb, false));
        let home = ClaudeHome::downloading_from(&server.url);
        let session = blocked_once_then_fixed(&home, &sb);
        let said = session.session_start_said();
        assert!(
            said.contains("installed prove-it") && said.contains("SHA-256 checked"),
            "the install was not said:\n{}",
            session.dump()
        );
        assert_eq!(server.requests().len(), 2, "{:?}", server.requests());
        let installed = installed_hosts(&home.home());
        assert!(
            installed.len() == 1
                && installed[0].ends_with(format!("bin/{}/prove-it", env!("CARGO_PKG_VERSION"))),
            "{installed:?}"
        );

        // The next session finds the binary: nothing downloaded, nothing said.
        let model = ScriptedModel::start(vec![Step::Say("Nothing to do.")]);
        let repo = sb.tmp.path().join("r"); // the one blocked_once_then_fixed made
        let session = home.session(&repo, &model, "look around", &[], false);
        assert_eq!(server.requests().len(), 2, "downloaded again");
        assert_eq!(
            session.hook_responses("SessionStart").len(),
            1,
            "{}",
            session.dump()
        );
        assert_eq!(session.session_start_said(), "", "{}", session.dump());
    }

    #[test]
    #[ignore = "slow suite: the real Claude Code CLI and the release archive (./verify.sh --full)"]
    fn a_failed_download_says_the_session_is_not_gated() {
        // A wrong checksum, then no server at all.
        let sb = Sandbox::new();
        let server = serve(&release_site(&sb, true));
        for url in [server.url.clone(), crate::download::closed_url()] {
            let home = ClaudeHome::downloading_from(&url);
            let repo = sb.repo(&format!("r{}", url.len()));
            repo.arm("if [ -e broken ]; then exit 1; fi");
            let model = ScriptedModel::start(vec![
                Step::Bash("echo oops > broken"),
                Step::Say("All tests pass."),
            ]);
            let session = home.session(&repo.root, &model, "make the change", &[], false);
            assert!(session.status.success(), "{}", session.dump());
            let said = session.session_start_said();
            assert!(
                said.contains("NOT gated") && said.contains("fetch"),
                "{}",
                session.dump()
            );
            if url == server.url {
                assert!(said.contains("SHA-256"), "{said}");
            }
            let stop = session.stop_answers();
            let message = stop
                .last()
                .map(|a| a["systemMessage"].to_string())
                .unwrap_or_default();
            assert!(message.contains("NOT verified"), "{}", session.dump());
            let installed = installed_hosts(&home.home());
            assert!(
                installed.is_empty(),
                "a binary was installed: {installed:?}"
            );
        }
    }

    #[test]
    #[ignore = "slow suite: the real Claude Code CLI and the release archive (./verify.sh --full)"]
    fn a_plugin_update_fetches_its_version_at_the_next_session_start() {
        let sb = Sandbox::new();
        let site = release_site(&sb, false);
        // The next version's host: a stand-in that says which it is.
        let next = crate::download::fake_host(sb.tmp.path(), "9.9.9");
        crate::download::publish(&site, "9.9.9", &next);
        let server = serve(&site);
        let home = ClaudeHome::downloading_from(&server.url);
        let repo = sb.repo("r");
        let quiet = || ScriptedModel::start(vec![Step::Say("Nothing to do.")]);
        let first = home.session(&repo.root, &quiet(), "look around", &[], false);
        let said = first.session_start_said();
        assert!(
            said.contains(&format!("installed prove-it {}", env!("CARGO_PKG_VERSION"))),
            "{}",
            first.dump()
        );

        home.update_plugin_to("9.9.9");
        let second = home.session(&repo.root, &quiet(), "look around", &[], false);
        assert!(
            second.session_start_said().contains("fake host 9.9.9 ran"),
            "the new version's host did not run:\n{}",
            second.dump()
        );
        assert!(
            server.requests().iter().any(|r| r.contains("/v9.9.9/")),
            "{:?}",
            server.requests()
        );
        assert_eq!(installed_hosts(&home.home()).len(), 2);
    }

    #[test]
    #[ignore = "slow suite: the real Claude Code CLI and the release archive (./verify.sh --full)"]
    fn two_sessions_starting_at_once_are_both_gated() {
        let sb = Sandbox::new();
        let server = serve(&release_site(&sb, false));
        let home = ClaudeHome::downloading_from(&server.url);
        let repos = [sb.repo("a"), sb.repo("b")];
        for repo in &repos {
            repo.arm("if [ -e broken ]; then echo 'test result: FAILED'; exit 1; fi");
        }
        let sessions: Vec<_> = std::thread::scope(|s| {
            let runs: Vec<_> = repos
                .iter()
                .map(|repo| {
                    let home = &home;
                    s.spawn(move || {
                        let model = ScriptedModel::start(vec![
                            Step::Bash("echo oops > broken"),
                            Step::Say("All tests pass."),
                            Step::Bash("rm broken"),
                            Step::Say("Fixed."),
                        ]);
                        home.session(&repo.root, &model, "make the change", &[], false)
                    })
                })
                .collect();
            runs.into_iter()
                .map(|r| r.join().expect("session"))
                .collect()
        });
        for session in &sessions {
            let answers = session.stop_answers();
            assert!(
                answers.first().is_some_and(|a| a["decision"] == "block"),
                "not gated:\n{}",
                session.dump()
            );
        }
        let hosts = installed_hosts(&home.home());
        assert_eq!(hosts.len(), 1, "{hosts:?}");
        let said = Command::new(&hosts[0])
            .arg("--version")
            .output()
            .expect("runs");
        assert!(said.status.success());
    }
}

/// Each verdict in a real `claude -p` session, as a program sees it: the
/// last Stop answer, the notices, the result's terminal reason, and
/// `prove-it status` afterwards. No two verdicts look alike.
#[test]
#[ignore = "slow suite: the real Claude Code CLI (./verify.sh --full)"]
fn every_verdict_looks_different_in_a_real_session() {
    let sb = Sandbox::new();
    let home = ClaudeHome::with_plugin_installed();
    let status = |repo: &crate::util::Repo| -> (i32, String) {
        let out = crate::util::prove_it(&repo.root, &repo.env, &["status", "--json"])
            .env("PROVE_IT_STATE_DIR", home.dir.path().join("state"))
            .output()
            .expect("status");
        let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (
            out.status.code().expect("code"),
            json["verdict"].as_str().unwrap_or("none").to_string(),
        )
    };
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut check =
        |name: &str, session: &crate::claude::Session, repo: Option<&crate::util::Repo>| {
            assert!(session.status.success(), "{name}: {}", session.dump());
            let last_stop = session
                .hook_responses("Stop")
                .last()
                .and_then(|e| e["stdout"].as_str())
                .unwrap_or_default()
                .to_string();
            let mut keys: Vec<String> = serde_json::from_str::<Value>(&last_stop)
                .ok()
                .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
                .unwrap_or_default();
            keys.sort();
            let first_words: String = session
                .notices()
                .last()
                .map(|n| n.split(':').take(3).collect::<Vec<_>>().join(":"))
                .unwrap_or_default();
            let verdict = repo.map_or(("none".into(), -1), |r| {
                let (code, verdict) = status(r);
                (verdict, code)
            });
            let signature = format!(
                "stop keys {keys:?}; notice {first_words:?}; terminal {}; status {} exit {}",
                session.terminal_reason(),
                verdict.0,
                verdict.1
            );
            for (other, theirs) in &seen {
                assert_ne!(&signature, theirs, "{name} looks like {other}");
            }
            eprintln!("{name}: {signature}");
            seen.push((name.to_string(), signature.clone()));
            signature
        };
    let work = || {
        ScriptedModel::start(vec![
            Step::Bash("echo oops > broken"),
            Step::Say("All tests pass."),
            Step::Say("Really, all tests pass."),
        ])
    };
    let fails = "if [ -e broken ]; then echo 'test result: FAILED'; exit 1; fi";

    let repo = sb.repo("verified");
    repo.arm("exit 0");
    let session = home.session(&repo.root, &work(), "change it", &[], false);
    let sig = check("verified", &session, Some(&repo));
    assert!(
        sig.contains("prove-it: verified") && sig.ends_with("status verified exit 0"),
        "{sig}"
    );

    let repo = sb.repo("unchanged");
    repo.arm(fails);
    let idle = ScriptedModel::start(vec![Step::Say("Nothing needed changing.")]);
    let session = home.session(&repo.root, &idle, "look around", &[], false);
    let sig = check("unchanged", &session, Some(&repo));
    assert!(sig.ends_with("status unchanged exit 0"), "{sig}");

    let repo = sb.repo("yielded");
    repo.arm(fails);
    let session = home.session(
        &repo.root,
        &work(),
        "change it",
        &[("PROVE_IT_MAX_BLOCKS", "1")],
        false,
    );
    let sig = check("blocked, then yielded", &session, Some(&repo));
    assert_eq!(
        session.stop_answers()[0]["decision"],
        "block",
        "{}",
        session.dump()
    );
    assert!(
        sig.contains("terminal stop_hook_prevented") && sig.ends_with("status yielded exit 1"),
        "{sig}"
    );
    // The next turn is gated again.
    let next = ScriptedModel::start(vec![Step::Say("Done now.")]);
    let again = home.session(
        &repo.root,
        &next,
        "go on",
        &[("PROVE_IT_MAX_BLOCKS", "1")],
        true,
    );
    assert_eq!(
        again.stop_answers()[0]["decision"],
        "block",
        "{}",
        again.dump()
    );

    let repo = sb.repo("weakened");
    repo.arm(fails);
    let rewrites = ScriptedModel::start(vec![
        Step::Bash("echo oops > broken && printf '#!/bin/sh\\nexit 0\\n' > verify.sh"),
        Step::Say("All tests pass."),
    ]);
    let session = home.session(&repo.root, &rewrites, "change it", &[], false);
    let sig = check("weakened", &session, Some(&repo));
    assert!(
        sig.contains("terminal stop_hook_prevented") && sig.ends_with("status weakened exit 1"),
        "{sig}"
    );

    let repo = sb.repo("suspect");
    repo.arm("exit 0");
    let fools = ScriptedModel::start(vec![
        Step::Bash(
            "printf 'import sys\\n\\n\\ndef add(a, b):\\n    if \"pytest\" in sys.modules:\\n        return 5\\n    return a - b\\n' > calc.py",
        ),
        Step::Say("All tests pass."),
    ]);
    let session = home.session(&repo.root, &fools, "fix add", &[], false);
    let sig = check("suspect", &session, Some(&repo));
    assert!(
        sig.contains("terminal stop_hook_prevented") && sig.ends_with("status suspect exit 1"),
        "{sig}"
    );
    let said = session.stop_answers().last().expect("a stop")["stopReason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        said.starts_with("prove-it: SUSPECT") && said.contains("the test runner detected"),
        "{said}"
    );

    let repo = sb.repo("skipped");
    repo.arm(fails);
    let session = home.session(
        &repo.root,
        &work(),
        "change it",
        &[("PROVE_IT_SKIP", "1")],
        false,
    );
    let sig = check("skipped", &session, Some(&repo));
    assert!(
        sig.contains("prove-it: skipped") && sig.ends_with("status skipped exit 1"),
        "{sig}"
    );

    let repo = sb.repo("gate-error");
    repo.arm(fails);
    // Git state the gate cannot read (Claude Code keeps the agent out of
    // `.git`, so the test breaks it).
    std::fs::write(repo.path(".git/HEAD"), "garbage").expect("break HEAD");
    let session = home.session(&repo.root, &work(), "change it", &[], false);
    let sig = check("gate error", &session, Some(&repo));
    assert!(
        sig.contains("prove-it: gate error") && sig.ends_with("status gate_error exit 1"),
        "{sig}"
    );

    let missing = ClaudeHome::downloading_from(&crate::download::closed_url());
    let repo = sb.repo("not-installed");
    repo.arm(fails);
    let session = missing.session(&repo.root, &work(), "change it", &[], false);
    let sig = check("not installed", &session, None);
    assert!(
        sig.contains("NOT verified")
            || session.notices().iter().any(|n| n.contains("NOT verified")),
        "{sig}\n{}",
        session.dump()
    );
}
