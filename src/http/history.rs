//! `GET /api/v1/campaigns/{name}/history[?since=YYYY-MM-DD]`: the campaign's ledger with the
//! cause of each movement, as `linkrunner history NAME --format json` prints it.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::{AppState, plausible_name, unavailable};
use crate::views::story;

pub(super) async fn campaign_history(
    State(s): State<AppState>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let since = match query.as_deref().map(since_of).transpose() {
        Ok(since) => since.flatten(),
        Err(msg) => {
            let body = Json(serde_json::json!({ "error": msg }));
            return (StatusCode::BAD_REQUEST, body).into_response();
        }
    };
    let not_found = || {
        let body = Json(serde_json::json!({ "error": "no such campaign" }));
        (StatusCode::NOT_FOUND, body).into_response()
    };
    if !plausible_name(&name) {
        return not_found();
    }
    match s.store.campaigns().campaign_names().await {
        Ok(names) if !names.contains(&name) => not_found(),
        Ok(_) => match story::history(&s.store, Some(&name), since).await {
            Ok(lines) => Json(lines).into_response(),
            Err(e) => unavailable(&s, e),
        },
        Err(e) => unavailable(&s, e),
    }
}

/// `since=…` from the query string; other parameters are ignored.
fn since_of(query: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>, &'static str> {
    let Some(value) = query.split('&').find_map(|kv| kv.strip_prefix("since=")) else {
        return Ok(None);
    };
    let value = value.replace("%3A", ":").replace("%3a", ":");
    story::parse_since(&value)
        .map(Some)
        .map_err(|_| "since must be YYYY-MM-DD or an RFC 3339 instant")
}
