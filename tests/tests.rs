//! Integration tests: real git repositories, the real `prove-it` binary.

mod claude;
mod contract;
mod e2e;
mod git_state;
mod init_doctor;
mod ledger;
mod plugin;
mod policy_sandbox;
mod regression;
mod robustness;
mod util;
mod verify_run;
