//! Git state through gix, one job a file: finding the repository
//! ([`discover`]), the tree fingerprint ([`tree_state`]), what one stop
//! leaves the next so as not to redo it ([`Memo`]), and the paths a session
//! changed ([`changes`]). No `git` subprocess runs here.

pub mod changes;
mod discover;
mod fingerprint;
mod memo;

pub use discover::discover;
pub use fingerprint::{Walk, tree_state, walk};
pub use memo::Memo;
