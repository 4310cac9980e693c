//! Autobuyers that really buy: on `POST __sandbox/autobuy` or periodically, into their
//! project, within their limits; their links are in operation 6's list like any other, and
//! the ledger says which autobuyer bought each and what the project is committed to.

use std::time::Duration;

use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerState, Behaviour, Ledger};
use reqwest::StatusCode;
use serde_json::json;

use super::listing::list;
use super::support::{Sbx, config, items_with_page_id, read, start};

const SHOES: &str = "https://acme.example/shoes";

/// A project, a promoted URL with two texts, a filter for 50–150 RUB and an autobuyer
/// (stopped) for that URL: `(project, url, first text, autobuyer)`.
async fn autobuyer(sbx: &Sbx, budget: i64, total: i64, daily: i64) -> (i64, i64, i64, i64) {
    let (project, _, _) = sbx.project("https://acme.example").await;
    let texts = json!({"urlsTexts": [{"url": SHOES, "texts": [
        {"text": "#a#shoes#/a#"}, {"text": "more #a#shoes#/a#"}]}]});
    let (_, added) = sbx
        .post(
            &format!("/rest/Content/add/texts/projectId/{project}"),
            texts,
        )
        .await;
    let url_id = added["result"][0]["urlId"].as_i64().unwrap();
    let first_text = added["result"][0]["texts"][0]["textId"].as_i64().unwrap();
    let filter = json!({"name": "mid", "priceArticleFrom": 0, "priceArticleTo": 0,
                        "priceRentFrom": 50, "priceRentTo": 150});
    let (_, f) = sbx.post("/rest/SearchFilter", filter).await;
    let body = json!({"autobuyerCommon": {"name": "auto", "isAutoApprove": true},
        "searchFilterId": f["id"], "urls": [{"urlId": url_id, "settings": {
            "monthlyBudget": budget, "totalLinksLimit": total, "dailyLinksLimit": daily}}]});
    let a = sbx
        .post_ok(
            &format!("/rest/Autobuyer/rent/create/projectId/{project}"),
            body,
        )
        .await;
    (project, url_id, first_text, a["id"].as_i64().unwrap())
}

async fn start_autobuyer(sbx: &Sbx, id: i64) {
    let (status, _) = sbx
        .post("/rest/Autobuyer/start", json!({"autobuyersIds": [id]}))
        .await;
    assert_eq!(status, StatusCode::OK);
}

async fn ledger_over_http(sbx: &Sbx) -> Ledger {
    let (_, body) = sbx.get("/__sandbox/ledger").await;
    serde_json::from_value(body).unwrap()
}

#[tokio::test]
async fn a_running_autobuyer_buys_on_demand_and_its_links_are_listed_like_any_other() {
    let sbx = start(config()).await;
    let (project, url_id, first_text, id) = autobuyer(&sbx, 1000, 10, 10).await;
    start_autobuyer(&sbx, id).await;

    let (status, answer) = sbx
        .post("/__sandbox/autobuy", json!({"max_per_autobuyer": 2}))
        .await;
    let (_, listed) = list(&sbx, project, json!({})).await;

    assert_eq!(status, StatusCode::OK, "{answer}");
    let ledger = ledger_over_http(&sbx).await;
    let bought = ledger.purchases_of(project);
    assert_eq!(bought.len(), 2);
    assert!(bought.iter().all(|p| p.autobuyer_id == Some(id)
        && p.url_id == url_id
        && p.text_id == first_text
        && p.price >= Money::from_rubles(50)
        && p.price <= Money::from_rubles(150)));
    assert_eq!(answer["bought"].as_array().unwrap().len(), 2);
    let items = items_with_page_id(&listed);
    assert_eq!(items.len(), 2);
    for (item, p) in items.iter().zip(&bought) {
        assert_eq!(item["id"], json!(p.link_id));
        assert_eq!(
            (&item["urlId"], &item["textId"]),
            (&json!(url_id), &json!(first_text))
        );
        assert_eq!(item["price"], p.price.to_json_rubles());
        assert!(
            item.get("autobuyerId").is_none(),
            "the list does not say who bought"
        );
    }
}

#[tokio::test]
async fn a_stopped_autobuyer_buys_nothing_when_asked() {
    let sbx = start(config()).await;
    let (project, _, _, _) = autobuyer(&sbx, 1000, 10, 10).await;

    let empty_body = sbx.http.post(sbx.url("/__sandbox/autobuy")).send();
    let (status, answer) = read(empty_body.await.unwrap()).await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["bought"], json!([]));
    assert!(sbx.handle.ledger().purchases_of(project).is_empty());
}

#[tokio::test]
async fn the_commitment_counts_a_running_budget_then_the_links_once_it_stops() {
    let sbx = start(config()).await;
    let (project, _, _, id) = autobuyer(&sbx, 400, 50, 50).await;
    start_autobuyer(&sbx, id).await;
    sbx.handle.autobuy_now(usize::MAX);

    let running = sbx.handle.ledger();
    sbx.post("/rest/Autobuyer/stop", json!({"autobuyersIds": [id]}))
        .await;
    let stopped = sbx.handle.ledger();

    let rent = stopped
        .purchases_of(project)
        .iter()
        .fold(Money::ZERO, |s, p| s.checked_add(p.price).unwrap());
    assert!(rent > Money::ZERO && rent <= Money::from_rubles(400));
    assert_eq!(running.commitment(project), Money::from_rubles(400));
    assert_eq!(
        stopped.autobuyer(id).unwrap().state,
        AutobuyerState::Stopped
    );
    assert_eq!(stopped.commitment(project), rent);
}

#[tokio::test]
async fn autobuyers_buy_by_themselves_every_period_until_it_is_switched_off() {
    let sbx = start(config()).await;
    let (project, _, _, id) = autobuyer(&sbx, 100_000, 100, 100).await;
    start_autobuyer(&sbx, id).await;

    sbx.handle
        .set_behaviour(Behaviour {
            autobuy_every_ms: Some(20),
            ..Behaviour::default()
        })
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while sbx.handle.ledger().purchases_of(project).len() < 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no periodic purchases"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, _) = sbx.post("/__sandbox/behaviour", json!({})).await;
    let after_off = sbx.handle.ledger().purchases_of(project).len();
    tokio::time::sleep(Duration::from_millis(150)).await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(sbx.handle.ledger().purchases_of(project).len(), after_off);
}
