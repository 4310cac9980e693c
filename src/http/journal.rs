//! The journal's summaries over HTTP, read-only: `GET /api/v1/report?month=YYYY-MM` (what
//! `linkrunner report --month … --format json` prints).

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::{AppState, unavailable};
use crate::engine::month::{self, Month};

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
