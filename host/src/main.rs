//! The `prove-it` binary: parse, run, map the outcome to an exit code.

#[macro_use]
mod out;

mod agent;
mod capability;
mod cli;
mod commands;
mod fs;
mod runtime;
mod selection;
mod settings;
mod stacks;
mod verdicts;

use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: first thing in main; no other thread exists yet.
    unsafe { settings::scrub_repository_vars() };
    // SAFETY: as above.
    unsafe { settings::read_objects_as_stored() };
    let cli = cli::parse();
    let result = match cli.command {
        cli::Command::Hook { agent, event } => commands::hook::execute(agent, event),
        cli::Command::Init { dir } => commands::init::execute(&dir).map(|()| ExitCode::SUCCESS),
        cli::Command::Canary { dir, json, skip } => {
            Ok(commands::canary::execute(&dir, json, &skip))
        }
        cli::Command::Setup { agent, dir, user } => match agent.agent() {
            Some(agent) => commands::setup::execute(agent, &dir, user),
            None => commands::trailer::setup(&dir, user),
        },
        cli::Command::Trailer { hook, tree, args } => {
            commands::trailer::execute(hook, &tree, &args[0])
        }
        cli::Command::Ledger { days, repo, json } => {
            commands::ledger::execute(days, repo.as_deref(), json)
        }
        cli::Command::Doctor { dir, no_run } => commands::doctor::execute(&dir, !no_run),
        cli::Command::Ci(args) => commands::ci::execute(&args),
        cli::Command::Status { dir, session, json } => {
            commands::status::execute(&dir, session.as_deref(), json)
        }
        cli::Command::Policy(cli::PolicyCommand::New { name, gate_path }) => {
            commands::policy::new(&name, gate_path.as_deref())
        }
        cli::Command::Policy(cli::PolicyCommand::Check { file }) => commands::policy::check(&file),
        cli::Command::Policy(cli::PolicyCommand::Run { file, event, claim }) => {
            commands::policy::run(&file, event, &claim, std::path::Path::new("."))
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            errln!("prove-it: {error:#}");
            ExitCode::FAILURE
        }
    }
}
