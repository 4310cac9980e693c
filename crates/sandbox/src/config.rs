//! What a sandbox is started with: credentials, path prefix, seed, inventory, readiness of
//! searches, faults and answer shapes, and the extra accounts ([`SandboxAccount`]) it serves
//! beside the one it was built with (`"default"`). `Debug` never shows a token or a ticket.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::behaviour::Behaviour;
use super::faults::Faults;
use super::shapes::Shape;
use crate::clock::{self, SharedClock};
use crate::money::Money;

/// Which `Authorization` forms the sandbox accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxAuth {
    /// Only `Bearer <token>`.
    #[default]
    Bearer,
    /// Only the bare `<token>`.
    Raw,
    /// Both forms.
    Either,
}

/// The account of the built-in login (`POST /login`). `Debug` never shows the API key.
#[derive(Clone, PartialEq, Eq)]
pub struct SandboxLogin {
    pub(crate) login: String,
    pub(crate) api_key: String,
}

impl SandboxLogin {
    pub fn new(login: impl Into<String>, api_key: impl Into<String>) -> SandboxLogin {
        SandboxLogin {
            login: login.into(),
            api_key: api_key.into(),
        }
    }
}

impl fmt::Debug for SandboxLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxLogin")
            .field("login", &self.login)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

/// The id of the account a [`SandboxConfig`] is built with.
pub const DEFAULT_ACCOUNT: &str = "default";

/// One more account of the same marketplace: its own fixed token and ticket (no login, no
/// expiry), balance and rate limit; the donor inventory is shared with every other account.
/// `Debug` never shows the token or the ticket.
#[derive(Clone, PartialEq, Eq)]
pub struct SandboxAccount {
    pub id: String,
    pub(crate) token: String,
    pub(crate) ticket: String,
    pub balance: Money,
    /// Requests per second of this account (its own one-second window); `None`: no limit.
    pub rate_limit: Option<u32>,
}

impl SandboxAccount {
    /// An account with a generous balance (as [`SandboxConfig::new`]'s) and no rate limit.
    pub fn new(
        id: impl Into<String>,
        token: impl Into<String>,
        ticket: impl Into<String>,
    ) -> SandboxAccount {
        SandboxAccount {
            id: id.into(),
            token: token.into(),
            ticket: ticket.into(),
            balance: Money::from_rubles(1_000_000),
            rate_limit: None,
        }
    }
}

impl fmt::Debug for SandboxAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxAccount")
            .field("id", &self.id)
            .field("token", &"<redacted>")
            .field("ticket", &"<redacted>")
            .field("balance", &self.balance)
            .field("rate_limit", &self.rate_limit)
            .finish()
    }
}

#[derive(Clone)]
pub struct SandboxConfig {
    pub(crate) token: String,
    pub(crate) ticket: String,
    pub auth_scheme: SandboxAuth,
    /// Tokens expire this long after they were issued (the configured one: after the
    /// sandbox started); `None`: never.
    pub token_ttl: Option<Duration>,
    /// Enables `POST /login` and `GET /auth` for this account.
    pub login: Option<SandboxLogin>,
    /// Path prefix before `/rest/...`: `""` or e.g. `"/api"`.
    pub prefix: String,
    /// Seeds the donor inventory and the fault sequence.
    pub seed: u64,
    /// Size of the generated donor inventory.
    pub inventory_size: usize,
    /// Donor pages per donor site (domain): 1 gives every page its own site; more puts
    /// consecutive pages of the inventory on one site, so "one link per site and URL" matters.
    pub pages_per_site: usize,
    /// At most this many donors in one search result.
    pub donors_per_search: usize,
    /// Monthly rent prices of the inventory lie in this range (inclusive).
    pub price_min: Money,
    pub price_max: Money,
    /// A search answers "pending" to this many polls before it is ready.
    pub search_ready_after_polls: u32,
    /// ... and is also pending until this long after it started.
    pub search_ready_after: Duration,
    /// Give every donor of one search its own `forceSeoWait` and `mosSites`.
    pub vary_technical_values: bool,
    /// Autobuyers are created running instead of stopped.
    pub autobuyers_start_running: bool,
    /// The default account's balance.
    pub initial_balance: Money,
    /// `faults.rate_limit` is the default account's rate limit.
    pub faults: Faults,
    /// Paged and lagging link lists, autobuyers that buy (changeable at run time).
    pub behaviour: Behaviour,
    pub shape: Shape,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// Cap on each kind of stored entity (projects, URLs, texts, searches, ...).
    pub(crate) max_entities: usize,
    /// Stamps purchases (`at` in the ledger).
    pub clock: SharedClock,
    /// Accounts served beside the default one ([`SandboxConfig::with_account`]).
    pub(crate) accounts: Vec<SandboxAccount>,
}

impl SandboxConfig {
    /// A strict, fault-free sandbox with a generous balance, answering in the default shapes.
    pub fn new(token: impl Into<String>, ticket: impl Into<String>) -> Self {
        SandboxConfig {
            token: token.into(),
            ticket: ticket.into(),
            auth_scheme: SandboxAuth::Bearer,
            token_ttl: None,
            login: None,
            prefix: String::new(),
            seed: 1,
            inventory_size: 500,
            pages_per_site: 1,
            donors_per_search: 10,
            price_min: Money::from_rubles(30),
            price_max: Money::from_rubles(300),
            search_ready_after_polls: 2,
            search_ready_after: Duration::ZERO,
            vary_technical_values: false,
            autobuyers_start_running: false,
            initial_balance: Money::from_rubles(1_000_000),
            faults: Faults::default(),
            behaviour: Behaviour::default(),
            shape: Shape::default(),
            body_limit: 1024 * 1024,
            max_entities: 100_000,
            clock: clock::system(),
            accounts: Vec::new(),
        }
    }

    /// Serves `account` too. Ids must be unique and not `"default"`, tokens and tickets
    /// unique across every account ([`crate::spawn`] refuses the config otherwise).
    #[must_use]
    pub fn with_account(mut self, account: SandboxAccount) -> Self {
        self.accounts.push(account);
        self
    }

    /// Every account's id, the default first.
    pub fn account_ids(&self) -> Vec<String> {
        std::iter::once(DEFAULT_ACCOUNT.to_string())
            .chain(self.accounts.iter().map(|a| a.id.clone()))
            .collect()
    }

    /// Why the accounts cannot be served together, if they cannot.
    pub(crate) fn validate_accounts(&self) -> Result<(), String> {
        let mut ids = std::collections::HashSet::from([DEFAULT_ACCOUNT]);
        let mut secrets = std::collections::HashSet::from([&self.token, &self.ticket]);
        for a in &self.accounts {
            if a.id.trim().is_empty() || !ids.insert(&a.id) {
                return Err(format!("account id `{}` is blank or used twice", a.id));
            }
            if a.token.is_empty() || a.ticket.is_empty() {
                return Err(format!("account `{}` has an empty token or ticket", a.id));
            }
            // Said without the secret: which account, not which value.
            if !secrets.insert(&a.token) || !secrets.insert(&a.ticket) {
                return Err(format!(
                    "account `{}` shares its token or ticket with another account",
                    a.id
                ));
            }
            if a.balance.is_negative() || a.rate_limit == Some(0) {
                return Err(format!(
                    "account `{}`: the balance must not be negative and the rate limit not 0",
                    a.id
                ));
            }
        }
        Ok(())
    }
}

impl fmt::Debug for SandboxConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxConfig")
            .field("token", &"<redacted>")
            .field("ticket", &"<redacted>")
            .field("auth_scheme", &self.auth_scheme)
            .field("token_ttl", &self.token_ttl)
            .field("login", &self.login)
            .field("prefix", &self.prefix)
            .field("seed", &self.seed)
            .field("donors_per_search", &self.donors_per_search)
            .field("search_ready_after_polls", &self.search_ready_after_polls)
            .field("faults", &self.faults)
            .field("behaviour", &self.behaviour)
            .field("shape", &self.shape)
            .field("accounts", &self.accounts)
            .finish_non_exhaustive()
    }
}
