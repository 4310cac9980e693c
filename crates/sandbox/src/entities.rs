//! The marketplace's things as the sandbox keeps them: filters, autobuyers, placements (bought
//! links), donors, offers and searches, and the seeded donor inventory. Plain data: the rules
//! that change them are `impl World` blocks in `autobuy.rs`, `buy.rs`, `listing.rs` and
//! `search.rs`, over the state in `state.rs` (which holds these and imports nothing else of
//! theirs, so the files do not import each other in a circle).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use super::config::SandboxConfig;
use super::faults::Prng;
use crate::money::Money;

/// A price range of a filter, e.g. `priceRentFrom` / `priceRentTo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub name: &'static str,
    pub from: Option<Money>,
    pub to: Option<Money>,
}

#[derive(Debug, Clone)]
pub(crate) struct Filter {
    pub id: i64,
    pub name: String,
    pub params: Params,
}

/// One URL of an autobuyer and its limits, as sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutobuyerUrl {
    pub url_id: i64,
    pub monthly_budget: Money,
    pub total_links_limit: i64,
    pub daily_links_limit: i64,
}

#[derive(Debug, Clone)]
pub(crate) struct AutobuyerSpec {
    pub name: String,
    pub is_auto_approve: bool,
    pub filter_id: i64,
    pub urls: Vec<AutobuyerUrl>,
}

#[derive(Debug, Clone)]
pub(crate) struct Autobuyer {
    pub id: i64,
    pub project_id: i64,
    pub spec: AutobuyerSpec,
    pub running: bool,
}

/// One page of a purchase call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRef {
    pub page_id: i64,
    pub url_id: i64,
    pub text_id: i64,
}

/// A bought (rented) link.
#[derive(Debug, Clone)]
pub struct Placement {
    pub id: i64,
    pub project_id: i64,
    pub page: PageRef,
    pub price: Money,
    pub status: LinkStatus,
    /// Whether operation 6 shows it: a removed or rejected link may leave the list or stay
    /// in it with its status.
    pub listed: bool,
    pub at: DateTime<Utc>,
    /// When the status last changed (removed or rejected).
    pub status_at: Option<DateTime<Utc>>,
    /// The autobuyer that bought it; `None` for a purchase call (operation 5).
    pub autobuyer_id: Option<i64>,
    /// The project already held this page for this URL when it was bought.
    pub duplicate: bool,
}

/// What the marketplace says about a bought link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkStatus {
    Active,
    /// Taken down by the donor or the marketplace after it was placed.
    Removed,
    /// Refused by the donor (e.g. at moderation).
    Rejected,
}

impl LinkStatus {
    pub fn name(self) -> &'static str {
        match self {
            LinkStatus::Active => "active",
            LinkStatus::Removed => "removed",
            LinkStatus::Rejected => "rejected",
        }
    }
}

/// A donor page in the inventory.
#[derive(Debug, Clone)]
pub(crate) struct Donor {
    pub page_id: i64,
    pub domain: String,
    pub price: Money,
}

/// What a finished search offered for one donor page: the values a purchase must echo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Offer {
    pub search_id: i64,
    pub force_seo_wait: i64,
    pub mos_sites: String,
    pub price: Money,
}

#[derive(Debug, Clone)]
pub(crate) struct Search {
    pub url_id: i64,
    pub meta_data: String,
    pub polls: u32,
    pub started: Instant,
    pub found: Vec<(Donor, Offer)>,
    /// It has answered ready once (`Behaviour::team_buys_during_search` acts then only).
    pub answered: bool,
}

/// The seeded inventory: page ids, domains and monthly prices, about a third with kopecks.
pub(crate) fn inventory(rng: &mut Prng, cfg: &SandboxConfig) -> Vec<Donor> {
    let (lo, hi) = (cfg.price_min.kopecks(), cfg.price_max.kopecks());
    (0..cfg.inventory_size as i64)
        .map(|i| {
            let mut kopecks = rng.range(lo, hi);
            if rng.unit() < 0.66 {
                kopecks = (kopecks / 100 * 100).max(lo);
            }
            let page_id = 700_000 + i * 16 + rng.range(0, 15);
            let tag = rng.next_u64() & 0xffff;
            let domain = match cfg.pages_per_site.max(1) {
                1 => format!("donor{i}-{tag:04x}.example"),
                n => format!("site{}.example", i / n as i64),
            };
            Donor {
                page_id,
                domain,
                price: Money::from_kopecks(kopecks),
            }
        })
        .collect()
}

/// Filter parameters are free-form JSON objects; keep them as sent.
pub(crate) type Params = serde_json::Map<String, Value>;
