//! The anomaly brake (issue 33): the daemon compares what the journal shows committed and
//! appearing over the last hour and the last 24 h with what the campaigns' schedules and
//! autobuyers' budgets explain (`decide::anomaly`), per campaign and account-wide, and halts
//! a scope that runs above `--anomaly-multiple` times it, as an operator would (`by` = `anomaly
//! brake`, the figures in the reason), until `linkrunner resume`.
//!
//! - The expectation uses the *effective* trigger of each campaign: the slots of the timer
//!   the daemon really runs (`--round-every` when set), so tests and the demo do not trip it.
//! - It checks soon after a pass wrote ([`CHECK_AFTER_WRITES`]) and at least every
//!   [`CHECK_EVERY`], one check at a time; another replica's or `once`'s buying is in the
//!   journal, so any daemon on it sees it.
//! - A window starts no earlier than the last `resume` of the scope (or of the account): what
//!   an operator looked at and resumed does not trip the brake again.
//! - Account-wide: the sums over the campaigns not halted (a campaign's anomaly is handled by
//!   its own halt, and must not halt every other campaign), plus what campaigns without a
//!   file committed, which nothing explains.
//! - A scope already halted by an operator (or the brake) is not halted again: the counter
//!   `linkrunner_anomaly_brake_trips_total` and the log line come once per halt.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::{DateTime, Utc};
use croner::Cron;

use super::run::Daemon;
use crate::campaign::{Campaign, LoadedCampaign};
use crate::decide::anomaly::{self, Figures, Window};
use crate::market::Market;
use crate::store::{HaltScope, Observed, StoreError};

/// The brake checks at least this often, whatever wrote the journal.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(30);
/// After a pass wrote, the brake checks again once this long passed since the last check: a
/// reconciliation that writes all the time does not make it read the journal every second.
pub(crate) const CHECK_AFTER_WRITES: Duration = Duration::from_secs(2);

impl<M: Market> Daemon<M> {
    /// From the main loop's tick: starts a check when one is due and none runs.
    pub(super) fn maybe_check_brake(self: &Arc<Self>) {
        if self.opts.anomaly_multiple <= 0.0 {
            return;
        }
        let b = &self.brake;
        {
            let mut last = b.last.lock().unwrap_or_else(|e| e.into_inner());
            let since = last.map(|t| t.elapsed());
            let due = match since {
                None => true,
                Some(s) => {
                    s >= CHECK_EVERY || (s >= CHECK_AFTER_WRITES && b.due.load(Ordering::Acquire))
                }
            };
            if !due || b.running.swap(true, Ordering::AcqRel) {
                return;
            }
            *last = Some(tokio::time::Instant::now());
            b.due.store(false, Ordering::Release);
        }
        let (d, running) = (self.clone(), b.running.clone());
        self.tracker.spawn(async move {
            if let Err(err) = d.check_brake().await {
                d.engine.metrics().database_errors_total.inc();
                tracing::warn!(error = %err, "the anomaly brake could not check; it checks again soon");
            }
            running.store(false, Ordering::Release);
        });
    }

    /// One check of every campaign and of the account.
    async fn check_brake(&self) -> Result<(), StoreError> {
        let store = self.engine.store();
        let now = self.engine.clock().now();
        let halts = store.halts().await?;
        let halted = |s: &HaltScope| halts.iter().any(|h| h.is_operator() && &h.scope == s);
        if halted(&HaltScope::Global) {
            return Ok(());
        }
        let resumes = store.last_resumes().await?;
        let resumed = |s: &HaltScope| resumes.get(s).copied();
        let account_resume = resumed(&HaltScope::Global);
        let campaigns = self.buying_triggers().await;
        let multiple = self.opts.anomaly_multiple;
        for window in [Window::Hour, Window::Day] {
            let start = now - span(window);
            let since = account_resume.map_or(start, |r| r.max(start));
            let observed: HashMap<String, Observed> = store
                .reports()
                .observed_since(since, now)
                .await?
                .into_iter()
                .collect();
            // A campaign halted already is left out of the account's sums: its anomaly is
            // handled by its own halt, and one campaign must not halt every other one.
            let (mut explained_sum, mut observed_sum) = (Figures::default(), Figures::default());
            for (lc, trigger) in &campaigns {
                let c = &lc.campaign;
                let slots = self.slots(c, trigger.as_deref(), since, now);
                let explained = anomaly::expected(c, slots, window);
                let scope = HaltScope::campaign(&c.name);
                if halted(&scope) {
                    continue;
                }
                let own = match resumed(&scope).filter(|r| *r > since) {
                    // Resumed since the window's start: only what came after counts.
                    Some(r) => observed_of(store.reports().observed_since(r, now).await?, &c.name),
                    None => figures(observed.get(&c.name)),
                };
                match anomaly::judge(own, explained, multiple, window) {
                    Some(trip) => {
                        self.trip(&scope, "campaign", &trip.reason(multiple), now)
                            .await?;
                    }
                    None => {
                        explained_sum = explained_sum.plus(explained);
                        observed_sum = observed_sum.plus(own);
                    }
                }
            }
            // Campaigns without a loaded file are left out of both sums: what they committed
            // in the window their file explained while it was loaded, and a file that
            // vanished or broke a moment after a round (a failed checkout) is no anomaly. (A
            // removed campaign's autobuyers are stopped by its removal pass.)
            if let Some(trip) = anomaly::judge(observed_sum, explained_sum, multiple, window) {
                self.trip(&HaltScope::Global, "account", &trip.reason(multiple), now)
                    .await?;
                return Ok(());
            }
        }
        Ok(())
    }

    async fn trip(
        &self,
        scope: &HaltScope,
        label: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if self.engine.store().brake(scope, reason, now).await? {
            self.engine
                .metrics()
                .anomaly_brake_trips_total
                .with_label_values(&[label])
                .inc();
            tracing::error!(
                scope = scope.key(),
                reason,
                "the anomaly brake halted spending; `linkrunner resume` lifts it once the cause is understood"
            );
        }
        Ok(())
    }

    /// Every loaded campaign with its effective trigger: the parsed schedule the timer runs
    /// (`None`: it has no buy rounds).
    async fn buying_triggers(&self) -> Vec<(Arc<LoadedCampaign>, Option<Arc<Cron>>)> {
        let crons: HashMap<String, Arc<Cron>> = {
            let next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            next.iter()
                .map(|(n, (c, _))| (n.clone(), c.clone()))
                .collect()
        };
        let set = self.set.read().await;
        set.shared()
            .map(|lc| (lc.clone(), crons.get(&lc.campaign.name).cloned()))
            .collect()
    }

    /// The slots of a campaign's effective trigger in `[since, now]`.
    fn slots(
        &self,
        c: &Campaign,
        cron: Option<&Cron>,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> u64 {
        anomaly::slots_in(c, cron, self.opts.round_every, since, now)
    }
}

fn span(window: Window) -> chrono::Duration {
    match window {
        Window::Hour => chrono::Duration::hours(1),
        Window::Day => chrono::Duration::days(1),
    }
}

fn figures(o: Option<&Observed>) -> Figures {
    o.map_or_else(Figures::default, |o| Figures {
        committed: o.committed,
        links: o.links,
    })
}

/// One campaign's figures in what `observed_since` read (`pub` for the fake-clock month test).
pub fn observed_of(all: Vec<(String, Observed)>, name: &str) -> Figures {
    figures(all.iter().find(|(n, _)| n == name).map(|(_, o)| o))
}
