//! The login's HTTP side: `POST {prefix}/login`, `GET {prefix}/auth` and the control
//! endpoints that issue tokens and read the counts. The rules are in [`crate::auth`].

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};

use super::render;
use crate::auth::AuthRefusal;
use crate::server::{Shared, json_body, reply};

/// Body of `POST /login`.
#[derive(Debug, serde::Deserialize)]
struct LoginAsk {
    login: String,
    #[serde(rename = "apiToken")]
    api_token: String,
}

/// `POST {prefix}/login`, `GET {prefix}/auth` and `POST {prefix}/__sandbox/token`.
pub(crate) fn router(prefix: &str) -> Router<Arc<Shared>> {
    Router::new()
        .route(&format!("{prefix}/login"), post(login))
        .route(&format!("{prefix}/auth"), get(token))
        .route(&format!("{prefix}/__sandbox/token"), post(issue))
        .route(&format!("{prefix}/__sandbox/auth"), get(stats))
}

fn refused((status, _, message): AuthRefusal) -> Response {
    reply(status, &render::error(message))
}

async fn login(State(app): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let ask: LoginAsk = match json_body(&headers, &body) {
        Ok(a) => a,
        Err(_) => {
            return reply(
                StatusCode::BAD_REQUEST,
                &render::error("expected {login, apiToken}"),
            );
        }
    };
    let ticket = match app.auth().login(&ask.login, &ask.api_token) {
        Ok(t) => t,
        Err(r) => return refused(r),
    };
    let mut response = reply(StatusCode::OK, &serde_json::json!({ "ok": true }));
    if let Ok(cookie) = HeaderValue::from_str(&format!("AUTH_TICKET={ticket}; Path=/; HttpOnly")) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

async fn token(State(app): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    match app.auth().token_for(&headers) {
        Ok(t) => reply(StatusCode::OK, &serde_json::json!({ "token": t })),
        Err(r) => refused(r),
    }
}

async fn issue(State(app): State<Arc<Shared>>) -> Response {
    let token = app.auth().issue_token();
    reply(StatusCode::OK, &serde_json::json!({ "token": token }))
}

async fn stats(State(app): State<Arc<Shared>>) -> Response {
    let stats = app.auth().stats.clone();
    reply(
        StatusCode::OK,
        &serde_json::to_value(stats).unwrap_or_default(),
    )
}
