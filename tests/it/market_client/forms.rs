//! Answer forms of issue 12 against wiremock: "not found / not finished" while a search runs
//! is `SearchPoll::NotFound` (not a rejection), a read whose body arrived whole but is not
//! JSON is retried within `read_retries`, and a change answered that way is still sent once.

use linkrunner::market::{Executed, Market, MarketError, PendingForm, SearchPoll};
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, ResponseTemplate};

use super::operations::job;
use super::support::{harness, order};

async fn answer_with(status: u16, body: &str) -> Result<SearchPoll, MarketError> {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(status).set_body_string(body))
        .await;
    h.client.search_result(&job()).await
}

#[tokio::test]
async fn a_404_while_the_job_runs_is_not_found_with_the_marketplace_message() {
    let poll = answer_with(
        404,
        r#"{"isError":true,"message":"job not found or not finished"}"#,
    )
    .await
    .unwrap();

    assert_eq!(
        poll,
        SearchPoll::NotFound {
            message: "job not found or not finished".into()
        }
    );
}

#[tokio::test]
async fn an_is_error_200_saying_not_finished_is_not_found() {
    let poll = answer_with(
        200,
        r#"{"isError":true,"message":"Задача ещё не завершена"}"#,
    )
    .await
    .unwrap();

    assert!(matches!(poll, SearchPoll::NotFound { .. }), "{poll:?}");
}

#[tokio::test]
async fn a_422_saying_not_ready_is_not_found_but_another_422_is_rejected() {
    let ready = answer_with(422, r#"{"error":"result not ready"}"#).await;
    let other = answer_with(422, r#"{"error":"metaData mismatch"}"#).await;

    assert!(
        matches!(ready, Ok(SearchPoll::NotFound { .. })),
        "{ready:?}"
    );
    assert!(
        matches!(other, Err(MarketError::Rejected { .. })),
        "{other:?}"
    );
}

#[tokio::test]
async fn the_not_found_message_is_redacted() {
    let body = format!(
        r#"{{"isError":true,"message":"job not found for token {}"}}"#,
        super::support::TOKEN
    );
    let poll = answer_with(200, &body).await.unwrap();

    let SearchPoll::NotFound { message } = poll else {
        panic!("expected NotFound, got {poll:?}");
    };
    assert!(!message.contains(super::support::TOKEN), "{message}");
}

#[tokio::test]
async fn the_poll_says_which_form_meant_pending() {
    let h = harness().await;
    h.answer_every(ResponseTemplate::new(404).set_body_string("gone"))
        .await;

    let (_, seen) = h.client.search_result_seen(&job()).await.unwrap();

    assert_eq!(
        seen.pending,
        Some(PendingForm::NotFound {
            status: Some(404),
            message: "gone".into()
        })
    );
}

/// One answer of `cut` (once), then `whole` for every later request.
async fn cut_once_then(cut: &str, whole: serde_json::Value) -> super::support::Harness {
    let h = harness().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string(cut))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&h.server)
        .await;
    h.answer_every(ResponseTemplate::new(200).set_body_json(whole))
        .await;
    h
}

#[tokio::test]
async fn a_link_list_cut_in_half_is_read_again() {
    let h = cut_once_then(
        r#"{"links":[{"id":1,"pa"#,
        json!({"links": [{"id": 1, "pageId": 2}]}),
    )
    .await;

    let links = h.client.list_links(7).await.unwrap();

    assert_eq!(links.links.len(), 1);
    assert_eq!(h.server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_search_result_cut_in_half_is_read_again() {
    let ready = json!({"status": "done", "pages": [
        {"pageId": 1, "price": 10, "searchId": 1, "forceSeoWait": 0, "mosSites": "m"}]});
    let h = cut_once_then(r#"{"status":"done","pages":[{"pageId":1,"pri"#, ready).await;

    let poll = h.client.search_result(&job()).await.unwrap();

    assert!(matches!(poll, SearchPoll::Ready { .. }), "{poll:?}");
    assert_eq!(h.server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_read_that_is_never_json_is_tried_read_retries_plus_one_times_then_undecodable() {
    let h = harness().await;
    h.answer_exactly(
        ResponseTemplate::new(200).set_body_string("<html>proxy error</html>"),
        3,
    )
    .await;

    let err = h.client.list_links(7).await.unwrap_err();

    let MarketError::Undecodable { field, body, .. } = &err else {
        panic!("expected Undecodable, got {err:?}");
    };
    assert!(field.contains("JSON"), "{field}");
    assert!(body.contains("proxy error"), "{body}");
}

#[tokio::test]
async fn a_purchase_answered_with_json_cut_in_half_is_sent_once_and_executed() {
    let h = harness().await;
    h.answer_exactly(
        ResponseTemplate::new(200).set_body_string(r#"{"isError":false,"placem"#),
        1,
    )
    .await;

    let err = h.client.buy(7, &order()).await.unwrap_err();

    assert!(matches!(err, MarketError::Undecodable { .. }), "{err:?}");
    assert_eq!(err.executed(), Executed::Yes);
}

#[tokio::test]
async fn an_empty_link_list_body_is_not_retried() {
    let h = harness().await;
    h.answer_exactly(ResponseTemplate::new(200), 1).await;

    let err = h.client.list_links(7).await.unwrap_err();

    assert!(matches!(err, MarketError::Undecodable { .. }), "{err:?}");
}
