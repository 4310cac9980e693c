//! The client-side rate limiter spaces requests and counts its waits.

use std::num::NonZeroU32;

use linkrunner::market::Market;
use serde_json::json;
use wiremock::ResponseTemplate;

use super::support::{Harness, harness_with};

/// A client limited to `per_second` requests against a server answering every request with
/// an empty link list.
async fn listing_at(per_second: u32) -> Harness {
    let h = harness_with(|c| c.rate_limit = NonZeroU32::new(per_second).unwrap()).await;
    h.answer_every(ResponseTemplate::new(200).set_body_json(json!({"links": []})))
        .await;
    h
}

#[tokio::test]
async fn requests_beyond_the_rate_limit_wait_and_are_counted() {
    // A burst of 2 and one more request every 500 ms: 5 quick calls must wait at least
    // twice unless the machine stalls for over a second.
    let h = listing_at(2).await;
    for _ in 0..5 {
        h.client.list_links(1).await.unwrap();
    }
    assert!(h.metrics.rate_limit_waits_total.get() >= 1);
    assert!(h.metrics.rate_limit_wait_seconds_total.get() > 0.0);
}

#[tokio::test]
async fn requests_that_keep_to_the_rate_do_not_wait() {
    // 50 per second, paced evenly: one every 20 ms. Requests 30 ms apart never wait.
    let h = listing_at(50).await;
    for _ in 0..3 {
        h.client.list_links(1).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    }
    assert_eq!(h.metrics.rate_limit_waits_total.get(), 0);
}
