//! Each operation's request body and its decoding of the sandbox's default answer shapes.

use linkrunner::market::{
    AutobuyerSpec, AutobuyerUrl, FilterSpec, LinkRecord, Market, MarketClient, MarketError,
    SearchJob, SearchParams, SearchPoll, UrlTexts,
};
use linkrunner::money::Money;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, ResponseTemplate};

use super::support::{Harness, harness, order};

pub fn job() -> SearchJob {
    SearchJob {
        job_handle_id: "j1".into(),
        meta_data: "{}".into(),
    }
}

pub fn autobuyer() -> AutobuyerSpec {
    AutobuyerSpec {
        name: "auto".into(),
        auto_approve: true,
        search_filter_id: 9,
        urls: vec![AutobuyerUrl {
            url_id: 8,
            monthly_budget: Money::from_kopecks(100_050),
            total_links_limit: 20,
            daily_links_limit: 1,
        }],
    }
}

pub fn url_texts() -> Vec<UrlTexts> {
    vec![UrlTexts {
        url: "https://a.example/x".into(),
        texts: vec!["#a#x#/a#".into()],
    }]
}

/// Calls all ten operations once, in spec order, and returns every error.
pub async fn call_every_operation(client: &MarketClient) -> Vec<MarketError> {
    let params = SearchParams::default();
    let results = [
        client.create_project("https://a.example").await.err(),
        client.add_texts(7, &url_texts()).await.err(),
        client.start_search(8, &params).await.err(),
        client.search_result(&job()).await.err(),
        client.buy(7, &order()).await.err(),
        client.list_links(7).await.err(),
        client.create_filter(&FilterSpec::default()).await.err(),
        client.create_autobuyer(7, &autobuyer()).await.err(),
        client.stop_autobuyers(&[3]).await.err(),
        client.start_autobuyers(&[3]).await.err(),
    ];
    results.into_iter().flatten().collect()
}

async fn answer(h: &Harness, p: &str, status: u16, body: Value) {
    Mock::given(path(p))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(&h.server)
        .await;
}

#[tokio::test]
async fn create_project_sends_the_domain_and_reads_three_ids() {
    let h = harness().await;
    Mock::given(method("POST"))
        .and(path("/rest/Project/addSimpleProjectAndContent"))
        .and(body_json(json!({"domain": "https://a.example"})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": 7, "urlId": 8, "textId": 9, "isError": false})),
        )
        .expect(1)
        .mount(&h.server)
        .await;
    let ids = h.client.create_project("https://a.example").await.unwrap();
    assert_eq!((ids.project_id, ids.url_id, ids.text_id), (7, 8, 9));
}

#[tokio::test]
async fn add_texts_reads_the_nested_result_shape() {
    let h = harness().await;
    let body = json!({"isError": false, "result": [{"urlId": 8, "url": "https://a.example/x",
                      "texts": [{"textId": 81, "text": "#a#x#/a#"}]}]});
    answer(&h, "/rest/Content/add/texts/projectId/7", 200, body).await;
    let created = h.client.add_texts(7, &url_texts()).await.unwrap();
    assert_eq!((created[0].url_id, created[0].texts[0].text_id), (8, 81));
}

#[tokio::test]
async fn start_search_sends_the_price_range_and_keeps_meta_data() {
    let h = harness().await;
    let md = r#"{"sessToken":"s","cgeoip_country_iso_code":"RU"}"#;
    Mock::given(path("/rest/SearchRent/rent/tree/urlId/8"))
        .and(body_json(
            json!({"priceRentFrom": 10, "priceRentTo": 150.5}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"jobHandleId": "j-9", "message": "Task added to queue", "metaData": md}),
        ))
        .mount(&h.server)
        .await;
    let params = SearchParams {
        price_rent_from: Some(Money::from_rubles(10)),
        price_rent_to: Some(Money::from_kopecks(15_050)),
        extra: Default::default(),
    };
    let job = h.client.start_search(8, &params).await.unwrap();
    assert_eq!(
        (job.job_handle_id.as_str(), job.meta_data.as_str()),
        ("j-9", md)
    );
}

/// A poll answered with `answer` is pending.
async fn assert_pending_when_answered(answer: ResponseTemplate) {
    let h = harness().await;
    Mock::given(method("GET"))
        .respond_with(answer)
        .mount(&h.server)
        .await;
    assert_eq!(
        h.client.search_result(&job()).await.unwrap(),
        SearchPoll::Pending
    );
}

#[tokio::test]
async fn search_result_202_is_pending() {
    assert_pending_when_answered(
        ResponseTemplate::new(202).set_body_json(json!({"status": "pending"})),
    )
    .await;
}

#[tokio::test]
async fn search_result_409_is_pending_not_rejected() {
    assert_pending_when_answered(ResponseTemplate::new(409)).await;
}

#[tokio::test]
async fn search_result_ready_yields_priced_donors() {
    let h = harness().await;
    let body = json!({"status": "done", "result": {"pages": [
        {"pageId": 1, "price": 120, "searchId": 77, "forceSeoWait": 0, "mosSites": "abc"},
        {"pageId": 2, "searchId": 77, "forceSeoWait": 0, "mosSites": "abc"}]}});
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&h.server)
        .await;
    let SearchPoll::Ready { donors, unpriced } = h.client.search_result(&job()).await.unwrap()
    else {
        panic!("expected a ready result");
    };
    assert_eq!((donors.len(), donors[0].page_id, unpriced), (1, 1, 1));
}

#[tokio::test]
async fn buy_sends_the_documented_body_once_and_reads_placement_ids() {
    let h = harness().await;
    let expected = json!({"forceSeoWait": 0, "linkTypeId": 1, "filterId": 5, "mosSites": "abc",
        "pagesExtra": null, "searchId": 77, "pages": [{"pageId": 1, "urlId": 2, "textId": 3}]});
    Mock::given(path("/rest/Placement/rent/create/projectId/7"))
        .and(body_json(expected))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"isError": false, "placementIds": [11]})),
        )
        .expect(1)
        .mount(&h.server)
        .await;
    assert_eq!(h.client.buy(7, &order()).await.unwrap(), vec![11]);
}

#[tokio::test]
async fn buy_with_no_pages_is_refused_without_a_request() {
    let h = harness().await;
    let mut empty = order();
    empty.pages.clear();
    let err = h.client.buy(7, &empty).await.unwrap_err();
    assert!(matches!(err, MarketError::InvalidRequest { .. }), "{err:?}");
    assert!(h.server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn list_links_sends_an_empty_object_and_reads_the_nested_variant() {
    let h = harness().await;
    Mock::given(path("/rest/Project/placements/links"))
        .and(body_json(json!({})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"data": {"items": [{"placementId": 11, "pageId": 1, "status": "active"}]}}),
        ))
        .mount(&h.server)
        .await;
    let links = h.client.list_links(7).await.unwrap().links;
    let expected = LinkRecord {
        link_id: Some(11),
        page_id: Some(1),
        status: Some("active".into()),
        ..LinkRecord::default()
    };
    assert_eq!(links, vec![expected]);
}

#[tokio::test]
async fn create_filter_reads_search_filter_id() {
    let h = harness().await;
    Mock::given(path("/rest/SearchFilter"))
        .and(body_json(json!({"name": "f", "priceArticleTo": 500})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"searchFilterId": 4, "isError": false})),
        )
        .mount(&h.server)
        .await;
    let spec = FilterSpec {
        name: "f".into(),
        price_article_to: Some(Money::from_rubles(500)),
        ..FilterSpec::default()
    };
    assert_eq!(h.client.create_filter(&spec).await.unwrap(), 4);
}

#[tokio::test]
async fn create_autobuyer_sends_settings_and_reads_autobuyer_id() {
    let h = harness().await;
    let expected = json!({"autobuyerCommon": {"name": "auto", "isAutoApprove": true}, "searchFilterId": 9,
        "urls": [{"urlId": 8, "settings": {"monthlyBudget": 1000.5, "totalLinksLimit": 20, "dailyLinksLimit": 1}}]});
    Mock::given(path("/rest/Autobuyer/rent/create/projectId/7"))
        .and(body_json(expected))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"autobuyerId": 6, "isError": false})),
        )
        .mount(&h.server)
        .await;
    assert_eq!(h.client.create_autobuyer(7, &autobuyer()).await.unwrap(), 6);
}

#[tokio::test]
async fn stop_and_start_accept_an_empty_body() {
    let h = harness().await;
    Mock::given(body_json(json!({"autobuyersIds": [3, 4]})))
        .respond_with(ResponseTemplate::new(200))
        .expect(2)
        .mount(&h.server)
        .await;
    h.client.stop_autobuyers(&[3, 4]).await.unwrap();
    h.client.start_autobuyers(&[3, 4]).await.unwrap();
}

#[tokio::test]
async fn a_missing_id_is_undecodable_and_names_the_field() {
    let h = harness().await;
    answer(
        &h,
        "/rest/Autobuyer/rent/create/projectId/7",
        200,
        json!({"isError": false}),
    )
    .await;
    let err = h
        .client
        .create_autobuyer(7, &autobuyer())
        .await
        .unwrap_err();
    let MarketError::Undecodable { field, body, .. } = &err else {
        panic!("expected Undecodable, got {err:?}");
    };
    assert_eq!(
        (field.as_str(), body.as_str()),
        ("id|autobuyerId", r#"{"isError":false}"#)
    );
}

#[tokio::test]
async fn a_search_result_that_is_not_json_is_undecodable_not_pending() {
    let h = harness().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>busy</html>"))
        .mount(&h.server)
        .await;
    let err = h.client.search_result(&job()).await.unwrap_err();
    assert!(matches!(err, MarketError::Undecodable { .. }), "{err:?}");
}

#[tokio::test]
async fn an_empty_search_result_body_is_pending() {
    assert_pending_when_answered(ResponseTemplate::new(200)).await;
}
