//! The watcher: every `interval` it reads the journal's read models (the halts, every
//! campaign's row, the full status of the few that need one, the links lost lately, the
//! pages held twice), derives the events in force (`events::derive`), claims each new one in
//! the journal (`Store::claim_notice`: of all replicas exactly one wins) and hands it to the
//! endpoints that want it; then it clears the claims whose condition is gone, so a recurrence
//! is told again. It runs in its own task and only reads besides its claims: a pass never
//! waits for it.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::events::{Event, LOST_WINDOW, Observed, derive, needs_status};
use super::send::Outbox;
use crate::metrics::Metrics;
use crate::store::{Store, StoreError};
use crate::views::list::campaign_rows;
use crate::views::overview::FileFacts;
use crate::views::report::campaign_statuses;
use linkrunner_domain::clock::SharedClock;

/// What the watcher reads with and who it claims as.
pub(crate) struct Watcher {
    pub(crate) store: Store,
    pub(crate) clock: SharedClock,
    pub(crate) metrics: Arc<Metrics>,
    /// This daemon's holder id, recorded with its claims.
    pub(crate) holder: String,
    pub(crate) settle_grace: chrono::Duration,
    pub(crate) outboxes: Vec<Outbox>,
}

impl Watcher {
    /// One look: claims and queues what is new, clears what is gone.
    pub(crate) async fn tick(&self) -> Result<(), StoreError> {
        let started = self.clock.now();
        let events = self.events_now(started).await?;
        for e in &events {
            self.tell_once(e, started).await?;
        }
        let live: HashSet<&str> = events.iter().map(|e| e.key.as_str()).collect();
        for n in self.store.notices().await? {
            if !live.contains(n.key.as_str()) {
                self.store.clear_notice(&n.key, started).await?;
            }
        }
        Ok(())
    }

    async fn events_now(&self, now: DateTime<Utc>) -> Result<Vec<Event>, StoreError> {
        let halts = self.store.halts().await?;
        let names = self.store.campaigns().campaign_names().await?;
        let files = FileFacts::unknown();
        let rows = campaign_rows(&self.store, &names, now, &files).await?;
        let wanted: Vec<String> = rows
            .iter()
            .filter(|r| needs_status(r))
            .map(|r| r.campaign.clone())
            .collect();
        let statuses: BTreeMap<_, _> = campaign_statuses(&self.store, &wanted, now, &files)
            .await?
            .into_iter()
            .map(|s| (s.campaign.clone(), s))
            .collect();
        let lost = self.store.links_lost_since(now - LOST_WINDOW).await?;
        let removals = self.store.campaigns().removals().await?;
        let held_twice = self.store.links().held_twice_everywhere().await?;
        Ok(derive(&Observed {
            halts: &halts,
            rows: &rows,
            statuses: &statuses,
            lost: &lost,
            removals: &removals,
            held_twice: &held_twice,
            now,
            settle_grace: self.settle_grace,
        }))
    }

    /// Claims `e` and, when this daemon won the claim, queues it for every endpoint that
    /// wants it. An event no endpoint wants is not claimed.
    async fn tell_once(&self, e: &Event, now: DateTime<Utc>) -> Result<(), StoreError> {
        let to: Vec<&Outbox> = self
            .outboxes
            .iter()
            .filter(|o| o.endpoint.wants(e.kind))
            .collect();
        if to.is_empty() {
            return Ok(());
        }
        let kind = e.kind.as_str();
        if !self
            .store
            .claim_notice(&e.key, kind, e.campaign.as_deref(), &self.holder, now)
            .await?
        {
            return Ok(());
        }
        for o in to {
            if !o.offer(e.clone()) {
                let labels = [kind, o.endpoint.format.as_str()];
                self.metrics
                    .notify
                    .failed_total
                    .with_label_values(&labels)
                    .inc();
                tracing::warn!(endpoint = %o.endpoint.name, event = kind, key = %e.key, "notification dropped: the endpoint's queue is full");
            }
        }
        Ok(())
    }
}
