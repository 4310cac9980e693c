//! Paths exactly as the spec writes them, under the base URL's own path, with the search
//! job's values percent-encoded byte for byte.

use linkrunner::market::{Market, MarketError, SearchJob};
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::support::{client_for, harness};

#[tokio::test]
async fn meta_data_and_job_handle_id_are_percent_encoded_byte_for_byte() {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(200).set_body_json(json!({"status": "pending"})))
        .await;
    let job = SearchJob {
        job_handle_id: "job/../1?x#y".into(),
        meta_data: r#"{"sessToken":"a+b/c=","cgeoip_country_iso_code":"RU"}"#.into(),
    };
    h.client.search_result(&job).await.unwrap();
    let requests = h.server.received_requests().await.unwrap();
    assert_eq!(requests[0].method.as_str(), "GET");
    assert_eq!(
        requests[0].url.path(),
        "/rest/SearchRent/rent/tree/getResult/jobHandleId/job%2F..%2F1%3Fx%23y/rentSearchMetaData/\
         %7B%22sessToken%22%3A%22a%2Bb%2Fc%3D%22%2C%22cgeoip_country_iso_code%22%3A%22RU%22%7D"
    );
    assert_eq!(requests[0].url.query(), None);
}

#[tokio::test]
async fn a_dot_dot_job_handle_is_refused_before_sending() {
    let h = harness().await;
    let job = SearchJob {
        job_handle_id: "..".into(),
        meta_data: "{}".into(),
    };
    let err = h.client.search_result(&job).await.unwrap_err();
    assert!(matches!(err, MarketError::InvalidRequest { .. }), "{err:?}");
    assert!(h.server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_base_url_path_prefix_is_kept() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"links": []})))
        .mount(&server)
        .await;
    let client = client_for(&format!("{}/api/v2/", server.uri()));
    client.list_links(42).await.unwrap();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].url.path(),
        "/api/v2/rest/Project/placements/links"
    );
    assert_eq!(requests[0].url.query(), Some("projectId=42"));
}

#[tokio::test]
async fn every_operation_uses_its_documented_path_and_method() {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(200).set_body_json(json!({"id": 1})))
        .await;
    super::operations::call_every_operation(&h.client).await;
    let got: Vec<String> = h
        .server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(
        got,
        [
            "POST /rest/Project/addSimpleProjectAndContent",
            "POST /rest/Content/add/texts/projectId/7",
            "POST /rest/SearchRent/rent/tree/urlId/8",
            "GET /rest/SearchRent/rent/tree/getResult/jobHandleId/j1/rentSearchMetaData/%7B%7D",
            "POST /rest/Placement/rent/create/projectId/7",
            "POST /rest/Project/placements/links",
            "POST /rest/SearchFilter",
            "POST /rest/Autobuyer/rent/create/projectId/7",
            "POST /rest/Autobuyer/stop",
            "POST /rest/Autobuyer/start",
        ]
    );
}
