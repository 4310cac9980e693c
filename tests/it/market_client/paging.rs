//! `list_links` against servers whose paging misbehaves: a page parameter ignored, a total
//! that disagrees with what was read, "more" with no way to ask for it, and a list that
//! never ends (stopped at the page cap with a clear error).

use linkrunner::market::{ListCompleteness, Market, MarketError};
use serde_json::{Value, json};
use wiremock::matchers::{body_json, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

use super::support::harness;

const LIST: &str = "/rest/Project/placements/links";

fn link(id: u64) -> Value {
    json!({"id": id, "pageId": 700_000 + id, "urlId": 5, "price": 100})
}

fn reason_of(c: &ListCompleteness) -> &str {
    match c {
        ListCompleteness::Partial { reason } => reason,
        other => panic!("expected Partial, got {other:?}"),
    }
}

#[tokio::test]
async fn the_next_page_is_asked_for_with_the_names_the_answer_used() {
    let h = harness().await;
    Mock::given(path(LIST))
        .and(body_json(json!({})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"result": {"items": [link(1), link(2)], "pageNo": 1, "perPage": 2, "totalCount": 3}}),
        ))
        .mount(&h.server)
        .await;
    Mock::given(path(LIST))
        .and(body_json(json!({"pageNo": 2, "perPage": 2})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"result": {"items": [link(3)], "pageNo": 2, "perPage": 2, "totalCount": 3}}),
        ))
        .mount(&h.server)
        .await;

    let list = h.client.list_links(7).await.unwrap();

    assert_eq!(list.links.len(), 3);
    assert_eq!(list.completeness, ListCompleteness::AllPages { pages: 2 });
}

#[tokio::test]
async fn a_server_that_ignores_the_page_parameter_gives_a_partial_list() {
    let h = harness().await;
    Mock::given(path(LIST))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"links": [link(1), link(2)], "page": 1, "pageSize": 2, "total": 5}),
        ))
        .mount(&h.server)
        .await;

    let list = h.client.list_links(7).await.unwrap();

    assert_eq!(list.links.len(), 2, "the repeated first page is kept once");
    assert!(reason_of(&list.completeness).contains("ignore the paging parameter"));
    assert_eq!(h.server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_total_that_disagrees_with_the_links_read_gives_a_partial_list() {
    let h = harness().await;
    Mock::given(path(LIST))
        .and(body_json(json!({})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"links": [link(1), link(2)], "offset": 0, "limit": 2, "total": 3}),
        ))
        .mount(&h.server)
        .await;
    Mock::given(path(LIST))
        .and(body_json(json!({"offset": 2, "limit": 2})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"links": [link(3)], "offset": 2, "limit": 2, "total": 4, "hasMore": false}),
        ))
        .mount(&h.server)
        .await;

    let list = h.client.list_links(7).await.unwrap();

    assert_eq!(list.links.len(), 3);
    assert!(reason_of(&list.completeness).contains("announced 4 links and 3 were read"));
}

#[tokio::test]
async fn more_links_with_no_way_to_ask_for_them_give_a_partial_list() {
    let h = harness().await;
    Mock::given(path(LIST))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"links": [link(1)], "hasMore": true, "nextCursor": "b3BhcXVl"}),
            ),
        )
        .mount(&h.server)
        .await;

    let list = h.client.list_links(7).await.unwrap();

    assert_eq!(list.links.len(), 1);
    assert!(reason_of(&list.completeness).contains("names no page or offset"));
    assert_eq!(h.server.received_requests().await.unwrap().len(), 1);
}

/// Answers whatever offset it is asked for with one new link and "more to come".
struct Endless;

impl Respond for Endless {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let offset = body["offset"].as_u64().unwrap_or(0);
        ResponseTemplate::new(200).set_body_json(
            json!({"links": [link(offset + 1)], "offset": offset, "limit": 1, "hasMore": true}),
        )
    }
}

#[tokio::test]
async fn a_list_that_never_ends_stops_at_the_page_cap_with_a_clear_error() {
    let h = harness().await;
    Mock::given(path(LIST))
        .respond_with(Endless)
        .mount(&h.server)
        .await;

    let err = h.client.list_links(7).await.unwrap_err();

    assert!(
        matches!(&err, MarketError::Undecodable { field, .. } if field == "paging"),
        "{err:?}"
    );
    assert!(err.to_string().contains("more than 1000 pages"), "{err}");
    assert_eq!(h.server.received_requests().await.unwrap().len(), 1000);
}
