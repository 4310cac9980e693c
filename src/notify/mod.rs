//! `notify/`: webhooks for the events a person must act on (issue 33) — a global halt, a
//! campaign waiting for an operator or stalled, a cap reached, intents uncertain past the
//! settle grace, links that left a project's link list, a page held twice for one URL — each
//! naming the campaign, the reason and the command that resolves it.
//! Prometheus alerting knows counts; these say which campaign and what to run.
//!
//! - [`config`]: the notify file (`--notify-file`): endpoints, formats, events; the
//!   addresses are secrets.
//! - [`events`]: the events, derived (pure) from the journal's read models.
//! - `watch`: reads the journal every `interval`, claims each new event once across
//!   replicas and restarts (`Store::claim_notice`), clears the claims of conditions gone.
//! - `send`: one delivery task per endpoint behind a bounded queue, retries with backoff.
//!
//! [`Notifier::start`] runs all of it beside the daemon (wired by `crate::app`); nothing in
//! a pass waits for it.
//!
//! May import: crate::metrics, crate::store, crate::views.

pub(crate) mod config;
pub(crate) mod events;
mod send;
mod watch;

use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use config::{NotifySettings, load_notify_file};
// The integration tests parse a notify file from a string; the crate loads one from disk.
#[cfg(feature = "test-hooks")]
pub use config::parse_notify_file;

use crate::metrics::Metrics;
use crate::store::Store;
use linkrunner_domain::clock::SharedClock;

/// What the notifier reads with, and who it claims as.
pub(crate) struct NotifyContext {
    pub(crate) store: Store,
    pub(crate) clock: SharedClock,
    pub(crate) metrics: Arc<Metrics>,
    /// This daemon's holder id, recorded with its claims.
    pub(crate) holder: String,
    pub(crate) settle_grace: chrono::Duration,
}

/// The running notifier: the watcher and one delivery task per endpoint.
pub(crate) struct Notifier {
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Notifier {
    /// Starts the watcher and the delivery tasks; they end at [`Notifier::stop`].
    pub(crate) fn start(settings: NotifySettings, cx: NotifyContext) -> anyhow::Result<Notifier> {
        let stop = CancellationToken::new();
        let mut tasks = Vec::with_capacity(settings.endpoints.len() + 1);
        let mut outboxes = Vec::with_capacity(settings.endpoints.len());
        for endpoint in settings.endpoints {
            let (outbox, task) = send::spawn_outbox(endpoint, cx.metrics.clone(), stop.clone())?;
            outboxes.push(outbox);
            tasks.push(task);
        }
        let watcher = watch::Watcher { cx, outboxes };
        tasks.push(tokio::spawn(watch_every(
            watcher,
            settings.interval,
            stop.clone(),
        )));
        Ok(Notifier { stop, tasks })
    }

    /// Stops every task (messages still queued are not sent: their events stay claimed).
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

async fn watch_every(w: watch::Watcher, every: std::time::Duration, stop: CancellationToken) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let done = tokio::select! {
            _ = stop.cancelled() => return,
            r = w.tick() => r,
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "notifications: could not read or claim events in the journal; trying again at the next interval");
        }
    }
}
