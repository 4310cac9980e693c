//! One read of the project's link list, and everything it can settle (`decide/listing.rs` judges
//! what it proves):
//!
//! 1. uncertain purchases: listed → bought; absent from a read that proves absence, once the
//!    call is older than the settle grace → not bought (money released; the page stays
//!    blocked); otherwise still uncertain, with the reason kept on the intent for `status`;
//! 2. purchases settled as not bought that the list shows after all → adopted and counted;
//! 3. every other listed link → recorded: ours matched, the rest counted once (`store/links/foreign.rs`);
//! 4. links leaving for longer than the settle grace → released;
//! 5. confirmed stops older than the settle grace, on a read that shows every link
//!    (`Judgement::settles_stops`: in an adopted project, every page read or the operator's
//!    word in force) → settled: the autobuyer's budget leaves the commitment, the rent of its
//!    links stays;
//! 6. a page the read shows held twice for one URL (`decide::contested::held_twice`) →
//!    recorded once, warned with both links' ids and counted (`linkrunner_pages_held_twice_total`).

use chrono::Duration;

use crate::market::{LinkList, LinkRecord, Market};
use crate::store::{Effect, IntentRow, ListRead, Outcome, StopSettlement, SwitchState};
use linkrunner_domain::money::Money;

use super::Engine;
use super::error::EngineError;
use crate::decide::adoption::word_lapses;
use crate::decide::contested;
use crate::decide::listing::{self, Judgement};
use crate::decide::recorded::Recorded;

/// What one read settled.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ListSync {
    pub(crate) bought: u32,
    not_bought: u32,
    pub(crate) adopted: u32,
    released_links: u32,
    settled_stops: u32,
    /// Why absence proved nothing, when it did not.
    pub(crate) why_not: Option<String>,
}

impl<M: Market> Engine<M> {
    /// Reads the project's link list once and settles what it proves. `fallback_price` is
    /// what a link no intent of ours bought counts when the list shows no price.
    pub(crate) async fn sync_list(
        &self,
        name: &str,
        r: &Recorded,
        fallback_price: Money,
    ) -> Result<ListSync, EngineError> {
        let Some(project) = r.ids.project.as_ref() else {
            return Ok(ListSync::default());
        };
        let list = self.read_list(name, project.project_id).await?;
        let now = self.clock.now();
        let grace = self.settings.settle_grace;
        let j = listing::judge(&list, r, now, grace, self.unpaged_list());
        let mut out = ListSync {
            why_not: j.why_not.clone(),
            ..ListSync::default()
        };
        self.settle_purchases(r, &list, &j, &mut out).await?;
        self.adopt_purchases(r, &list, &mut out).await?;
        let read = ListRead {
            links: &j.listed,
            proven_complete: j.proven_complete,
            fallback_price,
        };
        self.store.links().record_link_list(name, read, now).await?;
        self.note_held_twice(name, r, &list, j.proves_absence, now)
            .await?;
        self.quiet_note_read(name, &list, now);
        let lapsed = self.note_list_state(name, r, &list, &j, now).await?;
        out.released_links = self
            .release_left(name, (grace, j.proven_complete), now)
            .await?;
        let word_in_force = r.ids.account.vouch.is_some() && !lapsed;
        if j.settles_stops(r, word_in_force) {
            out.settled_stops = self.settle_due_stops(name, r, grace).await?;
        }
        Ok(out)
    }

    /// What this read says of the list for later reads: an operator's word that it is
    /// complete lapses when it shows fewer links than they saw (`decide::adoption::word_lapses`), and a list without paging
    /// fields that misses a link the journal holds is known cut at this length. True when
    /// the operator's word lapsed.
    async fn note_list_state(
        &self,
        name: &str,
        r: &Recorded,
        list: &LinkList,
        j: &Judgement,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, EngineError> {
        let len = u32::try_from(list.links.len()).unwrap_or(u32::MAX);
        let grace = self.settings.settle_grace;
        let lapse = r
            .ids
            .account
            .vouch
            .as_ref()
            .filter(|w| word_lapses(w, &list.links, r, now, grace))
            .map(|w| w.at);
        let lapsed = self
            .store
            .campaigns()
            .note_list_read(name, (shown_complete(j, r), len), lapse, now)
            .await?;
        if lapsed {
            tracing::warn!(
                campaign = name,
                listed = len,
                "the link list shows fewer links than the operator saw when they said it was complete (plus what linkrunner bought since that it could already show): that word lapsed, and buying stops again on URLs where others buy"
            );
        }
        if let Some(len) = j.cut_at {
            tracing::warn!(
                campaign = name,
                listed = len,
                "a link the journal holds is missing from a link list without paging fields: absence proves nothing from now on at this length"
            );
            self.store.intents().note_list_cut(name, len).await?;
        }
        Ok(lapsed)
    }

    /// Records the pages this read shows held twice for one URL; a finding new to the journal
    /// is warned with its links' ids (so the team can withdraw one) and counted, once across
    /// replicas and restarts. A read that shows every link clears the findings it no longer shows.
    async fn note_held_twice(
        &self,
        name: &str,
        r: &Recorded,
        list: &LinkList,
        complete: bool,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), EngineError> {
        let found = contested::held_twice(&list.links);
        // Nothing seen twice now nor before this read: nothing to record or clear (no write).
        let before = contested::held_twice_recorded(r);
        if found.is_empty() && (before.is_empty() || !complete) {
            return Ok(());
        }
        let new = self
            .store
            .links()
            .note_held_twice(name, &found, complete, now)
            .await?;
        for t in &new {
            tracing::warn!(
                campaign = name,
                url_id = t.url_id,
                page_id = t.page_id,
                links = t.links,
                link_ids = ?t.link_ids,
                "a page is held twice for one URL: withdraw one of these links in the marketplace"
            );
        }
        if !new.is_empty() {
            self.metrics
                .campaigns
                .pages_held_twice(name, new.len() as u64);
        }
        Ok(())
    }

    /// Releases the rent of links that left the list after the settle grace (drift), and
    /// counts them lost. Links gone only by absence need this read to be proven complete too.
    async fn release_left(
        &self,
        name: &str,
        (grace, complete): (Duration, bool),
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<u32, EngineError> {
        let released = self
            .store
            .links()
            .release_left_links(name, grace, now, complete)
            .await?;
        if released > 0 {
            tracing::warn!(
                campaign = name,
                links = released,
                "links left the project's link list: their rent is released (drift)"
            );
            self.metrics.campaigns.links_lost(name, u64::from(released));
        }
        Ok(released)
    }

    async fn settle_purchases(
        &self,
        r: &Recorded,
        list: &LinkList,
        j: &Judgement,
        out: &mut ListSync,
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let all: Vec<&IntentRow> = r.purchases.iter().chain(&r.blocked).collect();
        let purchases = r
            .uncertain
            .iter()
            .filter(|i| i.kind == crate::store::IntentKind::Purchase);
        for i in purchases {
            if let Some(link) = find_link(&list.links, i) {
                let effect = purchased_effect(i, link);
                let found = Some("found in the project's link list");
                self.store
                    .intents()
                    .complete_intent(i.attempt(), Outcome::Succeeded(effect), found, now)
                    .await?;
                out.bought += 1;
                continue;
            }
            match j.proves_not_bought(i, &all) {
                Ok(()) if now - i.updated_at >= self.settings.settle_grace => {
                    let error = "absent from a complete read of the project's link list after the settle grace: \
                                 not bought (its page is never bought again automatically)"
                        .to_string();
                    self.store
                        .intents()
                        .complete_intent(i.attempt(), Outcome::Failed { error }, None, now)
                        .await?;
                    out.not_bought += 1;
                }
                Ok(()) => {
                    let why = "not in the link list yet; waiting for the settle grace";
                    self.store
                        .intents()
                        .note_uncertain(i.attempt(), why)
                        .await?;
                }
                Err(why) => {
                    let why =
                        format!("not in the link list, and its absence proves nothing: {why}");
                    self.store
                        .intents()
                        .note_uncertain(i.attempt(), &why)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// A purchase settled as not bought whose link the list shows after all: adopted.
    async fn adopt_purchases(
        &self,
        r: &Recorded,
        list: &LinkList,
        out: &mut ListSync,
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        for i in &r.blocked {
            let Some(link) = find_link(&list.links, i) else {
                continue;
            };
            if self
                .store
                .intents()
                .adopt_purchase(i.attempt(), link, now)
                .await?
            {
                tracing::warn!(campaign = %i.campaign, intent = i.id.0, "a purchase settled as not bought is in the link list after all: adopted and counted");
                out.adopted += 1;
            }
        }
        Ok(())
    }

    /// Settles every confirmed stop older than the settle grace.
    async fn settle_due_stops(
        &self,
        name: &str,
        r: &Recorded,
        grace: Duration,
    ) -> Result<u32, EngineError> {
        let now = self.clock.now();
        let mut n = 0;
        for (ab, rec) in &r.ids.autobuyers {
            let due = rec.stopped_at.is_some_and(|t| now - t >= grace);
            if !(rec.running && rec.switch_state == SwitchState::Stopped && due) {
                continue;
            }
            if let StopSettlement::Settled { released, kept } = self
                .store
                .campaigns()
                .settle_stopped_autobuyer(name, ab, now)
                .await?
            {
                tracing::info!(campaign = name, autobuyer = %ab, %released, %kept, "stop settled: its budget left the commitment, the rent of its links stays");
                n += 1;
            }
        }
        Ok(n)
    }
}

/// Whether this read shows the whole list, for where others buy (`decide::adoption::held_back`):
/// every page read; or, for a project linkrunner created, a read without paging fields that
/// proves absence (`--unpaged-link-list complete`, every link the journal holds listed, never
/// seen cut at this length). In an adopted project what the journal knows came from the list
/// itself, so such a read proves nothing there: only paging or an operator's word do.
fn shown_complete(j: &Judgement, r: &Recorded) -> bool {
    j.proven_complete || (j.proves_absence && r.ids.account.adoption.is_none())
}

/// A listed link matches a purchase intent by page and URL (and text when both carry one).
/// A link listed as leaving matches too: it was bought, and its rent is released later.
fn find_link<'a>(links: &'a [LinkRecord], i: &IntentRow) -> Option<&'a LinkRecord> {
    let page = i.request.get("page_id")?.as_i64()?;
    let url = i.request.get("url_id")?.as_i64()?;
    let text = i.request.get("text_id").and_then(|v| v.as_i64());
    links.iter().find(|l| {
        l.page_id == Some(page)
            && l.url_id.is_none_or(|u| u == url)
            && match (l.text_id, text) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    })
}

/// The effect of a purchase intent the list shows: its recorded request, the listed link
/// id, and the listed price when the list gives one (the truth), else what it reserved.
fn purchased_effect(i: &IntentRow, link: &LinkRecord) -> Effect {
    let get = |k: &str| {
        i.request
            .get(k)
            .and_then(|v| v.as_i64())
            .unwrap_or_default()
    };
    Effect::Purchased {
        link: link.link_id,
        page_id: get("page_id"),
        url_id: get("url_id"),
        text_id: get("text_id"),
        price: link.price.unwrap_or(i.reserved),
    }
}
