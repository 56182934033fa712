//! Integration tests: real git repositories, the real `prove-it` binary.

mod agent_hosts;
mod canary;
mod cheats;
mod ci;
mod claude;
mod contract;
mod differential;
mod download;
mod e2e;
mod fuzz;
mod git_state;
mod hidden;
mod init_doctor;
mod layout;
mod ledger;
mod plugin;
mod policy_sandbox;
mod regression;
mod release;
mod robustness;
mod soak;
mod trailer;
mod tui;
mod util;
mod verify_run;
mod weakened;
