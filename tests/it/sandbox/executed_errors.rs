//! A change that was made but answered as an error that carries the ids of what was done:
//! `isError: true` with ids (or HTTP 422 in the `http` error style). The ledger holds it.

use std::collections::BTreeSet;

use linkrunner_sandbox::{Faults, Op};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{config, start, with_acme_project};

fn executed_errors(ops: Option<&[Op]>) -> Faults {
    Faults {
        executed_error_rate: 1.0,
        executed_error_ops: ops.map(|o| o.iter().copied().collect::<BTreeSet<_>>()),
        ..Faults::default()
    }
}

#[tokio::test]
async fn a_purchase_answered_is_error_carries_the_ids_of_the_links_it_bought() {
    let mut cfg = config();
    cfg.faults = executed_errors(Some(&[Op::BuyLinks]));
    let sbx = start(cfg).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;

    let (status, body) = sbx
        .buy(project, &[&donors[0], &donors[1]], url_id, text_id)
        .await;

    let ledger = sbx.handle.ledger();
    let ids: Vec<Value> = ledger.purchases.iter().map(|p| json!(p.link_id)).collect();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["isError"], json!(true));
    assert_eq!(body["message"], json!("partially failed"));
    assert_eq!(body["placementIds"], Value::Array(ids));
    assert_eq!(ledger.purchases.len(), 2);
    assert_eq!(ledger.requests_of(Op::BuyLinks, "executed_error"), 1);
    assert_eq!(
        ledger.requests_of(Op::AddProject, "ok"),
        1,
        "limited to buy_links"
    );
}

#[tokio::test]
async fn in_the_http_error_style_it_is_a_422_that_carries_the_ids() {
    let mut cfg = config();
    cfg.shape = "errors=http".parse().unwrap();
    cfg.faults = executed_errors(Some(&[Op::BuyLinks]));
    let sbx = start(cfg).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;

    let (status, body) = sbx.buy(project, &[&donors[0]], url_id, text_id).await;

    let ledger = sbx.handle.ledger();
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"], json!("partially failed"));
    assert_eq!(body["placementIds"], json!([ledger.purchases[0].link_id]));
    assert!(body.get("isError").is_none());
}

#[tokio::test]
async fn create_answers_reported_as_errors_still_carry_their_ids() {
    let mut cfg = config();
    cfg.faults = executed_errors(None);
    let sbx = start(cfg).await;

    let (_, project) = sbx.create_project("https://acme.example").await;
    let filter = json!({"name": "f", "priceArticleFrom": 0, "priceArticleTo": 10});
    let (_, created) = sbx.post("/rest/SearchFilter", filter).await;

    let ledger = sbx.handle.ledger();
    assert_eq!(project["isError"], json!(true));
    assert_eq!(project["id"], json!(ledger.projects[0].id));
    assert_eq!(created["isError"], json!(true));
    assert_eq!(created["id"], json!(ledger.filters[0].id));
    assert_eq!(ledger.requests_of(Op::AddFilter, "executed_error"), 1);
}

#[tokio::test]
async fn the_fault_can_be_switched_on_at_run_time_and_reads_never_get_it() {
    let (sbx, project, _, _) = with_acme_project().await;

    let (status, _) = sbx
        .post(
            "/__sandbox/faults",
            json!({"executed_error_rate": 1.0, "executed_error_ops": null}),
        )
        .await;
    let (_, listed) = sbx
        .post(
            &format!("/rest/Project/placements/links?projectId={project}"),
            json!({}),
        )
        .await;
    let (_, second) = sbx.create_project("https://b.example").await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed, json!({"links": []}));
    assert_eq!(second["isError"], json!(true));
    assert_eq!(sbx.handle.ledger().projects.len(), 2);
}
