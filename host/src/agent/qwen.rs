//! Qwen Code hooks (`.qwen/settings.json`, Claude Code's shape):
//! SessionStart and Stop.
//!
//! Its UserPromptSubmit is not a turn start: it fires again after every
//! tool result (prompt `""`) and with a block's reason as the prompt. So it
//! is not wired; the turn is named by `prompt_id`, the same for every
//! retry of one prompt of the person's, as Codex's `turn_id` is.
//!
//! A Stop hook's `continue: false` does not stop Qwen (the agent goes on),
//! so nothing here sends it: a message for the person is a `systemMessage`,
//! which Qwen writes to stderr in text mode. Qwen caps blocks at 8 in a row
//! (7 reasons reach the model); the gate's own cap comes first.

use super::{Adapter, HookEvent, Input, checked, claude_code, read};
use anyhow::Result;
use prove_it_gate::abi::Decision;
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

pub struct Qwen;

/// Every field prove-it reads, from either event.
#[derive(Debug, Deserialize)]
struct Any {
    session_id: String,
    cwd: Option<PathBuf>,
    /// SessionStart: startup | resume | clear | compact
    source: Option<String>,
    /// Stop: the prompt this turn answers, the same for every retry.
    prompt_id: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    last_assistant_message: Option<String>,
}

impl Adapter for Qwen {
    fn title(&self) -> &'static str {
        "Qwen Code"
    }

    fn events(&self) -> &'static [HookEvent] {
        &[HookEvent::SessionStart, HookEvent::Stop]
    }

    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input> {
        let e: Any = read(stdin, event)?;
        let stop = event == HookEvent::Stop;
        checked(Input {
            session_id: e.session_id,
            cwd: e.cwd,
            source: e.source,
            turn: e.prompt_id.filter(|_| stop),
            may_be_retry: stop && e.stop_hook_active,
            claim: e.last_assistant_message,
            prompt: None,
            once: None,
        })
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        claude_code::answer_without_loud_stop(event, decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prove_it_gate::abi::Verdict;
    use serde_json::json;

    #[test]
    fn the_turn_is_the_prompt_id() {
        let input = Qwen
            .parse(
                HookEvent::Stop,
                br#"{"session_id":"s","cwd":"/r","hook_event_name":"Stop","prompt_id":"p-1","stop_hook_active":true,"last_assistant_message":"done"}"#,
            )
            .expect("parses");
        assert_eq!(input.turn.as_deref(), Some("p-1"));
        assert!(input.may_be_retry);
        assert_eq!(input.claim.as_deref(), Some("done"));
    }

    #[test]
    fn a_yield_never_says_continue_false() {
        let yielded = Decision::allow_with("prove-it: WARNING").with_verdict(Verdict::Yielded);
        assert_eq!(
            Qwen.answer(HookEvent::Stop, &yielded),
            Some(json!({"systemMessage": "prove-it: WARNING"}))
        );
    }
}
