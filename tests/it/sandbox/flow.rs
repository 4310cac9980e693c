//! Every operation's happy path, in the order a client runs them, checked in the ledger.

use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerState, Ledger, Op};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{Sbx, config, start, with_acme_project};

async fn filter(sbx: &Sbx) -> i64 {
    let body = json!({"name": "cheap", "priceArticleFrom": 0, "priceArticleTo": 500, "priceRentFrom": 10, "priceRentTo": 80});
    let answer = sbx.post_ok("/rest/SearchFilter", body).await;
    assert_eq!(answer["isError"], false);
    answer["id"].as_i64().unwrap()
}

async fn autobuyer(sbx: &Sbx, project: i64, filter: i64, url_id: i64) -> i64 {
    let body = json!({
        "autobuyerCommon": {"name": "auto", "isAutoApprove": false},
        "searchFilterId": filter,
        "urls": [{"urlId": url_id, "settings": {"monthlyBudget": 1000.5, "totalLinksLimit": 20, "dailyLinksLimit": 1}}],
    });
    let answer = sbx
        .post_ok(
            &format!("/rest/Autobuyer/rent/create/projectId/{project}"),
            body,
        )
        .await;
    answer["id"].as_i64().unwrap()
}

#[tokio::test]
async fn a_project_comes_with_its_main_page_and_the_domain_as_text() {
    let (sbx, project, url_id, text_id) = with_acme_project().await;
    let ledger = sbx.handle.ledger();
    assert_eq!(ledger.projects[0].id, project);
    assert_eq!(
        (ledger.urls[0].id, ledger.urls[0].url.as_str()),
        (url_id, "https://acme.example/")
    );
    assert_eq!(
        (ledger.texts[0].id, ledger.texts[0].text.as_str()),
        (text_id, "acme.example")
    );
}

#[tokio::test]
async fn a_bought_link_is_in_the_ledger_and_in_the_project_link_list() {
    let (sbx, project, _, _) = with_acme_project().await;
    let (url_id, text_id) = sbx
        .url_with_text(project, "https://acme.example/shoes", "Best #a#shoes#/a#")
        .await;
    let donors = sbx
        .donors(url_id, json!({"priceRentFrom": 10, "priceRentTo": 300}))
        .await;

    let (status, answer) = sbx
        .buy(project, &[&donors[0], &donors[1]], url_id, text_id)
        .await;
    let (_, list) = sbx
        .post(
            &format!("/rest/Project/placements/links?projectId={project}"),
            json!({}),
        )
        .await;

    assert_eq!(status, StatusCode::OK, "{answer}");
    let ids: Vec<i64> = answer["placementIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let listed: Vec<i64> = list["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_i64().unwrap())
        .collect();
    let ledger = sbx.handle.ledger();
    let bought: Vec<i64> = ledger
        .purchases_of(project)
        .iter()
        .map(|p| p.link_id)
        .collect();
    assert_eq!(ids, bought);
    assert_eq!(listed, bought);
}

#[tokio::test]
async fn spend_is_the_sum_of_offered_prices_and_leaves_the_balance() {
    let (sbx, project, url_id, text_id) = with_acme_project().await;
    let donors = sbx.donors(url_id, json!({})).await;
    let price = |d: &Value| Money::from_json_number(d["price"].as_number().unwrap()).unwrap();
    let expected = price(&donors[0]).checked_add(price(&donors[1])).unwrap();

    sbx.buy(project, &[&donors[0], &donors[1]], url_id, text_id)
        .await;

    let ledger = sbx.handle.ledger();
    assert_eq!(ledger.spend, expected);
    assert_eq!(
        ledger.balance,
        config().initial_balance.checked_sub(expected).unwrap()
    );
}

#[tokio::test]
async fn an_autobuyer_is_created_stopped_then_started_and_stopped() {
    let (sbx, project, url_id, _) = with_acme_project().await;
    let filter = filter(&sbx).await;
    let id = autobuyer(&sbx, project, filter, url_id).await;
    let state = |l: Ledger| l.autobuyer(id).unwrap().state;
    let created = state(sbx.handle.ledger());

    let (started, _) = sbx
        .post("/rest/Autobuyer/start", json!({"autobuyersIds": [id]}))
        .await;
    let running = state(sbx.handle.ledger());
    let (stopped, _) = sbx
        .post("/rest/Autobuyer/stop", json!({"autobuyersIds": [id]}))
        .await;

    assert_eq!((started, stopped), (StatusCode::OK, StatusCode::OK));
    assert_eq!(created, AutobuyerState::Stopped);
    assert_eq!(running, AutobuyerState::Running);
    assert_eq!(state(sbx.handle.ledger()), AutobuyerState::Stopped);
}

#[tokio::test]
async fn autobuyer_and_filter_settings_are_kept_as_sent() {
    let (sbx, project, url_id, _) = with_acme_project().await;
    let filter = filter(&sbx).await;
    let id = autobuyer(&sbx, project, filter, url_id).await;

    let ledger = sbx.handle.ledger();
    let a = ledger.autobuyer(id).unwrap();
    assert_eq!((a.search_filter_id, a.urls[0].url_id), (filter, url_id));
    assert_eq!(a.urls[0].monthly_budget, Money::from_kopecks(100_050));
    assert_eq!(ledger.filters[0].params["priceRentTo"], json!(80));
}

#[tokio::test]
async fn adding_a_url_again_returns_its_id_and_adds_only_new_texts() {
    let (sbx, project, _, _) = with_acme_project().await;
    let (first_url, first_text) = sbx
        .url_with_text(project, "https://acme.example/a", "#a#one#/a#")
        .await;

    let (again_url, again_text) = sbx
        .url_with_text(project, "https://acme.example/a", "#a#one#/a#")
        .await;
    let (_, new_text) = sbx
        .url_with_text(project, "https://acme.example/a", "#a#two#/a#")
        .await;

    assert_eq!((again_url, again_text), (first_url, first_text));
    assert_ne!(new_text, first_text);
    assert_eq!(sbx.handle.ledger().texts.len(), 3);
}

#[tokio::test]
async fn a_page_bought_twice_for_the_same_url_is_accepted_and_counted_as_a_duplicate() {
    let (sbx, project, url_id, text_id) = with_acme_project().await;
    let donors = sbx.donors(url_id, json!({})).await;
    sbx.buy(project, &[&donors[0]], url_id, text_id).await;

    let (status, answer) = sbx.buy(project, &[&donors[0]], url_id, text_id).await;

    assert_eq!(
        (status, &answer["isError"]),
        (StatusCode::OK, &json!(false)),
        "{answer}"
    );
    let ledger = sbx.handle.ledger();
    assert_eq!((ledger.purchases.len(), ledger.duplicate_purchases), (2, 1));
}

#[tokio::test]
async fn the_ledger_is_served_as_json_without_authentication() {
    let sbx = start(config()).await;
    sbx.project("https://acme.example").await;

    let res = sbx
        .http
        .get(sbx.url("/__sandbox/ledger"))
        .send()
        .await
        .unwrap();

    let ledger: Ledger = res.json().await.unwrap();
    assert_eq!(ledger, sbx.handle.ledger());
    assert_eq!(ledger.requests_of(Op::AddProject, "ok"), 1);
}

#[tokio::test]
async fn a_prefix_is_part_of_the_base_url_and_required_on_every_path() {
    let mut cfg = config();
    cfg.prefix = "/api".into();
    let sbx = start(cfg).await;

    let (with_prefix, _) = sbx.create_project("https://a.example").await;
    let bare = format!(
        "http://{}/rest/Project/addSimpleProjectAndContent",
        sbx.handle.addr()
    );
    let without = sbx
        .authed(sbx.http.post(bare))
        .json(&json!({"domain": "https://a.example"}))
        .send()
        .await
        .unwrap();

    assert!(sbx.handle.base_url().ends_with("/api"));
    assert_eq!(
        (with_prefix, without.status()),
        (StatusCode::OK, StatusCode::NOT_FOUND)
    );
}
