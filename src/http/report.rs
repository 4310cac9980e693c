//! Two reads of the journal over HTTP: `GET /api/v1/report?month=YYYY-MM` (what
//! `linkrunner report --month … --format json` prints) and `GET /api/v1/state` (what `plan`
//! reads, for `plan --state-from`).

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::{AppState, plausible_name, unavailable};
use crate::views::month::{self, Month};
use crate::views::state;

pub(super) async fn month_report(State(s): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let month = query
        .as_deref()
        .and_then(|q| param(q, "month"))
        .ok_or_else(|| "month=YYYY-MM is required".to_string())
        .and_then(Month::parse);
    let month = match month {
        Ok(m) => m,
        Err(msg) => return bad_request(&msg),
    };
    match month::month_report(&s.store, month).await {
        Ok(r) => Json(r).into_response(),
        Err(e) => unavailable(&s, e),
    }
}

/// The value of `name=…` in a query string (other parameters are ignored).
pub(super) fn param<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
}

pub(super) fn bad_request(msg: &str) -> Response {
    let body = Json(serde_json::json!({ "error": msg }));
    (StatusCode::BAD_REQUEST, body).into_response()
}

/// `GET /api/v1/state[?campaign=NAME]`: what `plan` reads from the journal, for
/// `plan --state-from`; 404 for an unknown campaign.
pub(super) async fn recorded_state(
    State(s): State<AppState>,
    RawQuery(query): RawQuery,
) -> Response {
    let only = query.as_deref().and_then(|q| param(q, "campaign"));
    if let Some(name) = only {
        match s.store.campaigns().campaign_names().await {
            Ok(names) if plausible_name(name) && names.iter().any(|n| n == name) => {}
            Ok(_) => {
                let body = Json(serde_json::json!({ "error": "no such campaign" }));
                return (StatusCode::NOT_FOUND, body).into_response();
            }
            Err(e) => return unavailable(&s, e),
        }
    }
    match state::read_state(&s.store, only, s.clock.now()).await {
        Ok(st) => Json(st).into_response(),
        Err(e) => unavailable(&s, e),
    }
}
