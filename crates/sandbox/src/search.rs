//! Rent searches: a seeded donor inventory, queued jobs that become ready after a number of
//! polls (and optionally a delay), and the offers a finished search made — the only
//! `(urlId, pageId)` pairs a purchase may use, with the technical values it must echo.
//!
//! Time is tokio's, so tests with `tokio::time::pause()` drive readiness without sleeping.

use base64::Engine as _;
use tokio::time::Instant;

use super::behaviour::TeamBuy;
use super::buy::PageRef;
pub(crate) use super::entities::{Donor, Offer, Search};
use super::faults::Prng;
use super::state::{Outcome, World};
use crate::money::Money;

/// One poll's answer.
#[derive(Debug, Clone)]
pub(crate) enum Poll {
    Pending,
    Ready(Vec<(Donor, Offer)>),
}

/// Why a poll is refused outright (not a pending answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PollError {
    UnknownJob,
    MetaDataChanged,
}

/// The `metaData` of a job: an opaque token with characters that must be percent-encoded
/// in a path (`/ + = ? # % &`, a space, non-ASCII) and a country code.
fn meta_data(rng: &mut Prng, seq: u64) -> String {
    let bytes: Vec<u8> = (0..12)
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .take(12)
        .collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let token = format!("{b64}/{seq}+?#%& é=");
    let token = serde_json::to_string(&token).unwrap_or_default();
    format!("{{\"sbxRentToken\":{token},\"cgeoip_country_iso_code\":\"RU\"}}")
}

impl World {
    /// Operation 3: queues a search for donors priced within `[from, to]`.
    pub(crate) fn start_search(
        &mut self,
        url_id: i64,
        from: Option<Money>,
        to: Option<Money>,
        now: Instant,
    ) -> Outcome<(String, String)> {
        if !self.urls.contains_key(&url_id) {
            return Err(super::state::Rejection::new(format!(
                "url {url_id} does not exist"
            )));
        }
        self.ensure_room(self.searches.len(), "searches")?;
        self.search_seq += 1;
        let owner = self.caller;
        self.book(owner).searches_started += 1;
        let seq = self.search_seq;
        let found = self.pick_donors(seq, from, to);
        let meta_data = meta_data(&mut self.rng, seq);
        let job = format!("rent-{seq}-{:08x}", self.rng.next_u64() as u32);
        let search = Search {
            owner,
            url_id,
            meta_data: meta_data.clone(),
            polls: 0,
            started: now,
            found,
            answered: false,
        };
        self.searches.insert(job.clone(), search);
        Ok((job, meta_data))
    }

    fn pick_donors(&self, seq: u64, from: Option<Money>, to: Option<Money>) -> Vec<(Donor, Offer)> {
        let n = self.inventory.len();
        let fits =
            |d: &&Donor| from.is_none_or(|f| d.price >= f) && to.is_none_or(|t| d.price <= t);
        let start = (seq as usize * self.rules.donors_per_search) % n.max(1);
        let rotated = self.inventory[start..]
            .iter()
            .chain(&self.inventory[..start]);
        rotated
            .filter(fits)
            .take(self.rules.donors_per_search)
            .enumerate()
            .map(|(i, d)| (d.clone(), self.offer_for(seq, i, d.price)))
            .collect()
    }

    fn offer_for(&self, seq: u64, index: usize, price: Money) -> Offer {
        let variant = if self.rules.vary_technical_values {
            index as u64
        } else {
            0
        };
        let mos = format!("sites:{seq}:{variant}");
        Offer {
            search_id: 50_000 + seq as i64,
            force_seo_wait: ((seq + variant) % 2) as i64,
            mos_sites: base64::engine::general_purpose::STANDARD.encode(mos),
            price,
        }
    }

    /// Operation 4: `meta_data` must be exactly what operation 3 gave for this job.
    pub(crate) fn poll_search(
        &mut self,
        job: &str,
        meta_data: &str,
        now: Instant,
    ) -> Result<Poll, PollError> {
        let rules = self.rules.clone();
        let search = self.searches.get_mut(job).ok_or(PollError::UnknownJob)?;
        if search.meta_data != meta_data {
            return Err(PollError::MetaDataChanged);
        }
        if let Some(book) = self.books.get_mut(search.owner) {
            book.polls_served += 1;
        }
        search.polls += 1;
        let waited_enough = now.duration_since(search.started) >= rules.ready_after;
        if search.polls <= rules.ready_after_polls || !waited_enough {
            return Ok(Poll::Pending);
        }
        let found = search.found.clone();
        let (url_id, first) = (search.url_id, !search.answered);
        search.answered = true;
        if let (true, Some(how)) = (first, self.behaviour.team_buys_during_search) {
            self.team_buys(url_id, &found, how);
        }
        for (donor, offer) in &found {
            let known = self.offers.entry((url_id, donor.page_id)).or_default();
            if !known.contains(offer) {
                known.push(offer.clone());
            }
        }
        Ok(Poll::Ready(found))
    }

    /// The team buys one page of a search's result by hand for its URL
    /// (`Behaviour::team_buys_during_search`).
    fn team_buys(&mut self, url_id: i64, found: &[(Donor, Offer)], how: TeamBuy) {
        let Some(project_id) = self.urls.get(&url_id).map(|u| u.project_id) else {
            return;
        };
        let Some(text_id) = self
            .texts
            .values()
            .find(|t| t.url_id == url_id)
            .map(|t| t.id)
        else {
            return;
        };
        let free = |d: &&Donor| {
            self.held
                .get(&(project_id, d.page_id, url_id))
                .is_none_or(|n| *n == 0)
        };
        let mut pages: Vec<&Donor> = found.iter().map(|(d, _)| d).filter(free).collect();
        pages.sort_by_key(|d| (d.price, d.page_id));
        let Some(cheapest) = pages.first() else {
            return;
        };
        let target = match how {
            TeamBuy::Cheapest => Some(*cheapest),
            TeamBuy::SameSiteAsCheapest => pages
                .iter()
                .skip(1)
                .find(|d| d.domain == cheapest.domain)
                .copied(),
        };
        if let Some(d) = target.cloned() {
            let page = PageRef {
                page_id: d.page_id,
                url_id,
                text_id,
            };
            self.place(project_id, page, d.price, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;
    use crate::config::SandboxConfig;

    /// A world whose donor sites each have two pages, with `how` switched on, after one
    /// search of the main URL has answered ready twice: `(world, found)`.
    fn searched(how: TeamBuy) -> (World, Vec<Donor>) {
        let mut cfg = SandboxConfig::new("t", "k");
        cfg.search_ready_after_polls = 0;
        cfg.pages_per_site = 2;
        let mut world = World::new(&cfg);
        world.behaviour.team_buys_during_search = Some(how);
        let (_, url_id, _) = world.add_project("https://acme.example").unwrap();
        let (job, meta) = world
            .start_search(url_id, None, None, Instant::now())
            .unwrap();
        let mut found = Vec::new();
        for _ in 0..2 {
            let Ok(Poll::Ready(f)) = world.poll_search(&job, &meta, Instant::now()) else {
                panic!("search not ready");
            };
            found = f.into_iter().map(|(d, _)| d).collect();
        }
        (world, found)
    }

    fn cheapest(found: &[Donor]) -> &Donor {
        found.iter().min_by_key(|d| (d.price, d.page_id)).unwrap()
    }

    #[test]
    fn the_team_buys_the_cheapest_page_of_a_search_once_while_it_runs() {
        let (world, found) = searched(TeamBuy::Cheapest);

        assert_eq!(world.placements.len(), 1, "once, not at every ready answer");
        let p = &world.placements[0];
        assert_eq!(p.page.page_id, cheapest(&found).page_id);
        assert_eq!(p.autobuyer_id, None, "by hand");
    }

    #[test]
    fn the_team_can_buy_another_page_of_the_cheapest_pages_site() {
        let (world, found) = searched(TeamBuy::SameSiteAsCheapest);

        assert_eq!(world.placements.len(), 1);
        let bought = world.placements[0].page.page_id;
        let first = cheapest(&found);
        let page = found.iter().find(|d| d.page_id == bought).unwrap();
        assert_ne!(bought, first.page_id);
        assert_eq!(page.domain, first.domain);
    }
}
