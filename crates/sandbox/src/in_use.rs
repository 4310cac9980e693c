//! An account already in use (issue 24): what a team has before it switches on linkrunner —
//! a project for its domain with promoted URLs and texts, links bought by hand (on the
//! cheapest pages of the inventory, the ones a buy round would take first), a saved filter
//! and a running autobuyer started in the web UI. Seeded by [`World::seed_in_use`]
//! (`SandboxHandle::seed_in_use`, `POST __sandbox/seed_in_use`), so tests and the demo can
//! adopt it.

use serde::{Deserialize, Serialize};

use super::autobuy::{AutobuyerSpec, AutobuyerUrl};
use super::buy::PageRef;
use super::state::{Outcome, World};
use crate::money::Money;

/// What [`World::seed_in_use`] made: every id a campaign file needs to adopt it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InUse {
    pub project_id: i64,
    /// The promoted URLs: the main page (created with the project) and two more.
    pub urls: Vec<InUseUrl>,
    filter_id: i64,
    /// The running autobuyer (on the second URL).
    pub autobuyer_id: i64,
    pub autobuyer_monthly_budget: Money,
    /// Links bought by hand: link id, page id, URL id, monthly rent.
    pub hand_links: Vec<HandLink>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InUseUrl {
    pub url: String,
    pub url_id: i64,
    /// `(text, text_id)`
    pub texts: Vec<(String, i64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandLink {
    pub link_id: i64,
    pub page_id: i64,
    pub url_id: i64,
    pub price: Money,
}

impl World {
    /// Seeds an account in use for `domain` (an absolute http(s) URL without a path): a
    /// project, `/running-shoes` and `/trail` with two and one texts, two links bought by hand
    /// on `/running-shoes` and one on the main page (the cheapest pages of the inventory), a
    /// filter `team-cheap` and a running autobuyer `team-auto` on `/trail` (monthly budget
    /// 500 RUB, 20 links in all and a day: with periodic autobuying on, it keeps buying).
    pub(crate) fn seed_in_use(&mut self, domain: &str) -> Outcome<InUse> {
        let domain = domain.trim_end_matches('/');
        let (project_id, main_url, main_text) = self.add_project(domain)?;
        let main = InUseUrl {
            url: format!("{domain}/"),
            url_id: main_url,
            texts: vec![(self.texts[&main_text].text.clone(), main_text)],
        };
        let shoes = self.seed_url(
            project_id,
            &format!("{domain}/running-shoes"),
            &[
                "Best #a#running shoes#/a# in town",
                "#a#acme running shoes#/a#",
            ],
        );
        let trail = self.seed_url(
            project_id,
            &format!("{domain}/trail"),
            &["Shoes for the #a#trail#/a#, tested in the mountains"],
        );
        let hand_links = self.seed_hand_links(project_id, &[(&shoes, 2), (&main, 1)]);
        let filter_id = self.add_filter("team-cheap", &[], Default::default())?;
        let budget = Money::from_rubles(500);
        let spec = AutobuyerSpec {
            name: "team-auto".into(),
            is_auto_approve: false,
            filter_id,
            urls: vec![AutobuyerUrl {
                url_id: trail.url_id,
                monthly_budget: budget,
                total_links_limit: 20,
                daily_links_limit: 20,
            }],
        };
        let autobuyer_id = self.create_autobuyer(project_id, spec)?;
        self.switch_autobuyers(&[autobuyer_id], true)?;
        Ok(InUse {
            project_id,
            urls: vec![main, shoes, trail],
            filter_id,
            autobuyer_id,
            autobuyer_monthly_budget: budget,
            hand_links,
        })
    }

    /// The team buys one link by hand (in the web UI, outside the API's purchase call) for
    /// `url_id` with `text_id`: on the cheapest page of the inventory the project does not hold
    /// for that URL now. `None` when it holds every page for it.
    pub(crate) fn buy_by_hand(
        &mut self,
        project_id: i64,
        url_id: i64,
        text_id: i64,
    ) -> Option<HandLink> {
        let mut cheapest = self.inventory.clone();
        cheapest.sort_by_key(|d| (d.price, d.page_id));
        let d = cheapest.into_iter().find(|d| {
            self.held
                .get(&(project_id, d.page_id, url_id))
                .is_none_or(|n| *n == 0)
        })?;
        let page = PageRef {
            page_id: d.page_id,
            url_id,
            text_id,
        };
        let link_id = self.place(project_id, page, d.price, None);
        Some(HandLink {
            link_id,
            page_id: d.page_id,
            url_id,
            price: d.price,
        })
    }

    fn seed_url(&mut self, project_id: i64, url: &str, texts: &[&str]) -> InUseUrl {
        let url_id = self.insert_url(project_id, url);
        let texts = texts
            .iter()
            .map(|t| (t.to_string(), self.insert_text(url_id, t)))
            .collect();
        InUseUrl {
            url: url.to_string(),
            url_id,
            texts,
        }
    }

    /// `n` links by hand per URL, on the cheapest pages of the inventory not yet used.
    fn seed_hand_links(&mut self, project_id: i64, plan: &[(&InUseUrl, usize)]) -> Vec<HandLink> {
        let mut cheapest = self.inventory.clone();
        cheapest.sort_by_key(|d| (d.price, d.page_id));
        let mut pages = cheapest.into_iter();
        let mut out = Vec::new();
        for (u, n) in plan {
            for d in pages.by_ref().take(*n) {
                let page = PageRef {
                    page_id: d.page_id,
                    url_id: u.url_id,
                    text_id: u.texts[0].1,
                };
                let link_id = self.place(project_id, page, d.price, None);
                out.push(HandLink {
                    link_id,
                    page_id: d.page_id,
                    url_id: u.url_id,
                    price: d.price,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SandboxConfig;

    #[test]
    fn an_account_in_use_has_hand_links_a_filter_and_a_running_autobuyer() {
        let mut world = World::new(&SandboxConfig::new("t", "k"));
        let seeded = world.seed_in_use("https://acme.example").unwrap();
        assert_eq!(seeded.urls.len(), 3);
        assert_eq!(seeded.hand_links.len(), 3);
        assert!(world.autobuyers[&seeded.autobuyer_id].running);
        assert!(world.filters.contains_key(&seeded.filter_id));
        let held = world
            .placements
            .iter()
            .filter(|p| p.project_id == seeded.project_id);
        assert_eq!(held.count(), 3);
        assert_eq!(world.books[0].duplicate_purchases, 0);
    }

    #[test]
    fn a_hand_purchase_takes_the_cheapest_page_not_held_for_that_url() {
        let mut world = World::new(&SandboxConfig::new("t", "k"));
        let seeded = world.seed_in_use("https://acme.example").unwrap();
        let shoes = &seeded.urls[1];
        let held: Vec<i64> = seeded
            .hand_links
            .iter()
            .filter(|h| h.url_id == shoes.url_id)
            .map(|h| h.page_id)
            .collect();
        let h = world
            .buy_by_hand(seeded.project_id, shoes.url_id, shoes.texts[0].1)
            .unwrap();
        assert!(!held.contains(&h.page_id), "{h:?} is held already");
        assert_eq!(world.books[0].duplicate_purchases, 0);
        let p = world.placements.iter().find(|p| p.id == h.link_id).unwrap();
        assert_eq!((p.autobuyer_id, p.price), (None, h.price));
    }
}
