//! Reads are retried (429 after its Retry-After, 5xx, bounded by `read_retries`); calls
//! that change something never are.

use std::time::{Duration, Instant};

use linkrunner::market::{Market, MarketError};
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, ResponseTemplate};

use super::support::{harness, order};

#[tokio::test]
async fn a_read_answered_429_is_retried_after_retry_after() {
    let h = harness().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&h.server)
        .await;
    h.answer_every(
        ResponseTemplate::new(200).set_body_json(json!({"links": [{"id": 1, "pageId": 2}]})),
    )
    .await;
    let started = Instant::now();
    let links = h.client.list_links(7).await.unwrap().links;
    assert_eq!(links.len(), 1);
    assert_eq!(h.server.received_requests().await.unwrap().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_purchase_answered_429_is_not_retried() {
    let h = harness().await;
    h.answer_exactly(
        ResponseTemplate::new(429).insert_header("retry-after", "1"),
        1,
    )
    .await;
    let err = h.client.buy(7, &order()).await.unwrap_err();
    assert!(matches!(err, MarketError::RateLimited { .. }), "{err:?}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
}

#[tokio::test]
async fn a_read_answered_500_is_retried_read_retries_times_then_uncertain() {
    let h = harness().await;
    h.answer_exactly(ResponseTemplate::new(503), 3).await;
    let err = h.client.list_links(7).await.unwrap_err();
    assert!(
        matches!(
            err,
            MarketError::Uncertain {
                status: Some(503),
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_retry_after_longer_than_the_limit_is_returned_not_waited() {
    let h = harness().await;
    h.answer_exactly(
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
        1,
    )
    .await;
    let err = h.client.list_links(7).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
}

#[tokio::test]
async fn a_search_poll_is_retried_after_a_server_error() {
    let h = harness().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&h.server)
        .await;
    h.answer_every(ResponseTemplate::new(200).set_body_json(json!({"status": "processing"})))
        .await;
    let poll = h
        .client
        .search_result(&super::operations::job())
        .await
        .unwrap();
    assert_eq!(poll, linkrunner::market::SearchPoll::Pending);
}

#[tokio::test]
async fn poll_search_keeps_polling_until_the_result_is_ready() {
    let h = harness().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&h.server)
        .await;
    let ready = json!({"status": "done", "pages": [
        {"pageId": 1, "price": 10, "searchId": 1, "forceSeoWait": 0, "mosSites": "m"}]});
    h.answer_every(ResponseTemplate::new(200).set_body_json(ready))
        .await;
    let job = super::operations::job();
    let poll = h
        .client
        .poll_search(&job, Duration::from_secs(10), Duration::from_millis(10))
        .await
        .unwrap();
    assert!(
        matches!(poll, linkrunner::market::SearchPoll::Ready { .. }),
        "{poll:?}"
    );
    assert_eq!(h.server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn poll_search_gives_up_as_pending_at_the_deadline() {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(202)).await;
    let job = super::operations::job();
    let poll = h
        .client
        .poll_search(&job, Duration::from_millis(200), Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(poll, linkrunner::market::SearchPoll::Pending);
}
