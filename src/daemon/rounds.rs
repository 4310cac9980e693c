//! Firing buy rounds from the daemon's loop (reconciliations: `reconciler.rs`), and draining
//! on shutdown.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use tracing::Instrument as _;

use crate::campaign::LoadedCampaign;
use crate::decide::round::{left_of_slot, retry_delay};
use crate::effects::pass::{CampaignReport, PassOutcome, pass_cause};
use crate::market::Market;
use crate::store::{CauseKind, RoundOutcome, RoundState};

use super::gauges;
use super::run::{Daemon, Event};

impl<M: Market> Daemon<M> {
    /// Starts a round task for every campaign whose next slot has come.
    pub(super) async fn fire_due_rounds(self: &Arc<Self>) {
        let now = self.engine.clock().now();
        let due: Vec<(String, DateTime<Utc>)> = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let mut due = Vec::new();
            for (name, (cron, at)) in next.iter_mut() {
                if *at <= now {
                    // The slot is the latest occurrence at or before now, whenever the check runs.
                    let latest = cron.find_previous_occurrence(&now, true).unwrap_or(*at);
                    due.push((name.clone(), self.slot_for(latest)));
                    *at = match self.opts.round_every {
                        Some(every) => {
                            now + chrono::Duration::from_std(every)
                                .unwrap_or(chrono::Duration::seconds(60))
                        }
                        None => super::schedule::next_slot(cron, now)
                            .unwrap_or(now + chrono::Duration::days(366)),
                    };
                }
            }
            if !due.is_empty() {
                self.publish_next_rounds(&next);
            }
            due
        };
        if !due.is_empty() {
            let waiting = self.rounds_waiting.fetch_add(due.len(), Ordering::Relaxed) + due.len();
            self.engine
                .metrics()
                .load
                .rounds_waiting
                .set(waiting as i64);
            let d = self.clone();
            self.tracker
                .spawn(async move { d.dispatch_rounds(due).await });
        }
    }

    /// Starts the due rounds one by one, each once a campaign slot is free: a round task (and
    /// its copy of the campaign) exists only while it works or waits, not for every campaign
    /// whose slot came due at once (at start, all of them).
    async fn dispatch_rounds(self: Arc<Self>, due: Vec<(String, DateTime<Utc>)>) {
        for (name, slot) in due {
            let taken = tokio::select! {
                s = self.engine.slots().take() => s,
                _ = self.engine.cancel_token().cancelled() => return,
            };
            let waiting = self
                .rounds_waiting
                .fetch_sub(1, Ordering::Relaxed)
                .saturating_sub(1);
            self.engine
                .metrics()
                .load
                .rounds_waiting
                .set(waiting as i64);
            let lc = self.set.read().await.get(&name).cloned();
            let free = lc.is_some()
                && self
                    .busy
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.clone());
            let (Some(lc), true) = (lc, free) else {
                continue;
            };
            let d = self.clone();
            // Every line the round writes, inside its pass or not, names the campaign and
            // the round at the top level of a JSON log line (`crate::telemetry`).
            let span = tracing::info_span!(
                "round",
                campaign = %name,
                round = %slot.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
            self.tracker.spawn(async move {
                taken.run(d.run_round(&lc, slot).instrument(span)).await;
                d.busy
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&lc.campaign.name);
            });
        }
    }

    /// The demo replaces schedules with a fixed period; slots are then multiples of it.
    fn slot_for(&self, latest: DateTime<Utc>) -> DateTime<Utc> {
        match self.opts.round_every {
            Some(every) => {
                let ms = every.as_millis().max(1) as i64;
                let now = self.engine.clock().now().timestamp_millis();
                DateTime::from_timestamp_millis(now - now % ms).unwrap_or(latest)
            }
            None => latest,
        }
    }

    /// One scheduled round: claimed in the store first, so a slot runs once across restarts
    /// and replicas. A campaign seen for the first time records its current slot as a
    /// baseline instead of buying at once. A deferred slot (an earlier try could not run for
    /// a transient reason) is claimed again and buys only what is left of `per_run`.
    async fn run_round(&self, lc: &LoadedCampaign, slot: DateTime<Utc>) {
        let e = &self.engine;
        let name = &lc.campaign.name;
        let now = e.clock().now();
        // Another daemon works this campaign's account (its account lease): the slot is its.
        if !e.works(&lc.campaign.account) {
            return;
        }
        // Not before its rename is handed over, nor while its domain is another recorded
        // campaign's: recorded here, it would be a campaign of its own (issue 32).
        match e.may_record(&lc.campaign).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(err) => {
                tracing::warn!(campaign = %name, error = %err, "round skipped: the journal could not say whether the campaign may be recorded");
                return;
            }
        }
        // A new campaign's first slot can come before its first reconciliation has recorded
        // it; the round rows reference the campaign, so record it here too.
        if let Err(err) = e
            .store()
            .campaigns()
            .record_caps(
                &crate::decide::caps::caps(&lc.campaign),
                crate::decide::approval::threshold(&lc.campaign),
                now,
            )
            .await
        {
            return self.db_error(name, "upsert_campaign", &err);
        }
        let last = match e.store().rounds().last_round(name).await {
            Ok(l) => l,
            Err(err) => return self.db_error(name, "last_round", &err),
        };
        let retry = match last.as_ref() {
            Some(l) if l.slot > slot => return,
            Some(l) if l.slot == slot => {
                if l.state != RoundState::Deferred {
                    return;
                }
                match e
                    .store()
                    .rounds()
                    .reclaim_round(name, slot, e.holder(), now)
                    .await
                {
                    Ok(Some(retry)) => Some(retry),
                    Ok(None) => return,
                    Err(err) => return self.db_error(name, "reclaim_round", &err),
                }
            }
            _ => None,
        };
        if retry.is_none() {
            match e
                .store()
                .rounds()
                .claim_round(name, slot, e.holder(), now)
                .await
            {
                Ok(true) => {}
                Ok(false) => return,
                Err(err) => return self.db_error(name, "claim_round", &err),
            }
        }
        if last.is_none() && self.opts.round_every.is_none() {
            let detail = "baseline: first slot seen; buying starts at the next slot";
            let _ = e
                .store()
                .rounds()
                .finish_round(name, slot, RoundOutcome::Skipped, detail, now)
                .await;
            return;
        }
        let campaign = left_of_slot(&lc.campaign, retry);
        let cause = pass_cause(Some(lc), CauseKind::Round, Some(slot));
        self.reconciler.round_started(name);
        if retry.is_none() {
            self.note_round_start(name, slot);
        }
        let report = e.campaign_pass(Some(&campaign), name, true, cause).await;
        let attempt = retry.map_or(1, |r| r.attempt);
        self.finish_round(lc, slot, attempt, &report).await;
        if retry.is_none() {
            let late = (e.clock().now() - slot).to_std().unwrap_or_default();
            e.metrics()
                .load
                .round_finish_delay_seconds
                .observe(late.as_secs_f64());
        }
        let file = crate::views::overview::FileFact::Present {
            paused: lc.campaign.paused,
        };
        gauges::refresh_campaign(e, name, file).await;
        self.intents_changed();
        self.emit(Event::Round { slot, report });
    }

    /// How long after its slot a round starts; past a minute it started late.
    fn note_round_start(&self, name: &str, slot: DateTime<Utc>) {
        let e = &self.engine;
        let late = (e.clock().now() - slot).to_std().unwrap_or_default();
        e.metrics()
            .load
            .round_start_delay_seconds
            .observe(late.as_secs_f64());
        if late > crate::decide::capacity::LATE_AFTER {
            e.metrics().load.rounds_started_late_total.inc();
            tracing::warn!(campaign = %name, slot = %slot, late_s = late.as_secs(), "buy round started more than a minute after its slot (docs/sizing.md)");
        }
    }

    /// Records how the try ended, counts it and logs it. A paused campaign's round buys
    /// nothing by design: when its pass converged, the round is recorded and counted as
    /// skipped, and says the campaign is paused. A try stopped by something transient is
    /// deferred and the timer comes back for it (see [`retry_delay`]) while the slot lasts.
    async fn finish_round(
        &self,
        lc: &LoadedCampaign,
        slot: DateTime<Utc>,
        attempt: u32,
        report: &CampaignReport,
    ) {
        let e = &self.engine;
        let name = &lc.campaign.name;
        let now = e.clock().now();
        let paused = lc.campaign.paused && report.outcome == PassOutcome::Converged;
        let (outcome, detail) = round_record(report, paused);
        let recorded = if outcome == RoundOutcome::Deferred {
            let spent = report.bought.saturating_add(report.uncertain);
            self.retry_round_at(name, now + retry_delay(attempt));
            e.store()
                .rounds()
                .defer_round(name, slot, &detail, spent, now)
                .await
        } else {
            e.store()
                .rounds()
                .finish_round(name, slot, outcome, &detail, now)
                .await
        };
        if let Err(err) = recorded {
            e.metrics().database_errors_total.inc();
            tracing::warn!(campaign = %name, error = %err, "could not record the end of the round");
        }
        e.metrics().campaigns.round(name, outcome.as_str());
        if paused {
            tracing::info!(campaign = %name, slot = %slot, outcome = outcome.as_str(), "buy round skipped: the campaign is paused");
        } else if outcome == RoundOutcome::Deferred {
            tracing::warn!(campaign = %name, slot = %slot, attempt, retry_in_s = retry_delay(attempt).num_seconds(), reason = detail.as_str(), "buy round deferred; tried again within its slot");
        } else {
            tracing::info!(campaign = %name, slot = %slot, outcome = outcome.as_str(), bought = report.bought, "buy round finished");
        }
    }

    /// Brings the campaign's next timer check forward to `at` (never later than planned).
    fn retry_round_at(&self, campaign: &str, at: DateTime<Utc>) {
        if let Some(entry) = self
            .next
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(campaign)
        {
            entry.1 = entry.1.min(at);
        }
    }

    /// Stops starting new steps, lets what is in flight finish and be recorded, within the grace.
    pub(super) async fn drain(&self) {
        self.health.set_shutting_down();
        super::signals::notify_stopping();
        self.engine.cancel_token().cancel();
        self.tracker.close();
        if tokio::time::timeout(self.opts.shutdown_grace, self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "shutdown grace elapsed with steps still running; their intents stay in flight and are settled at the next start"
            );
        }
        self.release_leases().await;
    }

    /// Releases the leases of the passes the grace cut off (the others released theirs), so
    /// the next process takes their campaigns at once. Safe although their tasks still run
    /// until the process exits: the engine is cancelled, so they send nothing new, and a call
    /// of theirs still in flight is what the next holder settles, as after a kill.
    async fn release_leases(&self) {
        let holder = self.engine.holder();
        match self.engine.store().leases().release_leases_of(holder).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                leases = n,
                "released the leases of passes cut off at shutdown"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "releasing the leases at shutdown failed; they expire with their TTL")
            }
        }
    }

    /// The journal is unreachable: nothing was sent; the slot is tried again shortly.
    fn db_error(&self, campaign: &str, op: &str, err: &crate::store::StoreError) {
        self.engine.metrics().database_errors_total.inc();
        tracing::warn!(campaign, operation = op, error = %err, "journal unavailable; the round is retried in a few seconds");
        self.retry_round_at(
            campaign,
            self.engine.clock().now() + chrono::Duration::seconds(5),
        );
    }
}

/// What the journal records for a finished try. `paused`: the campaign is paused and its
/// pass converged, so nothing was bought by design. A try that did not converge for a
/// transient reason is deferred.
fn round_record(report: &CampaignReport, paused: bool) -> (RoundOutcome, String) {
    let outcome = match report.outcome {
        PassOutcome::Converged if paused => RoundOutcome::Skipped,
        PassOutcome::Converged => RoundOutcome::Succeeded,
        _ if report.transient => RoundOutcome::Deferred,
        PassOutcome::SpendingStopped
        | PassOutcome::Skipped
        | PassOutcome::FileInvalid
        | PassOutcome::RemovalHeld => RoundOutcome::Skipped,
        PassOutcome::Stalled => RoundOutcome::Stalled,
        PassOutcome::Blocked | PassOutcome::Failed | PassOutcome::MarketplaceUnreachable => {
            RoundOutcome::Failed
        }
    };
    let detail = match &report.detail {
        Some(d) => d.clone(),
        None if paused => "campaign is paused: no buying".to_string(),
        None => format!("bought {}", report.bought),
    };
    (outcome, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(outcome: PassOutcome, detail: Option<&str>, bought: u32) -> CampaignReport {
        CampaignReport {
            outcome,
            detail: detail.map(str::to_string),
            bought,
            ..CampaignReport::new("acme-shoes")
        }
    }

    #[test]
    fn a_converged_round_of_an_active_campaign_succeeded_with_what_it_bought() {
        let r = report(PassOutcome::Converged, None, 2);
        assert_eq!(
            round_record(&r, false),
            (RoundOutcome::Succeeded, "bought 2".to_string())
        );
    }

    #[test]
    fn a_paused_campaigns_round_is_skipped_and_says_it_is_paused() {
        let r = report(PassOutcome::Converged, None, 0);
        assert_eq!(
            round_record(&r, true),
            (
                RoundOutcome::Skipped,
                "campaign is paused: no buying".to_string()
            )
        );
    }

    #[test]
    fn a_try_stopped_by_something_transient_is_deferred_with_its_reason() {
        let mut skipped = report(
            PassOutcome::Skipped,
            Some("another process holds this campaign's lease"),
            0,
        );
        skipped.transient = true;
        let mut down = report(PassOutcome::Blocked, Some("search: HTTP 503"), 1);
        down.transient = true;
        let capped = report(PassOutcome::Blocked, Some("over the cap"), 0);
        assert_eq!(
            round_record(&skipped, false),
            (
                RoundOutcome::Deferred,
                "another process holds this campaign's lease".to_string()
            )
        );
        assert_eq!(round_record(&down, false).0, RoundOutcome::Deferred);
        assert_eq!(round_record(&capped, false).0, RoundOutcome::Failed);
    }

    #[test]
    fn a_stopped_or_failed_pass_keeps_its_own_outcome_and_reason() {
        let halted = report(
            PassOutcome::SpendingStopped,
            Some("all spending stopped"),
            0,
        );
        let failed = report(PassOutcome::Failed, Some("journal: down"), 0);
        assert_eq!(round_record(&halted, false).0, RoundOutcome::Skipped);
        let stalled = report(PassOutcome::Stalled, Some("insufficient balance: …"), 0);
        assert_eq!(
            round_record(&stalled, false),
            (RoundOutcome::Stalled, "insufficient balance: …".to_string())
        );
        assert_eq!(
            round_record(&failed, false),
            (RoundOutcome::Failed, "journal: down".to_string())
        );
    }
}
