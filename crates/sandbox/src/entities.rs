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
    pub(crate) name: &'static str,
    pub(crate) from: Option<Money>,
    pub(crate) to: Option<Money>,
}

#[derive(Debug, Clone)]
pub(crate) struct Filter {
    pub(crate) id: i64,
    /// The account it belongs to (an index into the world's books, `state::AccountIx`).
    pub(crate) owner: usize,
    pub(crate) name: String,
    pub(crate) params: Params,
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
    pub(crate) is_auto_approve: bool,
    pub(crate) filter_id: i64,
    pub urls: Vec<AutobuyerUrl>,
}

#[derive(Debug, Clone)]
pub(crate) struct Autobuyer {
    pub(crate) id: i64,
    /// The account it belongs to (an index into the world's books, `state::AccountIx`).
    pub(crate) owner: usize,
    pub(crate) project_id: i64,
    pub(crate) spec: AutobuyerSpec,
    pub(crate) running: bool,
}

/// One page of a purchase call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageRef {
    pub(crate) page_id: i64,
    pub(crate) url_id: i64,
    pub(crate) text_id: i64,
}

/// A bought (rented) link.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    pub(crate) id: i64,
    /// The account it belongs to (an index into the world's books, `state::AccountIx`).
    pub(crate) owner: usize,
    pub(crate) project_id: i64,
    pub(crate) page: PageRef,
    pub(crate) price: Money,
    pub(crate) status: LinkStatus,
    /// Whether operation 6 shows it: a removed or rejected link may leave the list or stay
    /// in it with its status.
    pub(crate) listed: bool,
    pub(crate) at: DateTime<Utc>,
    /// When the status last changed (removed or rejected).
    pub(crate) status_at: Option<DateTime<Utc>>,
    /// The autobuyer that bought it; `None` for a purchase call (operation 5).
    pub(crate) autobuyer_id: Option<i64>,
    /// The project already held this page for this URL when it was bought.
    pub(crate) duplicate: bool,
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
    pub(crate) fn name(self) -> &'static str {
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
    pub(crate) domain: String,
    pub price: Money,
}

/// What a finished search offered for one donor page: the values a purchase must echo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Offer {
    pub(crate) search_id: i64,
    pub(crate) force_seo_wait: i64,
    pub(crate) mos_sites: String,
    pub(crate) price: Money,
}

#[derive(Debug, Clone)]
pub(crate) struct Search {
    /// The account it belongs to (an index into the world's books, `state::AccountIx`).
    pub(crate) owner: usize,
    pub(crate) url_id: i64,
    pub(crate) meta_data: String,
    pub(crate) polls: u32,
    pub(crate) started: Instant,
    pub(crate) found: Vec<(Donor, Offer)>,
    /// It has answered ready once (`Behaviour::team_buys_during_search` acts then only).
    pub(crate) answered: bool,
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
