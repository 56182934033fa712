//! Claude Code hooks: one serde type per event in, the hook answer out.
//!
//! Claude Code lets a stop through on any exit code but 0 and 2, so every
//! answer here is exit 0 with JSON on stdout (or nothing, to allow quietly);
//! diagnostics never go to stdout.

use super::{Adapter, HookEvent, Input, cap, checked, read};
use anyhow::Result;
use prove_it_gate::abi::{Action, Decision, Verdict};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

pub struct ClaudeCode;

/// What every hook event carries.
#[derive(Debug, Deserialize)]
struct Common {
    session_id: String,
    cwd: Option<PathBuf>,
    /// UserPromptSubmit and Stop: the prompt this turn answers, the same
    /// for every retry after a block. A prompt queued while a stop is
    /// decided fires UserPromptSubmit at once with the running turn's id;
    /// its own turn later stops under a new id, with no UserPromptSubmit.
    prompt_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SessionStart {
    #[serde(flatten)]
    common: Common,
    /// startup | resume | clear | compact | fork
    source: Option<String>,
}

#[derive(Debug, Deserialize)]
struct UserPromptSubmit {
    #[serde(flatten)]
    common: Common,
    prompt: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Stop {
    #[serde(flatten)]
    common: Common,
    /// True while Claude Code continues because a Stop hook blocked.
    #[serde(default)]
    stop_hook_active: bool,
    /// The agent's claim. (The transcript may not hold it yet.)
    last_assistant_message: Option<String>,
}

impl From<Common> for Input {
    fn from(common: Common) -> Input {
        Input {
            session_id: common.session_id,
            cwd: common.cwd,
            turn: common.prompt_id.filter(|id| !id.is_empty()),
            ..Input::default()
        }
    }
}

impl Adapter for ClaudeCode {
    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn events(&self) -> &'static [HookEvent] {
        &[
            HookEvent::SessionStart,
            HookEvent::UserPromptSubmit,
            HookEvent::Stop,
        ]
    }

    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input> {
        let input = match event {
            HookEvent::SessionStart => {
                let e: SessionStart = read(stdin, event)?;
                Input {
                    source: e.source,
                    ..e.common.into()
                }
            }
            HookEvent::Stop => {
                let e: Stop = read(stdin, event)?;
                Input {
                    may_be_retry: e.stop_hook_active,
                    claim: e.last_assistant_message,
                    ..e.common.into()
                }
            }
            // Claude Code's UserPromptSubmit fires once per prompt of the
            // person, never for a retry after a block; for a queued prompt
            // it fires early, naming the running turn (see `prompt_id`).
            _ => {
                let e: UserPromptSubmit = read(stdin, event)?;
                Input {
                    prompt: e.prompt,
                    ..e.common.into()
                }
            }
        };
        checked(input)
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        answer(event, decision)
    }
}

/// The JSON to print for `decision` (`None`: print nothing, allow quietly).
pub fn answer(event: HookEvent, decision: &Decision) -> Option<Value> {
    let stop = event == HookEvent::Stop;
    let mut out = Map::new();
    let loud = stop
        && decision.action == Action::Allow
        && matches!(
            decision.verdict,
            Some(Verdict::Yielded | Verdict::Weakened | Verdict::Suspect | Verdict::NotJudged)
        );
    if let (true, Some(message)) = (loud, &decision.message) {
        // A yield, and a pass bought by weakening the checks, are at least
        // as loud as a block: Claude Code shows a stopReason under its own
        // headline ("Stop hook stopped Claude"), and a headless run's
        // result says `stop_hook_prevented`. The turn was ending anyway;
        // the next prompt starts a new one.
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(cap(message)));
    } else if let Some(message) = &decision.message {
        out.insert("systemMessage".into(), json!(cap(message)));
    }
    if decision.action == Action::Block {
        let reason = super::block_reason(decision);
        if stop {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(cap(reason)));
        } else {
            // Only a stop can be refused; elsewhere a block is shown instead.
            out.insert(
                "systemMessage".into(),
                json!(cap(&shown_block(decision, reason))),
            );
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// [`answer`], for a host where `continue: false` means something else
/// (Qwen Code goes on; Copilot CLI shows nothing): Claude Code's loud stop
/// is said as a `systemMessage` there.
pub fn answer_without_loud_stop(event: HookEvent, decision: &Decision) -> Option<Value> {
    answer(event, decision).map(|mut answer| {
        if let Some(object) = answer.as_object_mut()
            && object.remove("continue").is_some()
            && let Some(text) = object.remove("stopReason")
        {
            object.insert("systemMessage".into(), text);
        }
        answer
    })
}

/// A block outside a stop (which cannot be refused) is shown instead.
pub fn shown_block(decision: &Decision, reason: &str) -> String {
    match &decision.message {
        Some(message) => format!("{message}\n{reason}"),
        None => reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_on_stop_is_decision_block() {
        let d = Decision::block("fix it");
        assert_eq!(
            answer(HookEvent::Stop, &d),
            Some(json!({"decision": "block", "reason": "fix it"}))
        );
    }

    #[test]
    fn a_yield_and_a_weakened_pass_are_loud_and_a_receipt_is_not() {
        for verdict in [
            Verdict::Yielded,
            Verdict::Weakened,
            Verdict::Suspect,
            Verdict::NotJudged,
        ] {
            let d = Decision::allow_with("said").with_verdict(verdict);
            assert_eq!(
                answer(HookEvent::Stop, &d),
                Some(json!({"continue": false, "stopReason": "said"})),
                "{verdict:?}"
            );
        }
        let d = Decision::allow_with("receipt").with_verdict(Verdict::Verified);
        assert_eq!(
            answer(HookEvent::Stop, &d),
            Some(json!({"systemMessage": "receipt"}))
        );
    }

    #[test]
    fn the_turn_is_the_prompt_id() {
        let stop = ClaudeCode
            .parse(
                HookEvent::Stop,
                br#"{"session_id":"s","cwd":"/r","prompt_id":"p-1","stop_hook_active":true}"#,
            )
            .expect("parses");
        assert_eq!(stop.turn.as_deref(), Some("p-1"));
        let prompt = ClaudeCode
            .parse(
                HookEvent::UserPromptSubmit,
                br#"{"session_id":"s","cwd":"/r","prompt_id":"p-1","prompt":"a queued prompt"}"#,
            )
            .expect("parses");
        assert_eq!(prompt.turn.as_deref(), Some("p-1"));
        // Without one, the gate names the turn itself.
        let older = ClaudeCode
            .parse(
                HookEvent::Stop,
                br#"{"session_id":"s","cwd":"/r","prompt_id":""}"#,
            )
            .expect("parses");
        assert_eq!(older.turn, None);
    }

    #[test]
    fn quiet_allow_prints_nothing() {
        assert_eq!(answer(HookEvent::Stop, &Decision::allow()), None);
    }
}
