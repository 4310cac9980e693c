//! Autobuyers that really buy: a running autobuyer buys rented links by itself into its
//! project, for each of its URLs, from the donor inventory within its filter's rent price
//! range, within that URL's limits:
//!
//! - `monthlyBudget`: the monthly rent of the links it holds (active) for the URL, plus the
//!   new link's, stays within the budget;
//! - `totalLinksLimit`: links it ever bought for the URL, whatever became of them;
//! - `dailyLinksLimit`: links it bought for the URL on the current UTC day (sandbox clock).
//!
//! A limit of 0 buys nothing. `Behaviour::autobuy_ignores_limits` makes it a faulty autobuyer
//! that buys past all three. It never buys the same page twice for a URL, and by default
//! skips pages the project already holds for that URL (`Behaviour::autobuy_buys_held` turns
//! that off). It looks first at the pages rent searches offered for the URL (lowest page id
//! first), then at the rest of the inventory in order — it searches the same inventory, so it
//! finds the donors a buy round finds. The text is the URL's first text (lowest id): which
//! text an autobuyer uses is not in the spec. Deterministic: no random draws.

use std::collections::{BTreeMap, HashSet};

use super::autobuy::{Autobuyer, AutobuyerUrl};
use super::buy::PageRef;
use super::listing::LinkStatus;
use super::state::World;
use crate::endpoints::wire;
use crate::money::Money;

/// What an autobuyer already did for one URL.
#[derive(Debug, Default)]
struct Usage {
    pages: HashSet<i64>,
    rent: Money,
    total: i64,
    today: i64,
}

impl World {
    /// Every running autobuyer buys now, up to `max_each` links each, in id order. Returns
    /// the ids of the links bought.
    pub(crate) fn autobuy_now(&mut self, max_each: usize) -> Vec<i64> {
        let running: Vec<Autobuyer> = self
            .autobuyers
            .values()
            .filter(|a| a.running)
            .cloned()
            .collect();
        let mut bought = Vec::new();
        for a in &running {
            let mut left = max_each;
            for u in &a.spec.urls {
                let ids = self.autobuy_url(a, u, left);
                left -= ids.len();
                bought.extend(ids);
            }
        }
        bought
    }

    /// Up to `max` links for one URL of `a`.
    fn autobuy_url(&mut self, a: &Autobuyer, u: &AutobuyerUrl, max: usize) -> Vec<i64> {
        let Some(text_id) = self.first_text(u.url_id) else {
            return Vec::new();
        };
        let (from, to) = self.rent_range(a.spec.filter_id);
        let mut usage = self.usage(a.id, u.url_id);
        let mut out = Vec::new();
        for (page_id, price) in self.candidates(u.url_id) {
            let careless = self.behaviour.autobuy_ignores_limits;
            let limits_left = (careless
                || (usage.total < u.total_links_limit && usage.today < u.daily_links_limit))
                && out.len() < max;
            if !limits_left
                || self
                    .ensure_room(self.placements.len(), "placements")
                    .is_err()
            {
                break;
            }
            let in_range = from.is_none_or(|f| price >= f) && to.is_none_or(|t| price <= t);
            let within_budget = careless
                || usage
                    .rent
                    .checked_add(price)
                    .is_some_and(|r| r <= u.monthly_budget);
            let held = self
                .held
                .get(&(a.project_id, page_id, u.url_id))
                .is_some_and(|n| *n > 0);
            let fresh =
                !usage.pages.contains(&page_id) && (self.behaviour.autobuy_buys_held || !held);
            // The autobuyer's account pays (its project's).
            let affordable = self.books.get(a.owner).is_some_and(|b| price <= b.balance);
            if !(in_range && within_budget && fresh && affordable) {
                continue;
            }
            let page = PageRef {
                page_id,
                url_id: u.url_id,
                text_id,
            };
            out.push(self.place(a.project_id, page, price, Some(a.id)));
            usage.pages.insert(page_id);
            usage.rent = usage.rent.checked_add(price).unwrap_or(Money::MAX);
            usage.total += 1;
            usage.today += 1;
        }
        out
    }

    fn usage(&self, autobuyer_id: i64, url_id: i64) -> Usage {
        let today = self.now().date_naive();
        let mut usage = Usage::default();
        let mine = self
            .placements
            .iter()
            .filter(|p| p.autobuyer_id == Some(autobuyer_id) && p.page.url_id == url_id);
        for p in mine {
            usage.pages.insert(p.page.page_id);
            usage.total += 1;
            if p.at.date_naive() == today {
                usage.today += 1;
            }
            if p.status == LinkStatus::Active {
                usage.rent = usage.rent.checked_add(p.price).unwrap_or(Money::MAX);
            }
        }
        usage
    }

    /// Pages searches offered for the URL (by page id), then the whole inventory in order.
    fn candidates(&self, url_id: i64) -> Vec<(i64, Money)> {
        let offered: BTreeMap<i64, Money> = self
            .offers
            .iter()
            .filter(|((url, _), offers)| *url == url_id && !offers.is_empty())
            .map(|((_, page), offers)| (*page, offers[0].price))
            .collect();
        let rest: Vec<(i64, Money)> = self
            .inventory
            .iter()
            .filter(|d| !offered.contains_key(&d.page_id))
            .map(|d| (d.page_id, d.price))
            .collect();
        offered.into_iter().chain(rest).collect()
    }

    fn first_text(&self, url_id: i64) -> Option<i64> {
        self.texts
            .values()
            .filter(|t| t.url_id == url_id)
            .map(|t| t.id)
            .min()
    }

    /// The filter's `priceRentFrom` / `priceRentTo` (validated when the filter was saved).
    fn rent_range(&self, filter_id: i64) -> (Option<Money>, Option<Money>) {
        let Some(f) = self.filters.get(&filter_id) else {
            return (None, None);
        };
        let bound = |k| wire::rubles_field(&f.params, k).ok().flatten();
        (bound("priceRentFrom"), bound("priceRentTo"))
    }
}

#[cfg(test)]
#[path = "autobuying_tests.rs"]
mod tests;
