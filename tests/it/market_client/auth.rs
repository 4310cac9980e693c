//! Every request carries the JSON headers, the Authorization header in the configured form
//! and the AUTH_TICKET cookie; rejected credentials are `Unauthorized`.

use linkrunner::market::AuthScheme;
use linkrunner::market::{Executed, Market, MarketError, SearchJob};
use serde_json::json;
use wiremock::ResponseTemplate;

use super::support::{Harness, TICKET, TOKEN, harness, harness_with};

async fn call_a_read_and_a_write(client: &linkrunner::market::MarketClient) {
    let job = SearchJob {
        job_handle_id: "j".into(),
        meta_data: "{}".into(),
    };
    let _ = client.search_result(&job).await;
    let _ = client.create_filter(&Default::default()).await;
    let _ = client.stop_autobuyers(&[1]).await;
}

fn header<'a>(r: &'a wiremock::Request, name: &str) -> &'a str {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("<absent>")
}

/// The three requests of [`call_a_read_and_a_write`], each answered 200.
async fn a_read_and_a_write(h: &Harness) -> Vec<wiremock::Request> {
    h.answer_every(ResponseTemplate::new(200).set_body_json(json!({"id": 1})))
        .await;
    call_a_read_and_a_write(&h.client).await;
    let requests = h.server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3);
    requests
}

#[tokio::test]
async fn bearer_header_json_headers_and_cookie_are_on_every_request() {
    let h = harness().await;
    let requests = a_read_and_a_write(&h).await;
    for r in &requests {
        assert_eq!(header(r, "authorization"), format!("Bearer {TOKEN}"));
        assert_eq!(header(r, "cookie"), format!("AUTH_TICKET={TICKET}"));
        assert_eq!(header(r, "content-type"), "application/json");
        assert_eq!(header(r, "accept"), "application/json");
    }
}

#[tokio::test]
async fn raw_scheme_sends_the_bare_token_on_every_request() {
    let h = harness_with(|c| c.auth_scheme = AuthScheme::Raw).await;
    let requests = a_read_and_a_write(&h).await;
    for r in &requests {
        assert_eq!(header(r, "authorization"), TOKEN);
        assert_eq!(header(r, "cookie"), format!("AUTH_TICKET={TICKET}"));
    }
}

#[tokio::test]
async fn status_401_is_unauthorized_and_not_executed() {
    let h = harness().await;
    h.answer_exactly(ResponseTemplate::new(401), 1).await;
    let err = h
        .client
        .create_project("https://a.example")
        .await
        .unwrap_err();
    assert!(
        matches!(err, MarketError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(err.executed(), Executed::No);
}

#[tokio::test]
async fn status_403_on_a_read_is_unauthorized_and_not_retried() {
    let h = harness().await;
    h.answer_exactly(ResponseTemplate::new(403), 1).await;
    let err = h.client.list_links(1).await.unwrap_err();
    assert!(err.is_auth(), "{err:?}");
}
