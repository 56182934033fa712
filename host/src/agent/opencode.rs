//! OpenCode: no shell-command hooks, so prove-it ships a plugin
//! ([`PLUGIN`], installed by `prove-it setup opencode`) that runs `prove-it
//! hook --agent opencode EVENT` and passes the answer back. Its input is
//! the plugin's own JSON, the same as pi's extension sends.
//!
//! - `session.created` (an event): the session's starting point.
//! - `chat.message`: a prompt, a new turn, unless its text is the last
//!   block's reason: the plugin's own re-prompt, the same turn (see
//!   [`Adapter::block_restarts_turn`]).
//! - `experimental.text.complete`: the agent's text of one step, awaited
//!   while the turn is still running. The plugin skips a step that also
//!   calls a tool (the turn goes on). A block comes back as `{"block":
//!   REASON}`; the plugin stores REASON as a new user message of the same
//!   session (`session.prompt` with `noReply`) before the hook returns, so
//!   the running loop sees a message newer than its answer and goes on.
//!
//! Why not `session.idle`: in `opencode run` the process exits right
//! after it, so a re-prompt from there never reaches the model. And the
//! re-prompt is a new user message, not a refused stop: the person sees
//! it as one, and the gate counts it as a retry of the same turn.

use super::{Adapter, HookEvent, Input, pi};
use anyhow::Result;
use prove_it_gate::abi::Decision;
use serde_json::Value;

pub struct Opencode;

/// The plugin `prove-it setup opencode` installs, with `__PROVE_IT__` and
/// `__VERSION__` filled in.
pub const PLUGIN: &str = include_str!("opencode-plugin.js");

impl Adapter for Opencode {
    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn events(&self) -> &'static [HookEvent] {
        &[
            HookEvent::SessionStart,
            HookEvent::ChatMessage,
            HookEvent::TextComplete,
        ]
    }

    fn parse(&self, event: HookEvent, stdin: &[u8]) -> Result<Input> {
        pi::extension_input(event, stdin, event == HookEvent::TextComplete)
    }

    fn answer(&self, event: HookEvent, decision: &Decision) -> Option<Value> {
        pi::extension_answer(event == HookEvent::TextComplete, decision)
    }

    /// The plugin sends a block back as a prompt, which OpenCode reports
    /// as a `chat.message` like the person's own.
    fn block_restarts_turn(&self) -> bool {
        true
    }
}
