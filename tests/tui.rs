//! What the person sees: the real Claude Code terminal UI, driven in tmux
//! against the scripted model. A block, the loud yield after it, a prompt
//! queued while the yield was being decided (it still runs, and is gated
//! again), and the receipt of the pass that follows. And pi's terminal UI:
//! the block and the yield.

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
#[test]
#[ignore = "slow suite: the real pi TUI in tmux (./verify.sh --full)"]
fn pi_shows_the_block_and_the_loud_yield() {
    use crate::agent_hosts::{Agent, Host};
    let agent = Agent::new(
        Host::Pi,
        vec![
            Step::Bash("echo oops > broken"),
            Step::Say("All tests pass."),
            Step::Say("Really done."),
        ],
    );
    let script = agent.sb.tmp.path().join("tui.sh");
    let node = prove_it_test_support::workspace().join("target/node22/node_modules/node/bin");
    let env: String = agent
        .sb
        .env
        .iter()
        .map(|(k, v)| format!("{k}='{v}' "))
        .collect();
    std::fs::write(
        &script,
        format!(
            "cd '{root}' && exec env {env}PATH='{node}:{path}' PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0 \
             PROVE_IT_MAX_BLOCKS=1 GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
             '{pi}' --provider scripted --model scripted -a --tui-mode regular\n",
            root = agent.repo.root.display(),
            node = node.display(),
            path = std::env::var("PATH").unwrap_or_default(),
            pi = prove_it_test_support::workspace()
                .join("target/pi-cli/node_modules/.bin/pi")
                .display(),
        ),
    )
    .expect("write");
    let tmux = Tmux {
        socket: format!("prove-it-pi-{}", std::process::id()),
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
    // pi lists the extensions it loaded at its start.
    tmux.wait_for("prove-it.ts");
    tmux.run(&["send-keys", "-t", "tui", "make the change", "Enter"]);
    let screen = tmux.wait_for("this turn ended without passing verification");
    let order = [
        "make the change",
        "All tests pass.",
        // The block, as a displayed message of prove-it's.
        "[prove-it]",
        "prove-it: this turn cannot end yet",
        "(attempt 1 of 1)",
        "Really done.",
        // The yield, as pi's own warning.
        "Warning: prove-it: WARNING: this turn ended without passing verification",
    ];
    let mut at = 0;
    for text in order {
        match screen[at..].find(text) {
            Some(found) => at += found + text.len(),
            None => panic!("{text:?} is not where it should be on the screen:\n{screen}"),
        }
    }
    assert_eq!(agent.verdict(), "yielded");
}
