//! Outcome classes: what was certainly not executed, what may have been, what was.
//! Calls that change something are sent exactly once whatever happens (`expect(1)`).

use std::sync::atomic::Ordering;
use std::time::Duration;

use linkrunner::market::{Executed, Market, MarketError};
use serde_json::json;
use wiremock::{MockServer, ResponseTemplate};

use super::support::{
    Harness, client_for, closed_port_base, harness, harness_with, order, raw_server,
};

fn assert_uncertain(err: &MarketError) {
    assert!(matches!(err, MarketError::Uncertain { .. }), "{err:?}");
    assert_eq!(err.executed(), Executed::Maybe);
}

/// The error of a filter creation through `h`.
async fn a_filter_refused(h: &Harness) -> MarketError {
    h.client
        .create_filter(&Default::default())
        .await
        .unwrap_err()
}

#[tokio::test]
async fn a_purchase_answered_with_500_is_uncertain_and_sent_once() {
    let h = harness().await;
    h.answer_exactly(ResponseTemplate::new(500), 1).await;
    let err = h.client.buy(7, &order()).await.unwrap_err();
    assert_uncertain(&err);
}

#[tokio::test]
async fn a_purchase_that_times_out_is_uncertain_and_sent_once() {
    let h = harness_with(|c| c.request_timeout = Duration::from_millis(300)).await;
    h.answer_exactly(
        ResponseTemplate::new(200).set_delay(Duration::from_secs(3)),
        1,
    )
    .await;
    let err = h.client.buy(7, &order()).await.unwrap_err();
    assert_uncertain(&err);
}

#[tokio::test]
async fn a_purchase_whose_answer_is_cut_short_is_uncertain_and_sent_once() {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
    let (base, count) = raw_server(format!("{head}{{\"placementIds\":[1").into_bytes()).await;
    let err = client_for(&base).buy(7, &order()).await.unwrap_err();
    assert_uncertain(&err);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_is_uncertain() {
    let elsewhere = MockServer::start().await;
    let h = harness().await;
    h.answer_exactly(
        ResponseTemplate::new(302).insert_header("location", elsewhere.uri().as_str()),
        1,
    )
    .await;
    let err = a_filter_refused(&h).await;
    assert!(
        matches!(
            err,
            MarketError::Uncertain {
                status: Some(302),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_4xx_is_rejected_with_its_body() {
    let h = harness().await;
    h.answer_exactly(
        ResponseTemplate::new(400).set_body_json(json!({"error": "bad domain"})),
        1,
    )
    .await;
    let err = h.client.create_project("x").await.unwrap_err();
    assert!(
        matches!(&err, MarketError::Rejected { status: Some(400), body, .. } if body.contains("bad domain")),
        "{err:?}"
    );
    assert_eq!(err.executed(), Executed::No);
}

#[tokio::test]
async fn is_error_true_in_a_200_is_rejected_with_the_message() {
    let h = harness().await;
    h.answer_every(
        ResponseTemplate::new(200).set_body_json(json!({"isError": true, "message": "no funds"})),
    )
    .await;
    let err = h.client.buy(7, &order()).await.unwrap_err();
    assert!(
        matches!(&err, MarketError::Rejected { body, .. } if body == "no funds"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_refused_connection_is_not_executed() {
    let client = client_for(&closed_port_base().await);
    let err = client.create_filter(&Default::default()).await.unwrap_err();
    assert!(matches!(err, MarketError::Connect { .. }), "{err:?}");
    assert_eq!(err.executed(), Executed::No);
}

#[tokio::test]
async fn an_answer_over_the_cap_is_uncertain() {
    let h = harness_with(|c| c.max_answer_bytes = 1024).await;
    let big = json!({"id": 1, "pad": "x".repeat(10_000)});
    h.answer_exactly(ResponseTemplate::new(200).set_body_json(big), 1)
        .await;
    let err = a_filter_refused(&h).await;
    assert!(
        matches!(&err, MarketError::Uncertain { reason, .. } if reason.contains("larger than 1024")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_chunked_answer_is_read_only_up_to_the_cap() {
    let chunk = format!("400\r\n{}\r\n", "y".repeat(0x400));
    let mut response = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_string();
    for _ in 0..64 {
        response.push_str(&chunk);
    }
    response.push_str("0\r\n\r\n");
    let (base, _) = raw_server(response.into_bytes()).await;
    let mut cfg = super::support::config(&base);
    cfg.max_answer_bytes = 4096;
    let client = linkrunner::market::MarketClient::new(cfg, Default::default()).unwrap();
    let err = client.create_filter(&Default::default()).await.unwrap_err();
    assert!(
        matches!(&err, MarketError::Uncertain { reason, .. } if reason.contains("larger than 4096")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_2xx_with_an_odd_body_is_executed_but_undecodable() {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(200).set_body_string("<html>ok</html>"))
        .await;
    let err = h.client.buy(7, &order()).await.unwrap_err();
    assert!(
        matches!(&err, MarketError::Undecodable { body, .. } if body.contains("<html>")),
        "{err:?}"
    );
    assert_eq!(err.executed(), Executed::Yes);
}

#[tokio::test]
async fn every_call_is_counted_by_operation_and_outcome() {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(500)).await;
    let _ = h.client.buy(7, &order()).await;
    let op = "Placement.createPlacementsRent";
    let counted = (
        super::support::calls(&h.metrics, op, "ok"),
        super::support::calls(&h.metrics, op, "uncertain"),
    );
    assert_eq!(counted, (0, 1));
}
