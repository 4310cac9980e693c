//! `engine/`: reconciles what campaign files want against what the journal recorded, decides
//! the next steps, runs them through [`crate::market::Market`], and settles uncertainty.
//!
//! - [`plan`]: the pure diff, shared by `plan`, `once` and `run`.
//! - [`recorded`]: the journal's view of one campaign; [`recorded_many`]: of many, from one
//!   batch read (start-up, `plan`).
//! - [`choose`]: donor choice for a buy round (pure, property-tested).
//! - [`journal`]: the money protocol — intent and reservation before the call, outcome after;
//!   [`error`]: [`EngineError`], why a step stopped.
//! - [`steps`]: project, texts, filters, autobuyers; [`round`]: search, poll, buy; [`settle`]:
//!   uncertain intents ([`policy`]: how each kind is settled, in words); [`pass`]: one pass
//!   over every campaign; [`keys`]: natural keys; [`stall`]: why a round that could buy did
//!   not (honest outcomes).
//! - [`review`]: `plan --format markdown`, the plan as a pull-request comment; [`month`]:
//!   `report --month`, the month's money for finance.
//! - [`report`]: `status` and `plan` output (the commands are in `cli/`); [`story`]: `history`
//!   and `explain`: what moved money, why, and one link's whole story.
//! - [`state`]: the recorded state `plan` reads, served by the daemon for `plan --state-from`.
//! - [`faultpoint`]: the SIGKILL suite's crash points, compiled only with the `test-hooks` feature.
//! - [`slots`]: at most `campaign_concurrency` campaigns working at once; waits lend their slot.

pub mod actions;
pub mod choose;
pub mod error;
pub mod faultpoint;
pub mod journal;
pub mod keys;
pub mod lease;
pub mod listing;
pub mod month;
pub mod pass;
pub mod plan;
pub mod policy;
pub mod recorded;
pub mod recorded_many;
pub mod report;
pub mod review;
pub mod round;
pub mod settle;
pub mod slots;
pub mod stall;
pub mod state;
pub mod steps;
pub mod story;
pub mod sync;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::campaign::{Autobuyer, Campaign};
use crate::clock::SharedClock;
use crate::market::Market;
use crate::metrics::Metrics;
use crate::money::Money;
use crate::store::Store;

pub use error::EngineError;

/// Tunables of the engine. Defaults suit the real marketplace; tests shrink the times.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// How long a campaign lease lasts without renewal.
    pub lease_ttl: chrono::Duration,
    /// How long a search may stay pending before the round gives up on it.
    pub search_deadline: chrono::Duration,
    /// First wait before polling a search result, doubled after each pending answer.
    pub poll_initial: Duration,
    pub poll_max: Duration,
    /// An uncertain purchase absent from the link list is declared not bought only when the
    /// call is at least this old (the list may lag behind a purchase).
    pub settle_grace: chrono::Duration,
    /// Free creations (project, texts, filter) whose outcome stays uncertain are re-sent at most
    /// this many times; then the campaign waits for an operator.
    pub max_attempts: u32,
    /// Campaigns working at once (see [`slots`]); 0: twice the client's requests in flight,
    /// resolved by `App::build`.
    pub campaign_concurrency: usize,
    /// Whether a link list that carries no paging fields may be taken as complete when it
    /// shows every link the journal holds (see `listing.rs`).
    pub unpaged_list: UnpagedList,
}

/// `campaign_concurrency` when the operator does not say: twice the client's requests in
/// flight, so campaigns never limit the load below the rate limit.
pub fn default_campaign_concurrency(max_in_flight: usize) -> usize {
    2 * max_in_flight.max(1)
}

/// What an answer of the link list that carries no paging field is taken to show: the
/// marketplace does not say (`--unpaged-link-list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnpagedList {
    /// Every link of the project, once it shows every link the journal holds (and, for an
    /// uncertain purchase, more links than the journal knew when the purchase was sent).
    #[default]
    Complete,
    /// Possibly a first page only: absence from it proves nothing; what waits for it waits
    /// for an operator.
    Partial,
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            lease_ttl: chrono::Duration::seconds(120),
            search_deadline: chrono::Duration::minutes(15),
            poll_initial: Duration::from_secs(2),
            poll_max: Duration::from_secs(30),
            settle_grace: chrono::Duration::seconds(120),
            max_attempts: 3,
            campaign_concurrency: 8,
            unpaged_list: UnpagedList::Complete,
        }
    }
}

/// The engine. Cheap to clone; every clone shares the market client, store and clock.
pub struct Engine<M: Market> {
    pub market: Arc<M>,
    pub store: Store,
    pub clock: SharedClock,
    pub metrics: Arc<Metrics>,
    /// Who this process is in leases and intents: unique per process.
    pub holder: String,
    pub settings: EngineSettings,
    pub cancel: CancellationToken,
    /// Campaigns working at once, shared by passes and the daemon's rounds.
    pub slots: slots::Slots,
    locks: CampaignLocks,
}

/// One lock per campaign within this process: a scheduled round and a reconciliation never
/// work on one campaign at once here (across processes, the store's leases do that job).
pub type CampaignLocks =
    Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>>;

impl<M: Market> Engine<M> {
    pub fn new(
        market: Arc<M>,
        store: Store,
        clock: SharedClock,
        metrics: Arc<Metrics>,
        settings: EngineSettings,
    ) -> Self {
        Engine {
            market,
            store,
            clock,
            metrics,
            holder: holder_id(),
            slots: slots::Slots::new(settings.campaign_concurrency),
            settings,
            cancel: CancellationToken::new(),
            locks: Default::default(),
        }
    }

    /// The in-process lock of one campaign.
    pub fn campaign_lock(&self, name: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(name.to_string()).or_default().clone()
    }
}

impl<M: Market> Clone for Engine<M> {
    fn clone(&self) -> Self {
        Engine {
            market: self.market.clone(),
            store: self.store.clone(),
            clock: self.clock.clone(),
            metrics: self.metrics.clone(),
            holder: self.holder.clone(),
            settings: self.settings.clone(),
            cancel: self.cancel.clone(),
            slots: self.slots.clone(),
            locks: self.locks.clone(),
        }
    }
}

/// A holder id unique to this process: host, pid and start time.
pub fn holder_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let t = chrono::Utc::now().timestamp_micros();
    format!("{}:{}:{t}", host.trim(), std::process::id())
}

/// A campaign's caps as the journal keeps them.
pub fn caps(c: &Campaign) -> crate::store::CampaignCaps {
    crate::store::CampaignCaps {
        name: c.name.clone(),
        monthly_cap: c.budget.monthly,
        daily_links: c.budget.daily_links,
        total_links: c.budget.total_links,
    }
}

/// The monthly budget an autobuyer may commit: the sum over its URLs.
pub fn autobuyer_budget(ab: &Autobuyer) -> Money {
    ab.urls.iter().fold(Money::ZERO, |acc, u| {
        acc.checked_add(u.monthly_budget).unwrap_or(Money::MAX)
    })
}

/// Fingerprint of everything that defines an autobuyer on the marketplace (not its desired state).
pub fn autobuyer_fingerprint(c: &Campaign, ab: &Autobuyer) -> String {
    let urls: Vec<_> = ab
        .urls
        .iter()
        .map(|u| {
            (
                &u.url,
                u.monthly_budget,
                u.total_links_limit,
                u.daily_links_limit,
            )
        })
        .collect();
    let filter = c.filters.iter().find(|f| f.name == ab.filter).map(|f| {
        keys::fingerprint(&serde_json::json!({
            "name": f.name, "paf": f.price_article_from, "pat": f.price_article_to,
            "prf": f.price_rent_from, "prt": f.price_rent_to, "extra": f.extra,
        }))
    });
    keys::fingerprint(
        &serde_json::json!({ "name": ab.name, "auto_approve": ab.auto_approve, "urls": urls, "filter": filter }),
    )
}
