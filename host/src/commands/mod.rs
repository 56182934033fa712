//! One subcommand per file, each with its own `execute`.

pub mod hook;
