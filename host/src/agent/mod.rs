//! Agent hosts: each adapter turns one host's hook input into the
//! host-neutral [`Input`] and a decision into that host's answer.
//!
//! Adding a host is one module here that implements [`Adapter`], plus its
//! [`Agent`] variant and its line in [`Agent::adapter`].

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod opencode;
pub mod pi;
pub mod qwen;

use anyhow::{Result, bail};
use clap::ValueEnum;
use prove_it_gate::abi::{Decision, EventKind};
use serde_json::Value;
use std::path::PathBuf;

/// The agent hosts prove-it can gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Agent {
    /// Claude Code (the plugin wires it).
    ClaudeCode,
    /// Codex CLI (`prove-it setup codex` wires it).
    Codex,
    /// Gemini CLI (`prove-it setup gemini` wires it).
    Gemini,
    /// GitHub Copilot CLI (`prove-it setup copilot` wires it).
    Copilot,
    /// Qwen Code (`prove-it setup qwen` wires it).
    Qwen,
    /// pi (`prove-it setup pi` installs its extension).
    Pi,
    /// OpenCode (`prove-it setup opencode` installs its plugin).
    Opencode,
}

impl Agent {
    pub const ALL: [Agent; 7] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Qwen,
        Agent::Pi,
        Agent::Opencode,
    ];

    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            Agent::ClaudeCode => &claude_code::ClaudeCode,
            Agent::Codex => &codex::Codex,
            Agent::Gemini => &gemini::Gemini,
            Agent::Copilot => &copilot::Copilot,
            Agent::Qwen => &qwen::Qwen,
            Agent::Pi => &pi::Pi,
            Agent::Opencode => &opencode::Opencode,
        }
    }

    /// The name on the command line (`--agent NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
            Agent::Pi => "pi",
            Agent::Opencode => "opencode",
        }
    }

    /// The host really running a hook whose command line names `self`:
    /// Copilot CLI runs Claude Code's hooks (`.claude/settings.json`) too,
    /// with its own payload and its own way of showing a warning.
    pub fn running(self, under_copilot: bool) -> Agent {
        match self {
            Agent::ClaudeCode if under_copilot => Agent::Copilot,
            other => other,
        }
    }
}

/// A hook event as the hook command line names it: each host's own events,
/// in kebab case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// SessionStart (every host): record the tree state the session starts from.
    SessionStart,
    /// UserPromptSubmit (Claude Code, Codex, Copilot): a new turn; reset the attempt count.
    UserPromptSubmit,
    /// BeforeAgent (Gemini): a new turn, unless it is the agent sent back by a block.
    BeforeAgent,
    /// Stop (Claude Code, Codex, Copilot, Qwen): run `verify.sh` if the tree changed; block on failure.
    Stop,
    /// AfterAgent (Gemini): the same as Stop.
    AfterAgent,
    /// before_agent_start (pi): a prompt of the person's starts a turn.
    BeforeAgentStart,
    /// agent_before_settle (pi): the same as Stop.
    AgentBeforeSettle,
    /// chat.message (OpenCode): a prompt of the person's starts a turn.
    ChatMessage,
    /// experimental.text.complete (OpenCode): the agent's last text of a
    /// step; the same as Stop.
    TextComplete,
}

impl HookEvent {
    /// The host-neutral event this one is.
    pub fn kind(self) -> EventKind {
        match self {
            HookEvent::SessionStart => EventKind::SessionStart,
            HookEvent::UserPromptSubmit
            | HookEvent::BeforeAgent
            | HookEvent::BeforeAgentStart
            | HookEvent::ChatMessage => EventKind::TurnStart,
            HookEvent::Stop
            | HookEvent::AfterAgent
            | HookEvent::AgentBeforeSettle
            | HookEvent::TextComplete => EventKind::Stop,
        }
    }

    /// The name the host itself uses (`hook_event_name`).
    pub fn host_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::BeforeAgent => "BeforeAgent",
            HookEvent::Stop => "Stop",
            HookEvent::AfterAgent => "AfterAgent",
            HookEvent::BeforeAgentStart => "before_agent_start",
            HookEvent::AgentBeforeSettle => "agent_before_settle",
            HookEvent::ChatMessage => "chat.message",
            HookEvent::TextComplete => "experimental.text.complete",
        }
    }
}

/// The host-neutral part of a hook input.
#[derive(Debug, Default)]
pub struct Input {
    pub session_id: String,
    pub cwd: Option<PathBuf>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact`, `fork`.
    pub source: Option<String>,
    /// The host's id of the turn, when it has one.
    pub turn: Option<String>,
    /// Stop: false only when the host rules out a retry after a block.
    pub may_be_retry: bool,
    /// Stop: what the agent said last (its claim).
    pub claim: Option<String>,
    /// Turn start: the prompt that starts it.
    pub prompt: Option<String>,
    /// Stop: what names this one stop when a host may run the gate twice
    /// for it (Copilot, wired both for itself and for Claude Code): only
    /// the first hook judges it.
    pub once: Option<String>,
}

/// What the hook command needs from one agent host.
pub trait Adapter: Sync {
    /// Its name for people ("Claude Code").
    fn title(&self) -> &'static str;

    /// The hook events it sends, in the order they fire.
    fn events(&self) -> &'static [HookEvent];

    /// Parses the JSON the host sent on stdin for `event`.
    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input>;

    /// The JSON to print for `decision` (`None`: print nothing).
    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value>;

    /// A message the person must see that this host shows only as a failed
    /// hook's stderr (Copilot CLI: exit 2, which does not block there). When
    /// it is `Some`, the hook prints it on stderr and exits 2, and prints no
    /// JSON.
    fn exit_warning(&self, _event: HookEvent, _decision: &Decision) -> Option<String> {
        None
    }

    /// Whether the host starts a turn again after each block, with the
    /// block's reason as the prompt (Gemini's BeforeAgent). Such a turn
    /// start is the same turn, and the gate must not reset its count.
    fn block_restarts_turn(&self) -> bool {
        false
    }
}

/// Fails unless `event` is one `adapter` sends.
pub fn check_event(agent: Agent, event: HookEvent) -> Result<()> {
    let adapter = agent.adapter();
    if !adapter.events().contains(&event) {
        let names: Vec<String> = adapter
            .events()
            .iter()
            .filter_map(|e| e.to_possible_value().map(|v| v.get_name().to_string()))
            .collect();
        bail!(
            "{} has no {} hook: its events are {} (the hook command line is wrong; run `prove-it setup {}` again)",
            adapter.title(),
            event.host_name(),
            names.join(", "),
            agent.name()
        );
    }
    Ok(())
}

/// What the person is told when the gate itself failed on `kind`.
pub fn error_text(kind: EventKind, error: &str) -> String {
    let what = match kind {
        EventKind::Stop => "this turn was NOT verified",
        EventKind::SessionStart => "this session is NOT gated as it should be",
        EventKind::TurnStart => "the attempt count was not reset",
    };
    format!(
        "prove-it: gate error: {error}; {what}. Run `prove-it doctor` in the repository to see why."
    )
}

/// Every host caps a hook's output strings; Claude Code's 10,000
/// characters is the smallest known, so every answer is cut to it.
pub const MAX_OUTPUT_CHARS: usize = 10_000;

/// Cuts `text` to [`MAX_OUTPUT_CHARS`], keeping the end (where failures are).
pub fn cap(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_OUTPUT_CHARS {
        return text.to_string();
    }
    let marker = "…(cut)…\n";
    let keep = MAX_OUTPUT_CHARS - marker.chars().count();
    let head: String = text.chars().take(keep / 4).collect();
    let tail: String = text.chars().skip(count - (keep - keep / 4)).collect();
    format!("{head}{marker}{tail}")
}

/// What the agent is told on a block (a policy may leave its reason out).
pub fn block_reason(decision: &Decision) -> &str {
    decision
        .reason
        .as_deref()
        .unwrap_or("prove-it: the gate refused this stop.")
}

/// Reads a hook input as `T`, naming the event when it is not valid.
pub fn read<'a, T: serde::Deserialize<'a>>(stdin: &'a [u8], event: HookEvent) -> Result<T> {
    use anyhow::Context;
    serde_json::from_slice(stdin)
        .with_context(|| format!("the {} input is not valid", event.host_name()))
}

/// Refuses an input without a session id: state is kept per session.
pub fn checked(input: Input) -> Result<Input> {
    if input.session_id.trim().is_empty() {
        bail!("the hook input has an empty `session_id`");
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_capped() {
        let long = "x".repeat(50_000);
        assert!(cap(&long).chars().count() <= MAX_OUTPUT_CHARS);
    }

    #[test]
    fn each_host_refuses_the_events_of_others() {
        assert!(check_event(Agent::Gemini, HookEvent::Stop).is_err());
        assert!(check_event(Agent::Codex, HookEvent::AfterAgent).is_err());
        assert!(check_event(Agent::ClaudeCode, HookEvent::BeforeAgent).is_err());
        for agent in Agent::ALL {
            for event in agent.adapter().events() {
                check_event(agent, *event).expect("its own event");
            }
        }
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;
        use prove_it_gate::abi::{Action, Verdict};
        use serde_json::{Map, json};

        /// Every (host, event) pair a hook command line can name.
        fn pairs() -> Vec<(Agent, HookEvent)> {
            Agent::ALL
                .iter()
                .flat_map(|a| a.adapter().events().iter().map(move |e| (*a, *e)))
                .collect()
        }

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                ".{0,40}".prop_map(Value::from),
            ];
            leaf.prop_recursive(4, 32, 6, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                    proptest::collection::btree_map(".{0,12}", inner, 0..6)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// An object with the fields hooks send, each of any JSON type.
        fn hook_like() -> impl Strategy<Value = Vec<u8>> {
            let key = prop_oneof![
                Just("session_id".to_string()),
                Just("cwd".to_string()),
                Just("source".to_string()),
                Just("stop_hook_active".to_string()),
                Just("last_assistant_message".to_string()),
                Just("turn_id".to_string()),
                Just("prompt".to_string()),
                Just("prompt_response".to_string()),
                Just("hook_event_name".to_string()),
                ".{0,12}",
            ];
            proptest::collection::btree_map(key, json_value(), 0..8).prop_map(|m| {
                serde_json::to_vec(&Value::Object(m.into_iter().collect())).expect("encodes")
            })
        }

        /// An object with every field a hook sends, each of the right type
        /// (so that parsing gets past the types), and stray fields.
        fn typed_hook() -> impl Strategy<Value = Vec<u8>> {
            (
                ".{0,12}",
                proptest::option::of(".{0,24}"),
                proptest::option::of(any::<bool>()),
                proptest::option::of(".{0,24}"),
                proptest::option::of(".{0,12}"),
                proptest::collection::btree_map(".{0,12}", json_value(), 0..3),
            )
                .prop_map(|(id, cwd, active, claim, source, extra)| {
                    let mut object: Map<String, Value> = extra.into_iter().collect();
                    object.insert("session_id".into(), json!(id));
                    object.insert("cwd".into(), json!(cwd));
                    object.insert("stop_hook_active".into(), json!(active));
                    object.insert("last_assistant_message".into(), json!(claim));
                    object.insert("source".into(), json!(source));
                    object.insert("turn_id".into(), json!(claim));
                    object.insert("prompt".into(), json!(claim));
                    object.insert("prompt_response".into(), json!(claim));
                    serde_json::to_vec(&Value::Object(object)).expect("encodes")
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn any_well_typed_hook_input_parses_or_is_refused(bytes in typed_hook(), pair in 0usize..9) {
                check(pair, &bytes)?;
            }

            /// Any input is parsed or refused with a message; nothing panics,
            /// and a parsed session id is never empty.
            #[test]
            fn any_bytes_parse_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..512), pair in 0usize..9) {
                check(pair, &bytes)?;
            }

            #[test]
            fn any_hook_shaped_object_parses_or_is_refused(bytes in hook_like(), pair in 0usize..9) {
                check(pair, &bytes)?;
            }

            /// Any decision becomes an answer within Claude Code's limits.
            #[test]
            fn any_decision_answers_within_limits(
                block in any::<bool>(),
                reason in proptest::option::of(".{0,50}"),
                message in proptest::option::of(".{0,50}"),
                repeat in 1usize..400,
                pair in 0usize..9,
                yielded in any::<bool>(),
            ) {
                let decision = Decision {
                    action: if block { Action::Block } else { Action::Allow },
                    reason: reason.map(|r| r.repeat(repeat)),
                    message: message.map(|m| m.repeat(repeat)),
                    verdict: yielded.then_some(Verdict::Yielded),
                    ..Decision::allow()
                };
                let (agent, event) = pairs()[pair % pairs().len()];
                if let Some(Value::Object(answer)) = agent.adapter().answer(event, &decision) {
                    for value in answer.values() {
                        if let Value::String(text) = value {
                            prop_assert!(text.chars().count() <= MAX_OUTPUT_CHARS);
                        }
                    }
                }
            }
        }

        fn check(pair: usize, bytes: &[u8]) -> Result<(), TestCaseError> {
            let (agent, event) = pairs()[pair % pairs().len()];
            match agent.adapter().parse(event, bytes) {
                Ok(input) => prop_assert!(!input.session_id.trim().is_empty()),
                Err(e) => {
                    let text = format!("{e:#}");
                    prop_assert!(!text.is_empty());
                }
            }
            Ok(())
        }
    }
}
