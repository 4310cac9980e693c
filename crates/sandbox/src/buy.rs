//! Purchases (operation 5); the link list (operation 6) is `listing.rs`.
//!
//! A purchase is accepted only when every page was offered by a finished search for its
//! URL with exactly the `searchId`, `forceSeoWait` and `mosSites` of the call, and the
//! balance covers the whole call. Buying a page again for the same project and URL while
//! it is held is accepted — as a careless real server would — and counted in
//! `duplicate_purchases`, so tests catch a client that buys twice.

use super::entities::{LinkStatus, Offer};
pub(crate) use super::entities::{PageRef, Placement};
use super::state::{Outcome, Rejection, World};
use crate::money::Money;

/// The whole purchase call, as the wire carries it.
#[derive(Debug, Clone)]
pub(crate) struct BuyRequest {
    pub(crate) search_id: i64,
    pub(crate) force_seo_wait: i64,
    pub(crate) mos_sites: String,
    pub(crate) link_type_id: i64,
    /// A saved search filter, when the purchase names one; it must exist.
    pub(crate) filter_id: Option<i64>,
    pub(crate) pages: Vec<PageRef>,
}

impl BuyRequest {
    /// The call carries exactly the technical values the search gave with this offer.
    fn echoes(&self, offer: &Offer) -> bool {
        offer.search_id == self.search_id
            && offer.force_seo_wait == self.force_seo_wait
            && offer.mos_sites == self.mos_sites
    }
}

impl World {
    /// Operation 5: all pages or none.
    pub(crate) fn buy(&mut self, project_id: i64, req: &BuyRequest) -> Outcome<Vec<i64>> {
        self.project(project_id)?;
        if !(1..=3).contains(&req.link_type_id) {
            return Err(Rejection::new(format!(
                "linkTypeId {} is not 1, 2 or 3",
                req.link_type_id
            )));
        }
        if let Some(filter) = req.filter_id
            && !self.filters.contains_key(&filter)
        {
            return Err(Rejection::new(format!("filterId {filter} does not exist")));
        }
        if req.pages.is_empty() {
            return Err(Rejection::new("pages is empty"));
        }
        let mut total = Money::ZERO;
        let mut priced = Vec::with_capacity(req.pages.len());
        for page in &req.pages {
            let price = self.price_of(project_id, req, page)?;
            total = total
                .checked_add(price)
                .ok_or_else(|| Rejection::new("total out of range"))?;
            priced.push((*page, price));
        }
        let balance = self.balance_of_project(project_id);
        if total > balance {
            return Err(Rejection::new(format!(
                "insufficient balance: {total} RUB needed, {balance} RUB left"
            )));
        }
        self.ensure_room(self.placements.len() + req.pages.len(), "placements")?;
        Ok(priced
            .into_iter()
            .map(|(page, price)| self.place(project_id, page, price, None))
            .collect())
    }

    /// Checks one page against its URL, text and the offer; answers the offered price.
    fn price_of(&self, project_id: i64, req: &BuyRequest, page: &PageRef) -> Outcome<Money> {
        self.url_in_project(project_id, page.url_id)?;
        match self.texts.get(&page.text_id) {
            Some(t) if t.url_id == page.url_id => {}
            _ => {
                return Err(Rejection::new(format!(
                    "text {} does not belong to url {}",
                    page.text_id, page.url_id
                )));
            }
        }
        let offers = self
            .offers
            .get(&(page.url_id, page.page_id))
            .ok_or_else(|| {
                Rejection::new(format!(
                    "page {} was not found by a search for url {}",
                    page.page_id, page.url_id
                ))
            })?;
        offers
            .iter()
            .find(|o| req.echoes(o))
            .map(|o| o.price)
            .ok_or_else(|| {
                Rejection::new(format!(
                    "searchId, forceSeoWait and mosSites do not match what the search returned for page {}",
                    page.page_id
                ))
            })
    }

    /// What the account that owns the project has left to spend.
    pub(crate) fn balance_of_project(&self, project_id: i64) -> Money {
        let owner = self.projects.get(&project_id).map_or(0, |p| p.owner);
        self.books.get(owner).map_or(Money::ZERO, |b| b.balance)
    }

    /// Records one bought link, by a purchase call or by `autobuyer`.
    pub(crate) fn place(
        &mut self,
        project_id: i64,
        page: PageRef,
        price: Money,
        autobuyer_id: Option<i64>,
    ) -> i64 {
        let held = self
            .held
            .entry((project_id, page.page_id, page.url_id))
            .or_default();
        let duplicate = *held > 0;
        *held += 1;
        // The project's account pays, whoever buys: a purchase call, its autobuyer, its team.
        let owner = self.projects.get(&project_id).map_or(0, |p| p.owner);
        let book = self.book(owner);
        if duplicate {
            book.duplicate_purchases += 1;
        }
        book.spend = book.spend.checked_add(price).unwrap_or(Money::MAX);
        book.balance = book.balance.checked_sub(price).unwrap_or(Money::ZERO);
        let id = self.fresh_id();
        let at = self.now();
        self.placements.push(Placement {
            id,
            owner,
            project_id,
            page,
            price,
            status: LinkStatus::Active,
            listed: true,
            at,
            status_at: None,
            autobuyer_id,
            duplicate,
        });
        id
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;
    use crate::config::SandboxConfig;
    use crate::search::Poll;

    /// A world with one project whose main URL has a finished search: `(world, project, page refs)`.
    fn world_with_offers() -> (World, i64, Vec<(PageRef, Offer)>) {
        let mut cfg = SandboxConfig::new("t", "k");
        cfg.search_ready_after_polls = 0;
        let mut world = World::new(&cfg);
        let (project, url_id, text_id) = world.add_project("https://acme.example").unwrap();
        let (job, meta) = world
            .start_search(url_id, None, None, Instant::now())
            .unwrap();
        let Ok(Poll::Ready(found)) = world.poll_search(&job, &meta, Instant::now()) else {
            panic!("search not ready at the first poll");
        };
        let pages = found
            .into_iter()
            .map(|(d, o)| {
                (
                    PageRef {
                        page_id: d.page_id,
                        url_id,
                        text_id,
                    },
                    o,
                )
            })
            .collect();
        (world, project, pages)
    }

    fn request(offer: &Offer, pages: Vec<PageRef>) -> BuyRequest {
        BuyRequest {
            search_id: offer.search_id,
            force_seo_wait: offer.force_seo_wait,
            mos_sites: offer.mos_sites.clone(),
            link_type_id: 1,
            filter_id: None,
            pages,
        }
    }

    #[test]
    fn a_call_with_one_unknown_page_buys_none_of_its_pages() {
        let (mut world, project, pages) = world_with_offers();
        let unknown = PageRef {
            page_id: 1,
            ..pages[0].0
        };
        let req = request(&pages[0].1, vec![pages[0].0, unknown]);

        let result = world.buy(project, &req);

        assert!(result.is_err());
        assert!(world.placements.is_empty() && world.books[0].spend == Money::ZERO);
    }

    #[test]
    fn the_balance_must_cover_the_whole_call() {
        let (mut world, project, pages) = world_with_offers();
        world.books[0].balance = pages[0].1.price;
        let req = request(&pages[0].1, vec![pages[0].0, pages[1].0]);

        let result = world.buy(project, &req);

        assert!(result.is_err());
        assert_eq!(world.books[0].balance, pages[0].1.price);
    }
}
