//! Git state through gix, one job a file: finding the repository
//! ([`discover`]), the tree fingerprint ([`tree_state`]), what one stop
//! leaves the next so as not to redo it ([`Memo`]), the paths a session
//! changed ([`changes`]) and a file as a commit holds it ([`file_at`]).
//! No `git` subprocess runs here.

mod blob;
pub mod changes;
pub mod config;
mod discover;
mod fingerprint;
mod memo;
mod tracked;
mod untracked;

pub use blob::{Commit, file_at};
pub use discover::discover;
pub use fingerprint::{Walk, Work, hidden_paths, tracked_paths, tree_state, walk};
pub use memo::Memo;
