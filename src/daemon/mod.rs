//! `daemon/`: `linkrunner run` and `linkrunner demo` — schedules, reloads, signals, systemd
//! notifications and the HTTP endpoint, wired around the engine. Thin by design: business
//! rules live in `engine/`.
//!
//! - [`schedule`]: cron slots; the store decides whether a slot ran.
//! - [`campaigns`]: the loaded campaign set, keeping each file's last good version.
//! - [`run`]: the main loop; [`signals`]: SIGHUP/SIGTERM, file watching, sd_notify.
//! - [`gauges`]: refreshing per-campaign metrics from the journal.
//! - [`demo`]: the sandbox, an embedded database and the daemon in one process.

pub mod campaigns;
pub mod demo;
pub mod gauges;
pub mod rounds;
pub mod run;
pub mod schedule;
pub mod signals;
