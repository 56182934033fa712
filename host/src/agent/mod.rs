//! Agent hosts: each adapter turns one host's hook events into the
//! host-neutral [`prove_it_gate::abi::Event`] and a decision into that host's
//! answer. Claude Code is the first.

pub mod claude_code;
