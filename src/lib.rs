//! linkrunner turns an SEO team's campaign files into links bought on a link marketplace:
//! exactly once, within budget, and observable.
//!
//! Data flows one way — **campaign files → decisions → effects → marketplace client** — with
//! the **journal** (`store`) beside the effects recording every step, and the **views**
//! reading the journal for the commands, the HTTP API and the page. docs/architecture.md
//! draws the rooms and what each may import; `scripts/check-architecture` holds the rule.
//!
//! | room | module | owns |
//! |---|---|---|
//! | nouns | [`domain`] (crate `linkrunner-domain`; [`money`], [`clock`]) | money, time, the marketplace's and the journal's nouns; imports nothing of linkrunner |
//! | input | [`campaign`] | YAML model, parsing with positions, semantic validation, JSON Schema, loading a directory |
//! | decisions | [`decide`] | pure: the plan, donor choice, stalls, caps, keys |
//! | effects | [`effects`] | the engine: runs decided steps through the market and the journal, settles uncertainty |
//! | views | [`views`] | read models: status, plan, history, explain, report, the recorded state |
//! | boundary | [`market`] | the marketplace wire: paths, JSON names, auth, tolerant decoding, error classes, rate limit |
//! | boundary | [`store`] | the journal: intents, budget ledger, searches, leases; PostgreSQL and SQLite |
//! | boundary | [`http`] | `/healthz`, `/readyz`, `/metrics`, `/api/v1/...`, the status page (read-only) |
//! | boundary | `notify` | webhooks for what a person must act on, each event once across replicas |
//! | boundary | [`metrics`], `telemetry` | the metrics registry; logging to stderr, human or JSON |
//! | wiring | [`app`], `daemon` | metrics → journal → client → engine; `run`: schedules, reload, signals, systemd |
//! | wiring | `cli` | the commands: clap flags → plain settings of the modules above; private: the binary and the benchmark enter through [`main_with_args`] |
//!
//! The sandbox marketplace (`linkrunner-sandbox`) and the benchmark (`linkrunner-bench`) are
//! crates of their own; the binary has `sandbox` and `demo` with the default feature `sandbox`.
//!
//! The front door: the `linkrunner` binary and the benchmark's `linkrunner-bench linkrunner …`
//! enter through [`main_with_args`] (it lives with the commands, in `cli`); the benchmark's own command line shares [`LogArgs`] and
//! [`run_logged`]. The command modules stay private (public only with the feature
//! `test-hooks`, for the flag and probe tests), so nothing outside the crate reaches behind the
//! commands. So do `daemon` and `notify`, which only the integration tests reach into, and
//! `telemetry`, which offers nothing outside the crate.

pub mod app;
pub mod campaign;
#[cfg(feature = "test-hooks")]
pub mod cli;
// Without `test-hooks` the commands are the crate's own; their `pub` items are reached through
// the front door below.
#[cfg(not(feature = "test-hooks"))]
#[allow(unreachable_pub)]
mod cli;
// Only the integration tests reach into the daemon and the webhooks (the binary and the benchmark
// go through the commands): public with `test-hooks`, the crate's own without.
#[cfg(feature = "test-hooks")]
pub mod daemon;
#[cfg(not(feature = "test-hooks"))]
#[allow(unreachable_pub)]
mod daemon;
pub mod decide;
pub mod effects;
pub mod http;
pub mod market;
pub mod metrics;
#[cfg(feature = "test-hooks")]
pub mod notify;
#[cfg(not(feature = "test-hooks"))]
#[allow(unreachable_pub)]
mod notify;
pub mod store;
mod telemetry;
pub mod views;

pub use linkrunner_domain as domain;
pub use linkrunner_domain::{clock, money};

pub use cli::{LogArgs, main_with_args, run_logged};
