//! One subcommand per file, each with its own `execute`.

pub mod canary;
pub mod ci;
pub mod claude_code;
pub mod doctor;
pub mod extension;
pub mod hook;
pub mod init;
pub mod ledger;
pub mod policy;
pub mod sandbox;
pub mod setup;
pub mod status;
pub mod trailer;
