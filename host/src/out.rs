//! Printing that outlives its reader. `prove-it doctor | head -1` closes
//! the pipe after one line; `println!` would then panic. These macros
//! drop what can no longer be read and let the command end with the exit
//! code it would have had.

use std::fmt::Arguments;
use std::io::Write;

/// Writes `args` (and a newline if `newline`) to standard output; a
/// reader that went away is not an error.
pub fn stdout(args: Arguments, newline: bool) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|()| match newline {
        true => out.write_all(b"\n"),
        false => Ok(()),
    });
}

/// The same for standard error (progress, warnings).
pub fn stderr(args: Arguments, newline: bool) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| match newline {
        true => err.write_all(b"\n"),
        false => Ok(()),
    });
}

/// `println!` that never panics.
macro_rules! outln {
    () => { $crate::out::stdout(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::out::stdout(format_args!($($arg)*), true) };
}

/// `print!` that never panics.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::stdout(format_args!($($arg)*), false) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::out::stderr(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::out::stderr(format_args!($($arg)*), true) };
}
