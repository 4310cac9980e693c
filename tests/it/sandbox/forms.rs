//! The answer forms of issue 12, as the sandbox serves them: pending as a 404, the donor
//! price nested under `prices.rent`, `addTexts` ids nested in `{id, value}` objects, read
//! answers whose JSON is truncated (`truncate_rate`), and the insufficient-balance answer.

use std::collections::BTreeSet;

use linkrunner::money::Money;
use linkrunner_sandbox::shapes::{Pending, PriceField, TextsAnswer};
use linkrunner_sandbox::{Faults, Op};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{Sbx, config, poll_path, shaped, start};

#[tokio::test]
async fn pending_as_http404_answers_not_found_until_the_job_is_ready() {
    let sbx = shaped(|c| {
        c.shape.pending = Pending::Http404;
        c.search_ready_after_polls = 1;
    })
    .await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let (job, meta) = sbx.search(url_id, json!({})).await;

    let first = sbx.poll(&job, &meta).await;
    let second = sbx.poll(&job, &meta).await;

    assert_eq!(
        first,
        (
            StatusCode::NOT_FOUND,
            json!({"isError": true, "message": "job not found or not finished"})
        )
    );
    assert_eq!(second.0, StatusCode::OK);
    assert_eq!(second.1["status"], "done");
}

#[tokio::test]
async fn price_nested_puts_the_donor_price_under_prices_rent_only() {
    let sbx = shaped(|c| c.shape.price = PriceField::Nested).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;

    let donor = sbx.donors(url_id, json!({})).await.remove(0);

    assert!(donor["prices"]["rent"].is_number(), "{donor}");
    for flat in ["price", "priceRent", "rentPrice"] {
        assert!(donor.get(flat).is_none(), "{flat} in {donor}");
    }
}

#[tokio::test]
async fn texts_nested_objects_answers_one_id_value_pair_per_url_and_text() {
    let sbx = shaped(|c| c.shape.texts = TextsAnswer::NestedObjects).await;
    let (project, _, _) = sbx.project("https://acme.example").await;
    let body = json!({"urlsTexts": [{"url": "https://acme.example/a",
        "texts": [{"text": "#a#one#/a#"}, {"text": "#a#two#/a#"}]}]});

    let (status, answer) = sbx
        .post(
            &format!("/rest/Content/add/texts/projectId/{project}"),
            body,
        )
        .await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["isError"], false);
    let items = answer["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    for (item, text) in items.iter().zip(["#a#one#/a#", "#a#two#/a#"]) {
        assert_eq!(item["url"]["value"], "https://acme.example/a");
        assert!(item["url"]["id"].is_i64() && item["text"]["id"].is_i64());
        assert_eq!(item["text"]["value"], text);
    }
    assert_eq!(items[0]["url"]["id"], items[1]["url"]["id"]);
}

/// The raw answer to a poll: status, `Content-Length` and body bytes.
async fn raw_poll(sbx: &Sbx, job: &str, meta: &str) -> (StatusCode, Option<u64>, Vec<u8>) {
    let res = sbx
        .authed(sbx.http.get(sbx.url(&poll_path(job, meta))))
        .send()
        .await
        .unwrap();
    let (status, length) = (res.status(), res.content_length());
    (status, length, res.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn a_truncated_read_is_whole_at_the_http_level_but_not_json() {
    let sbx = shaped(|c| c.faults.truncate_rate = 1.0).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let (job, meta) = sbx.search(url_id, json!({})).await;

    let (status, length, body) = raw_poll(&sbx, &job, &meta).await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(length, Some(body.len() as u64));
    assert!(!body.is_empty());
    assert!(serde_json::from_slice::<Value>(&body).is_err());
    assert_eq!(sbx.handle.ledger().requests_of(Op::SearchResult, "ok"), 1);
}

#[tokio::test]
async fn truncation_spares_changes_unless_named_and_is_switchable_at_run_time() {
    let sbx = shaped(|c| c.faults.truncate_rate = 1.0).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let (job, meta) = sbx.search(url_id, json!({})).await;
    sbx.handle
        .set_faults(Faults {
            truncate_rate: 1.0,
            truncate_ops: Some(BTreeSet::from([Op::AddProject])),
            ..Faults::default()
        })
        .unwrap();

    let (_, _, read) = raw_poll(&sbx, &job, &meta).await;
    let (status, cut) = sbx.create_project("https://b.example").await;

    assert!(serde_json::from_slice::<Value>(&read).is_ok());
    assert_eq!(status, StatusCode::OK);
    assert!(cut.is_string(), "the project answer is cut: {cut}");
    assert_eq!(sbx.handle.ledger().projects.len(), 2, "and it executed");
}

#[tokio::test]
async fn truncate_rate_outside_zero_to_one_is_refused() {
    let sbx = start(config()).await;
    let err = sbx
        .handle
        .set_faults(Faults {
            truncate_rate: 1.5,
            ..Faults::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("truncate_rate"), "{err}");
}

#[tokio::test]
async fn a_purchase_beyond_the_balance_says_insufficient_balance_and_what_is_left() {
    let sbx = shaped(|c| c.initial_balance = Money::from_kopecks(1_763)).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;

    let (status, answer) = sbx.buy(project, &[&donors[0]], url_id, text_id).await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["isError"], true);
    let message = answer["message"].as_str().unwrap();
    assert!(message.starts_with("insufficient balance"), "{message}");
    assert!(message.contains("17.63 RUB left"), "{message}");
    assert!(sbx.handle.ledger().purchases.is_empty());
}
