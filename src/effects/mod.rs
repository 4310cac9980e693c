//! `effects/`: the [`Engine`] — runs what `crate::decide` decided, through the marketplace
//! client ([`crate::market::Market`]) and the journal ([`crate::store`]), and settles what may
//! have executed.
//!
//! It imports everything below it, never `crate::http`, `crate::daemon`, `crate::cli` or
//! `crate::app` (docs/architecture.md; `scripts/check-architecture` holds the line below).
//!
//! May import: crate::campaign, crate::decide, crate::market, crate::metrics, crate::store, crate::views.
//!
//! - [`protocol`]: the money protocol — intent and reservation before the call, outcome
//!   after; [`error`]: [`EngineError`], why a step stopped.
//! - [`pass`]: one pass over every campaign; [`actions`]: the plan's actions run in order
//!   (releases before acquisitions).
//! - [`steps`]: project, texts, filters, autobuyers; [`round`]: search, poll, buy ([`pace`]:
//!   how long searches take here, learned);
//!   [`settle`]: uncertain intents; [`sync`]: the link list read, and what it proves (judged by `decide::listing`).
//! - [`adopt`]: the effect of the plan's `AdoptProject`: what a file adopts in an account already
//!   in use, as `decide::adoption` decided it, written to the journal (the pass's pre-plan).
//! - [`lease`]: the campaign lease held while a pass changes anything; [`holder`]: who holds
//!   it, and whether a holder of this host is gone (then its lease is taken over at once).
//! - [`reach`]: whether the marketplace can be connected to at all (`marketplace_unreachable`).
//! - [`rename`]: a file's `renamed_from` handed over under the old name's lease, before the new name's pass.
//! - [`removals`]: campaigns whose files are gone, judged (`decide::removal`) before anything is stopped.
//! - [`quiet`]: a reconciliation of a converged campaign that only looks (its link list
//!   as the last full pass read it, nothing due: nothing planned or written but "seen").
//! - [`slots`]: at most `campaign_concurrency` campaigns working at once; waits lend their slot.

pub(crate) mod actions;
pub(crate) mod adopt;
pub(crate) mod error;
pub(crate) mod holder;
pub(crate) mod lease;
pub(crate) mod pace;
pub mod pass;
pub(crate) mod protocol;
pub(crate) mod quiet;
pub(crate) mod reach;
pub(crate) mod removals;
pub mod rename;
pub(crate) mod round;
pub(crate) mod settle;
pub(crate) mod slots;
pub(crate) mod steps;
pub(crate) mod sync;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::market::Market;
use crate::metrics::Metrics;
use crate::store::Store;
use linkrunner_domain::account::DEFAULT_ACCOUNT;
use linkrunner_domain::clock::SharedClock;

pub(crate) use error::EngineError;

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
    /// shows every link the journal holds (see `decide/listing.rs`).
    pub unpaged_list: UnpagedList,
    /// [`Self::unpaged_list`] of the accounts whose entry in the accounts file sets its own
    /// (`unpaged_link_list`): their marketplaces may page differently.
    pub unpaged_list_of: std::collections::BTreeMap<String, UnpagedList>,
    /// When campaigns whose files are gone are held rather than removed (issue 32:
    /// `--removal-hold-share`, `--removal-window`).
    pub removals: crate::decide::removal::RemovalRule,
    /// Whether a reconciliation of a converged campaign whose file, journal and link list
    /// are as its last full pass saw them, with nothing due, only looks ([`quiet`]). On in
    /// every command; the model test turns it off to compare the journals.
    pub quiet_looks: bool,
}

/// `campaign_concurrency` when the operator does not say: twice the client's requests in
/// flight, so campaigns never limit the load below the rate limit.
pub fn default_campaign_concurrency(max_in_flight: usize) -> usize {
    2 * max_in_flight.max(1)
}

/// What an answer of the link list without paging fields shows (`--unpaged-link-list`):
/// decided in `decide::listing`, set here with the engine's other settings.
pub use crate::decide::listing::UnpagedList;

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
            unpaged_list_of: std::collections::BTreeMap::new(),
            removals: crate::decide::removal::RemovalRule::default(),
            quiet_looks: true,
        }
    }
}

/// The engine. Cheap to clone; every clone shares the market clients, store and clock.
///
/// An engine works for one marketplace account at a time (`account`, its client `market`,
/// what it learned of that marketplace: `reach`, `pace`); [`Engine::for_account`] gives the
/// engine of another account of the deployment, sharing everything else. A campaign's pass
/// runs on its account's engine ([`pass::CampaignReport`]), so no step below it ever chooses a
/// client: a campaign's calls cannot go to another account's marketplace or credentials.
pub struct Engine<M: Market> {
    market: Arc<M>,
    /// The account this engine works for (`market` is its client).
    account: Arc<str>,
    /// Every account of the deployment: its client and what was learned of its marketplace.
    accounts: Arc<std::collections::BTreeMap<String, AccountSide<M>>>,
    store: Store,
    clock: SharedClock,
    metrics: Arc<Metrics>,
    /// Who this process is in leases and intents: unique per process.
    holder: String,
    /// `holder` with what tells another process of this host whether it still runs.
    identity: Arc<crate::store::HolderIdentity>,
    settings: EngineSettings,
    cancel: CancellationToken,
    /// Campaigns working at once, shared by passes and the daemon's rounds.
    slots: slots::Slots,
    /// Whether the marketplace could be connected to, as the last passes found.
    reach: Arc<reach::MarketReach>,
    /// How long searches take on this marketplace, learned as rounds finish them.
    pace: Arc<pace::SearchPace>,
    locks: CampaignLocks,
    /// What the last full passes saw, for the reconciliations that only look.
    quiet: Arc<quiet::QuietMemory>,
    /// The accounts this process works (its account leases: `daemon::division`); `None`:
    /// every account (`once`, and engines that do not divide). Another account's campaigns
    /// are skipped, neither worked nor judged removed.
    worked: Arc<std::sync::RwLock<crate::decide::division::Worked>>,
    /// Passes under way, by account: an account given back to another daemon is released
    /// only once none of its passes is still calling its marketplace here.
    in_flight: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

/// A pass of an account under way ([`Engine::in_flight`] counts it until dropped).
pub(crate) struct InFlight {
    account: String,
    counts: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = counts.get_mut(&self.account) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.account);
            }
        }
    }
}

/// One account's side of the engine: its client and what the engine learns of its marketplace.
struct AccountSide<M: Market> {
    market: Arc<M>,
    reach: Arc<reach::MarketReach>,
    pace: Arc<pace::SearchPace>,
}

impl<M: Market> AccountSide<M> {
    fn new(market: Arc<M>) -> Self {
        AccountSide {
            market,
            reach: Arc::default(),
            pace: Arc::default(),
        }
    }
}

/// One lock per campaign within this process: a scheduled round and a reconciliation never
/// work on one campaign at once here (across processes, the store's leases do that job).
pub(crate) type CampaignLocks =
    Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>>;

impl<M: Market> Engine<M> {
    /// An engine of several accounts, each with its own client; the returned engine works for
    /// the first (the default account when there is one). Panics on an empty list: a
    /// deployment has at least one account (`App::build` checks it first).
    pub(crate) fn with_accounts(
        markets: Vec<(String, Arc<M>)>,
        store: Store,
        clock: SharedClock,
        metrics: Arc<Metrics>,
        settings: EngineSettings,
    ) -> Self {
        let first = markets
            .iter()
            .find(|(id, _)| id == DEFAULT_ACCOUNT)
            .or(markets.first())
            .map(|(id, _)| id.clone())
            .expect("a deployment has at least one account");
        let accounts: std::collections::BTreeMap<String, AccountSide<M>> = markets
            .into_iter()
            .map(|(id, m)| (id, AccountSide::new(m)))
            .collect();
        let side = &accounts[&first];
        let (market, reach, pace) = (side.market.clone(), side.reach.clone(), side.pace.clone());
        let holder = holder_id();
        Engine {
            market,
            account: first.into(),
            accounts: Arc::new(accounts),
            store,
            clock,
            metrics,
            identity: Arc::new(holder::this_process(holder.clone())),
            holder,
            slots: slots::Slots::new(settings.campaign_concurrency),
            reach,
            settings,
            cancel: CancellationToken::new(),
            pace,
            locks: Default::default(),
            quiet: Default::default(),
            worked: Default::default(),
            in_flight: Default::default(),
        }
    }

    /// The journal this engine records in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The marketplace client of this engine's account.
    pub(crate) fn market(&self) -> &Arc<M> {
        &self.market
    }

    /// Every account of the deployment with its client, in id order.
    pub(crate) fn markets(&self) -> impl Iterator<Item = (&str, &Arc<M>)> {
        self.accounts.iter().map(|(id, a)| (id.as_str(), &a.market))
    }

    /// The requests per second the clients of the accounts this process works send together,
    /// which the daemon plans reconciliation from (each client still holds its own account's
    /// limit); `None` when no such client has a limit (test doubles). Only the worked
    /// accounts': a replica reconciles only their campaigns, and planning them at every
    /// account's limit spaced its starts for calls it cannot send, so its passes queued
    /// behind their accounts' limiters (target 7 of the bench, 2 processes).
    pub(crate) fn rate_limit(&self) -> Option<u32> {
        self.accounts
            .iter()
            .filter(|(id, _)| self.works(id))
            .filter_map(|(_, a)| a.market.rate_limit())
            .reduce(u32::saturating_add)
    }

    /// Sets the accounts this process works (`None`: every account).
    pub(crate) fn set_worked(&self, worked: crate::decide::division::Worked) {
        *self.worked.write().unwrap_or_else(|e| e.into_inner()) = worked;
    }

    /// The accounts this process works now (`None`: every account).
    pub(crate) fn worked(&self) -> crate::decide::division::Worked {
        self.worked
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether this process works `account` now.
    pub(crate) fn works(&self, account: &str) -> bool {
        let worked = self.worked.read().unwrap_or_else(|e| e.into_inner());
        worked.as_ref().is_none_or(|w| w.contains(account))
    }

    /// Counts a pass of this engine's account as under way until the guard is dropped.
    pub(crate) fn enter(&self) -> InFlight {
        let mut counts = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        *counts.entry(self.account.to_string()).or_default() += 1;
        InFlight {
            account: self.account.to_string(),
            counts: self.in_flight.clone(),
        }
    }

    /// Passes of `account` under way in this process.
    pub(crate) fn in_flight(&self, account: &str) -> usize {
        let counts = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(account).copied().unwrap_or(0)
    }

    /// The engine of `account`, sharing the store, the clock, the slots and the leases' holder
    /// with this one; `None` when the deployment has no such account.
    pub(crate) fn for_account(&self, account: &str) -> Option<Engine<M>> {
        if *self.account == *account {
            return Some(self.clone());
        }
        let (id, side) = self.accounts.get_key_value(account)?;
        let mut e = self.clone();
        e.account = id.as_str().into();
        e.market = side.market.clone();
        e.reach = side.reach.clone();
        e.pace = side.pace.clone();
        Some(e)
    }

    /// What this engine's account's link list shows without paging fields: the accounts
    /// file's `unpaged_link_list` of the account, else `--unpaged-link-list`.
    pub(crate) fn unpaged_list(&self) -> UnpagedList {
        self.settings
            .unpaged_list_of
            .get(&*self.account)
            .copied()
            .unwrap_or(self.settings.unpaged_list)
    }

    /// The injected clock.
    pub(crate) fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// The metrics registry the journal, the client and the engine share.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Who this process is in leases and intents.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// This process's holder id with what tells another process of this host whether it runs.
    pub(crate) fn identity(&self) -> &crate::store::HolderIdentity {
        &self.identity
    }

    pub(crate) fn settings(&self) -> &EngineSettings {
        &self.settings
    }

    /// Cancelled when the process stops: steps finish or abandon their call, then return.
    pub(crate) fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Campaigns working at once, shared by passes and the daemon's rounds.
    pub(crate) fn slots(&self) -> &slots::Slots {
        &self.slots
    }

    /// Whether the marketplace could be connected to, as the last passes found.
    pub(crate) fn reach(&self) -> &Arc<reach::MarketReach> {
        &self.reach
    }

    /// The in-process lock of one campaign.
    pub(crate) fn campaign_lock(&self, name: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(name.to_string()).or_default().clone()
    }
}

impl<M: Market> Clone for Engine<M> {
    fn clone(&self) -> Self {
        Engine {
            market: self.market.clone(),
            account: self.account.clone(),
            accounts: self.accounts.clone(),
            store: self.store.clone(),
            clock: self.clock.clone(),
            metrics: self.metrics.clone(),
            holder: self.holder.clone(),
            identity: self.identity.clone(),
            settings: self.settings.clone(),
            cancel: self.cancel.clone(),
            slots: self.slots.clone(),
            reach: self.reach.clone(),
            pace: self.pace.clone(),
            locks: self.locks.clone(),
            quiet: self.quiet.clone(),
            worked: self.worked.clone(),
            in_flight: self.in_flight.clone(),
        }
    }
}

/// A holder id unique to this process: host, pid and start time.
pub(crate) fn holder_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let t = chrono::Utc::now().timestamp_micros();
    format!("{}:{}:{t}", host.trim(), std::process::id())
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use secrecy::SecretString;

    use super::*;
    use crate::market::{ClientConfig, Credentials, MarketClient};

    /// A client of `limit` requests a second; the test sends nothing through it.
    fn client(limit: u32, metrics: &Arc<Metrics>) -> Arc<MarketClient> {
        let token = SecretString::from("token");
        let credentials = Credentials::new(token, SecretString::from("ticket")).unwrap();
        let mut c = ClientConfig::new("http://127.0.0.1:9", credentials).unwrap();
        c.rate_limit = NonZeroU32::new(limit).unwrap();
        Arc::new(MarketClient::new(c, Arc::clone(metrics)).unwrap())
    }

    /// A replica plans reconciliation at the limits of the accounts it works, not of every
    /// account: planned at all of them, two replicas each spaced their passes for calls they
    /// could not send (target 7 of the benchmark, issue 34: 71.8 calls/s of 100).
    #[tokio::test]
    async fn reconciliation_is_planned_at_the_limits_of_the_worked_accounts_only() {
        let metrics = Arc::new(Metrics::new());
        let store = Store::connect("sqlite::memory:").await.expect("connect");
        let markets = [("client-a", 7), ("client-b", 5), (DEFAULT_ACCOUNT, 10)]
            .map(|(id, limit)| (id.to_string(), client(limit, &metrics)));
        let engine = Engine::with_accounts(
            markets.to_vec(),
            store,
            linkrunner_domain::clock::system(),
            metrics,
            EngineSettings::default(),
        );
        assert_eq!(
            engine.rate_limit(),
            Some(22),
            "every account, before division"
        );
        let worked = |ids: &[&str]| Some(ids.iter().map(|id| id.to_string()).collect());
        engine.set_worked(worked(&["client-a", "client-b"]));
        assert_eq!(engine.rate_limit(), Some(12));
        engine.set_worked(worked(&[DEFAULT_ACCOUNT]));
        assert_eq!(engine.rate_limit(), Some(10));
        engine.set_worked(worked(&[]));
        assert_eq!(
            engine.rate_limit(),
            None,
            "no account worked: nothing to plan at"
        );
    }
}
