//! `daemon/`: what `linkrunner run` and `linkrunner demo` run around the engine — schedules,
//! reloads, signals, systemd notifications and the HTTP endpoint. Thin by design: business
//! rules live in `decide/` and the engine in `effects/`; the wiring is [`crate::app`], the
//! commands are in `cli/`.
//!
//! - [`schedule`]: cron slots; the store decides whether a slot ran.
//! - [`campaigns`]: the loaded campaign set; an invalid file's campaign is held, not run.
//! - [`run`]: the main loop; [`rounds`]: firing rounds and reconciliations, draining;
//!   [`signals`]: SIGHUP/SIGTERM, file watching, sd_notify.
//! - [`division`]: replicas that divide the accounts (account leases, heartbeats).
//! - [`brake`]: the anomaly brake, halting a scope that commits far more than its files explain.
//! - [`gauges`]: refreshing per-campaign metrics from the journal.
//! - [`removals`]: campaigns whose files are gone, judged before any is removed (issue 32).
//! - [`reconciler`]: reconciles campaigns paced within `--rate-limit` (planned by
//!   `crate::decide::capacity`), the changed and uncertain first, buy rounds before all;
//!   [`turns`]: whose turn it is.
//!
//! May import: crate::campaign, crate::decide, crate::effects, crate::http, crate::market, crate::metrics, crate::notify, crate::store, crate::telemetry, crate::views.

pub mod brake;
pub(crate) mod campaigns;
pub(crate) mod division;
pub mod gauges;
pub(crate) mod reconciler;
pub(crate) mod removals;
pub(crate) mod rounds;
pub mod run;
pub(crate) mod schedule;
pub(crate) mod signals;
pub(crate) mod turns;
