//! The watcher: every `interval` it reads the journal's read models (the halts, every
//! campaign's row, the full status of the few that need one, the links lost lately, the
//! pages held twice), derives the events in force (`events::derive`), claims each new one in
//! the journal (`Store::claim_notice`: of all replicas exactly one wins) and hands it to the
//! endpoints that want it; then it clears the claims whose condition is gone, so a recurrence
//! is told again. It runs in its own task and only reads besides its claims: a pass never
//! waits for it.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};

use super::NotifyContext;
use super::events::{Event, LOST_WINDOW, Observed, derive, needs_status};
use super::send::Outbox;
use crate::store::StoreError;
use crate::views::accounts::Accounts;
use crate::views::list::campaign_rows;
use crate::views::overview::FileFacts;
use crate::views::report::campaign_statuses_in;

/// The watcher: what it reads with and who it claims as, and the endpoints it hands to.
pub(crate) struct Watcher {
    pub(crate) cx: NotifyContext,
    pub(crate) outboxes: Vec<Outbox>,
}

impl Watcher {
    /// One look: claims and queues what is new, clears what is gone.
    pub(crate) async fn tick(&self) -> Result<(), StoreError> {
        let started = self.cx.clock.now();
        let events = self.events_now(started).await?;
        for e in &events {
            self.tell_once(e, started).await?;
        }
        let live: HashSet<&str> = events.iter().map(|e| e.key.as_str()).collect();
        for n in self.cx.store.notices().await? {
            if !live.contains(n.key.as_str()) {
                self.cx.store.clear_notice(&n.key, started).await?;
            }
        }
        Ok(())
    }

    async fn events_now(&self, now: DateTime<Utc>) -> Result<Vec<Event>, StoreError> {
        let halts = self.cx.store.halts().await?;
        let names = self.cx.store.campaigns().campaign_names().await?;
        let files = FileFacts::unknown();
        let rows = campaign_rows(&self.cx.store, &names, now, &files).await?;
        let wanted: Vec<String> = rows
            .iter()
            .filter(|r| needs_status(r))
            .map(|r| r.campaign.clone())
            .collect();
        // The few statuses the events need, their accounts from the rows (one read of every
        // campaign's account a tick, not two).
        let accounts: Accounts = rows
            .iter()
            .map(|r| (r.campaign.clone(), r.account.clone()))
            .collect();
        let statuses: BTreeMap<_, _> =
            campaign_statuses_in(&self.cx.store, &wanted, now, &files, &accounts)
                .await?
                .into_iter()
                .map(|s| (s.campaign.clone(), s))
                .collect();
        let lost = self.cx.store.links_lost_since(now - LOST_WINDOW).await?;
        let removals = self.cx.store.campaigns().removals().await?;
        let held_twice = self.cx.store.links().held_twice_everywhere().await?;
        Ok(derive(&Observed {
            halts: &halts,
            rows: &rows,
            statuses: &statuses,
            lost: &lost,
            removals: &removals,
            held_twice: &held_twice,
            now,
            settle_grace: self.cx.settle_grace,
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
            .cx
            .store
            .claim_notice(&e.key, kind, e.campaign.as_deref(), &self.cx.holder, now)
            .await?
        {
            return Ok(());
        }
        for o in to {
            if !o.offer(e.clone()) {
                let labels = [kind, o.endpoint.format.as_str()];
                self.cx
                    .metrics
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
