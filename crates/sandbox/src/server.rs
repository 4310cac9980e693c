//! The request pipeline every operation goes through, in this order: whose the request is
//! (its token's account, the default account's for a token that is no one's; looked up only
//! when extra accounts are served), latency, that account's rate limit (429), authentication (401 token missing, wrong or expired, 403
//! ticket; `auth.rs`), injected 5xx, then
//! the operation itself under the state lock, then — for executed changes — maybe an answer
//! cut short, (reads by default) an answer whose JSON is truncated, or a change reported as
//! an error with the ids of what was done. The token and ticket are compared here and never
//! logged or echoed.

use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

use super::auth::Auth;
use super::config::SandboxConfig;
use super::faults::FaultState;
use super::ops::Op;
use super::shapes::Shape;
use super::state::{AccountIx, Rejection, World};
use crate::endpoints::cut::{cut_short, truncated};
use crate::endpoints::render;

/// Why an operation did not succeed, by how it is answered.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Unreadable input: 400 (or 415 for a missing JSON content type).
    Malformed(StatusCode, String),
    /// Readable but refused: `isError: true` or 422, per the error style.
    Rejected(String),
    /// An unknown search job.
    NotFound(String),
    /// A thing of another account (of this sandbox, or a project of
    /// `Behaviour::foreign_projects`): 403, the credentials themselves being fine.
    Forbidden(String),
}

impl From<Rejection> for Refusal {
    fn from(r: Rejection) -> Self {
        Refusal::Rejected(r.0)
    }
}

impl Refusal {
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Refusal::Malformed(StatusCode::BAD_REQUEST, message.into())
    }

    fn outcome(&self) -> &'static str {
        match self {
            Refusal::Malformed(..) => "malformed",
            Refusal::Rejected(_) => "rejected",
            Refusal::NotFound(_) => "not_found",
            Refusal::Forbidden(_) => "forbidden",
        }
    }
}

pub(crate) type Answer = Result<(StatusCode, Value), Refusal>;

pub(crate) struct Shared {
    world: Mutex<World>,
    /// Woken when the behaviour changes, so the periodic autobuyer reads its new period.
    pub(crate) behaviour_changed: tokio::sync::Notify,
    faults: Mutex<FaultState>,
    shape: Shape,
    /// Tokens, tickets and the login (`auth.rs`); its own lock, never held with another.
    auth: Mutex<Auth>,
    /// Extra accounts are served: a request's account is looked up before its rate limit.
    multi: bool,
}

/// Never shows the token or the ticket.
impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared { .. }")
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in one request must not take the whole sandbox down with a poisoned lock.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub(crate) fn new(cfg: &SandboxConfig) -> Arc<Self> {
        Arc::new(Shared {
            world: Mutex::new(World::new(cfg)),
            behaviour_changed: tokio::sync::Notify::new(),
            faults: Mutex::new(
                FaultState::new(cfg.faults.clone(), cfg.seed)
                    .with_account_limits(cfg.accounts.iter().map(|a| a.rate_limit).collect()),
            ),
            shape: cfg.shape,
            auth: Mutex::new(Auth::new(cfg)),
            multi: !cfg.accounts.is_empty(),
        })
    }

    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }

    pub(crate) fn faults(&self) -> MutexGuard<'_, FaultState> {
        lock(&self.faults)
    }

    pub(crate) fn auth(&self) -> MutexGuard<'_, Auth> {
        lock(&self.auth)
    }

    /// Runs one operation through the whole pipeline.
    pub(crate) async fn handle<F>(&self, op: Op, headers: &HeaderMap, execute: F) -> Response
    where
        F: FnOnce(&mut World, &Shape) -> Answer,
    {
        let account = match self.multi {
            true => self.auth().account_of(headers),
            false => 0,
        };
        let abandoned = Abandoned {
            shared: self,
            op,
            account,
        };
        let gate = self.gate(op, account, headers).await;
        std::mem::forget(abandoned);
        if let Err(early) = gate {
            return early;
        }
        let (answer, as_error) = {
            let mut world = self.world();
            world.caller = account;
            let answer = execute(&mut world, &self.shape);
            // Lock order: world, then faults (never the other way round).
            let as_error = answer.is_ok() && self.faults().draw_executed_error(op);
            let outcome = match &answer {
                Ok(_) if as_error => "executed_error",
                Ok(_) => "ok",
                Err(refusal) => refusal.outcome(),
            };
            world.count(account, op, outcome);
            tracing::debug!(operation = op.name(), outcome, "sandbox call");
            (answer, as_error)
        };
        match answer {
            Ok((_, body)) if as_error => {
                let (status, body) = render::executed_error(&self.shape, body);
                reply(status, &body)
            }
            Ok((status, body)) if self.faults().draw_drop(op) => cut_short(status, &body),
            Ok((status, body)) if self.faults().draw_truncate(op) => truncated(status, &body),
            Ok((status, body)) => reply(status, &body),
            Err(refusal) => self.refuse(refusal),
        }
    }

    async fn gate(&self, op: Op, account: AccountIx, headers: &HeaderMap) -> Result<(), Response> {
        let latency = self.faults().draw_latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        if !self.faults().admit(account, Instant::now()) {
            let mut world = self.world();
            world.book(account).rate_limited += 1;
            world.count(account, op, "rate_limited");
            let mut r = reply(
                StatusCode::TOO_MANY_REQUESTS,
                &render::error("rate limit exceeded"),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Err(r);
        }
        if let Err((status, outcome, message)) = self.authorize(headers) {
            self.world().count(account, op, outcome);
            let mut r = reply(status, &render::error(message));
            if status == StatusCode::UNAUTHORIZED {
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            return Err(r);
        }
        if self.faults().draw_error(op) {
            self.world().count(account, op, "fault");
            return Err(reply(
                StatusCode::SERVICE_UNAVAILABLE,
                &render::error("injected fault"),
            ));
        }
        Ok(())
    }

    fn authorize(&self, headers: &HeaderMap) -> Result<AccountIx, super::auth::AuthRefusal> {
        self.auth().authorize(headers)
    }

    fn refuse(&self, refusal: Refusal) -> Response {
        match refusal {
            Refusal::Malformed(status, message) => reply(status, &render::error(&message)),
            Refusal::NotFound(message) => reply(StatusCode::NOT_FOUND, &render::error(&message)),
            Refusal::Forbidden(message) => reply(StatusCode::FORBIDDEN, &render::error(&message)),
            Refusal::Rejected(message) => {
                let (status, body) = render::rejection(&self.shape, &message);
                reply(status, &body)
            }
        }
    }
}

/// Counts a request as `abandoned` when its handler is dropped while it waits in the gate
/// (the client gave up, e.g. timed out during the injected latency), so the ledger still
/// shows every request that arrived. Past the gate nothing awaits, so nothing else is lost.
struct Abandoned<'a> {
    shared: &'a Shared,
    op: Op,
    account: AccountIx,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        self.shared
            .world()
            .count(self.account, self.op, "abandoned");
    }
}

/// The body as `T`: a JSON content type is required (415), and the JSON must fit `T` (400).
pub(crate) fn json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<T, Refusal> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    if !is_json {
        return Err(Refusal::Malformed(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json".into(),
        ));
    }
    serde_json::from_slice(body).map_err(|e| Refusal::bad(format!("malformed JSON body: {e}")))
}

pub(crate) fn reply(status: StatusCode, body: &Value) -> Response {
    let text = serde_json::to_vec(body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}
