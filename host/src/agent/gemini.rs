//! Gemini CLI hooks (`.gemini/settings.json`): SessionStart, BeforeAgent
//! (a turn starts) and AfterAgent (the agent wants to end its turn).
//!
//! Two traps decide this adapter. After every block Gemini fires
//! BeforeAgent again with the block's reason as its prompt, though the
//! person sent nothing: the hook command tells that apart from a real new
//! turn (see [`Adapter::block_restarts_turn`]). And its `stop_hook_active`
//! is false again after any retry that used a tool, so it cannot rule out
//! a retry: every stop here "may be" one.
//!
//! What the person sees: a block appears in the output (stream-json too)
//! as "Agent execution blocked: REASON"; any other message is written to
//! stderr as "Hook system message: TEXT".

use super::{Adapter, HookEvent, Input, cap, checked, claude_code, read};
use anyhow::Result;
use prove_it_gate::abi::{Action, Decision};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

pub struct Gemini;

/// The end of `prompt_response` kept as the agent's claim: the field holds
/// every answer of the turn, retries included.
const CLAIM_CHARS: usize = 2_000;

/// Every field prove-it reads, from any of the three events.
#[derive(Debug, Deserialize)]
struct Any {
    session_id: String,
    cwd: Option<PathBuf>,
    /// SessionStart: startup | resume | clear
    source: Option<String>,
    /// BeforeAgent: the prompt that starts this agent run.
    prompt: Option<String>,
    /// AfterAgent: what the agent answered in this turn so far.
    prompt_response: Option<String>,
}

impl Adapter for Gemini {
    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn events(&self) -> &'static [HookEvent] {
        &[
            HookEvent::SessionStart,
            HookEvent::BeforeAgent,
            HookEvent::AfterAgent,
        ]
    }

    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input> {
        let e: Any = read(stdin, event)?;
        let claim = e.prompt_response.map(|text| {
            let count = text.chars().count();
            text.chars()
                .skip(count.saturating_sub(CLAIM_CHARS))
                .collect()
        });
        checked(Input {
            session_id: e.session_id,
            cwd: e.cwd,
            source: e.source,
            turn: None,
            may_be_retry: event == HookEvent::AfterAgent,
            claim,
            prompt: e.prompt,
            once: None,
        })
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        if event != HookEvent::AfterAgent {
            return claude_code::answer(event, decision);
        }
        match (decision.action, &decision.message) {
            (Action::Block, message) => {
                let reason = super::block_reason(decision);
                // Gemini shows a block's systemMessage in place of its
                // reason: a message is added to the reason instead.
                let reason = match message {
                    Some(message) => format!("{message}\n{reason}"),
                    None => reason.to_string(),
                };
                Some(json!({"decision": "block", "reason": cap(&reason)}))
            }
            (Action::Allow, Some(message)) => Some(json!({"systemMessage": cap(message)})),
            (Action::Allow, None) => None,
        }
    }

    fn block_restarts_turn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_may_be_a_retry_whatever_the_flag_says() {
        let input = Gemini
            .parse(
                HookEvent::AfterAgent,
                br#"{"session_id":"s","stop_hook_active":false,"prompt_response":"done"}"#,
            )
            .expect("parses");
        assert!(input.may_be_retry);
        assert_eq!(input.claim.as_deref(), Some("done"));
    }
}
