//! Codex CLI hooks (`.codex/hooks.json`): the same three events as Claude
//! Code, and a `turn_id` that names each turn.
//!
//! Codex ends the turn silently when a hook exits non-zero or prints
//! anything but JSON, so every answer is exit 0 with JSON (or nothing).
//! `codex exec` shows no hook text at all, only a status line per hook
//! ("Completed", "Blocked", "Stopped"): every stop that ends unproven
//! (yielded, skipped, gate error) is answered with `continue: false`, so
//! its line says "Stopped", never "Completed".

use super::{Adapter, HookEvent, Input, cap, checked, claude_code, read};
use anyhow::Result;
use prove_it_gate::abi::{Action, Decision, Verdict};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

pub struct Codex;

/// Every field prove-it reads, from any of the three events.
#[derive(Debug, Deserialize)]
struct Any {
    session_id: String,
    cwd: Option<PathBuf>,
    /// SessionStart: startup | resume | clear | compact | fork
    source: Option<String>,
    /// UserPromptSubmit and Stop: the same for every retry of one turn.
    turn_id: Option<String>,
    /// Stop: true on every re-check after a block.
    #[serde(default)]
    stop_hook_active: bool,
    last_assistant_message: Option<String>,
    prompt: Option<String>,
}

impl Adapter for Codex {
    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn events(&self) -> &'static [HookEvent] {
        &[
            HookEvent::SessionStart,
            HookEvent::UserPromptSubmit,
            HookEvent::Stop,
        ]
    }

    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input> {
        let e: Any = read(stdin, event)?;
        checked(Input {
            session_id: e.session_id,
            cwd: e.cwd,
            source: e.source,
            turn: e.turn_id.filter(|t| !t.is_empty()),
            may_be_retry: e.stop_hook_active,
            claim: e.last_assistant_message,
            prompt: e.prompt,
            once: None,
        })
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        if event != HookEvent::Stop {
            return claude_code::answer(event, decision);
        }
        match (decision.action, &decision.message) {
            (Action::Block, message) => {
                let reason = super::block_reason(decision);
                let mut out = json!({"decision": "block", "reason": cap(reason)});
                if let Some(message) = message {
                    out["systemMessage"] = json!(cap(message));
                }
                Some(out)
            }
            (Action::Allow, Some(message)) if !decision.verdict.is_some_and(Verdict::proven) => {
                Some(json!({
                    "continue": false,
                    "stopReason": cap(message),
                    "systemMessage": cap(message),
                }))
            }
            (Action::Allow, Some(message)) => Some(json!({"systemMessage": cap(message)})),
            (Action::Allow, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_id_names_the_turn() {
        let input = Codex
            .parse(
                HookEvent::Stop,
                br#"{"session_id":"s","turn_id":"t7","stop_hook_active":true,"cwd":"/r"}"#,
            )
            .expect("parses");
        assert_eq!(input.turn.as_deref(), Some("t7"));
        assert!(input.may_be_retry);
    }

    #[test]
    fn an_unproven_end_is_stopped_and_a_proven_one_is_not() {
        for verdict in [
            Verdict::Yielded,
            Verdict::Weakened,
            Verdict::Suspect,
            Verdict::NotJudged,
            Verdict::Skipped,
            Verdict::GateError,
        ] {
            let unproven = Decision::allow_with("not proven").with_verdict(verdict);
            assert_eq!(
                Codex.answer(HookEvent::Stop, &unproven).expect("said")["continue"],
                false,
                "{verdict:?}"
            );
        }
        let verified = Decision::allow_with("verified").with_verdict(Verdict::Verified);
        let answer = Codex.answer(HookEvent::Stop, &verified).expect("said");
        assert_eq!(answer, json!({"systemMessage": "verified"}));
    }
}
