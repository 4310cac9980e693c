//! Reconciliation within the rate limit (issue 27). One task reconciles campaigns one by one,
//! each when its turn comes, paced so that reconciliation uses at most its share of
//! `--rate-limit` ([`crate::decide::capacity::plan_reconcile`]):
//!
//! 1. first, campaigns whose file just changed or appeared (and at start those the journal
//!    holds something uncertain for);
//! 2. then campaigns whose last pass left something open (money uncertain, a stop not yet
//!    settled, a step blocked), once `--reconcile-interval` passed since their last pass;
//! 3. then every other campaign, the longest unreconciled first, once the interval passed.
//!
//! When every campaign cannot be reconciled once per interval within the share, the cycle is
//! longer and says so (log at start, `linkrunner_reconcile_cycle_seconds`,
//! `linkrunner_reconcile_backlog`). While a due buy round waits to start, nothing new is
//! reconciled, and at most half the campaign slots ever reconcile at once: a round never
//! waits for a slot behind a reconciliation. While rounds run, reconciliation keeps its pace:
//! the client's queue gives a round's calls the next turn before any of reconciliation's
//! (`market/throttle/gate.rs`), so reconciliation only takes what the rounds leave idle, mostly
//! their poll waits (issue 34, item 6; slowing it down beside rounds stretched the cycle by the
//! rounds' wall time). Tested by `tests/it` `daemon::capacity::
//! a_due_round_starts_while_a_long_reconciliation_is_under_way`. A buy round's pass
//! reconciles its campaign too, so it counts as that campaign's reconciliation.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::effects::pass::{CampaignReport, PassOutcome, pass_cause};
use crate::market::Market;
use crate::metrics::Purpose;
use crate::store::{CauseKind, IntentFilter, IntentState};
use crate::views::overview::FileFact;

use super::gauges;
use super::run::{Daemon, Event};
use crate::decide::capacity::{self, ReconcilePlan};

/// Reports kept for one [`Event::Reconciled`] and one batch of gauge refreshes at most.
const FLUSH_AT: usize = 1000;

/// Whether a pass left something a sooner reconciliation should look at again.
fn left_open(r: &CampaignReport) -> bool {
    r.uncertain > 0
        || !matches!(
            r.outcome,
            PassOutcome::Converged | PassOutcome::Stalled | PassOutcome::SpendingStopped
        )
}

/// What the reconciler learns as it goes: the calls a reconciliation costs.
struct Learned {
    calls: u64,
    passes: u64,
    per_campaign: f64,
}

impl<M: Market> Daemon<M> {
    /// Every campaign the reconciler covers: the loaded ones and those the journal records
    /// whose file is gone (they are reconciled as removed: their autobuyers stop) — only of
    /// the accounts this process works: another's cost neither a pass nor a place in the
    /// cycle's plan (`linkrunner_reconcile_cycle_seconds`).
    pub(super) async fn refresh_roster(&self) {
        let recorded = self.recorded_accounts().await;
        let works = |a: &str| self.engine.works(a);
        let mut names: Vec<String> = {
            let set = self.set.read().await;
            let loaded = set.iter().filter(|c| works(&c.campaign.account));
            let mut names: Vec<String> = loaded.map(|c| c.campaign.name.clone()).collect();
            names.extend(
                recorded
                    .into_iter()
                    .filter(|(n, a)| works(a) && set.elsewhere(n).is_none())
                    .map(|(n, _)| n),
            );
            names
        };
        names.sort();
        names.dedup();
        self.reconciler.queue().set_roster(&names);
        self.reconciler.wake.notify_one();
    }

    /// The campaigns the journal knows, with their accounts. A database error reads as none,
    /// as [`Self::recorded_campaigns`] says.
    async fn recorded_accounts(&self) -> Vec<(String, String)> {
        let read = self.engine.store().campaigns().campaign_accounts().await;
        self.recorded_or_none(read)
    }

    /// At start: campaigns the journal holds something uncertain or in flight for go first.
    async fn uncertain_first(&self) {
        let filter = IntentFilter {
            states: vec![IntentState::Uncertain, IntentState::InFlight],
            ..IntentFilter::default()
        };
        if let Ok(rows) = self.engine.store().intents().find_intents(filter).await {
            let names: Vec<String> = rows.into_iter().map(|i| i.campaign).collect();
            self.reconciler.urgent(&names);
        }
    }

    /// The reconciliation's plan for the campaigns it covers now.
    pub(super) async fn reconcile_plan(&self, per_campaign: f64) -> ReconcilePlan {
        let campaigns = self.reconciler.queue().len();
        let scheduled = self
            .set
            .read()
            .await
            .iter()
            .any(|c| c.campaign.buy.is_some());
        capacity::plan_reconcile(
            self.engine.rate_limit(),
            campaigns,
            self.opts.reconcile_interval,
            per_campaign,
            scheduled,
        )
    }

    fn publish_plan(&self, plan: &ReconcilePlan, campaigns: usize) {
        let m = &self.engine.metrics().load;
        m.reconcile_cycle_seconds.set(plan.cycle.as_secs_f64());
        m.reconcile_budget_calls_per_second
            .set(if plan.budget.is_finite() {
                plan.budget
            } else {
                0.0
            });
        let interval = self.opts.reconcile_interval;
        if plan.spread {
            tracing::warn!(
                campaigns,
                interval_s = interval.as_secs(),
                cycle_s = plan.cycle.as_secs(),
                budget_calls_per_s = plan.budget,
                "every campaign cannot be reconciled every --reconcile-interval within --rate-limit: \
                 reconciliation is spread over a longer cycle (buy rounds keep their share); see docs/sizing.md"
            );
        } else {
            tracing::info!(
                campaigns,
                interval_s = interval.as_secs(),
                cycle_s = plan.cycle.as_secs(),
                budget_calls_per_s = plan.budget,
                "reconciliation planned within --rate-limit"
            );
        }
    }

    /// The reconciler's task: until shutdown, the next due campaign, paced within its share.
    pub(super) async fn reconcile_forever(self: Arc<Self>) {
        self.refresh_roster().await;
        self.uncertain_first().await;
        let mut learned = Learned {
            calls: self.reconcile_calls(),
            passes: 0,
            per_campaign: 1.0,
        };
        let mut plan = self.reconcile_plan(learned.per_campaign).await;
        let mut planned_for = self.reconciler.queue().len();
        self.publish_plan(&plan, planned_for);
        let width = (self.engine.settings().campaign_concurrency / 2).max(1);
        let running = Arc::new(Semaphore::new(width));
        let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut batch: Vec<CampaignReport> = Vec::new();
        let mut last_start: Option<Instant> = None;
        loop {
            while let Ok(report) = done_rx.try_recv() {
                self.reconciled(report, &mut batch, &mut learned).await;
            }
            let size = self.reconciler.queue().len();
            if learned.passes >= 50 || size != planned_for {
                learned.per_campaign = self.learn_cost(&mut learned);
                plan = self.reconcile_plan(learned.per_campaign).await;
                if size != planned_for {
                    self.publish_plan(&plan, size);
                    planned_for = size;
                }
                self.engine
                    .metrics()
                    .load
                    .reconcile_cycle_seconds
                    .set(plan.cycle.as_secs_f64());
            }
            let Some(name) = self.next_turn(&mut batch, &mut done_rx, &mut learned).await else {
                return self.flush(&mut batch).await;
            };
            let Some((permit, started)) = self
                .paced(&plan, learned.per_campaign, last_start, &running)
                .await
            else {
                return;
            };
            last_start = Some(started);
            let slot = tokio::select! {
                s = self.engine.slots().take() => s,
                _ = self.engine.cancel_token().cancelled() => return,
            };
            let (d, tx) = (self.clone(), done_tx.clone());
            self.tracker.spawn(async move {
                let report = slot.run(d.reconcile_one(&name)).await;
                drop(permit);
                let _ = tx.send(report);
            });
        }
    }

    /// Waits until the next reconciliation may start — its spacing after the last start —
    /// and takes its place among the reconciliations in flight: the permit, and the time the
    /// start counts as; `None` at shutdown.
    ///
    /// A start counts at its planned time, not when the timer woke it: a timer's lateness
    /// (a millisecond or more, far more on a busy machine) otherwise adds up over a cycle of
    /// thousands of starts (the first cycle of 2,000 campaigns took 1.25 x the plan on a
    /// loaded machine). After a pause (nothing due, the places taken) at most one start is
    /// made up; the client's limiter still bounds the rate.
    async fn paced(
        &self,
        plan: &ReconcilePlan,
        cost: f64,
        last_start: Option<Instant>,
        running: &Arc<Semaphore>,
    ) -> Option<(tokio::sync::OwnedSemaphorePermit, Instant)> {
        let spacing = plan.spacing(cost);
        let at = last_start.map_or_else(Instant::now, |t| t + spacing);
        tokio::select! {
            _ = tokio::time::sleep_until(at) => {}
            _ = self.engine.cancel_token().cancelled() => return None,
        }
        let permit = tokio::select! {
            p = running.clone().acquire_owned() => p.ok()?,
            _ = self.engine.cancel_token().cancelled() => return None,
        };
        let made_up = Instant::now()
            .checked_sub(spacing)
            .map_or(at, |t| at.max(t));
        Some((permit, made_up))
    }

    /// Waits for the next campaign due, while no buy round waits to start; `None` at shutdown.
    async fn next_turn(
        &self,
        batch: &mut Vec<CampaignReport>,
        done_rx: &mut tokio::sync::mpsc::UnboundedReceiver<CampaignReport>,
        learned: &mut Learned,
    ) -> Option<String> {
        loop {
            if self.engine.cancel_token().is_cancelled() {
                return None;
            }
            let now = Instant::now();
            let interval = self.opts.reconcile_interval;
            let rounds_wait = self.rounds_waiting.load(Ordering::Relaxed) > 0;
            let (next, backlog, due_at, cycle) = {
                let mut q = self.reconciler.queue();
                let next = (!rounds_wait).then(|| q.next(now, interval)).flatten();
                (
                    next,
                    q.backlog(now, interval),
                    q.next_due(interval),
                    q.cycle_done(now),
                )
            };
            self.engine
                .metrics()
                .load
                .reconcile_backlog
                .set(backlog as i64);
            if let Some(took) = cycle {
                self.engine
                    .metrics()
                    .load
                    .reconcile_last_cycle_seconds
                    .set(took.as_secs_f64());
                tracing::info!(cycle_s = took.as_secs(), "every campaign reconciled once");
            }
            if let Some(name) = next {
                return Some(name);
            }
            if backlog == 0 {
                self.flush(batch).await;
            }
            // Rounds waiting: look again shortly; else sleep until the next is due.
            let wake = match (rounds_wait, due_at) {
                (true, _) => now + Duration::from_millis(50),
                (false, Some(t)) => t.max(now + Duration::from_millis(50)),
                (false, None) => now + Duration::from_secs(1),
            };
            tokio::select! {
                _ = tokio::time::sleep_until(wake.min(now + Duration::from_secs(1))) => {}
                _ = self.reconciler.wake.notified() => {}
                Some(r) = done_rx.recv() => self.reconciled(r, batch, learned).await,
                _ = self.engine.cancel_token().cancelled() => return None,
            }
        }
    }

    /// One campaign's reconciliation: its loaded file, or as removed when it has none.
    async fn reconcile_one(&self, name: &str) -> CampaignReport {
        let (lc, invalid, elsewhere) = {
            let set = self.set.read().await;
            let elsewhere = set.elsewhere(name).map(|e| e.campaign.account.clone());
            (set.get(name).cloned(), set.invalid().clone(), elsewhere)
        };
        // Its file is there, in an account this process did not work at the last reload:
        // never a removal (the reload that holds it comes within a second of the change).
        if let (None, Some(account)) = (&lc, elsewhere) {
            let mut r = CampaignReport::new(name);
            r.outcome = PassOutcome::Skipped;
            r.detail = Some(format!(
                "account `{account}` is worked by another daemon (its account lease)"
            ));
            r.account = account;
            return r;
        }
        // A file that exists but fails validation holds its campaign: never a removal.
        if lc.is_none() {
            match self.engine.held_if_invalid(name, &invalid).await {
                Ok(Some(held)) => return held,
                Ok(None) => {}
                Err(e) => {
                    let mut r = CampaignReport::new(name);
                    r.outcome = PassOutcome::Failed;
                    r.transient = true;
                    r.detail = Some(e.to_string());
                    return r;
                }
            }
        }
        let kind = match lc {
            Some(_) => CauseKind::Reconcile,
            None => CauseKind::Removal,
        };
        let cause = pass_cause(lc.as_deref(), kind, None);
        let c = lc.as_ref().map(|lc| &lc.campaign);
        self.engine.metrics().load.reconciliations_total.inc();
        self.engine.campaign_pass(c, name, false, cause).await
    }

    async fn reconciled(
        &self,
        report: CampaignReport,
        batch: &mut Vec<CampaignReport>,
        learned: &mut Learned,
    ) {
        learned.passes += 1;
        self.reconciler
            .queue()
            .finished(&report.campaign, left_open(&report));
        batch.push(report);
        if batch.len() >= FLUSH_AT {
            self.flush(batch).await;
        }
    }

    /// Refreshes the reconciled campaigns' gauges in one batch read and tells the events.
    async fn flush(&self, batch: &mut Vec<CampaignReport>) {
        if batch.is_empty() {
            return;
        }
        let reports = std::mem::take(batch);
        let refreshed: Vec<(String, FileFact)> = {
            let set = self.set.read().await;
            reports
                .iter()
                .map(|r| (r.campaign.clone(), set.file_fact(&r.campaign)))
                .collect()
        };
        gauges::refresh_campaigns(&self.engine, &refreshed).await;
        self.intents_changed();
        self.emit(Event::Reconciled(reports));
    }

    /// Reconciliation's calls so far (its own and the settling reads of any pass).
    fn reconcile_calls(&self) -> u64 {
        let m = &self.engine.metrics().load;
        m.calls_for(Purpose::Reconcile) + m.calls_for(Purpose::Settle)
    }

    /// Calls per reconciliation since the last estimate, smoothed; at least a quarter call.
    fn learn_cost(&self, learned: &mut Learned) -> f64 {
        let calls = self.reconcile_calls();
        if learned.passes == 0 {
            return learned.per_campaign;
        }
        let seen = calls.saturating_sub(learned.calls) as f64 / learned.passes as f64;
        learned.calls = calls;
        learned.passes = 0;
        (0.5 * learned.per_campaign + 0.5 * seen).clamp(0.25, 50.0)
    }
}
