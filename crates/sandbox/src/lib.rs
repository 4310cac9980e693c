//! `linkrunner-sandbox`: an in-repo marketplace that behaves like a strict real server of
//! `marketplace-api.md`, for tests, demos, dry runs and benchmarks.
//!
//! | file | concept |
//! |---|---|
//! | [`config`] | [`SandboxConfig`], [`SandboxAccount`] (accounts beside the default one), [`SandboxAuth`], [`SandboxLogin`] |
//! | `server.rs` | the request pipeline: latency, rate limit, auth, injected faults, answers cut short |
//! | [`auth`] | tokens that expire, the login (`POST /login`, `GET /auth`), tokens issued for tests |
//! | `endpoints/` | the ten operations at the spec's paths, the `__sandbox/` control endpoints, the login; request bodies in, answers out in the configured [`Shape`] |
//! | `state.rs`, `entities.rs`, `validate.rs` | the marketplace's memory, its things (filters, autobuyers, placements, donors, offers), the input rules it enforces |
//! | `search.rs`, `buy.rs`, `listing.rs`, `autobuy.rs`, `autobuying.rs` | the marketplace's rules, operation by operation |
//! | [`faults`], [`behaviour`], [`shapes`] | fault settings, run-time behaviours (paged and lagging lists, autobuyers that buy), answer shapes |
//! | `in_use.rs` | an account already in use (a project, hand-bought links, a filter, a running autobuyer) to adopt |
//! | [`ledger`], `commitment.rs`, [`ops`] | the ledger snapshot and the commitment rule, operation names |
//! | `commitment_tests.rs`, `autobuying_tests.rs` | (tests) the commitment rule; autobuyers that buy |
//!
//! Start one on port 0 with [`spawn`]; read what happened with [`SandboxHandle::ledger`] (the
//! default account's) and [`SandboxHandle::ledger_of`] (any account's).

pub mod auth;
mod autobuy;
mod autobuying;
pub mod behaviour;
mod buy;
mod commitment;
pub mod config;
mod endpoints;
mod entities;
pub mod faults;
mod in_use;
pub mod ledger;
mod listing;
pub mod ops;
mod search;
mod server;
pub mod shapes;
mod state;
mod validate;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use auth::AuthStats;
pub use behaviour::{Behaviour, ListPaging, TeamBuy};
pub use commitment::Commitment;
pub use config::{DEFAULT_ACCOUNT, SandboxAccount, SandboxAuth, SandboxConfig, SandboxLogin};
pub use entities::AutobuyerUrl;
pub use faults::Faults;
pub use in_use::{HandLink, InUse, InUseUrl};
pub use ledger::{AutobuyerRecord, AutobuyerState, Ledger, Purchase};
pub use listing::LinkStatus;
pub use ops::Op;
pub use shapes::Shape;

use server::Shared;

// Money and time are the nouns the sandbox shares with linkrunner; nothing else of it.
use linkrunner_domain::{clock, money};

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "sandbox prefix `{0}` must be empty or start with `/` and not end with `/` (e.g. /api)"
    )]
    Prefix(String),
    #[error("sandbox faults: {0}")]
    Faults(String),
    #[error("sandbox behaviour: {0}")]
    Behaviour(String),
    #[error("sandbox link: {0}")]
    Link(String),
    #[error("sandbox accounts: {0}")]
    Accounts(String),
    #[error("sandbox cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
}

/// A running sandbox. Dropping it stops the server too.
#[derive(Debug)]
pub struct SandboxHandle {
    addr: SocketAddr,
    prefix: String,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
    autobuyer: Option<JoinHandle<()>>,
}

/// Serves the sandbox on `listener` in the background.
pub async fn spawn(
    config: SandboxConfig,
    listener: TcpListener,
) -> Result<SandboxHandle, SandboxError> {
    let prefix = config.prefix.clone();
    if !prefix.is_empty() && (!prefix.starts_with('/') || prefix.ends_with('/')) {
        return Err(SandboxError::Prefix(prefix));
    }
    config.faults.validate().map_err(SandboxError::Faults)?;
    config.validate_accounts().map_err(SandboxError::Accounts)?;
    config
        .behaviour
        .validate()
        .map_err(SandboxError::Behaviour)?;
    let addr = listener
        .local_addr()
        .map_err(|source| SandboxError::Listen {
            addr: "the given listener".into(),
            source,
        })?;
    let shared = Shared::new(&config);
    let app = endpoints::routes::router(shared.clone(), &prefix, config.body_limit);
    let cancel = CancellationToken::new();
    let autobuyer = tokio::spawn(autobuy_periodically(shared.clone(), cancel.clone()));
    let stop = cancel.clone().cancelled_owned();
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
        {
            tracing::error!(error = %e, "sandbox server stopped");
        }
    });
    Ok(SandboxHandle {
        addr,
        prefix,
        shared,
        cancel,
        task: Some(task),
        autobuyer: Some(autobuyer),
    })
}

/// With `Behaviour::autobuy_every_ms` set, every running autobuyer buys up to one link per
/// period (tokio time, so paused-time tests drive it); a behaviour change restarts the wait.
async fn autobuy_periodically(shared: Arc<Shared>, cancel: CancellationToken) {
    loop {
        let every = shared.world().behaviour.autobuy_every();
        let changed = shared.behaviour_changed.notified();
        let tick = async {
            match every {
                Some(period) => tokio::time::sleep(period).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = cancel.cancelled() => return,
            () = changed => continue,
            () = tick => {
                let bought = shared.autobuy(1);
                tracing::debug!(links = bought.len(), "sandbox autobuyers bought");
            }
        }
    }
}

/// Binds `addr` (port 0 for any free port) and serves the sandbox there.
pub async fn start(config: SandboxConfig, addr: SocketAddr) -> Result<SandboxHandle, SandboxError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| SandboxError::Listen {
            addr: addr.to_string(),
            source,
        })?;
    spawn(config, listener).await
}

impl SandboxHandle {
    /// `http://127.0.0.1:PORT` plus the prefix: what a client's base URL should be.
    pub fn base_url(&self) -> String {
        format!("http://{}{}", self.addr, self.prefix)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of everything the default account saw and did so far (with one account:
    /// everything the sandbox saw and did).
    pub fn ledger(&self) -> Ledger {
        self.shared.world().ledger_of(0)
    }

    /// The ledger of account `id` (`"default"` or an extra account's id); `None` when no
    /// account has that id.
    pub fn ledger_of(&self, id: &str) -> Option<Ledger> {
        self.shared.ledger_of(id)
    }

    /// Every account's id, the default (`"default"`) first.
    pub fn accounts(&self) -> Vec<String> {
        self.shared.accounts()
    }

    /// The requests the default account's ledger counts so far, every operation and outcome:
    /// what `ledger().requests` sums to, without copying the world (the benchmark polls it
    /// while thousands of campaigns' records sit in the sandbox).
    pub fn calls(&self) -> u64 {
        self.shared.world().books[0].requests.values().sum()
    }

    /// [`SandboxHandle::calls`] of account `id`; `None` when no account has that id.
    pub fn calls_of(&self, id: &str) -> Option<u64> {
        let world = self.shared.world();
        let ix = world.account_ix(id)?;
        Some(world.books[ix].requests.values().sum())
    }

    pub fn faults(&self) -> Faults {
        self.shared.faults().faults().clone()
    }

    /// A new token, expiring after `token_ttl` (what an external refresher would fetch).
    pub fn issue_token(&self) -> String {
        self.shared.auth().issue_token()
    }

    /// Forgets every token issued so far, as a marketplace that logs every session out does;
    /// configured tokens stay valid.
    pub fn revoke_issued_tokens(&self) {
        self.shared.auth().revoke_issued()
    }

    /// Logins, tokens issued, requests refused for an expired token.
    pub fn auth_stats(&self) -> AuthStats {
        self.shared.auth().stats.clone()
    }

    /// Every token and ticket configured or issued so far (for canary checks).
    pub fn issued_secrets(&self) -> Vec<String> {
        self.shared.auth().issued()
    }

    /// Changes the faults from the next request on; the fault PRNG keeps its position.
    pub fn set_faults(&self, faults: Faults) -> Result<(), SandboxError> {
        faults.validate().map_err(SandboxError::Faults)?;
        self.shared.faults().set(faults);
        Ok(())
    }

    /// The site (domain) of donor page `page_id`, as search results show it.
    pub fn donor_site(&self, page_id: i64) -> Option<String> {
        let world = self.shared.world();
        let d = world.inventory.iter().find(|d| d.page_id == page_id)?;
        Some(d.domain.clone())
    }

    pub fn behaviour(&self) -> Behaviour {
        self.shared.world().behaviour.clone()
    }

    /// Changes the behaviours from the next request on (and the autobuy period at once).
    pub fn set_behaviour(&self, behaviour: Behaviour) -> Result<(), SandboxError> {
        self.shared
            .set_behaviour(behaviour)
            .map_err(SandboxError::Behaviour)
    }

    /// Every running autobuyer buys now, up to `max_per_autobuyer` links each within its
    /// limits; the purchases made, as the ledger shows them.
    pub fn autobuy_now(&self, max_per_autobuyer: usize) -> Vec<Purchase> {
        self.shared.autobuy(max_per_autobuyer)
    }

    /// The marketplace takes a link back: `status` removed or rejected; `listed` keeps it in
    /// operation 6's list with that status. Unknown links and `Active` are refused.
    pub fn set_link_status(
        &self,
        link_id: i64,
        status: LinkStatus,
        listed: bool,
    ) -> Result<Purchase, SandboxError> {
        self.shared
            .set_link_status(link_id, status, listed)
            .map_err(SandboxError::Link)
    }

    /// Seeds an account already in use for `domain` (see `in_use.rs`): a project with URLs
    /// and texts, links bought by hand, a saved filter and a running autobuyer.
    pub fn seed_in_use(&self, domain: &str) -> Result<InUse, SandboxError> {
        self.seed_in_use_of(config::DEFAULT_ACCOUNT, domain)
    }

    /// [`SandboxHandle::seed_in_use`] for account `account`'s project.
    pub fn seed_in_use_of(&self, account: &str, domain: &str) -> Result<InUse, SandboxError> {
        self.shared
            .seed_in_use(account, domain)
            .map_err(SandboxError::Link)
    }

    /// The team buys a link by hand for `url_id` (with `text_id`) in project `project_id`,
    /// outside the API's purchase call: on the cheapest page it does not hold for that URL now
    /// (see `in_use.rs`). `None` when every page is held for it.
    pub fn buy_by_hand(&self, project_id: i64, url_id: i64, text_id: i64) -> Option<HandLink> {
        self.shared.buy_by_hand(project_id, url_id, text_id)
    }

    /// Stops accepting, lets calls in flight finish (up to 5 s), then returns.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(autobuyer) = self.autobuyer.take() {
            autobuyer.abort();
        }
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }
}

impl Drop for SandboxHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
