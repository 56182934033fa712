//! The `prove-it` binary: parse, run, map the outcome to an exit code.

mod agent;
mod capability;
mod cli;
mod commands;
mod runtime;
mod settings;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Hook { event } => commands::hook::execute(event.into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("prove-it: {error:#}");
            ExitCode::FAILURE
        }
    }
}
