//! Driving the real Claude Code CLI: a scripted model on loopback that plays
//! the agent, the plugin installed from a clean copy of this checkout through
//! the marketplace flow, and `claude -p` sessions read back through their
//! stream-json hook events.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The pinned CLI: `$PROVE_IT_CLAUDE`, else where `tests/install-claude-code.sh`
/// puts it.
pub fn claude_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("PROVE_IT_CLAUDE") {
        return PathBuf::from(path);
    }
    let path = workspace()
        .join("target/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    assert!(
        path.exists(),
        "the Claude Code CLI is not installed at {}: run `tests/install-claude-code.sh` (./verify.sh does) or set PROVE_IT_CLAUDE",
        path.display()
    );
    path
}

pub use prove_it_test_support::workspace;

/// What the scripted agent does next, one entry per main-loop request.
#[derive(Clone, Debug)]
pub enum Step {
    /// Run a shell command with the Bash tool.
    Bash(&'static str),
    /// Say something and end the turn (a claim, when it says it is done).
    Say(&'static str),
    /// Say something and run a command in the same answer: the turn goes
    /// on. Only the Chat Completions hosts are sent the text too.
    SayThenBash(&'static str, &'static str),
}

/// A model server on 127.0.0.1 answering the Messages API from a script.
pub struct ScriptedModel {
    pub url: String,
    /// Every main-loop request body received, in order.
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ScriptedModel {
    pub fn start(script: Vec<Step>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                let script = Arc::clone(&script);
                std::thread::spawn(move || serve(stream, &seen, &script));
            }
        });
        ScriptedModel { url, requests }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("lock").clone()
    }

    /// All text of the messages the agent was sent, joined (what it was told).
    pub fn told(&self) -> String {
        self.requests()
            .iter()
            .map(|r| r["messages"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

type Script = Mutex<std::vec::IntoIter<Step>>;

/// Reads one HTTP/1.1 request: its request line and body (`None`: the
/// connection closed).
pub fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some((line, body))
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Value>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    while let Some((line, body)) = read_request(&mut reader) {
        let post = line.starts_with("POST");
        if !post || !line.contains("/v1/messages") {
            let _ = writer.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
            continue;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        // Requests with tools are the agent's main loop; others (titles,
        // summaries) get a short text.
        let step = if request
            .get("tools")
            .is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty()))
        {
            seen.lock().expect("lock").push(request);
            script
                .lock()
                .expect("lock")
                .next()
                .unwrap_or(Step::Say("Done."))
        } else {
            Step::Say("ok")
        };
        let sse = events(&step, seen.lock().expect("lock").len());
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {}\r\n\r\n",
            sse.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(sse.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

/// The streaming (SSE) Messages API events for one step.
fn events(step: &Step, n: usize) -> String {
    let mut out = String::new();
    let mut event =
        |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant",
            "model": "claude-scripted", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    );
    let stop_reason = match step {
        Step::Say(text) => {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            );
            "end_turn"
        }
        Step::Bash(command) | Step::SayThenBash(_, command) => {
            let input = json!({"command": command, "description": "scripted step"}).to_string();
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {}}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input}}),
            );
            "tool_use"
        }
    };
    event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

/// An isolated Claude Code home with the plugin installed from a clean copy
/// of this checkout (what a fresh clone holds: the tracked files).
pub struct ClaudeHome {
    pub dir: tempfile::TempDir,
    /// When set, sessions find no `prove-it` at all (no PROVE_IT_BIN, a
    /// PATH of /usr/bin:/bin) and the plugin downloads it from here.
    pub downloads_from: Option<String>,
}

impl ClaudeHome {
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Copies the tracked files of the checkout into `<dir>/checkout`, then
    /// `claude plugin marketplace add` + `claude plugin install`.
    pub fn with_plugin_installed() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        let checkout = dir.path().join("check out");
        clean_copy(&workspace(), &checkout);
        let home = ClaudeHome {
            dir,
            downloads_from: None,
        };
        std::fs::create_dir_all(home.home()).expect("home");
        home.cli(&[
            "plugin",
            "marketplace",
            "add",
            checkout.to_str().expect("utf-8"),
        ]);
        home.cli(&["plugin", "install", "prove-it@whynext"]);
        home
    }

    /// The plugin installed as a person without Rust has it: its host is
    /// downloaded by the plugin from `url` (`PROVE_IT_DOWNLOAD_URL`).
    pub fn downloading_from(url: &str) -> Self {
        let mut home = Self::with_plugin_installed();
        home.downloads_from = Some(url.to_string());
        home
    }

    /// Publishes `version` of the plugin in the marketplace copy and lets
    /// Claude Code update to it, as a plugin update reaches a person.
    pub fn update_plugin_to(&self, version: &str) {
        let checkout = self.dir.path().join("check out");
        let current = format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION"));
        // .claude-plugin/marketplace.json is a link to the root one.
        for file in [
            ".claude-plugin/plugin.json",
            ".claude-plugin/marketplace.json",
        ] {
            let path = checkout.join(file);
            let text = std::fs::read_to_string(&path).expect("read");
            assert!(text.contains(&current), "{file} names no version");
            std::fs::write(
                &path,
                text.replace(&current, &format!("\"version\": \"{version}\"")),
            )
            .expect("write");
        }
        self.cli(&["plugin", "marketplace", "update", "whynext"]);
        self.cli(&["plugin", "update", "prove-it@whynext"]);
    }

    /// Where the plugin was installed.
    pub fn installed_plugin(&self) -> PathBuf {
        let dir = self.home().join(".claude/plugins/cache/whynext/prove-it");
        std::fs::read_dir(&dir)
            .expect("plugin cache")
            .flatten()
            .map(|e| e.path())
            .next()
            .unwrap_or_else(|| panic!("nothing installed in {}", dir.display()))
    }

    /// Runs `claude ARGS` (not a session), panicking with its output on failure.
    pub fn cli(&self, args: &[&str]) -> String {
        self.cli_in(&self.home(), args)
    }

    /// Runs `claude ARGS` in `dir` (a repository, for `--scope local`).
    pub fn cli_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self
            .command()
            .current_dir(dir)
            .args(args)
            .output()
            .expect("claude runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "claude {args:?} failed:\n{text}");
        text
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(claude_bin());
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// Runs one `claude -p PROMPT` turn in `repo` against `model`, with the
    /// hooks finding the host through PROVE_IT_BIN. `env` adds settings.
    pub fn session(
        &self,
        repo: &Path,
        model: &ScriptedModel,
        prompt: &str,
        env: &[(&str, &str)],
        resume: bool,
    ) -> Session {
        let mut cmd = self.command();
        match &self.downloads_from {
            None => cmd.env("PROVE_IT_BIN", crate::util::BIN),
            // No cargo, no prove-it: what a machine without Rust has.
            Some(url) => cmd
                .env("PATH", "/usr/bin:/bin")
                .env("PROVE_IT_DOWNLOAD_URL", url),
        };
        // `env` comes after, so a test can name another host.
        cmd.current_dir(repo)
            .env("ANTHROPIC_BASE_URL", &model.url)
            .env("ANTHROPIC_API_KEY", "scripted")
            .env("PROVE_IT_STATE_DIR", self.dir.path().join("state"))
            .env("PROVE_IT_LEDGER_DIR", self.dir.path().join("ledger"))
            .env(
                "PROVE_IT_CACHE_DIR",
                format!("{}/module-cache", env!("CARGO_TARGET_TMPDIR")),
            )
            .envs(env.iter().copied())
            .args([
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
            ])
            .args(["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]);
        if resume {
            cmd.arg("--continue");
        }
        crate::util::git_env(&mut cmd);
        let out = cmd.output().expect("claude -p runs");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let events = stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        Session {
            events,
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
            status: out.status,
        }
    }
}

pub struct Session {
    pub events: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
    pub status: std::process::ExitStatus,
}

impl Session {
    /// The `hook_response` events for `hook_event` (e.g. "Stop"), in order.
    pub fn hook_responses(&self, hook_event: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["subtype"] == "hook_response" && e["hook_event"] == hook_event)
            .collect()
    }

    /// What the SessionStart hook printed (empty when it said nothing).
    pub fn session_start_said(&self) -> &str {
        self.hook_responses("SessionStart")
            .first()
            .and_then(|e| e["stdout"].as_str())
            .unwrap_or_default()
    }

    /// The Stop hook's parsed JSON answers (empty answers are skipped).
    pub fn stop_answers(&self) -> Vec<Value> {
        self.hook_responses("Stop")
            .iter()
            .filter_map(|e| serde_json::from_str(e["stdout"].as_str().unwrap_or("")).ok())
            .collect()
    }

    /// The result's `terminal_reason` (`stop_hook_prevented` after a yield).
    pub fn terminal_reason(&self) -> String {
        self.events
            .iter()
            .rev()
            .find(|e| e["type"] == "result")
            .and_then(|e| e["terminal_reason"].as_str())
            .unwrap_or_default()
            .to_string()
    }

    /// The notices shown to the person ("Stop says: ..."), in order.
    pub fn notices(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["subtype"] == "informational")
            .filter_map(|e| e["content"].as_str().map(str::to_string))
            .collect()
    }

    pub fn dump(&self) -> String {
        format!(
            "status: {}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Copies the files git tracks (as they are in the work tree) from `from` to `to`.
pub fn clean_copy(from: &Path, to: &Path) {
    let list = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(from)
        .output()
        .expect("git ls-files");
    for rel in list.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let rel = Path::new(std::str::from_utf8(rel).expect("utf-8 path"));
        let (src, dst) = (from.join(rel), to.join(rel));
        let Ok(meta) = std::fs::symlink_metadata(&src) else {
            continue;
        };
        std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).expect("link"), &dst)
                .expect("symlink");
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}
