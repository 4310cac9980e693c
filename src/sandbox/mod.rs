//! `sandbox/`: an in-repo marketplace that behaves like the real one.

pub mod cli;
