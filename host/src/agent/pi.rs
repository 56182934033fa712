//! pi: no shell-command hooks, so prove-it ships an extension
//! ([`EXTENSION`], installed by `prove-it setup pi`) that runs `prove-it
//! hook --agent pi EVENT` at three of pi's events and passes the answer
//! back. Its input is the extension's own JSON (below), not pi's events.
//!
//! - `session_start`: the session's starting point.
//! - `before_agent_start`: a prompt of the person's, so a new turn. It does
//!   not fire again for the continuation a block asks for.
//! - `agent_before_settle`: the agent run is about to end. A block comes
//!   back as `{"block": REASON}`; the extension appends REASON as a
//!   displayed `custom_message` with `continue: true`, which pi sends to the
//!   model as a user message in the same run.
//!
//! pi has no loop flag, no turn id and no cap of its own (12 of 12
//! continuations reached the model): the gate names the turn at its start
//! and counts the blocks itself, so every settle "may be" a retry.
//!
//! What the person sees: headless (`pi -p`), only stderr, where the
//! extension writes `say`; in the TUI, pi's own notification.

use super::{Adapter, HookEvent, Input, cap, checked, claude_code, read};
use anyhow::Result;
use prove_it_gate::abi::{Action, Decision};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

pub struct Pi;

/// The extension `prove-it setup pi` installs, with `__PROVE_IT__` and
/// `__VERSION__` filled in.
pub const EXTENSION: &str = include_str!("pi-extension.ts");

/// What an extension sends for every event.
#[derive(Debug, Deserialize)]
struct Any {
    session_id: String,
    cwd: Option<PathBuf>,
    /// session_start: startup | reload | new | resume | fork
    reason: Option<String>,
    /// before_agent_start: the person's prompt.
    prompt: Option<String>,
    /// agent_before_settle: the agent's last text.
    claim: Option<String>,
}

impl Adapter for Pi {
    fn title(&self) -> &'static str {
        "pi"
    }

    fn events(&self) -> &'static [HookEvent] {
        &[
            HookEvent::SessionStart,
            HookEvent::BeforeAgentStart,
            HookEvent::AgentBeforeSettle,
        ]
    }

    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input> {
        extension_input(event, stdin, event == HookEvent::AgentBeforeSettle)
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        extension_answer(event == HookEvent::AgentBeforeSettle, decision)
    }
}

/// The input an extension sends (pi's and OpenCode's); `stop` for its stop.
pub fn extension_input(event: HookEvent, stdin: &[u8], stop: bool) -> Result<Input> {
    let e: Any = read(stdin, event)?;
    // `new` is a new session (a new id); `reload` keeps the session.
    let source = e.reason.map(|r| match r.as_str() {
        "new" => "startup".to_string(),
        "reload" => "resume".to_string(),
        _ => r,
    });
    checked(Input {
        session_id: e.session_id,
        cwd: e.cwd,
        source,
        turn: None,
        may_be_retry: stop,
        claim: e.claim,
        prompt: e.prompt,
        once: None,
    })
}

/// The answer an extension reads (pi's and OpenCode's): `block` is what
/// the agent is sent back with, `say` what the person is shown.
pub fn extension_answer(stop: bool, decision: &Decision) -> Option<Value> {
    let mut out = Map::new();
    match decision.action {
        Action::Block if stop => {
            out.insert("block".into(), json!(cap(super::block_reason(decision))));
            if let Some(message) = &decision.message {
                out.insert("say".into(), json!(cap(message)));
            }
        }
        Action::Block => {
            let shown = claude_code::shown_block(decision, super::block_reason(decision));
            out.insert("say".into(), json!(cap(&shown)));
        }
        Action::Allow => {
            if let Some(message) = &decision.message {
                out.insert("say".into(), json!(cap(message)));
            }
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prove_it_gate::abi::Verdict;

    #[test]
    fn a_settle_may_always_be_a_retry_and_new_is_a_new_session() {
        let stop = Pi
            .parse(
                HookEvent::AgentBeforeSettle,
                br#"{"session_id":"s","cwd":"/r","claim":"All tests pass."}"#,
            )
            .expect("parses");
        assert!(stop.may_be_retry);
        assert_eq!(stop.turn, None);
        assert_eq!(stop.claim.as_deref(), Some("All tests pass."));
        let start = Pi
            .parse(
                HookEvent::SessionStart,
                br#"{"session_id":"s","cwd":"/r","reason":"new"}"#,
            )
            .expect("parses");
        assert_eq!(start.source.as_deref(), Some("startup"));
        assert!(!start.may_be_retry);
    }

    #[test]
    fn a_block_is_sent_back_and_everything_else_is_said() {
        assert_eq!(
            Pi.answer(HookEvent::AgentBeforeSettle, &Decision::block("fix it")),
            Some(json!({"block": "fix it"}))
        );
        let yielded = Decision::allow_with("prove-it: WARNING").with_verdict(Verdict::Yielded);
        assert_eq!(
            Pi.answer(HookEvent::AgentBeforeSettle, &yielded),
            Some(json!({"say": "prove-it: WARNING"}))
        );
        assert_eq!(
            Pi.answer(HookEvent::BeforeAgentStart, &Decision::block("no")),
            Some(json!({"say": "no"}))
        );
        assert_eq!(Pi.answer(HookEvent::SessionStart, &Decision::allow()), None);
    }
}
