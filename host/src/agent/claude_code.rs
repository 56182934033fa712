//! Claude Code hooks: one serde type per event in, the hook answer out.
//!
//! Claude Code lets a stop through on any exit code but 0 and 2, so every
//! answer here is exit 0 with JSON on stdout (or nothing, to allow quietly);
//! diagnostics never go to stdout.

use anyhow::{Context, Result, bail};
use prove_it_gate::abi::{Action, Decision, EventKind, Verdict};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// Claude Code caps each output string at this many characters.
pub const MAX_OUTPUT_CHARS: usize = 10_000;

/// What every hook event carries.
#[derive(Debug, Deserialize)]
pub struct Common {
    pub session_id: String,
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
pub struct SessionStart {
    #[serde(flatten)]
    pub common: Common,
    /// startup | resume | clear | compact | fork
    pub source: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct UserPromptSubmit {
    #[serde(flatten)]
    pub common: Common,
}

#[derive(Debug, Deserialize)]
pub struct Stop {
    #[serde(flatten)]
    pub common: Common,
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The agent's claim. (The transcript may not hold it yet.)
    pub last_assistant_message: Option<String>,
}

/// The host-neutral part of any of the three events.
#[derive(Debug)]
pub struct Input {
    pub session_id: String,
    pub cwd: Option<PathBuf>,
    pub source: Option<String>,
    pub stop_hook_active: bool,
    pub claim: Option<String>,
}

impl From<Common> for Input {
    fn from(common: Common) -> Input {
        Input {
            session_id: common.session_id,
            cwd: common.cwd,
            source: None,
            stop_hook_active: false,
            claim: None,
        }
    }
}

/// Parses the JSON Claude Code sent on stdin for the hook `kind`.
pub fn parse(kind: EventKind, stdin: &[u8]) -> Result<Input> {
    fn read<'a, T: Deserialize<'a>>(stdin: &'a [u8], name: &str) -> Result<T> {
        serde_json::from_slice(stdin).with_context(|| format!("the {name} input is not valid"))
    }
    let input = match kind {
        EventKind::SessionStart => {
            let e: SessionStart = read(stdin, "SessionStart")?;
            Input {
                source: e.source,
                ..e.common.into()
            }
        }
        EventKind::UserPromptSubmit => read::<UserPromptSubmit>(stdin, "UserPromptSubmit")?
            .common
            .into(),
        EventKind::Stop => {
            let e: Stop = read(stdin, "Stop")?;
            Input {
                stop_hook_active: e.stop_hook_active,
                claim: e.last_assistant_message,
                ..e.common.into()
            }
        }
    };
    if input.session_id.trim().is_empty() {
        bail!("the hook input has an empty `session_id`");
    }
    Ok(input)
}

/// The JSON to print for `decision` (`None`: print nothing, allow quietly).
pub fn answer(kind: EventKind, decision: &Decision) -> Option<Value> {
    let mut out = Map::new();
    let yielded = kind == EventKind::Stop
        && decision.action == Action::Allow
        && decision.verdict == Some(Verdict::Yielded);
    if let (true, Some(message)) = (yielded, &decision.message) {
        // A yield is at least as loud as a block: Claude Code shows a
        // stopReason under its own headline ("Stop hook stopped Claude"),
        // and a headless run's result says `stop_hook_prevented`. The
        // turn was ending anyway; the next prompt starts a new one.
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(cap(message)));
    } else if let Some(message) = &decision.message {
        out.insert("systemMessage".into(), json!(cap(message)));
    }
    if decision.action == Action::Block {
        let reason = decision
            .reason
            .as_deref()
            .unwrap_or("prove-it: the gate refused this stop.");
        if kind == EventKind::Stop {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(cap(reason)));
        } else {
            // Only a stop can be refused; elsewhere a block is shown instead.
            let shown = match &decision.message {
                Some(message) => format!("{message}\n{reason}"),
                None => reason.to_string(),
            };
            out.insert("systemMessage".into(), json!(cap(&shown)));
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The answer for an error of the gate itself: always a visible warning.
pub fn error_answer(kind: EventKind, error: &str) -> Value {
    json!({ "systemMessage": cap(&error_text(kind, error)) })
}

/// What the user is told when the gate itself failed on `kind`.
pub fn error_text(kind: EventKind, error: &str) -> String {
    let what = match kind {
        EventKind::Stop => "this turn was NOT verified",
        EventKind::SessionStart => "this session is NOT gated as it should be",
        EventKind::UserPromptSubmit => "the attempt count was not reset",
    };
    format!(
        "prove-it: gate error: {error}; {what}. Run `prove-it doctor` in the repository to see why."
    )
}

/// Cuts `text` to Claude Code's limit, keeping the end (where failures are).
fn cap(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_on_stop_is_decision_block() {
        let d = Decision::block("fix it");
        assert_eq!(
            answer(EventKind::Stop, &d),
            Some(json!({"decision": "block", "reason": "fix it"}))
        );
    }

    #[test]
    fn quiet_allow_prints_nothing() {
        assert_eq!(answer(EventKind::Stop, &Decision::allow()), None);
    }

    #[test]
    fn long_text_is_capped() {
        let long = "x".repeat(50_000);
        assert!(cap(&long).chars().count() <= MAX_OUTPUT_CHARS);
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        const KINDS: [EventKind; 3] = [
            EventKind::SessionStart,
            EventKind::UserPromptSubmit,
            EventKind::Stop,
        ];

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
                    serde_json::to_vec(&Value::Object(object)).expect("encodes")
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn any_well_typed_hook_input_parses_or_is_refused(bytes in typed_hook(), kind in 0usize..3) {
                check(KINDS[kind], &bytes)?;
            }

            /// Any input is parsed or refused with a message; nothing panics,
            /// and a parsed session id is never empty.
            #[test]
            fn any_bytes_parse_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..512), kind in 0usize..3) {
                check(KINDS[kind], &bytes)?;
            }

            #[test]
            fn any_hook_shaped_object_parses_or_is_refused(bytes in hook_like(), kind in 0usize..3) {
                check(KINDS[kind], &bytes)?;
            }

            /// Any decision becomes an answer within Claude Code's limits.
            #[test]
            fn any_decision_answers_within_limits(
                block in any::<bool>(),
                reason in proptest::option::of(".{0,50}"),
                message in proptest::option::of(".{0,50}"),
                repeat in 1usize..400,
                kind in 0usize..3,
                yielded in any::<bool>(),
            ) {
                let decision = Decision {
                    action: if block { Action::Block } else { Action::Allow },
                    reason: reason.map(|r| r.repeat(repeat)),
                    message: message.map(|m| m.repeat(repeat)),
                    verdict: yielded.then_some(Verdict::Yielded),
                    tree: None,
                };
                if let Some(Value::Object(answer)) = answer(KINDS[kind], &decision) {
                    for value in answer.values() {
                        if let Value::String(text) = value {
                            prop_assert!(text.chars().count() <= MAX_OUTPUT_CHARS);
                        }
                    }
                }
            }
        }

        fn check(kind: EventKind, bytes: &[u8]) -> Result<(), TestCaseError> {
            match parse(kind, bytes) {
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
