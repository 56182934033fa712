//! GitHub Copilot CLI hooks: SessionStart, UserPromptSubmit and Stop, in
//! the Claude Code shape Copilot reads from `.github/hooks/*.json` and
//! `~/.copilot/hooks/` (`prove-it setup copilot` writes them there).
//!
//! Four traps decide this adapter.
//! - After a block Copilot sends the reason back as a new prompt and fires
//!   UserPromptSubmit with it: the same turn (see
//!   [`Adapter::block_restarts_turn`]). It has no turn id.
//! - In `copilot -p` a Stop hook's `systemMessage` is never shown, and exit
//!   2 does not block but shows the hook's stderr as a warning: a yield, a
//!   skip, a gate error or a weakened pass is said that way, the only
//!   warning a headless run shows ([`Adapter::exit_warning`]).
//! - Copilot also runs the hooks of `.claude/settings.json`, with its own
//!   payload: `prove-it hook` knows Copilot by `COPILOT_CLI=1` and answers
//!   as Copilot whatever host the command line names.
//! - So a repository wired for both fires two hooks for one stop: the
//!   stop's `timestamp` keys it, and the second hook says nothing.
//!
//! Its `stop_hook_active` is true on every re-check after a block, also
//! after tool use; the gate counts its own attempts all the same.

use super::{Adapter, HookEvent, Input, checked, claude_code, read};
use anyhow::Result;
use prove_it_gate::abi::{Action, Decision, Verdict};
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

pub struct Copilot;

/// Every field prove-it reads, in either of Copilot's spellings (its own
/// camelCase hooks, or Claude Code's snake_case shape).
#[derive(Debug, Deserialize)]
struct Any {
    #[serde(alias = "sessionId")]
    session_id: String,
    cwd: Option<PathBuf>,
    /// SessionStart: `new`, ...
    source: Option<String>,
    /// UserPromptSubmit: the prompt (the block's reason after a block).
    prompt: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    /// When the event fired (ISO text, or milliseconds): one stop's key.
    timestamp: Option<Value>,
}

impl Adapter for Copilot {
    fn title(&self) -> &'static str {
        "Copilot CLI"
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
        let stop = event == HookEvent::Stop;
        checked(Input {
            session_id: e.session_id,
            cwd: e.cwd,
            source: e.source.map(|s| match s.as_str() {
                // Copilot's word for a fresh session.
                "new" => "startup".to_string(),
                _ => s,
            }),
            turn: None,
            may_be_retry: stop && e.stop_hook_active,
            claim: None,
            prompt: e.prompt,
            once: e.timestamp.filter(|_| stop).map(|t| t.to_string()),
        })
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        claude_code::answer_without_loud_stop(event, decision)
    }

    fn exit_warning(&self, event: HookEvent, decision: &Decision) -> Option<String> {
        let unproven = !decision.verdict.is_some_and(Verdict::proven);
        (event == HookEvent::Stop && decision.action == Action::Allow && unproven)
            .then(|| decision.message.clone())
            .flatten()
    }

    fn block_restarts_turn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_parse_and_a_stop_is_keyed_by_its_time() {
        let native = Copilot
            .parse(
                HookEvent::Stop,
                br#"{"sessionId":"s","cwd":"/r","timestamp":1764650000123,"stopReason":"end_turn","stop_hook_active":true}"#,
            )
            .expect("native");
        assert_eq!(native.session_id, "s");
        assert!(native.may_be_retry);
        assert_eq!(native.once.as_deref(), Some("1764650000123"));
        let claude_shape = Copilot
            .parse(
                HookEvent::Stop,
                br#"{"hook_event_name":"Stop","session_id":"s","cwd":"/r","timestamp":"2026-12-02T05:00:00.123Z","stop_hook_active":false}"#,
            )
            .expect("claude shape");
        assert!(!claude_shape.may_be_retry);
        assert!(claude_shape.once.is_some());
    }

    #[test]
    fn what_must_be_seen_is_said_by_exit_2_and_a_block_by_json() {
        let yielded = Decision::allow_with("prove-it: WARNING").with_verdict(Verdict::Yielded);
        assert_eq!(
            Copilot.exit_warning(HookEvent::Stop, &yielded).as_deref(),
            Some("prove-it: WARNING")
        );
        let verified = Decision::allow_with("verified").with_verdict(Verdict::Verified);
        assert_eq!(Copilot.exit_warning(HookEvent::Stop, &verified), None);
        let block = Decision::block("fix it");
        assert_eq!(Copilot.exit_warning(HookEvent::Stop, &block), None);
        assert_eq!(
            Copilot.answer(HookEvent::Stop, &block).expect("json")["decision"],
            "block"
        );
    }
}
