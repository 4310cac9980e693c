//! `daemon/`: what `linkrunner run` and `linkrunner demo` run around the engine — schedules,
//! reloads, signals, systemd notifications and the HTTP endpoint. Thin by design: business
//! rules live in `engine/`; the wiring is [`crate::app`], the commands are in `cli/`.
//!
//! - [`schedule`]: cron slots; the store decides whether a slot ran.
//! - [`campaigns`]: the loaded campaign set, keeping each file's last good version.
//! - [`run`]: the main loop; [`rounds`]: firing rounds and reconciliations, draining;
//!   [`signals`]: SIGHUP/SIGTERM, file watching, sd_notify.
//! - [`gauges`]: refreshing per-campaign metrics from the journal.
//! - [`capacity`]: what `--rate-limit` carries (reconciliation cycle, rounds per slot), pure;
//!   [`reconciler`]: reconciles campaigns paced within it, the uncertain and changed first.

pub mod campaigns;
pub mod capacity;
pub mod gauges;
pub mod reconciler;
pub mod rounds;
pub mod run;
pub mod schedule;
pub mod signals;
