//! Injected faults: seeded 5xx, a server-wide rate limit, latency, answers cut after commit.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use linkrunner_sandbox::{Faults, Op};
use reqwest::StatusCode;
use serde_json::json;

use super::support::{PROJECT, Sbx, config, start, with_acme_project};

async fn statuses_with_seed(seed: u64) -> Vec<StatusCode> {
    let mut cfg = config();
    cfg.seed = seed;
    cfg.faults.error_rate = 0.5;
    let sbx = start(cfg).await;
    let mut seen = Vec::new();
    for i in 0..24 {
        let (status, _) = sbx
            .post(PROJECT, json!({"domain": format!("https://s{i}.example")}))
            .await;
        seen.push(status);
    }
    seen
}

#[tokio::test]
async fn the_same_seed_gives_the_same_fault_sequence() {
    let first = statuses_with_seed(11).await;
    assert_eq!(first, statuses_with_seed(11).await);
    assert_ne!(first, statuses_with_seed(12).await);
    assert!(first.contains(&StatusCode::SERVICE_UNAVAILABLE) && first.contains(&StatusCode::OK));
}

#[tokio::test]
async fn an_injected_error_executes_nothing() {
    let mut cfg = config();
    cfg.faults.error_rate = 1.0;
    let sbx = start(cfg).await;

    let (status, _) = sbx
        .post(PROJECT, json!({"domain": "https://acme.example"}))
        .await;

    let ledger = sbx.handle.ledger();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(ledger.projects.is_empty());
    assert_eq!(ledger.requests_of(Op::AddProject, "fault"), 1);
}

#[tokio::test]
async fn errors_can_be_limited_to_some_operations() {
    let mut cfg = config();
    cfg.faults.error_rate = 1.0;
    cfg.faults.error_ops = Some(BTreeSet::from([Op::BuyLinks]));
    let sbx = start(cfg).await;
    let (status, _) = sbx
        .post(PROJECT, json!({"domain": "https://acme.example"}))
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn requests_beyond_the_rate_limit_get_429_with_retry_after_and_are_counted() {
    let mut cfg = config();
    cfg.faults.rate_limit = Some(3);
    let sbx = start(cfg).await;
    let mut last = None;
    for i in 0..5 {
        let body = json!({"domain": format!("https://r{i}.example")});
        last = Some(
            sbx.authed(sbx.http.post(sbx.url(PROJECT)))
                .json(&body)
                .send()
                .await
                .unwrap(),
        );
    }
    let last = last.unwrap();
    assert_eq!(last.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(last.headers()["retry-after"], "1");
    assert_eq!(sbx.handle.ledger().rate_limited, 2);
}

#[tokio::test]
async fn a_purchase_cut_after_commit_is_in_the_ledger_while_the_client_sees_a_broken_answer() {
    let (sbx, project, url_id, text_id) = with_acme_project().await;
    let donors = sbx.donors(url_id, json!({})).await;
    sbx.handle
        .set_faults(Faults {
            drop_after_commit_rate: 1.0,
            ..Faults::default()
        })
        .unwrap();
    let pages = json!([{"pageId": donors[0]["pageId"], "urlId": url_id, "textId": text_id}]);
    let body = json!({"forceSeoWait": donors[0]["forceSeoWait"], "linkTypeId": 1, "filterId": null,
        "mosSites": donors[0]["mosSites"], "pagesExtra": null, "searchId": donors[0]["searchId"], "pages": pages});

    let res = sbx
        .authed(
            sbx.http
                .post(sbx.url(&format!("/rest/Placement/rent/create/projectId/{project}"))),
        )
        .json(&body)
        .send()
        .await
        .unwrap();

    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.bytes().await.is_err(), "the body should be cut short");
    assert_eq!(sbx.handle.ledger().purchases.len(), 1);
}

#[tokio::test]
async fn reads_are_not_cut_by_default() {
    let (sbx, project, _, _) = with_acme_project().await;
    sbx.handle
        .set_faults(Faults {
            drop_after_commit_rate: 1.0,
            ..Faults::default()
        })
        .unwrap();
    let (status, body) = sbx
        .post(
            &format!("/rest/Project/placements/links?projectId={project}"),
            json!({}),
        )
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"links": []})));
}

#[tokio::test]
async fn faults_can_be_changed_at_run_time_through_the_control_endpoint() {
    let (sbx, res) = with_error_rate(1.0).await;

    let (status, _) = sbx
        .post(PROJECT, json!({"domain": "https://acme.example"}))
        .await;

    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(sbx.handle.faults().error_rate, 1.0);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn a_fault_rate_above_one_is_refused_by_the_control_endpoint() {
    let (_sbx, res) = with_error_rate(2.0).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn slow_calls_are_served_concurrently() {
    let mut cfg = config();
    cfg.faults.latency_ms = 300;
    let sbx = start(cfg).await;
    let started = Instant::now();

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..200 {
        let req = sbx.authed(sbx.http.post(sbx.url(PROJECT)));
        let req = req.json(&json!({"domain": format!("https://c{i}.example")}));
        calls.spawn(async move { req.send().await.map(|r| r.status()) });
    }
    let statuses: Vec<_> = calls.join_all().await;

    // Serially this would take a minute; concurrently well under a few seconds.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(statuses.iter().all(|s| matches!(s, Ok(StatusCode::OK))));
    assert_eq!(sbx.handle.ledger().projects.len(), 200);
}

/// A sandbox, and the answer of its control endpoint asked for an error rate of `rate`.
async fn with_error_rate(rate: f64) -> (Sbx, reqwest::Response) {
    let sbx = start(config()).await;
    let res = sbx
        .post_bare("/__sandbox/faults", json!({ "error_rate": rate }))
        .await;
    (sbx, res)
}
