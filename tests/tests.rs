//! Integration tests: real git repositories, the real `prove-it` binary.

mod contract;
mod git_state;
mod ledger;
mod regression;
mod robustness;
mod util;
mod verify_run;
