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
//! - A window starts no earlier than the last `resume` of the scope (or of its account, or of
//!   every account): what an operator looked at and resumed does not trip the brake again.
//! - Per marketplace account (issue 34): the sums over that account's campaigns not halted (a
//!   campaign's anomaly is handled by its own halt, and must not halt every other campaign);
//!   a trip halts that account (`@ID`), and the other accounts keep buying. Campaigns without
//!   a loaded file are in no sum.
//! - A scope already halted by an operator (or the brake) is not halted again: the counter
//!   `linkrunner_anomaly_brake_trips_total` and the log line come once per halt.

use std::collections::{BTreeMap, HashMap, HashSet};
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

    /// One check of every campaign and of each account.
    async fn check_brake(&self) -> Result<(), StoreError> {
        let store = self.engine.store();
        let halts = store.halts().await?;
        let halted = |s: &HaltScope| halts.iter().any(|h| h.is_operator() && &h.scope == s);
        if halted(&HaltScope::Global) {
            return Ok(());
        }
        let check = Check {
            now: self.engine.clock().now(),
            resumes: store.last_resumes().await?,
            halted: halts
                .iter()
                .filter(|h| h.is_operator())
                .map(|h| h.scope.clone())
                .collect(),
        };
        let campaigns = self.buying_triggers().await;
        for window in [Window::Hour, Window::Day] {
            if self.check_window(&check, &campaigns, window).await? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One window of [`Self::check_brake`]: each campaign, then each account's sums. Whether
    /// an account tripped (the day window then adds nothing the hour's did not say).
    async fn check_window(
        &self,
        check: &Check,
        campaigns: &[(Arc<LoadedCampaign>, Option<Arc<Cron>>)],
        window: Window,
    ) -> Result<bool, StoreError> {
        let start = check.now - span(window);
        let since = check
            .resumed(&HaltScope::Global)
            .map_or(start, |r| r.max(start));
        let mut observed = ObservedSince::default();
        // Per account: what its campaigns not halted explain and show. A campaign halted
        // already is left out of its account's sums: its anomaly is handled by its own halt,
        // and one campaign must not halt every other one.
        let mut sums: BTreeMap<&str, (Figures, Figures)> = BTreeMap::new();
        for (lc, trigger) in campaigns {
            let c = &lc.campaign;
            let (account, scope) = (HaltScope::account(&c.account), HaltScope::campaign(&c.name));
            if check.halted.contains(&account) || check.halted.contains(&scope) {
                continue;
            }
            // An account's resume starts its campaigns' windows as the global one does.
            let since = check.resumed(&account).map_or(since, |r| r.max(since));
            let explained = anomaly::expected(
                c,
                self.slots(c, trigger.as_deref(), since, check.now),
                window,
            );
            let own_since = check.resumed(&scope).map_or(since, |r| r.max(since));
            let own = observed
                .of(self.engine.store(), own_since, check.now, &c.name)
                .await?;
            match anomaly::judge(own, explained, multiple_of(self), window) {
                Some(trip) => {
                    self.trip(
                        &scope,
                        "campaign",
                        &trip.reason(multiple_of(self)),
                        check.now,
                    )
                    .await?
                }
                None => {
                    let sum = sums.entry(c.account.as_str()).or_default();
                    *sum = (sum.0.plus(explained), sum.1.plus(own));
                }
            }
        }
        // Campaigns without a loaded file are left out of both sums: what they committed
        // in the window their file explained while it was loaded, and a file that
        // vanished or broke a moment after a round (a failed checkout) is no anomaly. (A
        // removed campaign's autobuyers are stopped by its removal pass.)
        let mut tripped = false;
        for (account, (explained, shown)) in sums {
            if let Some(trip) = anomaly::judge(shown, explained, multiple_of(self), window) {
                let reason = trip.reason(multiple_of(self));
                self.trip(&HaltScope::account(account), "account", &reason, check.now)
                    .await?;
                tripped = true;
            }
        }
        Ok(tripped)
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
        let held = set
            .shared()
            .map(|lc| (lc.clone(), crons.get(&lc.campaign.name).cloned()));
        // Campaigns of accounts another process works are not scheduled here: their trigger
        // is their own schedule, parsed for the check.
        let elsewhere = set
            .elsewhere_shared()
            .map(|lc| (lc.clone(), self.own_trigger(lc)));
        held.chain(elsewhere).collect()
    }

    /// The trigger of a campaign this process does not schedule: its file's schedule (every
    /// minute under `--round-every`, as the timer would); `None` without buy rounds.
    fn own_trigger(&self, lc: &LoadedCampaign) -> Option<Arc<Cron>> {
        let pattern = anomaly::trigger_pattern(&lc.campaign, self.opts.round_every)?;
        self.patterns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .parse(&pattern)
            .ok()
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

fn multiple_of<M: Market>(d: &Daemon<M>) -> f64 {
    d.opts.anomaly_multiple
}

/// What one check knows of the halts: when each scope was last resumed, and the scopes an
/// operator's (or the brake's) halt stops already.
struct Check {
    now: DateTime<Utc>,
    resumes: HashMap<HaltScope, DateTime<Utc>>,
    halted: HashSet<HaltScope>,
}

impl Check {
    fn resumed(&self, scope: &HaltScope) -> Option<DateTime<Utc>> {
        self.resumes.get(scope).copied()
    }
}

/// `observed_since` of each window start one check needs, read once: the window's, and each
/// later resume's (an account's or a campaign's).
#[derive(Default)]
struct ObservedSince(HashMap<DateTime<Utc>, HashMap<String, Observed>>);

impl ObservedSince {
    async fn of(
        &mut self,
        store: &crate::store::Store,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        name: &str,
    ) -> Result<Figures, StoreError> {
        let read = match self.0.entry(since) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let read = store.reports().observed_since(since, now).await?;
                v.insert(read.into_iter().collect())
            }
        };
        Ok(figures(read.get(name)))
    }
}

/// One campaign's figures in what `observed_since` read: the fake-clock month test's (the
/// brake itself reads them from [`ObservedSince`]).
#[cfg(feature = "test-hooks")]
pub fn observed_of(all: Vec<(String, Observed)>, name: &str) -> Figures {
    figures(all.iter().find(|(n, _)| n == name).map(|(_, o)| o))
}
