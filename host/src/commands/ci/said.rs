//! How a run reads in a few words, for the report and the progress lines
//! alike (both `judge` and `report` use it; it uses neither).

use prove_it_gate::abi::{VerifyOutcome, VerifyRun};

/// One run, said in a few words.
pub fn run_said(run: &VerifyRun) -> String {
    let took = seconds(run.duration_ms);
    match run.outcome {
        VerifyOutcome::Passed => format!("passed in {took}"),
        VerifyOutcome::Failed => match run.exit_code {
            Some(code) => format!("failed (exit {code}, after {took})"),
            None => format!(
                "failed ({}, after {took})",
                run.detail.as_deref().unwrap_or("killed")
            ),
        },
        VerifyOutcome::TimedOut => format!("timed out after {} s", run.timeout_secs),
        VerifyOutcome::CouldNotStart => format!(
            "could not start ({})",
            run.detail.as_deref().unwrap_or("unknown")
        ),
    }
}

pub fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}
