//! Codex CLI, Gemini CLI, Copilot CLI, Qwen Code, pi and OpenCode, driven
//! for real: the pinned CLIs (`tests/install-agent-clis.sh`), wired by
//! `prove-it setup`, run headless against a scripted model on loopback that
//! speaks each one's wire format. Every assertion reads what the host
//! itself reported (Codex's hook status lines, Gemini's stream-json and
//! stderr, the others' stderr), what the model was sent, and the gate's
//! own record (`prove-it status`).

use crate::claude::Step;
use crate::util::{BIN, Repo, Sandbox, prove_it};
use serde_json::{Value, json};
use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    Codex,
    Gemini,
    Copilot,
    Qwen,
    Pi,
    Opencode,
}

impl Host {
    const ALL: [Host; 6] = [
        Host::Codex,
        Host::Gemini,
        Host::Copilot,
        Host::Qwen,
        Host::Pi,
        Host::Opencode,
    ];

    fn name(self) -> &'static str {
        match self {
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Qwen => "qwen",
            Host::Pi => "pi",
            Host::Opencode => "opencode",
        }
    }

    /// The pinned CLI, where `tests/install-agent-clis.sh` puts it.
    fn bin(self) -> PathBuf {
        let path = prove_it_test_support::workspace().join(match self {
            Host::Codex => "target/codex-cli/node_modules/.bin/codex",
            Host::Gemini => "target/gemini-cli/node_modules/.bin/gemini",
            Host::Copilot => "target/copilot-cli/node_modules/.bin/copilot",
            Host::Qwen => "target/qwen-code/node_modules/.bin/qwen",
            Host::Pi => "target/pi-cli/node_modules/.bin/pi",
            Host::Opencode => "target/opencode-cli/node_modules/.bin/opencode",
        });
        assert!(
            path.exists(),
            "{} is not installed at {}: run `tests/install-agent-clis.sh` (./verify.sh --full does)",
            self.name(),
            path.display()
        );
        path
    }
}

/// A model on 127.0.0.1 that answers each agent turn from a script, in the
/// wire format of `host`: OpenAI Responses (Codex), Gemini's
/// streamGenerateContent, or streamed Chat Completions (the others).
pub struct Model {
    pub url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Model {
    pub fn start(host: Host, script: Vec<Step>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, script) = (Arc::clone(&seen), Arc::clone(&script));
                std::thread::spawn(move || serve(host, stream, &seen, &script));
            }
        });
        Model { url, requests }
    }

    /// How many requests the model has had.
    fn count(&self) -> usize {
        self.requests.lock().expect("lock").len()
    }

    /// The requests from the `from`th on.
    fn requests_from(&self, from: usize) -> Vec<Value> {
        self.requests.lock().expect("lock")[from..].to_vec()
    }

    /// Everything the agent was sent, as one text (block reasons included).
    pub fn told(&self) -> String {
        self.requests
            .lock()
            .expect("lock")
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

type Script = Mutex<std::vec::IntoIter<Step>>;

fn serve(host: Host, stream: TcpStream, seen: &Mutex<Vec<Value>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    while let Some((line, body)) = crate::claude::read_request(&mut reader) {
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let (kind, bytes) = answer(host, &path, &body, seen, script);
        let head = format!(
            "HTTP/1.1 {}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
            if bytes.is_empty() {
                "404 Not Found"
            } else {
                "200 OK"
            },
            bytes.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(&bytes))
            .is_err()
        {
            return;
        }
    }
}

fn next(body: &[u8], seen: &Mutex<Vec<Value>>, script: &Script) -> (Step, usize) {
    let mut seen = seen.lock().expect("lock");
    seen.push(serde_json::from_slice(body).unwrap_or(Value::Null));
    let step = script
        .lock()
        .expect("lock")
        .next()
        .unwrap_or(Step::Say("Done."));
    (step, seen.len())
}

/// The content type and body for one request (empty body: 404).
fn answer(
    host: Host,
    path: &str,
    body: &[u8],
    seen: &Mutex<Vec<Value>>,
    script: &Script,
) -> (&'static str, Vec<u8>) {
    let mut sse = String::new();
    match host {
        Host::Codex if path.ends_with("/responses") => {
            let (step, n) = next(body, seen, script);
            let mut event =
                |name: &str, data: Value| sse.push_str(&format!("event: {name}\ndata: {data}\n\n"));
            event(
                "response.created",
                json!({"type": "response.created", "response": {"id": format!("resp_{n}")}}),
            );
            let item = match step {
                Step::Bash(cmd) | Step::SayThenBash(_, cmd) => {
                    json!({"type": "function_call", "id": format!("fc_{n}"),
                    "call_id": format!("call_{n}"), "name": "exec_command",
                    "arguments": json!({"cmd": cmd}).to_string()})
                }
                Step::Say(text) => {
                    json!({"type": "message", "role": "assistant", "id": format!("msg_{n}"),
                    "content": [{"type": "output_text", "text": text}]})
                }
            };
            event(
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            );
            event(
                "response.completed",
                json!({"type": "response.completed", "response": {"id": format!("resp_{n}"),
                    "usage": {"input_tokens": 1, "input_tokens_details": null, "output_tokens": 1,
                        "output_tokens_details": null, "total_tokens": 2}}}),
            );
        }
        Host::Gemini if path.contains(":streamGenerateContent") => {
            let (step, _) = next(body, seen, script);
            let part = match step {
                Step::Bash(cmd) | Step::SayThenBash(_, cmd) => {
                    json!({"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}})
                }
                Step::Say(text) => json!({"text": text}),
            };
            let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [part]},
                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}});
            sse.push_str(&format!("data: {chunk}\n\n"));
        }
        Host::Copilot | Host::Qwen | Host::Pi | Host::Opencode
            if path.ends_with("/chat/completions") =>
        {
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            // OpenCode asks for the session's title first, with no tools:
            // not a step of the script, and not a request of the agent's.
            let title = request
                .get("tools")
                .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty));
            let (step, n) = if host == Host::Opencode && title {
                (Step::Say("ok"), 0)
            } else {
                next(body, seen, script)
            };
            let chunk = |delta: Value, finish: Value| {
                json!({"id": format!("chat_{n}"), "object": "chat.completion.chunk", "created": 0,
                    "model": "scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let (text, step) = match step {
                Step::SayThenBash(text, cmd) => (Some(text), Step::Bash(cmd)),
                other => (None, other),
            };
            let (delta, finish) = match step {
                Step::Bash(cmd) => {
                    // The shell tool by the name the CLI offers it under.
                    let tools = request["tools"].as_array().cloned().unwrap_or_default();
                    let names: Vec<String> = tools
                        .iter()
                        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                        .collect();
                    let name = ["bash", "run_shell_command", "shell"]
                        .into_iter()
                        .find(|n| names.iter().any(|m| m == n))
                        .unwrap_or("bash");
                    let args = if host == Host::Pi {
                        json!({"command": cmd})
                    } else {
                        json!({"command": cmd, "description": "run a command"})
                    };
                    (
                        json!({"role": "assistant", "content": text, "tool_calls": [{"index": 0, "id": format!("call_{n}"),
                            "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}),
                        "tool_calls",
                    )
                }
                Step::Say(text) => (json!({"role": "assistant", "content": text}), "stop"),
                Step::SayThenBash(..) => unreachable!("split above"),
            };
            sse.push_str(&format!("data: {}\n\n", chunk(delta, Value::Null)));
            sse.push_str(&format!("data: {}\n\n", chunk(json!({}), json!(finish))));
            let usage = json!({"id": format!("chat_{n}"), "object": "chat.completion.chunk", "created": 0,
                "model": "scripted", "choices": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}});
            sse.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
        }
        // Gemini's model router asks, unstreamed, how hard the prompt is.
        Host::Gemini if path.contains(":generateContent") => {
            let text = json!({"complexity_reasoning": "scripted", "complexity_score": 1});
            let reply = json!({"candidates": [{"content": {"role": "model",
                "parts": [{"text": text.to_string()}]}, "finishReason": "STOP", "index": 0}]});
            return ("application/json", reply.to_string().into_bytes());
        }
        _ => return ("text/plain", Vec::new()),
    }
    ("text/event-stream", sse.into_bytes())
}

/// One CLI's home (config, sessions), a repository wired by `prove-it
/// setup`, and the model it talks to.
pub struct Agent {
    pub host: Host,
    pub sb: Sandbox,
    pub repo: Repo,
    pub model: Model,
}

/// What one headless run left.
pub struct Run {
    pub host: Host,
    pub stdout: String,
    pub stderr: String,
    /// What the model was sent during this run.
    pub requests: Vec<Value>,
}

impl Agent {
    /// A repository whose `verify.sh` fails while `broken` exists, wired for
    /// `host` with `prove-it setup`, and a model playing `script`.
    pub fn new(host: Host, script: Vec<Step>) -> Self {
        Self::set_up(host, script, &[])
    }

    /// The same, with `setup_args` added to `prove-it setup HOST`.
    pub fn set_up(host: Host, script: Vec<Step>, setup_args: &[&str]) -> Self {
        let mut sb = Sandbox::new();
        sb.set(
            "CODEX_HOME",
            &sb.tmp.path().join("home/.codex").display().to_string(),
        );
        let repo = sb.repo("r");
        repo.arm_counting();
        let model = Model::start(host, script);
        let agent = Agent {
            host,
            sb,
            repo,
            model,
        };
        agent.configure();
        let mut args = vec!["setup", host.name()];
        args.extend(setup_args);
        let out = prove_it(&agent.repo.root, &agent.sb.env, &args)
            .output()
            .expect("setup runs");
        assert!(
            out.status.success(),
            "prove-it setup {}: {}",
            host.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        agent
    }

    pub fn home(&self) -> PathBuf {
        self.sb.tmp.path().join("home")
    }

    /// The CLI's own config: the scripted model as its provider, no telemetry.
    fn configure(&self) {
        match self.host {
            Host::Codex => {
                let dir = self.home().join(".codex");
                std::fs::create_dir_all(&dir).expect("codex home");
                let config = format!(
                    r#"model = "scripted"
model_provider = "scripted"
approval_policy = "never"

[model_providers.scripted]
name = "scripted"
base_url = "{}/v1"
env_key = "SCRIPTED_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"#,
                    self.model.url
                );
                std::fs::write(dir.join("config.toml"), config).expect("config");
            }
            Host::Gemini => {
                let dir = self.home().join(".gemini");
                std::fs::create_dir_all(&dir).expect("gemini home");
                let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "telemetry": {"enabled": false}, "privacy": {"usageStatisticsEnabled": false}});
                std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings");
            }
            // Both are configured by their environment (`run`).
            Host::Copilot => {}
            Host::Qwen => {
                let dir = self.home().join(".qwen");
                std::fs::create_dir_all(&dir).expect("qwen home");
                let settings = json!({"telemetry": {"enabled": false},
                    "privacy": {"usageStatisticsEnabled": false}});
                std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings");
            }
            Host::Pi => {
                let dir = self.home().join(".pi/agent");
                std::fs::create_dir_all(&dir).expect("pi home");
                let models = json!({"providers": {"scripted": {"baseUrl": format!("{}/v1", self.model.url),
                    "api": "openai-completions", "apiKey": "scripted", "models": [{"id": "scripted"}]}}});
                std::fs::write(dir.join("models.json"), models.to_string()).expect("models");
            }
            Host::Opencode => {
                let dir = self.home().join(".config/opencode");
                std::fs::create_dir_all(&dir).expect("opencode home");
                let config = json!({"provider": {"scripted": {"npm": "@ai-sdk/openai-compatible",
                    "name": "Scripted", "options": {"baseURL": format!("{}/v1", self.model.url), "apiKey": "scripted"},
                    "models": {"scripted": {"name": "scripted"}}}},
                    "model": "scripted/scripted", "autoupdate": false, "share": "disabled"});
                std::fs::write(dir.join("opencode.json"), config.to_string()).expect("config");
                // At every start OpenCode installs its plugin package into
                // each config folder, and waits a minute for it offline:
                // it is there already, as OpenCode would leave it.
                seed_opencode_plugin(&dir);
                seed_opencode_plugin(&self.repo.root.join(".opencode"));
            }
        }
    }

    /// One headless turn: `prompt` in a new session, or in the last one
    /// (`resume`). `env` adds settings for the gate.
    pub fn run(&self, prompt: &str, resume: bool, env: &[(&str, &str)]) -> Run {
        // Neither CLI caps blocks: a gate that never yields would loop
        // until killed, so a run that outlives this fails the test.
        let mut cmd = Command::new("timeout");
        cmd.args(["--kill-after=5", "120"]).arg(self.host.bin());
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(&self.sb.env)
            .envs(env.iter().copied())
            .current_dir(&self.repo.root)
            .stdin(std::process::Stdio::null());
        crate::util::git_env(&mut cmd);
        match self.host {
            Host::Codex => {
                cmd.env("SCRIPTED_KEY", "scripted")
                    .args(["exec", "--dangerously-bypass-approvals-and-sandbox"]);
                if resume {
                    cmd.args(["resume", "--last"]);
                }
                cmd.arg(prompt);
            }
            Host::Gemini => {
                cmd.env("GEMINI_API_KEY", "scripted")
                    .env("GOOGLE_GEMINI_BASE_URL", &self.model.url)
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    .args(["--yolo", "-o", "stream-json"]);
                if resume {
                    cmd.args(["--resume", "latest"]);
                }
                cmd.args(["-p", prompt]);
            }
            Host::Copilot => {
                cmd.env(
                    "COPILOT_PROVIDER_BASE_URL",
                    format!("{}/v1", self.model.url),
                )
                .env("COPILOT_MODEL", "scripted")
                .env("COPILOT_PROVIDER_API_KEY", "scripted")
                .env("COPILOT_OFFLINE", "true")
                // Its JS is unpacked once for every test, not per HOME.
                .env("COPILOT_PKG_CACHE_HOME", copilot_cache())
                .args(["--allow-all-tools", "--no-auto-update"]);
                // A repository's hooks run in `-p` only in a trusted folder:
                // `--trust-folder` for a new session; it cannot go with
                // `--continue`, so a resumed one trusts by the environment.
                if resume {
                    cmd.env("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS", "true")
                        .arg("--continue");
                } else {
                    cmd.arg("--trust-folder");
                }
                cmd.args(["-p", prompt]);
            }
            Host::Pi => {
                let node =
                    prove_it_test_support::workspace().join("target/node22/node_modules/node/bin");
                let path = std::env::join_paths(std::iter::once(node).chain(
                    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
                ))
                .expect("PATH");
                cmd.env("PATH", path)
                    .env("PI_OFFLINE", "1")
                    .env("PI_SKIP_VERSION_CHECK", "1")
                    .env("PI_TELEMETRY", "0")
                    .args(["-p", "--provider", "scripted", "--model", "scripted"]);
                // pi skips a project's extension, silently, unless the
                // project is trusted: -a trusts it for this run.
                if self.repo.path(".pi/extensions").exists() {
                    cmd.arg("-a");
                }
                if resume {
                    cmd.arg("--continue");
                }
                cmd.arg(prompt);
            }
            Host::Opencode => {
                // `opencode run` works in $PWD, not in its current directory.
                cmd.env("PWD", &self.repo.root)
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "true")
                    .env("OPENCODE_DISABLE_SHARE", "1")
                    .args(["run", "--auto", "--model", "scripted/scripted"]);
                if resume {
                    cmd.arg("--continue");
                }
                cmd.arg(prompt);
            }
            Host::Qwen => {
                cmd.env("OPENAI_BASE_URL", format!("{}/v1", self.model.url))
                    .env("OPENAI_API_KEY", "scripted")
                    .env("OPENAI_MODEL", "scripted")
                    .arg("--yolo");
                if resume {
                    cmd.arg("--continue");
                }
                cmd.arg(prompt);
            }
        }
        let from = self.model.count();
        let out = cmd.output().expect("the agent CLI runs");
        let run = Run {
            host: self.host,
            stdout: String::from_utf8_lossy(&out.stdout).to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
            requests: self.model.requests_from(from),
        };
        // `PROVE_IT_TEST_DUMP=1`: what the host printed, for a developer
        // reading what a person sees.
        if std::env::var_os("PROVE_IT_TEST_DUMP").is_some() {
            eprintln!("---- {:?}: {prompt}\n{}", self.host, run.dump());
        }
        assert_ne!(
            out.status.code(),
            Some(124),
            "{:?} did not end within 120 s (an endless block loop?)\n{}",
            self.host,
            run.dump()
        );
        assert!(out.status.success(), "{}", run.dump());
        run
    }

    /// The gate's own record: `prove-it status --json` in the repository.
    pub fn verdict(&self) -> String {
        let out = prove_it(&self.repo.root, &self.sb.env, &["status", "--json"])
            .output()
            .expect("status runs");
        let record: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        record["verdict"].as_str().unwrap_or("none").to_string()
    }
}

/// Puts the package OpenCode installs at its start into `dir`, with the
/// `.gitignore` OpenCode writes there (so `git status` stays clean).
fn seed_opencode_plugin(dir: &std::path::Path) {
    let seed = prove_it_test_support::workspace().join("target/opencode-plugin");
    assert!(
        seed.join("node_modules").exists(),
        "OpenCode's plugin package is not at {}: run `tests/install-agent-clis.sh`",
        seed.display()
    );
    std::fs::create_dir_all(dir).expect("config dir");
    for name in ["package.json", "package-lock.json"] {
        std::fs::copy(seed.join(name), dir.join(name)).expect("copy");
    }
    std::os::unix::fs::symlink(seed.join("node_modules"), dir.join("node_modules")).expect("link");
    std::fs::write(
        dir.join(".gitignore"),
        "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n",
    )
    .expect("gitignore");
}

/// Where Copilot CLI unpacks its JS, shared by the tests.
fn copilot_cache() -> PathBuf {
    prove_it_test_support::workspace().join("target/copilot-cli/pkg-cache")
}

/// A block's first words, as the agent is told them.
const BLOCKED: &str = "prove-it: this turn cannot end yet";

impl Run {
    /// How many times the host reports the stop blocked (Copilot and Qwen
    /// report nothing: the block reasons the model got in this run).
    pub fn blocks(&self) -> usize {
        match self.host {
            Host::Codex => self
                .stop_statuses()
                .iter()
                .filter(|s| *s == "Blocked")
                .count(),
            Host::Gemini => self.gemini_blocks().len(),
            Host::Copilot | Host::Qwen | Host::Pi | Host::Opencode => {
                let reasons = |request: Option<&Value>| {
                    request.map_or(0, |r| r.to_string().matches(BLOCKED).count())
                };
                reasons(self.requests.last()) - reasons(self.requests.first())
            }
        }
    }

    /// What the host showed the person on stderr: Copilot's hook warnings
    /// (`! TEXT`), Qwen's hook messages, what pi's extension and OpenCode's
    /// plugin wrote there.
    pub fn said(&self) -> &str {
        &self.stderr
    }

    /// Codex's status line for each Stop hook run ("Completed", "Blocked",
    /// "Stopped", "Failed").
    pub fn stop_statuses(&self) -> Vec<String> {
        self.stderr
            .lines()
            .filter_map(|l| l.strip_prefix("hook: Stop "))
            .map(|s| s.trim().to_string())
            .collect()
    }

    /// Gemini's "Agent execution blocked: REASON" warnings in stream-json.
    pub fn gemini_blocks(&self) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "error")
            .filter_map(|e| {
                e["message"]
                    .as_str()?
                    .strip_prefix("Agent execution blocked: ")
                    .map(str::to_string)
            })
            .collect()
    }

    /// What Gemini showed the person from the hooks' `systemMessage`s.
    pub fn gemini_said(&self) -> String {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("Hook system message: "))
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn dump(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

/// Runs `test` in each host (`PROVE_IT_TEST_HOST=NAME` picks one, for a
/// developer chasing one host's failure).
fn both(test: impl Fn(Host)) {
    let only = std::env::var("PROVE_IT_TEST_HOST").ok();
    for host in Host::ALL {
        if only.as_deref().is_none_or(|name| name == host.name()) {
            test(host);
        }
    }
}

/// A false completion: caught, sent back with the failing line, fixed.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn a_false_completion_is_caught_and_fixed() {
    both(|host| {
        let agent = Agent::new(
            host,
            vec![
                Step::Bash("echo oops > broken; echo work > feature.txt"),
                Step::Say("All tests pass. Ready to merge."),
                Step::Bash("rm broken"),
                Step::Say("Fixed; verify.sh passes now."),
            ],
        );
        let run = agent.run("make the change", false, &[]);
        assert_eq!(run.blocks(), 1, "{host:?}: one block\n{}", run.dump());
        let told = agent.model.told();
        assert!(
            told.contains("attempt 1 of 3") && told.contains("1 failed, 41 passed"),
            "{host:?}: the model never saw the block"
        );
        assert!(!agent.repo.path("broken").exists());
        match host {
            Host::Codex => assert_eq!(run.stop_statuses(), ["Blocked", "Completed"]),
            Host::Gemini => assert!(
                run.gemini_said()
                    .contains("prove-it: verified: ./verify.sh exit 0"),
                "{}",
                run.dump()
            ),
            // Qwen writes a hook's message to stderr in text mode, as pi's
            // extension and OpenCode's plugin do; Copilot shows none of a
            // pass (`prove-it status` says it).
            Host::Qwen | Host::Pi | Host::Opencode => assert!(
                run.said()
                    .contains("prove-it: verified: ./verify.sh exit 0"),
                "{}",
                run.dump()
            ),
            Host::Copilot => {}
        }
        assert_eq!(agent.verdict(), "verified", "{host:?}");
    });
}

/// `prove-it setup --user` gates a repository that has no hook file of its
/// own: the hooks live in the person's config.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn user_wide_setup_gates_a_repository_without_hook_files() {
    both(|host| {
        let agent = Agent::set_up(
            host,
            vec![
                Step::Bash("echo oops > broken"),
                Step::Say("All tests pass."),
                Step::Bash("rm broken; echo work > feature.txt"),
                Step::Say("Fixed."),
            ],
            &["--user"],
        );
        for hook_dir in [
            ".codex",
            ".gemini",
            ".github",
            ".qwen",
            ".pi",
            ".opencode/plugins",
        ] {
            assert!(!agent.repo.path(hook_dir).exists(), "{hook_dir}");
        }
        let run = agent.run("make the change", false, &[]);
        assert_eq!(run.blocks(), 1, "{host:?}\n{}", run.dump());
        assert_eq!(agent.verdict(), "verified", "{host:?}");
    });
}

/// Work hidden in a commit is still the session's work.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn work_hidden_in_a_commit_is_caught() {
    both(|host| {
        let agent = Agent::new(
            host,
            vec![
                Step::Bash("echo oops > broken && git add -A && git commit -qm wip"),
                Step::Say("Committed. All tests pass."),
                Step::Bash("git rm -q broken && git commit -qm fix"),
                Step::Say("Fixed."),
            ],
        );
        let run = agent.run("make the change", false, &[]);
        assert_eq!(run.blocks(), 1, "{host:?}\n{}", run.dump());
        assert!(agent.model.told().contains("1 failed, 41 passed"));
        assert_eq!(agent.verdict(), "verified", "{host:?}");
    });
}

/// A session that changes nothing is not checked at all.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn a_read_only_session_is_untouched() {
    both(|host| {
        let agent = Agent::new(
            host,
            vec![Step::Bash("ls"), Step::Say("Nothing to change.")],
        );
        let runs_before = agent.repo.runs();
        let run = agent.run("look around", false, &[]);
        assert_eq!(run.blocks(), 0, "{host:?}\n{}", run.dump());
        assert_eq!(agent.repo.runs(), runs_before, "{host:?}: verify.sh ran");
        assert!(!agent.model.told().contains("prove-it"), "{host:?}");
        assert_eq!(agent.verdict(), "unchanged", "{host:?}");
    });
}

/// Deleting `verify.sh` does not open the gate.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn deleting_verify_sh_is_refused() {
    both(|host| {
        let agent = Agent::new(
            host,
            vec![
                Step::Bash("rm verify.sh"),
                Step::Say("Removed the flaky check. Done."),
                Step::Bash("git checkout -- verify.sh"),
                Step::Say("Restored it."),
            ],
        );
        let run = agent.run("make it pass", false, &[]);
        assert_eq!(run.blocks(), 1, "{host:?}\n{}", run.dump());
        assert!(
            agent
                .model
                .told()
                .contains("`verify.sh` was deleted during this session"),
            "{host:?}"
        );
        assert!(agent.repo.path("verify.sh").exists());
    });
}

/// A stubborn agent is blocked exactly PROVE_IT_MAX_BLOCKS times in one
/// turn (retries that use a tool included: Gemini's trap), then the turn
/// ends with the loud warning; the next turn is gated again.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn a_stubborn_agent_meets_the_cap_then_the_next_turn_is_gated() {
    both(|host| {
        let mut script = vec![Step::Bash("echo oops > broken")];
        for _ in 0..3 {
            script.push(Step::Say("All tests pass."));
            script.push(Step::Bash("echo still > notes.txt"));
        }
        script.push(Step::Say("All tests pass, really."));
        // The next turn, in the same session.
        script.push(Step::Say("Done again."));
        script.push(Step::Bash("rm broken"));
        script.push(Step::Say("Fixed."));
        let agent = Agent::new(host, script);
        let run = agent.run("make the change", false, &[("PROVE_IT_MAX_BLOCKS", "3")]);
        assert_eq!(run.blocks(), 3, "{host:?}: exactly the cap\n{}", run.dump());
        match host {
            Host::Codex => assert_eq!(
                run.stop_statuses(),
                ["Blocked", "Blocked", "Blocked", "Stopped"],
                "{}",
                run.dump()
            ),
            Host::Gemini => assert!(
                run.gemini_said()
                    .contains("this turn ended without passing verification"),
                "{}",
                run.dump()
            ),
            Host::Copilot | Host::Qwen | Host::Pi | Host::Opencode => assert!(
                run.said()
                    .contains("this turn ended without passing verification"),
                "{}",
                run.dump()
            ),
        }
        assert_eq!(agent.verdict(), "yielded", "{host:?}");

        let next = agent.run("try again", true, &[("PROVE_IT_MAX_BLOCKS", "3")]);
        assert_eq!(next.blocks(), 1, "{host:?}: gated again\n{}", next.dump());
        assert_eq!(agent.verdict(), "verified", "{host:?}");
    });
}

/// PROVE_IT_SKIP=1 lets the turn end, and says so wherever the host shows
/// hook output, and in the record.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn a_skip_is_visible() {
    both(|host| {
        let agent = Agent::new(
            host,
            vec![Step::Bash("echo oops > broken"), Step::Say("Done.")],
        );
        let run = agent.run("make the change", false, &[("PROVE_IT_SKIP", "1")]);
        assert_eq!(run.blocks(), 0, "{host:?}\n{}", run.dump());
        match host {
            Host::Codex => assert_eq!(run.stop_statuses(), ["Stopped"], "{}", run.dump()),
            Host::Gemini => assert!(
                run.gemini_said().contains("skipped: PROVE_IT_SKIP=1"),
                "{}",
                run.dump()
            ),
            Host::Copilot | Host::Qwen | Host::Pi | Host::Opencode => assert!(
                run.said().contains("skipped: PROVE_IT_SKIP=1"),
                "{}",
                run.dump()
            ),
        }
        assert_eq!(agent.verdict(), "skipped", "{host:?}");
    });
}

/// Text that comes with a tool call is not the end of the turn: the gate
/// judges the turn's last answer, not a step on the way (OpenCode fires
/// its end-of-text hook for both).
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn text_that_comes_with_a_tool_call_is_not_a_stop() {
    both(|host| {
        let agent = Agent::new(
            host,
            vec![
                Step::Bash("echo work > feature.txt"),
                Step::SayThenBash("All tests pass; one more thing.", "echo oops > broken"),
                Step::Bash("rm broken"),
                Step::Say("Done."),
            ],
        );
        let runs_before = agent.repo.runs();
        let run = agent.run("make the change", false, &[]);
        assert_eq!(run.blocks(), 0, "{host:?}\n{}", run.dump());
        // One run of verify.sh: at the end of the turn, none on the way.
        assert_eq!(
            agent.repo.runs(),
            runs_before + 1,
            "{host:?}\n{}",
            run.dump()
        );
        assert_eq!(agent.verdict(), "verified", "{host:?}");
    });
}

/// pi and OpenCode run prove-it from a file of code that names the binary:
/// a binary that is gone is said where the person looks, not passed over.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn a_binary_gone_from_the_extension_is_a_gate_error_the_person_sees() {
    both(|host| {
        let file = match host {
            Host::Pi => ".pi/extensions/prove-it.ts",
            Host::Opencode => ".opencode/plugins/prove-it.js",
            _ => return,
        };
        let agent = Agent::new(
            host,
            vec![Step::Bash("echo oops > broken"), Step::Say("Done.")],
        );
        let text = std::fs::read_to_string(agent.repo.path(file)).expect("the file setup wrote");
        agent
            .repo
            .write(file, &text.replace(BIN, "/nowhere/prove-it"));
        let run = agent.run("make the change", false, &[]);
        assert!(
            run.said()
                .contains("prove-it: gate error: cannot run /nowhere/prove-it")
                && run.said().contains("this turn was NOT verified"),
            "{host:?}\n{}",
            run.dump()
        );
        let doctor = prove_it(&agent.repo.root, &agent.sb.env, &["doctor", "--no-run"])
            .output()
            .expect("doctor");
        let said = String::from_utf8_lossy(&doctor.stdout);
        assert!(
            said.contains(&format!("FAIL  {}", host.name())) && said.contains("/nowhere/prove-it"),
            "{said}"
        );
    });
}

/// pi skips a project's extension silently unless the project is trusted:
/// doctor says so before the person finds out from an ungated turn, and
/// says nothing once pi trusts it.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn pi_skipping_an_untrusted_project_is_reported_by_doctor() {
    let agent = Agent::new(
        Host::Pi,
        vec![
            Step::Bash("echo oops > broken"),
            Step::Say("Done."),
            Step::Say("Nothing more to do."),
        ],
    );
    let doctor = || {
        let out = prove_it(&agent.repo.root, &agent.sb.env, &["doctor", "--no-run"])
            .output()
            .expect("doctor");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = doctor();
    assert!(
        said.contains("ok    pi")
            && said.contains("warn  pi          pi has not been told to trust this project"),
        "{said}"
    );
    // What doctor warns of: without -a, pi runs no extension and says nothing.
    let mut cmd = Command::new("timeout");
    cmd.args(["--kill-after=5", "120"]).arg(Host::Pi.bin());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(&agent.sb.env)
        .env("PI_OFFLINE", "1")
        .current_dir(&agent.repo.root)
        .stdin(std::process::Stdio::null());
    let node = prove_it_test_support::workspace().join("target/node22/node_modules/node/bin");
    let path = format!(
        "{}:{}",
        node.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).args([
        "-p",
        "--provider",
        "scripted",
        "--model",
        "scripted",
        "make the change",
    ]);
    let out = cmd.output().expect("pi runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("prove-it"));
    assert_eq!(agent.verdict(), "none", "the gate never ran");
    let not_run = "wired, but no verdict of pi's is recorded here yet";
    assert!(doctor().contains(not_run), "{}", doctor());

    // Trusted the way pi's /trust saves it: doctor has nothing to say.
    let root = std::fs::canonicalize(&agent.repo.root).expect("root");
    let trust = agent.home().join(".pi/agent/trust.json");
    std::fs::write(
        &trust,
        json!({root.display().to_string(): true}).to_string(),
    )
    .expect("trust");
    assert!(!doctor().contains("warn  pi"), "{}", doctor());
    // Once a turn of pi's has ended here, doctor knows it runs the gate.
    let run = agent.run("anything else?", false, &[]);
    assert_eq!(agent.verdict(), "unchanged", "{}", run.dump());
    assert!(!doctor().contains(not_run), "{}", doctor());
    // Told never to trust it: pi never loads the file, which is a failure.
    std::fs::write(
        &trust,
        json!({root.display().to_string(): false}).to_string(),
    )
    .expect("trust");
    assert!(doctor().contains("FAIL  pi"), "{}", doctor());
}

/// Wires `repo` for Claude Code by hand, as the README shows:
/// `.claude/settings.json` with `prove-it hook EVENT`.
fn wire_claude_code(repo: &Repo) {
    let hook = |event: &str| {
        json!([{"hooks": [{"type": "command",
        "command": format!("'{BIN}' hook {event}"), "timeout": 3600}]}])
    };
    let settings = json!({"hooks": {
        "SessionStart": hook("session-start"),
        "UserPromptSubmit": hook("user-prompt-submit"),
        "Stop": hook("stop"),
    }});
    repo.write(".claude/settings.json", &settings.to_string());
}

/// Copilot runs the hooks of `.claude/settings.json` too, with its own
/// payload. A repository wired for Claude Code only is gated in Copilot,
/// and the gate answers as Copilot: its yield is the hook warning Copilot
/// shows (exit 2), not Claude Code's `continue: false`, which Copilot
/// would not show.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn copilot_running_a_claude_code_hook_is_answered_as_copilot() {
    let agent = Agent::new(
        Host::Copilot,
        vec![
            Step::Bash("echo oops > broken"),
            Step::Say("All tests pass."),
            Step::Bash("echo still > notes.txt"),
            Step::Say("All tests pass, really."),
        ],
    );
    std::fs::remove_dir_all(agent.repo.path(".github")).expect("unwire copilot");
    wire_claude_code(&agent.repo);
    let run = agent.run("make the change", false, &[("PROVE_IT_MAX_BLOCKS", "1")]);
    assert_eq!(run.blocks(), 1, "{}", run.dump());
    assert!(
        run.said()
            .contains("! prove-it: WARNING: this turn ended without passing"),
        "{}",
        run.dump()
    );
    assert_eq!(agent.verdict(), "yielded");
}

/// Wired both for Claude Code and for Copilot, Copilot fires two hooks at
/// each event: each stop is judged once (one `verify.sh` run, one attempt
/// counted), not twice.
#[test]
#[ignore = "slow suite: the real Codex, Gemini, Copilot, Qwen, pi and OpenCode CLIs (./verify.sh --full)"]
fn copilot_wired_twice_judges_each_stop_once() {
    let agent = Agent::new(
        Host::Copilot,
        vec![
            Step::Bash("echo oops > broken"),
            Step::Say("All tests pass."),
            Step::Bash("rm broken; echo work > feature.txt"),
            Step::Say("Fixed."),
        ],
    );
    wire_claude_code(&agent.repo);
    let runs_before = agent.repo.runs();
    let run = agent.run("make the change", false, &[]);
    assert_eq!(run.blocks(), 1, "{}", run.dump());
    let told = agent.model.told();
    assert!(
        told.contains("attempt 1 of 3") && !told.contains("attempt 2 of 3"),
        "one attempt counted, not two:\n{}",
        run.dump()
    );
    // Two stops, one `verify.sh` run each.
    assert_eq!(agent.repo.runs() - runs_before, 2, "{}", run.dump());
    assert_eq!(agent.verdict(), "verified");
}

/// One hook of `agent` (`codex`, `gemini`) in `repo`, for session `s`.
fn hook(repo: &Repo, agent: &str, event: &str, input: Value) -> crate::util::Outcome {
    let mut input = input;
    input["session_id"] = json!("s");
    input["cwd"] = json!(repo.root);
    crate::util::run_hook_with(
        &repo.root,
        &repo.env,
        &["hook", "--agent", agent, event],
        input.to_string().as_bytes(),
    )
}

/// A repository armed with a check that fails while `broken` exists, a
/// session of `agent` started in it, and `broken` written.
fn started(sb: &Sandbox, agent: &str) -> Repo {
    let repo = sb.repo("r");
    repo.arm_counting();
    hook(&repo, agent, "session-start", json!({"source": "startup"}));
    repo.write("broken", "x");
    repo
}

/// Gemini starts a new agent run after every block, with the reason as its
/// prompt: that is the same turn. A prompt of the person's is a new one.
/// Copilot, running a Claude Code hook (`COPILOT_CLI=1`), is answered as
/// Copilot: a block in JSON, and a yield as exit 2 with its warning on
/// stderr (the one thing `copilot -p` shows). A stop that two wirings both
/// run (one `timestamp`) is judged by the first hook only.
#[test]
fn copilot_is_known_by_its_environment_and_judges_a_stop_once() {
    let mut sb = Sandbox::new();
    sb.set("COPILOT_CLI", "1").set("PROVE_IT_MAX_BLOCKS", "1");
    let repo = sb.repo("r");
    repo.arm_counting();
    let claude = |event: &str, input: Value| {
        let mut input = input;
        input["session_id"] = json!("s");
        input["cwd"] = json!(repo.root);
        crate::util::run_hook_with(
            &repo.root,
            &repo.env,
            &["hook", event],
            input.to_string().as_bytes(),
        )
    };
    claude(
        "session-start",
        json!({"hook_event_name": "SessionStart", "source": "new"}),
    )
    .assert_quiet();
    claude(
        "user-prompt-submit",
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "go"}),
    );
    repo.write("broken", "x");
    let stop = |time: &str| {
        claude(
            "stop",
            json!({"hook_event_name": "Stop", "timestamp": time, "stop_reason": "end_turn", "stop_hook_active": false}),
        )
    };
    let first = stop("2026-12-02T05:00:00.000Z");
    first.assert_blocked_with("attempt 1 of 1");
    // The same stop, from the other wiring: nothing said, nothing run.
    stop("2026-12-02T05:00:00.000Z").assert_quiet();
    assert_eq!(repo.runs(), 1);
    // The reason comes back as a prompt: the same turn.
    claude(
        "user-prompt-submit",
        json!({"hook_event_name": "UserPromptSubmit", "prompt": first.reason()}),
    )
    .assert_quiet();
    let yielded = stop("2026-12-02T05:00:09.000Z");
    let warning = yielded
        .warning()
        .unwrap_or_else(|| panic!("no exit-2 warning\n{yielded}"));
    assert!(
        warning.contains("this turn ended without passing verification"),
        "{warning}"
    );
    assert_eq!(repo.runs(), 2);
}

#[test]
fn gemini_counts_a_turn_across_its_restarts() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    hook(
        &repo,
        "gemini",
        "session-start",
        json!({"source": "startup"}),
    );
    hook(&repo, "gemini", "before-agent", json!({"prompt": "go"}));
    repo.write("broken", "x");
    let stop = || {
        hook(
            &repo,
            "gemini",
            "after-agent",
            json!({"prompt": "go", "stop_hook_active": false}),
        )
    };
    let first = stop();
    first.assert_blocked_with("attempt 1 of 3");
    hook(
        &repo,
        "gemini",
        "before-agent",
        json!({"prompt": first.reason()}),
    )
    .assert_quiet();
    stop().assert_blocked_with("attempt 2 of 3");
    hook(
        &repo,
        "gemini",
        "before-agent",
        json!({"prompt": "now fix it"}),
    );
    stop().assert_blocked_with("attempt 1 of 3");
}

/// Codex names its turns: a stop in a new turn counts from one even when
/// its UserPromptSubmit never reached the gate.
#[test]
fn codex_counts_per_turn_id() {
    let sb = Sandbox::new();
    let repo = started(&sb, "codex");
    let stop = |turn: &str| {
        hook(
            &repo,
            "codex",
            "stop",
            json!({"turn_id": turn, "stop_hook_active": true}),
        )
    };
    stop("t1").assert_blocked_with("attempt 1 of 3");
    stop("t1").assert_blocked_with("attempt 2 of 3");
    stop("t2").assert_blocked_with("attempt 1 of 3");
}

/// When the gate cannot remember a Gemini block, the retry would look like
/// a new turn and the cap would never be met: it lets the stop end, saying
/// so, with the failure shown.
#[test]
fn gemini_without_a_remembered_block_yields_loudly() {
    let sb = Sandbox::new();
    let repo = started(&sb, "gemini");
    // A folder where the block's record would go.
    let sessions = crate::util::files_under(&sb.state_dir())
        .into_iter()
        .find(|f| {
            f.contains("/sessions/")
                && f.rsplit('/')
                    .next()
                    .is_some_and(|n| n.matches('.').count() == 1)
        })
        .expect("the session's state");
    let record = sb.state_dir().join(sessions.replace(".json", ".block"));
    std::fs::create_dir_all(&record).expect("a folder in its place");
    let out = hook(&repo, "gemini", "after-agent", json!({"prompt": "go"}));
    assert!(!out.blocked(), "{out}");
    let said = out.message();
    assert!(
        said.contains("1 failed, 41 passed")
            && said.starts_with("prove-it: this turn ended UNVERIFIED"),
        "{said}"
    );
    let status = prove_it(&repo.root, &sb.env, &["status", "--json"])
        .output()
        .expect("status");
    let record: Value = serde_json::from_slice(&status.stdout).expect("json");
    assert_eq!(record["verdict"], "yielded", "{record}");
}

/// Hooks wired in the middle of a session: its start was missed, so it has
/// no baseline. The tree counts as changed (said once), and a clean tree
/// is still checked rather than passed unseen.
#[test]
fn a_session_whose_start_was_missed_is_still_gated() {
    for (agent, stop) in [("codex", "stop"), ("gemini", "after-agent")] {
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        repo.arm_counting();
        let out = hook(&repo, agent, stop, json!({"turn_id": "t1"}));
        assert!(out.message().contains("no baseline"), "{agent}: {out}");
        assert_eq!(repo.runs(), 1, "{agent}: verify.sh was not run");
        repo.write("broken", "x");
        let out = hook(&repo, agent, stop, json!({"turn_id": "t1"}));
        out.assert_blocked_with("1 failed");
        let answer = String::from_utf8_lossy(&out.output.stdout);
        assert!(!answer.contains("no baseline"), "said once: {out}");
    }
}

/// With state that cannot be saved the gate cannot count, and Gemini
/// cannot rule out a retry: a failing stop there is never blocked (it
/// could loop forever), but ends with the failure shown and the cause said.
#[test]
fn gemini_with_unsavable_state_shows_the_failure_and_does_not_loop() {
    let mut sb = Sandbox::new();
    sb.unsavable_state();
    let repo = started(&sb, "gemini");
    for _ in 0..2 {
        let out = hook(&repo, "gemini", "after-agent", json!({"prompt": "go"}));
        assert!(!out.blocked(), "{out}");
        let said = out.message();
        assert!(
            said.contains("1 failed, 41 passed") && said.contains("could not save its state"),
            "{said}"
        );
    }
}

/// `prove-it setup` keeps the hooks already there, is idempotent, and
/// `doctor` reads back whether each host would run the gate.
#[test]
fn setup_merges_and_doctor_reads_it_back() {
    let mut sb = Sandbox::new();
    let codex_home = sb.tmp.path().join("home/.codex");
    sb.set("CODEX_HOME", &codex_home.display().to_string());
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let other =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-linter"}]}]}});
    repo.write(".codex/hooks.json", &other.to_string());
    let doctor = |sb: &Sandbox| {
        let out = prove_it(&repo.root, &sb.env, &["doctor"])
            .output()
            .expect("doctor");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(doctor(&sb).contains("not set up: run `prove-it setup codex`"));
    for _ in 0..2 {
        let out = prove_it(&repo.root, &sb.env, &["setup", "codex"])
            .output()
            .expect("setup");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path(".codex/hooks.json")).expect("hooks"),
    )
    .expect("json");
    let stops = hooks["hooks"]["Stop"].as_array().expect("stops");
    assert_eq!(stops.len(), 2, "the other hook kept, ours once: {hooks}");
    assert_eq!(stops[0]["hooks"][0]["command"], "my-linter");
    let said = doctor(&sb);
    assert!(said.contains("ok    codex"), "{said}");

    // A hook Codex does not trust is skipped silently: doctor says so.
    let config = codex_home.join("config.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    std::fs::write(&config, text.replace("sha256:", "sha256:0")).expect("write");
    let said = doctor(&sb);
    assert!(
        said.contains("FAIL  codex") && said.contains("does not trust"),
        "{said}"
    );

    let out = prove_it(&repo.root, &sb.env, &["setup", "gemini"])
        .output()
        .expect("setup");
    assert!(out.status.success());
    let settings = std::fs::read_to_string(repo.path(".gemini/settings.json")).expect("settings");
    assert!(
        settings.contains(&format!("{BIN} hook --agent gemini after-agent")),
        "{settings}"
    );
    assert!(doctor(&sb).contains("ok    gemini"));

    let out = prove_it(&repo.root, &sb.env, &["setup", "copilot"])
        .output()
        .expect("setup");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("--trust-folder"),
        "{said}"
    );
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path(".github/hooks/prove-it.json")).expect("hooks"),
    )
    .expect("json");
    assert_eq!(
        hooks["hooks"]["Stop"][0]["hooks"][0]["command"],
        format!("{BIN} hook --agent copilot stop"),
        "{hooks}"
    );
    let said = doctor(&sb);
    assert!(said.contains("ok    copilot"), "{said}");
    assert!(
        said.contains("warn  copilot     untrusted in `copilot -p`"),
        "{said}"
    );
    sb.set("COPILOT_ALLOW_ALL", "true");
    assert!(!doctor(&sb).contains("warn  copilot"));

    let out = prove_it(&repo.root, &sb.env, &["setup", "qwen"])
        .output()
        .expect("setup");
    assert!(out.status.success());
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path(".qwen/settings.json")).expect("settings"),
    )
    .expect("json");
    // Seconds, but 1000 and over are read as milliseconds: an hour.
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["timeout"],
        3_600_000
    );
    // Not a turn start in Qwen: not wired.
    assert!(
        settings["hooks"].get("UserPromptSubmit").is_none(),
        "{settings}"
    );
    assert!(doctor(&sb).contains("ok    qwen"));
    let qwen_home = sb.tmp.path().join("home/.qwen");
    std::fs::create_dir_all(&qwen_home).expect("qwen home");
    std::fs::write(
        qwen_home.join("settings.json"),
        r#"{"security": {"folderTrust": {"enabled": true}}}"#,
    )
    .expect("settings");
    assert!(doctor(&sb).contains("warn  qwen        Qwen's folder trust is on"));
}

/// `prove-it setup pi|opencode` writes one file of prove-it's own beside
/// the others there, says each line, rewrites only its own file, and
/// `doctor` reads it back: not set up, wired, written by another version.
#[test]
fn setup_writes_the_extension_files_and_doctor_reads_them_back() {
    let mut sb = Sandbox::new();
    let pi_dir = sb.tmp.path().join("pi-agent");
    sb.set("PI_CODING_AGENT_DIR", &pi_dir.display().to_string());
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let run = |sb: &Sandbox, args: &[&str]| {
        let out = prove_it(&repo.root, &sb.env, args).output().expect("runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (_, said) = run(&sb, &["doctor", "--no-run"]);
    assert!(
        said.contains("not set up: run `prove-it setup pi`"),
        "{said}"
    );
    assert!(
        said.contains("not set up: run `prove-it setup opencode`"),
        "{said}"
    );

    repo.write(
        ".opencode/plugins/theirs.js",
        "export const Theirs = async () => ({});\n",
    );
    let (ok, said) = run(&sb, &["setup", "opencode"]);
    assert!(ok && said.contains("(written)"), "{said}");
    assert!(
        said.contains(&format!("{BIN} hook --agent opencode text-complete")),
        "{said}"
    );
    let (ok, said) = run(&sb, &["setup", "opencode"]);
    assert!(ok && said.contains("(unchanged)"), "{said}");
    assert!(repo.path(".opencode/plugins/theirs.js").exists());
    let plugin =
        std::fs::read_to_string(repo.path(".opencode/plugins/prove-it.js")).expect("plugin");
    assert!(
        plugin.contains(&format!("const PROVE_IT = \"{BIN}\";")),
        "{plugin}"
    );

    let (ok, said) = run(&sb, &["setup", "pi"]);
    assert!(
        ok && said.contains("-a"),
        "the trust pi needs is said: {said}"
    );
    let (ok, said) = run(&sb, &["setup", "pi", "--user"]);
    assert!(ok, "{said}");
    assert!(pi_dir.join("extensions/prove-it.ts").exists(), "{said}");
    let (_, said) = run(&sb, &["doctor", "--no-run"]);
    assert!(said.contains("ok    opencode"), "{said}");
    assert!(said.contains("ok    pi"), "{said}");
    let not_run = |title: &str| format!("wired, but no verdict of {title}'s is recorded here yet");
    assert!(said.contains(&not_run("OpenCode")), "{said}");
    assert!(said.contains(&not_run("pi")), "{said}");
    // A stop the plugin sends, as OpenCode would: recorded as OpenCode's.
    let mut hook = prove_it(
        &repo.root,
        &sb.env,
        &["hook", "--agent", "opencode", "text-complete"],
    )
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .spawn()
    .expect("hook runs");
    let stop = json!({"session_id": "s1", "cwd": repo.root, "claim": "Done."});
    std::io::Write::write_all(
        hook.stdin.as_mut().expect("stdin"),
        stop.to_string().as_bytes(),
    )
    .expect("write");
    assert!(hook.wait_with_output().expect("hook").status.success());
    let (_, said) = run(&sb, &["doctor", "--no-run"]);
    assert!(!said.contains(&not_run("OpenCode")), "{said}");
    assert!(said.contains(&not_run("pi")), "{said}");

    // Another version's file: said, with what to run.
    let file = repo.path(".opencode/plugins/prove-it.js");
    let older = plugin.replacen(
        &format!("// prove-it {}:", env!("CARGO_PKG_VERSION")),
        "// prove-it 0.0.1:",
        1,
    );
    std::fs::write(&file, older).expect("write");
    let (_, said) = run(&sb, &["doctor", "--no-run"]);
    assert!(
        said.contains("warn  opencode") && said.contains("written by prove-it 0.0.1"),
        "{said}"
    );

    // A file of that name that is not prove-it's is left as it is.
    std::fs::write(&file, "export const Mine = async () => ({});\n").expect("write");
    let (ok, said) = run(&sb, &["setup", "opencode"]);
    assert!(!ok && said.contains("is not prove-it's"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "export const Mine = async () => ({});\n"
    );
}
