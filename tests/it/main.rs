//! The one integration-test binary: `cargo test --test it [FILTER]`. Each module below but
//! `support` was a test binary of its own; a test's path starts with its suite, e.g.
//! `engine::sqlite::full_flow_creates_everything_buys_within_caps_and_records_it`, so
//! `cargo test --test it engine::` runs one suite (filters match anywhere in the name:
//! `sandbox::` also matches `client_sandbox::`, hence `-- --skip client_sandbox`).
//! [`support`] is what the suites share: databases, the sandbox, the app, the binary and
//! waiting. The suites run in one process, `--test-threads` at a time.

// The suites' `pub` items are shared between the modules of this one binary, which no other
// crate links: the workspace's `unreachable_pub` (a `pub` is a promise to another crate) has
// nothing to say here.
#![allow(unreachable_pub)]

#[macro_use]
mod support;

mod campaign_validate;
mod cli_flags;
mod client_sandbox;
mod commands;
mod daemon;
mod engine;
mod engine_kill;
mod faults;
mod fuzz_corpus;
mod market_client;
mod review;
mod sandbox;
mod store;
