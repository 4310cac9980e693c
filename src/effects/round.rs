//! A buy round: search donors for each promoted URL (resuming a search a crash left
//! pending), choose within the limits, and buy — one purchase call per group of donors that
//! share their technical values, each link its own intent with its own reservation.

use std::time::Duration;

use futures_util::future::join_all;

use crate::campaign::Campaign;
use crate::market::{Donor, Market, PageTarget, PurchaseOrder, SearchPoll};
use crate::store::{Effect, NewIntent, SearchState};

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use super::protocol::{Effects, Journaled};
use crate::decide::adoption::held_back;
use crate::decide::choose::{Pick, choose};
use crate::decide::contested;
use crate::decide::keys;
use crate::decide::plan;
use crate::decide::recorded::Recorded;
use crate::decide::round::{
    group_by_tech, next_poll_wait, purchase_intent, search_params, url_slot,
};

pub(crate) use crate::decide::stall::RoundResult;

impl<M: Market> Engine<M> {
    pub(crate) async fn buy_round(
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
        let back = held_back(r, &c.name);
        if let Some(b) = back.first() {
            tracing::warn!(campaign = %c.name, urls = back.len(), why = %b.why, "buy round skips URLs on which others buy while the link list may be incomplete");
        }
        let left = contested::left_to_autobuyers(c, r);
        let urls: Vec<(&crate::campaign::PromotedUrl, i64)> = c
            .urls
            .iter()
            .filter(|u| !left.iter().any(|l| l.url == u.url))
            .filter_map(|u| Some((u, *r.ids.urls.get(&u.url)?)))
            .filter(|(_, id)| !back.iter().any(|b| b.url_id == *id))
            .collect();
        let ids: Vec<i64> = urls.iter().map(|(_, id)| *id).collect();
        let mut slots = Vec::new();
        for ((u, url_id), searched) in urls.iter().zip(self.search_all(c, &ids).await?) {
            match searched {
                Searched::Ready { donors, unpriced } => {
                    result.searches_ready += 1;
                    result.priced += donors.len() as u32;
                    result.unpriced += unpriced as u32;
                    slots.push(url_slot(r, &u.url, *url_id, &u.texts, donors));
                }
                Searched::Expired(why) => {
                    result.searches_expired += 1;
                    result.expiry = Some(why);
                }
            }
        }
        let picks = choose(&slots, &r.taken_pages(), limits);
        let picks = self.recheck_before_buying(c, r, picks, &slots).await?;
        result.picked = picks.len() as u32;
        for group in group_by_tech(picks) {
            self.buy_group(lease, c, project, group, &mut result)
                .await?;
        }
        Ok(result)
    }

    /// Where anyone else may buy on a URL the round is about to buy for (a running autobuyer,
    /// or an adopted project, where the team buys by hand), the link list is read again right
    /// before the purchase (through the one link-sync path, so what it shows is counted), and
    /// picks whose page is now held, whose donor site now holds a link for their URL, or whose
    /// URL is now held back are dropped (`decide::contested`): the window in which someone
    /// else and the round can take one page is one call, not a whole search.
    async fn recheck_before_buying(
        &self,
        c: &Campaign,
        r: &Recorded,
        picks: Vec<Pick>,
        slots: &[crate::decide::choose::UrlSlot],
    ) -> Result<Vec<Pick>, EngineError> {
        if !contested::rereads_before_buying(c, r, &picks) {
            return Ok(picks);
        }
        self.sync_list(&c.name, r, r.fallback_price(Some(c)))
            .await?;
        let fresh = self.load(&c.name).await?;
        let hosts = contested::hosts_shown(slots);
        let out = contested::still_free(picks, &fresh, &c.name, &hosts);
        if out.dropped() > 0 {
            tracing::info!(
                campaign = %c.name,
                page_taken = out.page_taken,
                site_taken = out.site_taken,
                held_back = out.held_back,
                "picks someone else took meanwhile (the page, or a link on its donor site for the URL) are not bought"
            );
        }
        Ok(out.picks)
    }

    /// Runs (or resumes) the searches of every URL together, then polls them together with
    /// backoff until each is ready or past its deadline: the last search of a campaign does
    /// not wait for the others' polls (issue 27). One result per URL, in order. A poll that
    /// fails ends the round (the other jobs stay open for the next one).
    async fn search_all(
        &self,
        c: &Campaign,
        url_ids: &[i64],
    ) -> Result<Vec<Searched>, EngineError> {
        let started = self.open_or_start_searches(c, url_ids).await;
        let recall = self.store.rounds().recent_ready_ages(super::pace::MEMORY);
        self.pace.remember(recall).await;
        let first = self.pace.first_wait(self.settings.poll_initial);
        let now = tokio::time::Instant::now();
        let mut pending = Vec::with_capacity(started.len());
        for (idx, row) in started.into_iter().enumerate() {
            let row = row?;
            // The first wait counts from the job's last news (its start, or its last poll): a
            // search started early in the pass (see `start_searches`) has waited meanwhile.
            let since = (self.clock.now() - row.updated_at)
                .to_std()
                .unwrap_or_default();
            let at = now + first.saturating_sub(since);
            pending.push(Polling {
                idx,
                polls: row.polls,
                wait: first,
                at,
                row,
            });
        }
        let mut out: Vec<Option<Searched>> = (0..pending.len()).map(|_| None).collect();
        while let Some(at) = pending.iter().map(|p| p.at).min() {
            // The wait lends this campaign's slot to another campaign.
            let wait = at.saturating_duration_since(tokio::time::Instant::now());
            self.slots.idle(self.pause(wait)).await?;
            let now = tokio::time::Instant::now();
            let (mut due, rest): (Vec<Polling>, Vec<Polling>) =
                pending.into_iter().partition(|p| p.at <= now);
            pending = rest;
            // A poll is bounded by its search's deadline too (at least a second, so a search
            // polled at its deadline still gets an answer): the client's retries of a read
            // could otherwise overrun it by several request timeouts.
            let answers = join_all(due.iter().map(|p| {
                let bound = self.until_deadline(&p.row).max(MIN_LAST_POLL);
                tokio::time::timeout(bound, self.market.search_result(&p.row.job))
            }))
            .await;
            for (mut p, answer) in due.drain(..).zip(answers) {
                p.polls += 1;
                match self.after_poll(c, &mut p, answer).await? {
                    Some(done) => out[p.idx] = Some(done),
                    None => pending.push(p),
                }
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// What one poll's answer means for its search: ready or given up (`Some`), or polled
    /// again after the next wait (`None`, `p.at` moved).
    async fn after_poll(
        &self,
        c: &Campaign,
        p: &mut Polling,
        answer: Result<Result<SearchPoll, crate::market::MarketError>, tokio::time::error::Elapsed>,
    ) -> Result<Option<Searched>, EngineError> {
        let (row, polls, url_id) = (&p.row, p.polls, p.row.url_id);
        let answer = match answer {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => return Err(self.search_failed(c, row, polls, e).await),
            Err(_) => {
                let why = "no answer to its poll before the search deadline".to_string();
                tracing::warn!(campaign = %c.name, url_id, polls, why, "search poll cut at its deadline; giving up on it");
                self.store
                    .rounds()
                    .finish_search(row.id, SearchState::Expired, polls, self.clock.now())
                    .await?;
                return Ok(Some(Searched::Expired(why)));
            }
        };
        let now = self.clock.now();
        let age = (now - row.created_at).to_std().unwrap_or_default();
        match answer {
            SearchPoll::Ready { donors, unpriced } => {
                if unpriced > 0 {
                    tracing::warn!(campaign = %c.name, url_id, unpriced, "donors without a readable price are skipped; see --field-map");
                }
                self.store
                    .rounds()
                    .finish_search(row.id, SearchState::Ready, polls, now)
                    .await?;
                self.pace.ready_after(age);
                Ok(Some(Searched::Ready { donors, unpriced }))
            }
            SearchPoll::Pending | SearchPoll::NotFound { .. } if now >= row.deadline => {
                let why = expiry_reason(&answer);
                tracing::warn!(campaign = %c.name, url_id, polls, why, "search not ready at its deadline; giving up on it");
                self.store
                    .rounds()
                    .finish_search(row.id, SearchState::Expired, polls, now)
                    .await?;
                Ok(Some(Searched::Expired(why)))
            }
            // "Not found" while the job is younger than its deadline: not ready yet.
            SearchPoll::Pending | SearchPoll::NotFound { .. } => {
                self.store.rounds().note_poll(row.id, polls, now).await?;
                let bounds = (self.settings.poll_initial, self.settings.poll_max);
                p.wait = next_poll_wait(p.wait, age, bounds);
                // Never past the deadline: the last poll is sent at it, not a backoff step later.
                p.at = tokio::time::Instant::now() + p.wait.min(self.until_deadline(row));
                Ok(None)
            }
        }
    }

    /// What is left of the search's deadline (zero once it passed).
    fn until_deadline(&self, row: &crate::store::SearchRow) -> Duration {
        (row.deadline - self.clock.now())
            .to_std()
            .unwrap_or_default()
    }

    /// The URL's open search job (one a crash or an earlier step of this pass left), or a
    /// new one, recorded so that a later round or pass resumes it instead of starting another.
    /// The open search of each URL, or a new one: the journal is read first, one URL after
    /// the other, then the missing searches start together. Their requests are queued in URL
    /// order (the client admits calls first come, first served), so with one call in flight
    /// the marketplace sees them in file order, as a sequential start would send them.
    async fn open_or_start_searches(
        &self,
        c: &Campaign,
        url_ids: &[i64],
    ) -> Vec<Result<crate::store::SearchRow, EngineError>> {
        let mut open = Vec::with_capacity(url_ids.len());
        for id in url_ids {
            open.push(self.store.rounds().open_search(&c.name, *id).await);
        }
        join_all(url_ids.iter().zip(open).map(|(id, open)| async move {
            match open? {
                Some(row) => Ok(row),
                None => self.start_search(c, *id).await,
            }
        }))
        .await
    }

    async fn start_search(
        &self,
        c: &Campaign,
        url_id: i64,
    ) -> Result<crate::store::SearchRow, EngineError> {
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
        let left = contested::left_to_autobuyers(c, r);
        let ids: Vec<i64> = c
            .urls
            .iter()
            .filter(|u| !left.iter().any(|l| l.url == u.url))
            .filter_map(|u| r.ids.urls.get(&u.url).copied())
            .collect();
        let started = self.open_or_start_searches(c, &ids).await;
        for (url_id, e) in ids
            .iter()
            .zip(started)
            .filter_map(|(id, s)| Some((id, s.err()?)))
        {
            tracing::debug!(campaign = %c.name, url_id, error = %e, "search not started early; the round starts it");
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
        let call = keys::purchase(&c.account, picks[0].url_id, picks[0].donor.page_id);
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

/// The least time a poll sent at (or past) its search's deadline may take.
const MIN_LAST_POLL: Duration = Duration::from_secs(1);

/// One search being polled by [`Engine::search_all`].
struct Polling {
    /// Its URL's place in the round.
    idx: usize,
    row: crate::store::SearchRow,
    polls: u32,
    /// The last wait, doubled after a pending answer.
    wait: Duration,
    /// When it is polled next.
    at: tokio::time::Instant,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
