//! Authentication: the token in `Authorization`, the ticket in the `AUTH_TICKET` cookie.

use linkrunner_sandbox::{Op, SandboxAuth};
use reqwest::StatusCode;
use serde_json::json;

use super::support::{PROJECT, TICKET, TOKEN, config, start};

async fn status_with(
    auth: SandboxAuth,
    authorization: Option<&str>,
    cookie: Option<&str>,
) -> StatusCode {
    let mut cfg = config();
    cfg.auth_scheme = auth;
    let sbx = start(cfg).await;
    let mut req = sbx
        .http
        .post(sbx.url(PROJECT))
        .json(&json!({"domain": "https://acme.example"}));
    if let Some(a) = authorization {
        req = req.header("Authorization", a);
    }
    if let Some(c) = cookie {
        req = req.header("Cookie", c);
    }
    req.send().await.unwrap().status()
}

fn ticket() -> String {
    format!("AUTH_TICKET={TICKET}")
}

#[tokio::test]
async fn a_request_without_a_token_is_refused_with_401() {
    let status = status_with(SandboxAuth::Bearer, None, Some(&ticket())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_wrong_token_is_refused_with_401() {
    let status = status_with(SandboxAuth::Bearer, Some("Bearer nope"), Some(&ticket())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_bare_token_is_refused_when_bearer_is_required() {
    let status = status_with(SandboxAuth::Bearer, Some(TOKEN), Some(&ticket())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_bearer_token_is_refused_when_the_bare_form_is_required() {
    let status = status_with(
        SandboxAuth::Raw,
        Some(&format!("Bearer {TOKEN}")),
        Some(&ticket()),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_bare_token_is_accepted_when_the_scheme_is_raw() {
    let status = status_with(SandboxAuth::Raw, Some(TOKEN), Some(&ticket())).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_either_scheme_accepts_both_forms() {
    let bare = status_with(SandboxAuth::Either, Some(TOKEN), Some(&ticket())).await;
    let bearer = status_with(
        SandboxAuth::Either,
        Some(&format!("Bearer {TOKEN}")),
        Some(&ticket()),
    )
    .await;
    assert_eq!((bare, bearer), (StatusCode::OK, StatusCode::OK));
}

#[tokio::test]
async fn a_missing_ticket_is_refused_with_403() {
    let status = status_with(SandboxAuth::Bearer, Some(&format!("Bearer {TOKEN}")), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_wrong_ticket_is_refused_with_403() {
    let status = status_with(
        SandboxAuth::Bearer,
        Some(&format!("Bearer {TOKEN}")),
        Some("AUTH_TICKET=nope"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_ticket_is_found_among_other_cookies() {
    let cookie = format!("lang=ru; AUTH_TICKET={TICKET}; theme=dark");
    let status = status_with(
        SandboxAuth::Bearer,
        Some(&format!("Bearer {TOKEN}")),
        Some(&cookie),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn refusals_are_counted_and_never_echo_the_secrets() {
    let sbx = start(config()).await;
    let res = sbx
        .http
        .post(sbx.url(PROJECT))
        .header("Authorization", format!("Bearer {TOKEN}x"))
        .header("Cookie", format!("AUTH_TICKET={TICKET}"))
        .json(&json!({"domain": "https://acme.example"}))
        .send()
        .await
        .unwrap();
    let body = res.text().await.unwrap();
    assert!(!body.contains(TOKEN) && !body.contains(TICKET), "{body}");
    assert_eq!(
        sbx.handle
            .ledger()
            .requests_of(Op::AddProject, "unauthorized"),
        1
    );
}

#[tokio::test]
async fn the_config_debug_output_hides_the_secrets() {
    let shown = format!("{:?}", config());
    assert!(!shown.contains(TOKEN) && !shown.contains(TICKET), "{shown}");
}
