//! linkrunner turns an SEO team's campaign files into links bought on a link marketplace:
//! exactly once, within budget, and observable.
//!
//! Data flows one way — **campaign files → plan → engine → market client** — with the
//! **store** beside the engine recording every step, and **http** reading the store and metrics.
//!
//! | module | owns |
//! |---|---|
//! | [`campaign`] | YAML model, parsing with positions, semantic validation, JSON Schema, loading a directory |
//! | [`market`] | the marketplace wire: paths, JSON names, auth, tolerant decoding, error classes, rate limit |
//! | [`store`] | the journal: intents, budget ledger, searches, leases; PostgreSQL and SQLite |
//! | [`engine`] | reconcile campaigns against the journal, decide and run steps, settle uncertainty |
//! | [`http`] | `/healthz`, `/readyz`, `/metrics`, `/api/v1/...` (read-only) |
//! | [`app`] | the one wiring: metrics → journal → marketplace client → engine, and the daemon around it |
//! | [`daemon`] | `run` and `demo`: schedules, reload, signals, systemd, around the engine |
//! | [`money`], [`clock`], [`metrics`] | kopecks, injected time, the metrics registry |
//! | [`cli`] | the commands: clap flags → plain settings of the modules above; nothing imports it |
//! | [`telemetry`] | logging to stderr, human or JSON |

pub mod app;
pub mod campaign;
pub mod cli;
pub mod daemon;
pub mod engine;
pub mod http;
pub mod market;
pub mod metrics;
pub mod store;
pub mod telemetry;

pub use linkrunner_domain as domain;
pub use linkrunner_domain::{clock, money};
