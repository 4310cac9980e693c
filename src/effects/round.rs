//! A buy round: search donors for each promoted URL (resuming a search a crash left
//! pending), choose within the limits, and buy — one purchase call per group of donors that
//! share their technical values, each link its own intent with its own reservation.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::campaign::Campaign;
use crate::market::{Donor, Market, PageTarget, PurchaseOrder, SearchParams, SearchPoll};
use crate::store::{Effect, IntentKind, NewIntent, Reservation, SearchState};

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use super::protocol::{Effects, Journaled};
use crate::decide::choose::{Pick, TextSlot, UrlSlot, choose};
use crate::decide::keys;
use crate::decide::plan;
use crate::decide::recorded::Recorded;

pub use crate::decide::stall::RoundResult;

impl<M: Market> Engine<M> {
    pub async fn buy_round(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        r: &Recorded,
    ) -> Result<RoundResult, EngineError> {
        let Some(limits) = plan::round_limits(c, r) else {
            return Ok(RoundResult::default());
        };
        let Some(project) = r.ids.project.as_ref().map(|p| p.project_id) else {
            return Err(EngineError::Blocked(
                "the project is not created yet".into(),
            ));
        };
        let mut result = RoundResult {
            wanted: limits.max_links(),
            ..RoundResult::default()
        };
        let mut slots = Vec::new();
        for u in &c.urls {
            let Some(&url_id) = r.ids.urls.get(&u.url) else {
                continue;
            };
            match self.search(c, url_id).await? {
                Searched::Ready { donors, unpriced } => {
                    result.searches_ready += 1;
                    result.priced += donors.len() as u32;
                    result.unpriced += unpriced as u32;
                    slots.push(url_slot(r, &u.url, url_id, &u.texts, donors));
                }
                Searched::Expired(why) => {
                    result.searches_expired += 1;
                    result.expiry = Some(why);
                }
            }
        }
        let picks = choose(&slots, &r.taken_pages(), limits);
        result.picked = picks.len() as u32;
        for group in group_by_tech(picks) {
            self.buy_group(lease, c, project, group, &mut result)
                .await?;
        }
        Ok(result)
    }

    /// Runs (or resumes) the search for one URL and polls it with backoff until it is ready
    /// or its deadline passes.
    async fn search(&self, c: &Campaign, url_id: i64) -> Result<Searched, EngineError> {
        let row = self.open_or_start_search(c, url_id).await?;
        let mut polls = row.polls;
        let mut wait = self.settings.poll_initial;
        // The first wait counts from the job's last news (its start, or its last poll): a
        // search started early in the pass (see `start_searches`) has waited meanwhile.
        let since = (self.clock.now() - row.updated_at)
            .to_std()
            .unwrap_or_default();
        let mut next_wait = wait.saturating_sub(since);
        loop {
            // The wait lends this campaign's slot to another campaign.
            self.slots.idle(self.pause(next_wait)).await?;
            polls += 1;
            let answer = match self.market.search_result(&row.job).await {
                Ok(a) => a,
                Err(e) => return Err(self.search_failed(c, &row, polls, e).await),
            };
            match answer {
                SearchPoll::Ready { donors, unpriced } => {
                    if unpriced > 0 {
                        tracing::warn!(campaign = %c.name, url_id, unpriced, "donors without a readable price are skipped; see --field-map");
                    }
                    self.store
                        .rounds()
                        .finish_search(row.id, SearchState::Ready, polls, self.clock.now())
                        .await?;
                    return Ok(Searched::Ready { donors, unpriced });
                }
                SearchPoll::Pending | SearchPoll::NotFound { .. }
                    if self.clock.now() >= row.deadline =>
                {
                    let why = expiry_reason(&answer);
                    tracing::warn!(campaign = %c.name, url_id, polls, why, "search not ready at its deadline; giving up on it");
                    self.store
                        .rounds()
                        .finish_search(row.id, SearchState::Expired, polls, self.clock.now())
                        .await?;
                    return Ok(Searched::Expired(why));
                }
                // "Not found" while the job is younger than its deadline: not ready yet.
                SearchPoll::Pending | SearchPoll::NotFound { .. } => {
                    self.store
                        .rounds()
                        .note_poll(row.id, polls, self.clock.now())
                        .await?;
                    let age = (self.clock.now() - row.created_at)
                        .to_std()
                        .unwrap_or_default();
                    let bounds = (self.settings.poll_initial, self.settings.poll_max);
                    wait = next_poll_wait(wait, age, bounds);
                    next_wait = wait;
                }
            }
        }
    }

    /// The URL's open search job (one a crash or an earlier step of this pass left), or a
    /// new one, recorded so that a later round or pass resumes it instead of starting another.
    async fn open_or_start_search(
        &self,
        c: &Campaign,
        url_id: i64,
    ) -> Result<crate::store::SearchRow, EngineError> {
        if let Some(row) = self.store.rounds().open_search(&c.name, url_id).await? {
            return Ok(row);
        }
        let job = self
            .market
            .start_search(url_id, &search_params(c))
            .await
            .map_err(|e| self.read_error(e))?;
        let now = self.clock.now();
        Ok(self
            .store
            .rounds()
            .record_search(
                &c.name,
                url_id,
                &job,
                now + self.settings.search_deadline,
                now,
            )
            .await?)
    }

    /// Starts the buy round's searches early in the pass, before its other steps, so the
    /// marketplace prepares the donors while those steps run: the round then polls jobs
    /// that have already waited (issue 13: otherwise each campaign's last calls wait out
    /// the whole poll backoff after everything else is done). Nothing is bought here, and a
    /// search is a read; the round resumes these jobs. A failure is left to the round,
    /// which handles it as it always does.
    pub(super) async fn start_searches(&self, c: &Campaign, r: &Recorded) {
        for u in &c.urls {
            let Some(&url_id) = r.ids.urls.get(&u.url) else {
                continue;
            };
            if let Err(e) = self.open_or_start_search(c, url_id).await {
                tracing::debug!(campaign = %c.name, url_id, error = %e, "search not started early; the round starts it");
                return;
            }
        }
    }

    /// A poll that failed. A job the marketplace rejects (unreadable answer, refused
    /// `metaData`; a 404 or "not found" is `SearchPoll::NotFound`, not an error) or one
    /// past its deadline is given up, so the next round starts a new search instead of
    /// polling a dead job forever; other errors leave it open for the next round.
    async fn search_failed(
        &self,
        c: &Campaign,
        row: &crate::store::SearchRow,
        polls: u32,
        e: crate::market::MarketError,
    ) -> EngineError {
        use crate::market::MarketError as E;
        let now = self.clock.now();
        let state = match &e {
            E::Rejected { .. } | E::InvalidRequest { .. } | E::Undecodable { .. } => {
                Some(SearchState::Failed)
            }
            _ if now >= row.deadline => Some(SearchState::Expired),
            _ => None,
        };
        if let Some(state) = state {
            tracing::warn!(campaign = %c.name, url_id = row.url_id, state = state.as_str(), error = %e, "giving up on a search job; the next round starts a new one");
            if let Err(db) = self
                .store
                .rounds()
                .finish_search(row.id, state, polls, now)
                .await
            {
                return db.into();
            }
        }
        self.read_error(e)
    }

    /// Sleeps, unless shutdown is requested.
    pub(crate) async fn pause(&self, d: Duration) -> Result<(), EngineError> {
        tokio::select! {
            _ = tokio::time::sleep(d) => Ok(()),
            _ = self.cancel.cancelled() => Err(EngineError::Cancelled),
        }
    }

    /// Buys one group of picks that share their technical values. If the batch no longer fits
    /// (another process reserved meanwhile, or took a page), it falls back to one link per call.
    async fn buy_group(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        project: i64,
        group: Vec<Pick>,
        res: &mut RoundResult,
    ) -> Result<(), EngineError> {
        match self.buy_batch(lease, c, project, &group).await? {
            Some(j) => tally(j, group.len() as u32, res),
            None => {
                for p in group {
                    if let Some(j) = self
                        .buy_batch(lease, c, project, std::slice::from_ref(&p))
                        .await?
                    {
                        tally(j, 1, res);
                    }
                }
            }
        }
        Ok(())
    }

    /// One purchase call. `None` when the batch was refused before sending (cap or taken page).
    async fn buy_batch(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        project: i64,
        picks: &[Pick],
    ) -> Result<Option<Journaled<Vec<i64>>>, EngineError> {
        let call = keys::purchase(&c.name, &picks[0].url, picks[0].donor.page_id);
        let Some(buy) = c.buy.as_ref() else {
            return Ok(None);
        };
        let today = self.clock.now().date_naive();
        let intents: Vec<NewIntent> = picks
            .iter()
            .map(|p| purchase_intent(c, (project, &call), buy.link_type_id, p, today))
            .collect();
        let order = PurchaseOrder {
            link_type_id: buy.link_type_id,
            filter_id: None,
            tech: picks[0].donor.tech.clone(),
            pages: picks
                .iter()
                .map(|p| PageTarget {
                    page_id: p.donor.page_id,
                    url_id: p.url_id,
                    text_id: p.text_id,
                })
                .collect(),
        };
        let held = picks.to_vec();
        let fallback = picks.iter().map(|p| purchased(p, None)).collect();
        let on_success = Box::new(move |ids: &Vec<i64>| {
            // Ids are matched to pages by position only when the counts agree; otherwise the
            // links are recorded without ids and matched by page and URL at the next link sync.
            let exact = ids.len() == held.len();
            held.iter()
                .enumerate()
                .map(|(i, p)| purchased(p, exact.then(|| ids[i])))
                .collect()
        });
        let effects = Effects {
            on_success,
            on_unreadable: Some(fallback),
        };
        match self
            .journaled(lease, intents, || self.market.buy(project, &order), effects)
            .await?
        {
            Journaled::Exists(_) | Journaled::CapExceeded(_) if picks.len() > 1 => Ok(None),
            Journaled::Exists(row) => {
                tracing::info!(campaign = %c.name, intent = row.id.0, "page already bought or reserved for this URL; skipped");
                Ok(None)
            }
            Journaled::CapExceeded(why) => {
                tracing::info!(campaign = %c.name, %why, "purchase skipped: it no longer fits a cap");
                Ok(None)
            }
            other => Ok(Some(other)),
        }
    }
}

/// How one URL's search ended.
enum Searched {
    Ready {
        donors: Vec<Donor>,
        unpriced: usize,
    },
    /// Given up at its deadline, and why.
    Expired(String),
}

/// Why a search was given up at its deadline, in the words an operator reads in the log.
fn expiry_reason(last: &SearchPoll) -> String {
    match last {
        SearchPoll::NotFound { message } => {
            format!("the marketplace kept answering 'not found' for this job ({message})")
        }
        _ => "still pending".to_string(),
    }
}

fn tally(j: Journaled<Vec<i64>>, n: u32, res: &mut RoundResult) {
    match j {
        Journaled::Done(_) | Journaled::Unreadable(_) => res.bought += n,
        Journaled::Uncertain(_) => res.uncertain += n,
        Journaled::NotExecuted(e @ crate::market::MarketError::Rejected { .. }) => {
            res.failed += n;
            let balance = e.is_insufficient_balance();
            match balance {
                true => res.balance_refused += n,
                false => res.refused += n,
            }
            // A balance refusal is what the operator must read first.
            if res.refusal.is_none() || (balance && res.balance_refused == n) {
                res.refusal = e.refusal_message().or_else(|| Some(e.to_string()));
            }
        }
        _ => res.failed += n,
    }
}

fn purchased(p: &Pick, link: Option<i64>) -> Effect {
    Effect::Purchased {
        link,
        page_id: p.donor.page_id,
        url_id: p.url_id,
        text_id: p.text_id,
        price: p.donor.price,
    }
}

/// One purchase of a call to buy `p`: `call` names the call (the natural key of its first
/// purchase), so that the link list can tell purchases of one call from later ones.
fn purchase_intent(
    c: &Campaign,
    (project, call): (i64, &str),
    link_type_id: i64,
    p: &Pick,
    day: chrono::NaiveDate,
) -> NewIntent {
    let request = json!({
        "project_id": project, "url": p.url, "url_id": p.url_id, "text": p.text, "text_id": p.text_id,
        "page_id": p.donor.page_id, "price": p.donor.price, "tech": p.donor.tech, "link_type_id": link_type_id,
        "call": call,
    });
    NewIntent {
        campaign: c.name.clone(),
        kind: IntentKind::Purchase,
        natural_key: keys::purchase(&c.name, &p.url, p.donor.page_id),
        fingerprint: keys::fingerprint(&request),
        request,
        reserve: Some(Reservation {
            amount: p.donor.price,
            links: 1,
            day,
        }),
    }
}

/// Picks grouped by their technical values: one purchase call may only carry donors whose
/// `searchId`, `forceSeoWait` and `mosSites` are all equal.
pub fn group_by_tech(picks: Vec<Pick>) -> Vec<Vec<Pick>> {
    let mut groups: BTreeMap<String, Vec<Pick>> = BTreeMap::new();
    for p in picks {
        groups.entry(p.donor.tech.group_key()).or_default().push(p);
    }
    groups.into_values().collect()
}

fn url_slot(r: &Recorded, url: &str, url_id: i64, texts: &[String], donors: Vec<Donor>) -> UrlSlot {
    let usage = r.text_usage();
    let texts = texts
        .iter()
        .filter_map(|t| {
            let text_id = *r.ids.texts.get(&(url.to_string(), t.clone()))?;
            Some(TextSlot {
                text: t.clone(),
                text_id,
                used: usage
                    .get(&(url.to_string(), t.clone()))
                    .copied()
                    .unwrap_or(0),
            })
        })
        .collect();
    UrlSlot {
        url: url.to_string(),
        url_id,
        texts,
        donors,
    }
}

/// The search parameters: the campaign's, with the rent price capped at `max_link_price`
/// when the file does not say otherwise (no point finding donors we will never buy).
pub fn search_params(c: &Campaign) -> SearchParams {
    let s = c.buy.as_ref().map(|b| b.search.clone()).unwrap_or_default();
    SearchParams {
        price_rent_from: s.price_rent_from,
        price_rent_to: Some(
            s.price_rent_to
                .unwrap_or(c.budget.max_link_price)
                .min(c.budget.max_link_price),
        ),
        extra: s.extra,
    }
}

/// The wait after a "pending" answer: twice the last wait, but no longer than the job has
/// existed, within `[poll_initial, poll_max]`. A job found pending at 2 s is polled again at
/// 4 s rather than 6 s (the first reconciliation's last campaigns idled for those seconds,
/// issue 13), while a job first polled late (its campaign queued behind the rate limit) waits
/// no longer than it did: never later than doubling, never sooner than twice the job's age.
pub fn next_poll_wait(
    last: Duration,
    age: Duration,
    (initial, max): (Duration, Duration),
) -> Duration {
    (last * 2).min(age.max(initial)).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::TechValues;
    use crate::money::Money;

    fn pick(page: i64, search_id: i64) -> Pick {
        Pick {
            url: "u".into(),
            url_id: 1,
            text: "t".into(),
            text_id: 1,
            donor: Donor {
                page_id: page,
                price: Money::from_rubles(10),
                tech: TechValues {
                    search_id: json!(search_id),
                    force_seo_wait: json!(0),
                    mos_sites: json!("m"),
                },
            },
        }
    }

    #[test]
    fn a_search_given_up_says_whether_it_was_pending_or_not_found() {
        assert_eq!(expiry_reason(&SearchPoll::Pending), "still pending");
        let not_found = SearchPoll::NotFound {
            message: "job not found or not finished".into(),
        };
        assert_eq!(
            expiry_reason(&not_found),
            "the marketplace kept answering 'not found' for this job (job not found or not finished)"
        );
    }

    #[test]
    fn donors_with_different_technical_values_never_share_a_purchase_call() {
        let groups = group_by_tech(vec![pick(1, 7), pick(2, 8), pick(3, 7)]);
        assert_eq!(groups.len(), 2);
        for g in &groups {
            assert!(g.iter().all(|p| p.donor.tech == g[0].donor.tech));
        }
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 3);
    }

    #[test]
    fn a_young_job_is_polled_again_at_twice_its_age_and_an_old_one_as_before() {
        let s = super::super::EngineSettings::default();
        let b = (s.poll_initial, s.poll_max);
        let secs = Duration::from_secs;
        assert_eq!(s.poll_initial, secs(2));
        // Pending at 2 s: again at 4 s, then 8 s, 16 s.
        assert_eq!(next_poll_wait(secs(2), secs(2), b), secs(2));
        assert_eq!(next_poll_wait(secs(2), secs(4), b), secs(4));
        assert_eq!(next_poll_wait(secs(4), secs(8), b), secs(8));
        // First polled at 9 s (queued behind the limit): the doubled wait, not 9 s.
        assert_eq!(next_poll_wait(secs(2), secs(9), b), secs(4));
        // Never sooner than the first wait (a job resumed at once after a restart) …
        assert_eq!(next_poll_wait(secs(2), Duration::ZERO, b), secs(2));
        // … never later than the longest.
        assert_eq!(next_poll_wait(secs(20), secs(60), b), s.poll_max);
    }
}
