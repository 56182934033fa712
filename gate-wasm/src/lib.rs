//! The prove-it gate: the host/policy contract (ABI) and the default policy.
//!
//! This crate is used three ways, and that is why the ABI lives here:
//! - the shipped policy modules (`policies/default`, `policies/strict`) are
//!   its rules, exported through [`guest`];
//! - the `prove-it` host depends on it for the same ABI types, so the two sides
//!   cannot drift;
//! - authors of custom policies depend on it (no wasmtime inside) for the types
//!   and the guest glue in [`guest`].
//!
//! It must not do I/O of its own: everything the policy learns comes through
//! [`abi::Host`].

pub mod abi;
pub mod lacking;
pub mod policy;

#[cfg(target_arch = "wasm32")]
pub mod guest;
