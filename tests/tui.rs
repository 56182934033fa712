//! What the person sees: the real Claude Code terminal UI, driven in tmux
//! against the scripted model. A block, the loud yield after it, a prompt
//! queued while the yield was being decided (it still runs, and is gated
//! again), and the receipt of the pass that follows. And pi's and
//! OpenCode's terminal UIs: the block and the yield.

use crate::claude::{ClaudeHome, ScriptedModel, Step, claude_bin};
use crate::util::Sandbox;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux runs (Debian: apt-get install tmux)");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "tui", "-S", "-1000"])
    }

    /// Waits until the screen shows `text`; panics with the screen if not.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "the screen never showed {text:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

#[test]
#[ignore = "slow suite: the real Claude Code TUI in tmux (./verify.sh --full)"]
fn the_person_sees_the_block_the_loud_yield_and_the_receipt() {
    let sb = Sandbox::new();
    let home = ClaudeHome::with_plugin_installed();
    let repo = sb.repo("r");
    // Slow enough to type a prompt while a stop is being decided.
    repo.arm("if [ -e broken ]; then sleep 3; echo 'test result: FAILED. 1 failed'; exit 1; fi");
    let model = ScriptedModel::start(vec![
        Step::Bash("echo oops > broken"),
        Step::Say("All tests pass."),
        Step::Say("Really done."),
        // The queued prompt's turn.
        Step::Say("The queued prompt ran."),
        Step::Bash("rm broken; echo fixed > src.txt"),
        Step::Say("Fixed it."),
    ]);
    let root = repo.root.display().to_string();
    // A person who has been through Claude Code's first-run questions.
    let settings = serde_json::json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": { "approved": ["scripted"], "rejected": [] },
        "projects": { root.clone(): { "hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true } },
    });
    std::fs::write(home.home().join(".claude.json"), settings.to_string()).expect("write");
    let script = sb.tmp.path().join("tui.sh");
    let path = std::env::var("PATH").unwrap_or_default();
    std::fs::write(
        &script,
        format!(
            "cd '{root}' && exec env HOME='{home}' PATH='{path}' CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
             DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 PROVE_IT_BIN='{bin}' PROVE_IT_MAX_BLOCKS=1 \
             PROVE_IT_STATE_DIR='{state}' ANTHROPIC_BASE_URL='{url}' ANTHROPIC_API_KEY=scripted \
             GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null '{claude}' \
             --permission-mode acceptEdits --allowedTools Bash\n",
            home = home.home().display(),
            bin = crate::util::BIN,
            state = home.dir.path().join("state").display(),
            url = model.url,
            claude = claude_bin().display(),
        ),
    )
    .expect("write");
    let tmux = Tmux {
        socket: format!("prove-it-test-{}", std::process::id()),
    };
    let command = format!("sh '{}'", script.display());
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "tui",
        "-x",
        "160",
        "-y",
        "50",
        &command,
    ]);
    tmux.wait_for("accept edits on");

    tmux.run(&["send-keys", "-t", "tui", "make the change", "Enter"]);
    // While the first stop runs verify.sh, a queued prompt: Claude Code
    // fires UserPromptSubmit for it at once, naming the running turn, and
    // the count must go on (the block says it is the last one).
    tmux.wait_for("All tests pass.");
    tmux.run(&["send-keys", "-t", "tui", "a queued prompt", "Enter"]);
    let screen = tmux.wait_for("Stop says: prove-it: verified: ./verify.sh exit 0");

    let order = [
        "Stop hook reported a problem",
        "(attempt 1 of 1)",
        // The yield has Claude Code's own headline, as a block does.
        "Stop hook stopped Claude",
        "prove-it: WARNING: this turn ended without passing verification",
        // The queued prompt still runs, and its turn is gated again.
        "a queued prompt",
        "The queued prompt ran.",
        "Stop hook reported a problem",
        "Fixed it.",
        "Stop says: prove-it: verified: ./verify.sh exit 0 in ",
    ];
    let mut at = 0;
    for text in order {
        match screen[at..].find(text) {
            Some(found) => at += found + text.len(),
            None => panic!("{text:?} missing, or out of order, on the screen:\n{screen}"),
        }
    }
    assert!(screen.contains("after 1 blocked attempt"), "{screen}");
}

/// pi's terminal UI, wired by `prove-it setup pi`: the block is shown as a
/// message of prove-it's, and the loud yield as pi's own notification.
/// Starts `agent`'s host in its terminal UI, in tmux: `command` run in the
/// agent's repository with the sandbox's environment and a cap of one
/// block (so the yield comes right after it).
fn start_tui(agent: &crate::agent_hosts::Agent, name: &str, command: &str) -> Tmux {
    let script = agent.sb.tmp.path().join("tui.sh");
    let env: String = agent
        .sb
        .env
        .iter()
        .map(|(k, v)| format!("{k}='{v}' "))
        .collect();
    let root = agent.repo.root.display();
    std::fs::write(
        &script,
        format!(
            "cd '{root}' && exec env {env}PWD='{root}' PROVE_IT_MAX_BLOCKS=1 GIT_CONFIG_NOSYSTEM=1 \
             GIT_CONFIG_GLOBAL=/dev/null {command}\n"
        ),
    )
    .expect("write");
    let tmux = Tmux {
        socket: format!("prove-it-{name}-{}", std::process::id()),
    };
    let shell = format!("sh '{}'", script.display());
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "tui",
        "-x",
        "160",
        "-y",
        "50",
        &shell,
    ]);
    tmux
}

/// Panics with the screen unless it shows each of `texts`, in this order.
fn assert_in_order(screen: &str, texts: &[&str]) {
    let mut at = 0;
    for text in texts {
        match screen[at..].find(text) {
            Some(found) => at += found + text.len(),
            None => panic!("{text:?} is not where it should be on the screen:\n{screen}"),
        }
    }
}

/// The three steps both extension hosts' TUI tests script: a change that
/// breaks `verify.sh`, a false claim, and a second claim after the block.
fn stubborn_steps() -> Vec<Step> {
    vec![
        Step::Bash("echo oops > broken"),
        Step::Say("All tests pass."),
        Step::Say("Really done."),
    ]
}

fn cli(path: &str) -> String {
    prove_it_test_support::workspace()
        .join(path)
        .display()
        .to_string()
}

#[test]
#[ignore = "slow suite: the real pi TUI in tmux (./verify.sh --full)"]
fn pi_shows_the_block_and_the_loud_yield() {
    use crate::agent_hosts::{Agent, Host};
    let agent = Agent::new(Host::Pi, stubborn_steps());
    let tmux = start_tui(
        &agent,
        "pi",
        &format!(
            "PATH='{node}:{path}' PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0 \
             '{pi}' --provider scripted --model scripted -a --tui-mode regular",
            node = cli("target/node22/node_modules/node/bin"),
            path = std::env::var("PATH").unwrap_or_default(),
            pi = cli("target/pi-cli/node_modules/.bin/pi"),
        ),
    );
    // pi lists the extensions it loaded at its start.
    tmux.wait_for("prove-it.ts");
    tmux.run(&["send-keys", "-t", "tui", "make the change", "Enter"]);
    let screen = tmux.wait_for("this turn ended without passing verification");
    assert_in_order(
        &screen,
        &[
            "make the change",
            "All tests pass.",
            // The block, as a displayed message of prove-it's.
            "[prove-it]",
            "prove-it: this turn cannot end yet",
            "(attempt 1 of 1)",
            "Really done.",
            // The yield, as pi's own warning.
            "Warning: prove-it: WARNING: this turn ended without passing verification",
        ],
    );
    assert_eq!(agent.verdict(), "yielded");
}

/// OpenCode's terminal UI, wired by `prove-it setup opencode`: the block
/// is a new message of the session, and the loud yield a toast.
#[test]
#[ignore = "slow suite: the real OpenCode TUI in tmux (./verify.sh --full)"]
fn opencode_shows_the_block_and_the_loud_yield() {
    use crate::agent_hosts::{Agent, Host};
    let agent = Agent::new(Host::Opencode, stubborn_steps());
    let tmux = start_tui(
        &agent,
        "opencode",
        &format!(
            "PATH='{path}' OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
             OPENCODE_DISABLE_DEFAULT_PLUGINS=true OPENCODE_DISABLE_SHARE=1 \
             '{opencode}' --model scripted/scripted",
            path = std::env::var("PATH").unwrap_or_default(),
            opencode = cli("target/opencode-cli/node_modules/.bin/opencode"),
        ),
    );
    tmux.wait_for("Ask anything");
    // Keys sent before the prompt box takes them, or with Enter in one
    // burst, are lost or pasted.
    std::thread::sleep(Duration::from_secs(1));
    tmux.run(&["send-keys", "-t", "tui", "-l", "make the change"]);
    std::thread::sleep(Duration::from_millis(500));
    tmux.run(&["send-keys", "-t", "tui", "Enter"]);
    // The toast wraps its text: only its first words are on one line.
    let screen = tmux.wait_for("prove-it: WARNING: this turn ended");
    assert_in_order(
        &screen,
        &[
            "make the change",
            // The block, as a message of the session.
            "prove-it: this turn cannot end yet",
            "(attempt 1 of 1)",
            // The agent went on in the same turn.
            "Really done.",
        ],
    );
    // The yield is a toast, drawn over the top of the session, with the
    // reason and the cap.
    for text in [
        "the gate gave up after 1 blocked attempt",
        "The next turn is gated again.",
    ] {
        assert!(
            screen.contains(text),
            "{text:?} is not in the toast:\n{screen}"
        );
    }
    // Nothing written across the screen (stderr is the terminal there).
    assert!(
        !screen
            .lines()
            .any(|l| l.starts_with("The next turn is gated again.")),
        "{screen}"
    );
    assert_eq!(agent.verdict(), "yielded");
}
