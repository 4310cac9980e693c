//! Rent searches: pending then ready in each pending style, `metaData` byte for byte, prices.

use std::time::Duration;

use linkrunner::money::Money;
use linkrunner_sandbox::shapes::Pending;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{Sbx, config, encode, items_with_page_id, start, with_acme_project};

async fn polls_until_ready(pending: Pending) -> Vec<(StatusCode, Value)> {
    let mut cfg = config();
    cfg.search_ready_after_polls = 2;
    cfg.shape.pending = pending;
    let sbx = start(cfg).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let (job, meta) = sbx.search(url_id, json!({})).await;
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(sbx.poll(&job, &meta).await);
    }
    answers
}

/// A search pending as `form` says answers `pending` to its first two polls, then donors.
async fn assert_pending_twice_then_donors(form: Pending, pending: (StatusCode, Value)) {
    let answers = polls_until_ready(form).await;
    assert_eq!(answers[..2], [pending.clone(), pending]);
    assert!(has_donors(&answers[2]));
}

fn has_donors(answer: &(StatusCode, Value)) -> bool {
    answer.0 == StatusCode::OK && !items_with_page_id(&answer.1).is_empty()
}

#[tokio::test]
async fn a_search_answers_a_processing_status_for_the_configured_polls_then_donors() {
    assert_pending_twice_then_donors(
        Pending::StatusField,
        (StatusCode::OK, json!({"status": "processing"})),
    )
    .await;
}

#[tokio::test]
async fn a_search_can_answer_202_while_pending() {
    assert_pending_twice_then_donors(
        Pending::Http202,
        (StatusCode::ACCEPTED, json!({"status": "pending"})),
    )
    .await;
}

#[tokio::test]
async fn a_search_can_answer_an_empty_list_while_pending() {
    assert_pending_twice_then_donors(Pending::EmptyList, (StatusCode::OK, json!([]))).await;
}

#[tokio::test]
async fn a_search_stays_pending_until_its_delay_has_passed() {
    let mut cfg = config();
    cfg.search_ready_after = Duration::from_millis(300);
    let sbx = start(cfg).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let (job, meta) = sbx.search(url_id, json!({})).await;

    let early = sbx.poll(&job, &meta).await;
    tokio::time::sleep(Duration::from_millis(350)).await;
    let late = sbx.poll(&job, &meta).await;

    assert!(!has_donors(&early));
    assert!(has_donors(&late));
}

#[tokio::test]
async fn meta_data_needs_percent_encoding_and_round_trips_byte_for_byte() {
    let (sbx, _, url_id, _) = with_acme_project().await;
    let (job, meta) = sbx.search(url_id, json!({})).await;
    let parsed: Value = serde_json::from_str(&meta).unwrap();

    let (status, body) = sbx.poll(&job, &meta).await;

    assert_eq!(parsed["cgeoip_country_iso_code"], "RU");
    assert!(
        ["/", "+", "%", "?", "#", " "]
            .iter()
            .all(|c| meta.contains(c)),
        "{meta}"
    );
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn meta_data_that_differs_by_one_byte_is_answered_with_400() {
    let (sbx, _, url_id, _) = with_acme_project().await;
    let (job, meta) = sbx.search(url_id, json!({})).await;
    let reserialized =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&meta).unwrap()).unwrap();

    let (status, _) = sbx.poll(&job, &reserialized).await;

    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn meta_data_sent_without_percent_encoding_is_not_accepted() {
    let (sbx, _, url_id, _) = with_acme_project().await;
    let (job, meta) = sbx.search(url_id, json!({})).await;
    // Only what reqwest must escape to build a URL at all: the rest goes raw.
    let lazy = meta
        .replace('%', "%25")
        .replace(' ', "%20")
        .replace('#', "%23")
        .replace('?', "%3F");
    let path = format!(
        "/rest/SearchRent/rent/tree/getResult/jobHandleId/{}/rentSearchMetaData/{lazy}",
        encode(&job)
    );

    let (status, _) = sbx.get(&path).await;

    assert_ne!(status, StatusCode::OK);
}

#[tokio::test]
async fn an_unknown_job_is_answered_with_404() {
    let sbx = start(config()).await;
    let (status, _) = sbx.poll("rent-0-00000000", "{}").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn donors_are_priced_within_the_requested_rent_range() {
    let (sbx, _, url_id, _) = with_acme_project().await;
    let donors = sbx
        .donors(url_id, json!({"priceRentFrom": 50, "priceRentTo": 80.5}))
        .await;
    let prices: Vec<Money> = donors
        .iter()
        .map(|d| Money::from_json_number(d["price"].as_number().unwrap()).unwrap())
        .collect();
    assert!(!prices.is_empty());
    assert!(
        prices
            .iter()
            .all(|p| *p >= Money::from_rubles(50) && *p <= Money::from_kopecks(8050)),
        "{prices:?}"
    );
}

#[tokio::test]
async fn donors_of_one_search_share_their_technical_values() {
    let (sbx, _, url_id, _) = with_acme_project().await;
    let donors = sbx.donors(url_id, json!({})).await;
    let key = |d: &Value| {
        (
            d["searchId"].clone(),
            d["forceSeoWait"].clone(),
            d["mosSites"].clone(),
        )
    };
    assert!(donors.len() > 1);
    assert!(donors.iter().all(|d| key(d) == key(&donors[0])));
}

async fn first_search(seed: u64) -> Vec<Value> {
    let mut cfg = config();
    cfg.seed = seed;
    let sbx: Sbx = start(cfg).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    sbx.donors(url_id, json!({})).await
}

#[tokio::test]
async fn the_inventory_is_the_same_for_the_same_seed() {
    assert_eq!(first_search(5).await, first_search(5).await);
    assert_ne!(first_search(5).await, first_search(6).await);
}

#[tokio::test]
async fn some_donor_prices_carry_kopecks() {
    let mut cfg = config();
    cfg.donors_per_search = 100;
    let sbx = start(cfg).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;
    let fractional = donors.iter().filter(|d| d["price"].is_f64()).count();
    assert!(fractional > 0 && fractional < donors.len(), "{fractional}");
}
