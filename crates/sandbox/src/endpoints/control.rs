//! Test-only control endpoints under `{prefix}/__sandbox/` (no auth: it is a test server):
//!
//! | endpoint | what it does |
//! |---|---|
//! | `GET ledger[?account=ID]` | the [`Ledger`] of account `ID` as JSON (the default account's without it; 404 for an unknown id) |
//! | `GET accounts` | every account's id, the default first |
//! | `GET`/`POST faults` | reads or replaces the [`Faults`] |
//! | `GET`/`POST behaviour` | reads or replaces the [`Behaviour`] |
//! | `POST autobuy` | every running autobuyer buys now: `{"max_per_autobuyer": N}` (optional) → `{"bought": [purchase, ...]}` |
//! | `POST seed_in_use` | `{"domain": "https://acme.example", "account": "ID"}` (`account` optional: the default) → an account already in use (`in_use.rs`): the ids to adopt |
//! | `POST link_status` | `{"link_id": N, "status": "removed"\|"rejected", "listed": false}` → the purchase as the ledger shows it |
//!
//! The same actions are methods of [`crate::SandboxHandle`] for in-process tests.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::render;
use crate::behaviour::Behaviour;
use crate::config::DEFAULT_ACCOUNT;
use crate::faults::Faults;
use crate::ledger::{Ledger, Purchase};
use crate::listing::LinkStatus;
use crate::server::{Refusal, Shared, json_body, reply};

type App = State<Arc<Shared>>;

/// Body of `POST autobuy`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct AutobuyAsk {
    /// Links per autobuyer in this round; absent: as many as its limits allow.
    max_per_autobuyer: Option<usize>,
}

/// Body of `POST seed_in_use`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedAsk {
    domain: String,
    /// The account whose project it is; absent: the default account.
    #[serde(default)]
    account: Option<String>,
}

/// Query of `GET ledger`.
#[derive(Debug, Default)]
struct LedgerAsk {
    account: Option<String>,
}

/// Body of `POST link_status`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkStatusAsk {
    link_id: i64,
    status: TakenBack,
    /// Whether the link stays in operation 6's list (with its status).
    #[serde(default)]
    listed: bool,
}

/// The statuses a link can be given: it never becomes active again.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TakenBack {
    Removed,
    Rejected,
}

impl From<TakenBack> for LinkStatus {
    fn from(t: TakenBack) -> LinkStatus {
        match t {
            TakenBack::Removed => LinkStatus::Removed,
            TakenBack::Rejected => LinkStatus::Rejected,
        }
    }
}

pub(crate) fn router(prefix: &str) -> Router<Arc<Shared>> {
    let p = |path: &str| format!("{prefix}/__sandbox/{path}");
    Router::new()
        .route(&p("ledger"), get(ledger))
        .route(&p("accounts"), get(accounts))
        .route(&p("faults"), get(faults).post(set_faults))
        .route(&p("behaviour"), get(behaviour).post(set_behaviour))
        .route(&p("autobuy"), post(autobuy))
        .route(&p("link_status"), post(link_status))
        .route(&p("seed_in_use"), post(seed_in_use))
}

impl Shared {
    /// Replaces the behaviour from the next request on; wakes the periodic autobuyer.
    pub(crate) fn set_behaviour(&self, behaviour: Behaviour) -> Result<(), String> {
        behaviour.validate()?;
        self.world().behaviour = behaviour;
        self.behaviour_changed.notify_one();
        Ok(())
    }

    /// Every running autobuyer buys now (see `autobuying.rs`); the purchases made.
    pub(crate) fn autobuy(&self, max_per_autobuyer: usize) -> Vec<Purchase> {
        let mut world = self.world();
        let ids = world.autobuy_now(max_per_autobuyer);
        world.purchases_by_id(&ids)
    }

    /// Seeds an account already in use (see `in_use.rs`): account `account`'s project.
    pub(crate) fn seed_in_use(
        &self,
        account: &str,
        domain: &str,
    ) -> Result<crate::in_use::InUse, String> {
        let mut world = self.world();
        let ix = world
            .account_ix(account)
            .ok_or_else(|| format!("no account `{account}`"))?;
        world.caller = ix;
        world.seed_in_use(domain).map_err(|r| r.0)
    }

    /// The ledger of account `account`; `None` when no account has that id.
    pub(crate) fn ledger_of(&self, account: &str) -> Option<Ledger> {
        let world = self.world();
        let ix = world.account_ix(account)?;
        Some(world.ledger_of(ix))
    }

    /// Every account's id, the default first.
    pub(crate) fn accounts(&self) -> Vec<String> {
        self.world().books.iter().map(|b| b.id.clone()).collect()
    }

    /// A link bought by hand (see `in_use.rs`).
    pub(crate) fn buy_by_hand(
        &self,
        project_id: i64,
        url_id: i64,
        text_id: i64,
    ) -> Option<crate::in_use::HandLink> {
        self.world().buy_by_hand(project_id, url_id, text_id)
    }

    pub(crate) fn set_link_status(
        &self,
        link_id: i64,
        status: LinkStatus,
        listed: bool,
    ) -> Result<Purchase, String> {
        let mut world = self.world();
        let link = world
            .set_link_status(link_id, status, listed)
            .map_err(|r| r.0)?;
        Ok(world.purchase_of(&link))
    }
}

fn json_of<T: serde::Serialize>(value: &T) -> Response {
    reply(
        StatusCode::OK,
        &serde_json::to_value(value).unwrap_or_default(),
    )
}

fn bad(message: &str) -> Response {
    reply(StatusCode::BAD_REQUEST, &render::error(message))
}

/// The body as `T`, or why not; an empty body is `empty` when one is given.
fn body_of<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &Bytes,
    empty: Option<T>,
) -> Result<T, String> {
    match empty {
        Some(default) if body.iter().all(u8::is_ascii_whitespace) => Ok(default),
        _ => json_body(headers, body).map_err(|e| match e {
            Refusal::Malformed(_, m)
            | Refusal::Rejected(m)
            | Refusal::NotFound(m)
            | Refusal::Forbidden(m) => m,
        }),
    }
}

async fn ledger(State(app): App, RawQuery(query): RawQuery) -> Response {
    let ask: LedgerAsk = match ledger_ask(query.as_deref().unwrap_or_default()) {
        Ok(a) => a,
        Err(e) => return bad(&e),
    };
    let account = ask.account.as_deref().unwrap_or(DEFAULT_ACCOUNT);
    match app.ledger_of(account) {
        Some(ledger) => json_of(&ledger),
        None => reply(
            StatusCode::NOT_FOUND,
            &render::error(&format!("no account `{account}`")),
        ),
    }
}

/// `GET ledger`'s query: `account=ID` or nothing.
fn ledger_ask(query: &str) -> Result<LedgerAsk, String> {
    let mut ask = LedgerAsk::default();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "account" if ask.account.is_none() => ask.account = Some(v.into_owned()),
            _ => return Err(format!("unknown or repeated query parameter `{k}`")),
        }
    }
    Ok(ask)
}

async fn accounts(State(app): App) -> Response {
    json_of(&app.accounts())
}

async fn faults(State(app): App) -> Response {
    let faults = app.faults().faults().clone();
    json_of(&faults)
}

async fn set_faults(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    let faults: Faults = match body_of(&headers, &body, None) {
        Ok(f) => f,
        Err(e) => return bad(&e),
    };
    if let Err(e) = faults.validate() {
        return bad(&e);
    }
    app.faults().set(faults.clone());
    json_of(&faults)
}

async fn behaviour(State(app): App) -> Response {
    let behaviour = app.world().behaviour.clone();
    json_of(&behaviour)
}

async fn set_behaviour(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    let behaviour: Behaviour = match body_of(&headers, &body, None) {
        Ok(b) => b,
        Err(e) => return bad(&e),
    };
    match app.set_behaviour(behaviour.clone()) {
        Ok(()) => json_of(&behaviour),
        Err(e) => bad(&e),
    }
}

async fn autobuy(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    let ask: AutobuyAsk = match body_of(&headers, &body, Some(AutobuyAsk::default())) {
        Ok(a) => a,
        Err(e) => return bad(&e),
    };
    let bought = app.autobuy(ask.max_per_autobuyer.unwrap_or(usize::MAX));
    reply(StatusCode::OK, &json!({ "bought": bought }))
}

async fn link_status(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    let ask: LinkStatusAsk = match body_of(&headers, &body, None) {
        Ok(a) => a,
        Err(e) => return bad(&e),
    };
    match app.set_link_status(ask.link_id, ask.status.into(), ask.listed) {
        Ok(purchase) => json_of(&purchase),
        Err(e) => reply(StatusCode::NOT_FOUND, &render::error(&e)),
    }
}

async fn seed_in_use(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    let ask: SeedAsk = match body_of(&headers, &body, None) {
        Ok(a) => a,
        Err(e) => return bad(&e),
    };
    let account = ask.account.as_deref().unwrap_or(DEFAULT_ACCOUNT);
    match app.seed_in_use(account, &ask.domain) {
        Ok(seeded) => json_of(&seeded),
        Err(e) => bad(&e),
    }
}
