//! The `strict` policy (`PROVE_IT_POLICY=strict`): every rule of the default
//! policy, and two more: a turn cannot end through a `verify.sh` that
//! changed or appeared during the session (the agent must restore it, or
//! the person changes it), nor through a pass that only the session's
//! changes to its checks made possible (the agent must fix the code, or say
//! plainly that the task changed the expected behaviour). For repositories
//! where the checks are never the agent's task.
//!
//! It is also the smallest example of a custom policy: a `cdylib` whose
//! decide function goes through `prove_it_gate::policy_module!`.

use prove_it_gate::abi::{Decision, Event, Host};
use prove_it_gate::policy::{Rules, decide_with};

/// The strict policy's decision.
pub fn decide(event: &Event, host: &mut impl Host) -> Decision {
    decide_with(event, host, Rules::STRICT)
}

#[cfg(target_arch = "wasm32")]
prove_it_gate::policy_module!(decide);
