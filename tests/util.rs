//! The test harness: real git repositories in temp dirs, the real
//! `prove-it` binary fed hook JSON on stdin, and failures that show
//! everything needed to see why.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_prove-it");

pub use prove_it_test_support::{git, git_env};

/// A sandbox: its own HOME, state, ledger and (shared) module cache dirs.
pub struct Sandbox {
    pub tmp: tempfile::TempDir,
    pub env: BTreeMap<String, String>,
}

impl Sandbox {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("temp dir");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let mut env = BTreeMap::new();
        env.insert("HOME".into(), home.display().to_string());
        env.insert(
            "PROVE_IT_STATE_DIR".into(),
            tmp.path().join("state").display().to_string(),
        );
        env.insert(
            "PROVE_IT_LEDGER_DIR".into(),
            tmp.path().join("ledger").display().to_string(),
        );
        // Shared between tests so the policy is compiled once per run.
        env.insert(
            "PROVE_IT_CACHE_DIR".into(),
            format!("{}/module-cache", env!("CARGO_TARGET_TMPDIR")),
        );
        Sandbox { tmp, env }
    }

    pub fn state_dir(&self) -> PathBuf {
        self.tmp.path().join("state")
    }

    pub fn ledger_dir(&self) -> PathBuf {
        self.tmp.path().join("ledger")
    }

    /// Points the state dir where nothing can be saved: a path under a
    /// regular file, which no one can create, not even root.
    pub fn unsavable_state(&mut self) -> &mut Self {
        let file = self.tmp.path().join("a-file");
        std::fs::write(&file, "").expect("file");
        let state = file.join("state").display().to_string();
        self.set("PROVE_IT_STATE_DIR", &state)
    }

    pub fn set(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// A new repository in this sandbox with one commit.
    pub fn repo(&self, name: &str) -> Repo {
        let root = self.tmp.path().join(name);
        std::fs::create_dir_all(&root).expect("repo dir");
        // No template: git's sample hooks are a dozen files per repository,
        // hundreds of repositories a run, and nothing here reads them.
        git(&root, &["init", "-q", "--template=", "-b", "main"]);
        let repo = Repo {
            root,
            env: self.env.clone(),
        };
        repo.write("README.md", "hello\n");
        repo.commit("init");
        repo
    }

    /// The commonest start: a repository armed with [`Repo::arm_counting`],
    /// session `session` started on it, then work that makes it fail
    /// (`broken` written).
    pub fn failing_session(&self, session: &str) -> Repo {
        let repo = self.repo("r");
        repo.arm_counting();
        repo.start(session);
        repo.write("broken", "x");
        repo
    }

    /// A new repository with no commits at all.
    pub fn unborn_repo(&self, name: &str) -> Repo {
        let root = self.tmp.path().join(name);
        std::fs::create_dir_all(&root).expect("repo dir");
        git(&root, &["init", "-q", "--template=", "-b", "main"]);
        Repo {
            root,
            env: self.env.clone(),
        }
    }
}

pub struct Repo {
    pub root: PathBuf,
    pub env: BTreeMap<String, String>,
}

impl Repo {
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent dir");
        }
        std::fs::write(&path, content).expect("write");
    }

    pub fn chmod(&self, rel: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.root, args)
    }

    /// git here with the sandbox's settings, so that prove-it run by a git
    /// hook (the commit trailer's) uses the sandbox's state; `GIT_EDITOR`
    /// is `editor`, or `:` (no editor).
    pub fn git_with_hooks(&self, editor: Option<&str>, args: &[&str]) -> Output {
        let template = prove_it(&self.root, &self.env, &[]);
        let mut git = Command::new("git");
        git.args(args).current_dir(&self.root);
        for (key, value) in template.get_envs() {
            match value {
                Some(value) => git.env(key, value),
                None => git.env_remove(key),
            };
        }
        git.env("GIT_EDITOR", editor.unwrap_or(":"));
        git.output().expect("git runs")
    }

    /// `prove-it status --json` here: its exit code and its report.
    pub fn status_json(&self) -> (i32, Value) {
        let out = prove_it(&self.root, &self.env, &["status", "--json"])
            .output()
            .expect("prove-it status");
        let json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("status is not JSON ({e}): {out:?}"));
        (out.status.code().expect("exit code"), json)
    }

    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Writes an executable `verify.sh` with `body` after a `#!/bin/sh` line
    /// and commits it.
    pub fn arm(&self, body: &str) {
        self.write("verify.sh", &format!("#!/bin/sh\n{body}\n"));
        self.chmod("verify.sh", 0o755);
        self.commit("arm");
    }

    /// Arms with a check that fails while `broken` exists, and counts runs in
    /// `.runs` outside the tree (in the sandbox).
    pub fn arm_counting(&self) {
        let runs = self.runs_file();
        self.arm(&format!(
            "echo run >> '{}'\nif [ -e broken ]; then echo 'test result: 1 failed, 41 passed'; exit 1; fi\necho ok",
            runs.display()
        ));
    }

    pub fn runs_file(&self) -> PathBuf {
        self.root.with_extension("runs")
    }

    /// How many times `verify.sh` ran (with [`Repo::arm_counting`]).
    pub fn runs(&self) -> usize {
        std::fs::read_to_string(self.runs_file())
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    /// Runs `prove-it hook <event>` with `input` on stdin, from the repo root.
    pub fn hook(&self, event: &str, input: &Value) -> Outcome {
        run_hook(&self.root, &self.env, event, input.to_string().as_bytes())
    }

    pub fn start(&self, session: &str) -> Outcome {
        self.start_from(session, "startup")
    }

    pub fn start_from(&self, session: &str, source: &str) -> Outcome {
        self.hook(
            "session-start",
            &json!({"session_id": session, "cwd": self.root, "hook_event_name": "SessionStart", "source": source}),
        )
    }

    pub fn prompt(&self, session: &str) -> Outcome {
        self.hook(
            "user-prompt-submit",
            &json!({"session_id": session, "cwd": self.root, "hook_event_name": "UserPromptSubmit", "prompt": "go"}),
        )
    }

    pub fn stop(&self, session: &str, active: bool) -> Outcome {
        self.stop_claiming(session, active, "All tests pass. Ready to merge.")
    }

    pub fn stop_claiming(&self, session: &str, active: bool, claim: &str) -> Outcome {
        self.hook(
            "stop",
            &json!({
                "session_id": session, "cwd": self.root, "hook_event_name": "Stop",
                "stop_hook_active": active, "last_assistant_message": claim,
            }),
        )
    }

    /// A stop whose `cwd` (in the input, and the process's) is `cwd`: where
    /// the agent's last `cd` left it.
    pub fn stop_in(&self, session: &str, cwd: &Path) -> Outcome {
        let input = json!({
            "session_id": session, "cwd": cwd, "hook_event_name": "Stop",
            "stop_hook_active": false, "last_assistant_message": "Done.",
        });
        run_hook(cwd, &self.env, "stop", input.to_string().as_bytes())
    }

    /// A session start from `cwd`.
    pub fn start_in(&self, session: &str, cwd: &Path) -> Outcome {
        let input = json!({
            "session_id": session, "cwd": cwd, "hook_event_name": "SessionStart",
            "source": "startup",
        });
        run_hook(
            cwd,
            &self.env,
            "session-start",
            input.to_string().as_bytes(),
        )
    }
}

/// `prove-it ARGS` in `dir`: the one way the tests run the binary. Settings
/// the developer's shell may carry (`PROVE_IT_*`, `XDG_*` directories,
/// repository-locating `GIT_*`) are removed, git is pinned, and `env` is
/// set: a [`Sandbox`]'s, which points HOME, state, cache and ledger at the
/// test's own temp dir. No test can reach the person's real state.
pub fn prove_it(dir: &Path, env: &BTreeMap<String, String>, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        // A CI's own variables too: `prove-it ci` reads them.
        if key.starts_with("PROVE_IT_")
            || key.starts_with("XDG_")
            || key.starts_with("GITHUB_")
            || key.starts_with("CI_MERGE_REQUEST_")
            || matches!(key, "GIT_DIR" | "GIT_WORK_TREE" | "GIT_INDEX_FILE")
        {
            cmd.env_remove(key);
        }
    }
    if let Some(path) = real_python_first() {
        cmd.env("PATH", path);
    }
    git_env(&mut cmd).envs(env);
    cmd
}

/// PATH with the directory of the real `python3` first, when the one on
/// PATH is a shim script (pyenv's runs half a dozen processes before
/// Python: 80 ms a start here, and the tests' `verify.sh` files start
/// Python dozens of times a run). `None`: PATH is left as it is.
fn real_python_first() -> Option<&'static str> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::var("PATH").ok()?;
        let found = std::env::split_paths(&path)
            .map(|dir| dir.join("python3"))
            .find(|p| p.is_file())?;
        let head = std::fs::read(&found).ok()?;
        if !head.starts_with(b"#!") {
            return None;
        }
        let out = Command::new(&found)
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()?;
        let real = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        Some(format!("{}:{path}", real.parent()?.display()))
    })
    .as_deref()
}

/// `prove-it hook <event>` in `cwd` with `env`, its stdio piped.
pub fn hook_command(cwd: &Path, env: &BTreeMap<String, String>, event: &str) -> Command {
    hook_command_with(cwd, env, &["hook", event])
}

/// `prove-it ARGS` (a hook command line) in `cwd` with `env`, its stdio piped.
fn hook_command_with(cwd: &Path, env: &BTreeMap<String, String>, args: &[&str]) -> Command {
    let mut cmd = prove_it(cwd, env, args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs the binary and collects what it did.
pub fn run_hook(cwd: &Path, env: &BTreeMap<String, String>, event: &str, stdin: &[u8]) -> Outcome {
    run_hook_with(cwd, env, &["hook", event], stdin)
}

/// Runs the hook command line `args` (e.g. `hook --agent gemini after-agent`).
pub fn run_hook_with(
    cwd: &Path,
    env: &BTreeMap<String, String>,
    args: &[&str],
    stdin: &[u8],
) -> Outcome {
    use std::io::Write;
    let mut child = hook_command_with(cwd, env, args)
        .spawn()
        .expect("prove-it starts");
    // A hook stops reading at its input cap and answers: a closed pipe
    // then is its answer, not a failure.
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.expect("write stdin"),
    }
    let output = child.wait_with_output().expect("prove-it finishes");
    // Copilot CLI, which may run a Claude Code hook, shows a stop's warning
    // only for exit 2.
    let copilot = args.contains(&"copilot") || env.get("COPILOT_CLI").is_some_and(|v| v == "1");
    Outcome::new(
        format!("prove-it {} (cwd {})", args.join(" "), cwd.display()),
        String::from_utf8_lossy(stdin).into(),
        output,
        copilot,
    )
}

pub struct Outcome {
    pub command: String,
    pub input: String,
    pub output: Output,
    pub json: Option<Value>,
}

impl Outcome {
    fn new(command: String, input: String, output: Output, copilot: bool) -> Self {
        let stdout = String::from_utf8_lossy(&output.stdout);
        let json = if stdout.trim().is_empty() {
            None
        } else {
            Some(
                serde_json::from_str(&stdout)
                    .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}")),
            )
        };
        let outcome = Outcome {
            command,
            input,
            output,
            json,
        };
        // The one rule that holds for every hook run: exit 0, but for
        // Copilot's warning: exit 2 with it on stderr and nothing on stdout.
        let warned = copilot
            && outcome.output.status.code() == Some(2)
            && outcome.json.is_none()
            && outcome.warning().is_some();
        assert!(
            outcome.output.status.code() == Some(0) || warned,
            "hook must exit 0\n{outcome}"
        );
        outcome
    }

    /// Copilot's warning: what a hook that exits 2 writes on stderr.
    pub fn warning(&self) -> Option<&str> {
        let text = std::str::from_utf8(&self.output.stderr).ok()?;
        (self.output.status.code() == Some(2) && text.starts_with("prove-it: ")).then_some(text)
    }

    pub fn blocked(&self) -> bool {
        self.field("decision") == Some("block")
    }

    pub fn reason(&self) -> &str {
        self.field("reason")
            .unwrap_or_else(|| panic!("expected a block reason\n{self}"))
    }

    /// What the user is shown: a notice, or a yield's stop reason.
    pub fn message(&self) -> &str {
        self.field("systemMessage")
            .or_else(|| self.field("stopReason"))
            .unwrap_or_else(|| panic!("expected a message for the user\n{self}"))
    }

    /// A yield: the turn ends unverified, as loudly as Claude Code allows
    /// (`continue: false` with a stop reason).
    pub fn yielded(&self) -> bool {
        self.json
            .as_ref()
            .is_some_and(|j| j["continue"] == false && j.get("stopReason").is_some())
    }

    #[track_caller]
    pub fn assert_yielded_saying(&self, needle: &str) {
        assert!(self.yielded(), "expected a loud yield\n{self}");
        assert!(
            self.message().contains(needle),
            "stop reason lacks {needle:?}\n{self}"
        );
    }

    /// `verify.sh` ran and passed: the turn ends with a one-line receipt.
    #[track_caller]
    pub fn assert_verified(&self) {
        assert!(
            !self.blocked() && !self.yielded(),
            "expected a pass\n{self}"
        );
        assert!(
            self.message()
                .starts_with("prove-it: verified: ./verify.sh exit 0 in "),
            "expected a receipt\n{self}"
        );
    }

    pub fn field(&self, name: &str) -> Option<&str> {
        self.json.as_ref()?.get(name)?.as_str()
    }

    #[track_caller]
    pub fn assert_quiet(&self) {
        assert!(self.json.is_none(), "expected a quiet allow\n{self}");
    }

    #[track_caller]
    pub fn assert_blocked_with(&self, needle: &str) {
        assert!(self.blocked(), "expected a block\n{self}");
        assert!(
            self.reason().contains(needle),
            "reason lacks {needle:?}\n{self}"
        );
    }

    #[track_caller]
    pub fn assert_allowed_saying(&self, needle: &str) {
        assert!(!self.blocked(), "expected an allow\n{self}");
        assert!(
            self.message().contains(needle),
            "message lacks {needle:?}\n{self}"
        );
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "command: {}", self.command)?;
        writeln!(f, "stdin: {}", self.input)?;
        writeln!(f, "status: {}", self.output.status)?;
        writeln!(
            f,
            "stdout: {}",
            String::from_utf8_lossy(&self.output.stdout)
        )?;
        writeln!(
            f,
            "stderr: {}",
            String::from_utf8_lossy(&self.output.stderr)
        )
    }
}

/// Every file under `dir`, relative, sorted (for "nothing left behind").
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(
                    path.strip_prefix(dir)
                        .expect("under dir")
                        .display()
                        .to_string(),
                );
            }
        }
    }
    out.sort();
    out
}
