//! Rejections: `isError: true` for refused input, 400/415/413 for unreadable input, and no
//! state change either way.

use linkrunner_sandbox::Op;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{Sbx, config, start, with_acme_project};

fn rejected(status: StatusCode, body: &Value) -> bool {
    status == StatusCode::OK && body["isError"] == json!(true) && body["message"].is_string()
}

async fn texts(sbx: &Sbx, project: i64, url: &str, text: &str) -> (StatusCode, Value) {
    let body = json!({"urlsTexts": [{"url": url, "texts": [{"text": text}]}]});
    sbx.post(
        &format!("/rest/Content/add/texts/projectId/{project}"),
        body,
    )
    .await
}

#[tokio::test]
async fn a_domain_that_is_not_an_absolute_http_url_is_rejected() {
    let sbx = start(config()).await;
    for domain in ["acme.example", "/acme", "ftp://acme.example"] {
        let (status, body) = sbx
            .post(
                "/rest/Project/addSimpleProjectAndContent",
                json!({"domain": domain}),
            )
            .await;
        assert!(rejected(status, &body), "{domain}: {status} {body}");
    }
    assert!(sbx.handle.ledger().projects.is_empty());
}

#[tokio::test]
async fn urls_off_the_project_domain_are_rejected_but_subdomains_are_not() {
    let (sbx, project, _, _) = with_acme_project().await;

    let (s1, off) = texts(&sbx, project, "https://evil.example/x", "#a#x#/a#").await;
    let (s2, look) = texts(&sbx, project, "https://notacme.example/x", "#a#x#/a#").await;
    let (s3, relative) = texts(&sbx, project, "/x", "#a#x#/a#").await;
    let (s4, sub) = texts(&sbx, project, "https://shop.acme.example/x", "#a#x#/a#").await;

    assert!(rejected(s1, &off) && rejected(s2, &look) && rejected(s3, &relative));
    assert_eq!((s4, &sub["isError"]), (StatusCode::OK, &json!(false)));
}

#[tokio::test]
async fn texts_without_exactly_one_non_blank_anchor_are_rejected() {
    let (sbx, project, _, _) = with_acme_project().await;
    for text in [
        "no anchor",
        "#a#  #/a#",
        "#a#one#/a# #a#two#/a#",
        "#/a#x#a#",
    ] {
        let (status, body) = texts(&sbx, project, "https://acme.example/x", text).await;
        assert!(rejected(status, &body), "{text}: {body}");
    }
    assert_eq!(sbx.handle.ledger().urls.len(), 1);
}

/// A donor found for acme's main URL, bought with the text of a second URL, `/b`: for `/b`
/// itself when `for_b`, else for the main URL. The sandbox and its answer.
async fn buy_with_the_text_of_b(for_b: bool) -> (Sbx, StatusCode, Value) {
    let (sbx, project, url_id, _) = with_acme_project().await;
    let (b_url, b_text) = sbx
        .url_with_text(project, "https://acme.example/b", "#a#b#/a#")
        .await;
    let donors = sbx.donors(url_id, json!({})).await;
    let for_url = if for_b { b_url } else { url_id };
    let (status, body) = sbx.buy(project, &[&donors[0]], for_url, b_text).await;
    (sbx, status, body)
}

#[tokio::test]
async fn buying_a_page_no_search_returned_for_that_url_is_rejected() {
    let (sbx, status, body) = buy_with_the_text_of_b(true).await;

    assert!(rejected(status, &body), "{body}");
    assert!(sbx.handle.ledger().purchases.is_empty());
}

#[tokio::test]
async fn buying_with_a_text_of_another_url_is_rejected() {
    let (_, status, body) = buy_with_the_text_of_b(false).await;

    assert!(rejected(status, &body), "{body}");
}

#[tokio::test]
async fn buying_for_a_url_of_another_project_is_rejected() {
    let (sbx, _, url_id, text_id) = with_acme_project().await;
    let (other_project, _, _) = sbx.project("https://other.example").await;
    let donors = sbx.donors(url_id, json!({})).await;

    let (status, body) = sbx.buy(other_project, &[&donors[0]], url_id, text_id).await;

    assert!(rejected(status, &body), "{body}");
}

#[tokio::test]
async fn mixing_donors_with_different_technical_values_in_one_call_is_rejected() {
    let mut cfg = config();
    cfg.vary_technical_values = true;
    let sbx = start(cfg).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;
    assert_ne!(donors[0]["mosSites"], donors[1]["mosSites"]);

    let (mixed, body) = sbx
        .buy(project, &[&donors[0], &donors[1]], url_id, text_id)
        .await;
    let (single, _) = sbx.buy(project, &[&donors[1]], url_id, text_id).await;

    assert!(rejected(mixed, &body), "{body}");
    assert_eq!(single, StatusCode::OK);
    assert_eq!(sbx.handle.ledger().purchases.len(), 1);
}

#[tokio::test]
async fn a_changed_search_id_is_rejected() {
    let (sbx, project, url_id, text_id) = with_acme_project().await;
    let mut donor = sbx.donors(url_id, json!({})).await.remove(0);
    donor["searchId"] = json!(donor["searchId"].as_i64().unwrap() + 1);

    let (status, body) = sbx.buy(project, &[&donor], url_id, text_id).await;

    assert!(rejected(status, &body), "{body}");
}

/// `body` posted to `path` is rejected.
async fn assert_rejected(sbx: &Sbx, path: &str, body: Value) {
    let (status, answer) = sbx.post(path, body).await;
    assert!(rejected(status, &answer), "{answer}");
}

#[tokio::test]
async fn a_link_type_outside_one_to_three_is_rejected() {
    let (sbx, project, url_id, text_id) = with_acme_project().await;
    let d = sbx.donors(url_id, json!({})).await.remove(0);
    let body = json!({"forceSeoWait": d["forceSeoWait"], "linkTypeId": 4, "filterId": null, "mosSites": d["mosSites"],
        "pagesExtra": null, "searchId": d["searchId"], "pages": [{"pageId": d["pageId"], "urlId": url_id, "textId": text_id}]});

    assert_rejected(
        &sbx,
        &format!("/rest/Placement/rent/create/projectId/{project}"),
        body,
    )
    .await;
}

#[tokio::test]
async fn a_purchase_beyond_the_balance_is_rejected_and_spends_nothing() {
    let mut cfg = config();
    cfg.initial_balance = linkrunner::money::Money::from_rubles(1);
    let sbx = start(cfg).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;

    let (status, body) = sbx.buy(project, &[&donors[0]], url_id, text_id).await;

    assert!(rejected(status, &body), "{body}");
    assert_eq!(sbx.handle.ledger().spend, linkrunner::money::Money::ZERO);
}

#[tokio::test]
async fn an_autobuyer_with_an_unknown_filter_or_negative_limits_is_rejected() {
    let (sbx, project, url_id, _) = with_acme_project().await;
    let (_, f) = sbx
        .post(
            "/rest/SearchFilter",
            json!({"name": "f", "priceArticleFrom": 0, "priceArticleTo": 1}),
        )
        .await;
    let make = |filter: Value, daily: i64| {
        json!({"autobuyerCommon": {"name": "a", "isAutoApprove": true}, "searchFilterId": filter,
            "urls": [{"urlId": url_id, "settings": {"monthlyBudget": 10, "totalLinksLimit": 1, "dailyLinksLimit": daily}}]})
    };
    let path = format!("/rest/Autobuyer/rent/create/projectId/{project}");

    let (s1, unknown) = sbx.post(&path, make(json!(999_999), 1)).await;
    let (s2, negative) = sbx.post(&path, make(f["id"].clone(), -1)).await;

    assert!(
        rejected(s1, &unknown) && rejected(s2, &negative),
        "{unknown} {negative}"
    );
    assert!(sbx.handle.ledger().autobuyers.is_empty());
}

#[tokio::test]
async fn starting_an_unknown_autobuyer_is_rejected() {
    let sbx = start(config()).await;
    let (status, body) = sbx
        .post("/rest/Autobuyer/start", json!({"autobuyersIds": [42]}))
        .await;
    assert!(rejected(status, &body), "{body}");
}

#[tokio::test]
async fn malformed_json_is_answered_with_400_and_an_error_field() {
    let sbx = start(config()).await;
    let res = sbx
        .authed(
            sbx.http
                .post(sbx.url("/rest/Project/addSimpleProjectAndContent")),
        )
        .header("Content-Type", "application/json")
        .body("{\"domain\":")
        .send()
        .await
        .unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].is_string());
    assert_eq!(
        sbx.handle.ledger().requests_of(Op::AddProject, "malformed"),
        1
    );
}

#[tokio::test]
async fn a_field_of_the_wrong_type_is_answered_with_400() {
    let sbx = start(config()).await;
    let (status, _) = sbx
        .post("/rest/Autobuyer/stop", json!({"autobuyersIds": ["1"]}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_body_without_a_json_content_type_is_answered_with_415() {
    let sbx = start(config()).await;
    let res = sbx
        .authed(
            sbx.http
                .post(sbx.url("/rest/Project/addSimpleProjectAndContent")),
        )
        .body("{\"domain\":\"https://acme.example\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let mut cfg = config();
    cfg.body_limit = 1024;
    let sbx = start(cfg).await;
    let (status, _) = sbx
        .post("/rest/SearchFilter", json!({"name": "x".repeat(4096)}))
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn a_project_id_that_is_not_a_number_is_answered_with_400() {
    let sbx = start(config()).await;
    let (status, _) = sbx
        .post("/rest/Project/placements/links?projectId=abc", json!({}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn one_bad_url_in_an_add_texts_call_adds_none_of_its_urls() {
    let (sbx, project, _, _) = with_acme_project().await;
    let body = json!({"urlsTexts": [
        {"url": "https://acme.example/good", "texts": [{"text": "#a#good#/a#"}]},
        {"url": "https://elsewhere.example/bad", "texts": [{"text": "#a#bad#/a#"}]},
    ]});

    assert_rejected(
        &sbx,
        &format!("/rest/Content/add/texts/projectId/{project}"),
        body,
    )
    .await;
    assert_eq!(sbx.handle.ledger().urls.len(), 1);
}
