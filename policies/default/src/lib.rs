//! The `default` policy module: the rules of `prove_it_gate::policy` as
//! written, with nothing added. Built for `wasm32-wasip1` by the host's
//! build script, beside `policies/strict`, and embedded in the binary.
//!
//! The rules live in `prove-it-gate` so that they are tested as ordinary
//! Rust and shared by every policy built on them; this crate only exports
//! them as a module.

#[cfg(target_arch = "wasm32")]
prove_it_gate::policy_module!(prove_it_gate::policy::decide);
