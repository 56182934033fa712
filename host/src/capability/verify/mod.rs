//! Running `./verify.sh`: from the work tree root, no arguments, stdin empty,
//! stdout and stderr merged into one pipe of which only the last lines are
//! kept, in a process group of its own that is killed whole at the timeout
//! (and after the script exits, so nothing it started is left behind).
//!
//! If this process dies first (the person interrupts, the agent host
//! cancels the hook with SIGTERM, or kill -9), a guard kills the group:
//! nothing of `verify.sh` runs on in the background.
//!
//! It never returns an error: a script that cannot start is an outcome the
//! policy reports like any other failure.
//!
//! One job a file: [`run`] starts and waits, `guard` cleans up after a
//! killed hook, `tail` keeps the last lines, `facts` looks at the file.

mod facts;
mod guard;
mod run;
mod tail;

pub use facts::{VERIFY_SH, verify_facts};
pub use run::{run, run_script, run_with, stop_running};
