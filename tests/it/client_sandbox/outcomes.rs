//! Outcome classes the sandbox can provoke by its rules alone (no injected faults): ok,
//! rejected (`isError: true` or HTTP 4xx, per the error style), connect failures, and answers
//! the client cannot read.

use linkrunner::market::{Executed, FieldMap, Market, MarketError, UrlTexts};
use linkrunner_sandbox::{Op, Shape};

use super::flow::cheap_filter;
use super::support::{
    DOMAIN, client_with, pair, poll_until_ready, project_with_shoes, ready_order, sandbox_config,
    search_params,
};
use crate::support::sandbox;

fn with_errors(style: &str) -> linkrunner_sandbox::SandboxConfig {
    let mut cfg = sandbox_config();
    cfg.shape = format!("errors={style}").parse::<Shape>().unwrap();
    cfg
}

fn off_domain() -> Vec<UrlTexts> {
    vec![UrlTexts {
        url: "https://elsewhere.example/shoes".into(),
        texts: vec!["#a#shoes#/a#".into()],
    }]
}

fn blank_anchor() -> Vec<UrlTexts> {
    vec![UrlTexts {
        url: "https://acme.example/shoes".into(),
        texts: vec!["Best #a#  #/a# shoes".into()],
    }]
}

/// Adds `urls` to a fresh project in a sandbox with the given error style; returns the error
/// and how many URLs the sandbox holds afterwards (the project's main page is one).
async fn add_invalid(style: &str, urls: Vec<UrlTexts>) -> (MarketError, usize, u64) {
    let (sandbox, client) = pair(with_errors(style)).await;
    let project = client.create_project(DOMAIN).await.unwrap();

    let err = client
        .add_texts(project.project_id, &urls)
        .await
        .unwrap_err();

    let ledger = sandbox.ledger();
    let rejected = ledger.requests_of(Op::AddTexts, "rejected");
    (err, ledger.urls.len(), rejected)
}

/// Adding `urls` in a sandbox with error `style` is rejected (with HTTP `status`, saying
/// `says`), counted once as rejected, and leaves only the project's main page.
async fn rejected_adding_nothing(
    style: &str,
    urls: Vec<UrlTexts>,
    status: Option<u16>,
    says: &str,
) {
    let (err, urls, rejected) = add_invalid(style, urls).await;
    assert_rejected(&err, status, says);
    assert_eq!((urls, rejected), (1, 1));
}

fn assert_rejected(err: &MarketError, status: Option<u16>, says: &str) {
    match err {
        MarketError::Rejected {
            status: s, body, ..
        } => {
            assert_eq!(*s, status, "{err}");
            assert!(body.contains(says), "{err}");
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert_eq!(err.executed(), Executed::No);
}

#[tokio::test]
async fn a_url_off_the_project_domain_is_rejected_by_is_error_and_adds_nothing() {
    rejected_adding_nothing(
        "is_error",
        off_domain(),
        None,
        "not on the project's domain",
    )
    .await;
}

#[tokio::test]
async fn a_url_off_the_project_domain_is_rejected_by_http_422_and_adds_nothing() {
    rejected_adding_nothing(
        "http",
        off_domain(),
        Some(422),
        "not on the project's domain",
    )
    .await;
}

#[tokio::test]
async fn a_blank_anchor_is_rejected_by_is_error_and_adds_nothing() {
    rejected_adding_nothing("is_error", blank_anchor(), None, "blank anchor").await;
}

#[tokio::test]
async fn a_blank_anchor_is_rejected_by_http_422_and_adds_nothing() {
    rejected_adding_nothing("http", blank_anchor(), Some(422), "blank anchor").await;
}

#[tokio::test]
async fn a_purchase_with_an_unknown_link_type_is_rejected_and_buys_nothing() {
    let (sandbox, client, project, mut bad) = ready_order(sandbox_config()).await;
    bad.link_type_id = 9;

    let err = client.buy(project.project_id, &bad).await.unwrap_err();

    assert_rejected(&err, None, "linkTypeId 9");
    let ledger = sandbox.ledger();
    assert!(ledger.purchases.is_empty());
    assert_eq!(ledger.requests_of(Op::BuyLinks, "rejected"), 1);
}

#[tokio::test]
async fn stopping_an_unknown_autobuyer_is_rejected() {
    let (sandbox, client) = pair(sandbox_config()).await;

    let err = client.stop_autobuyers(&[424_242]).await.unwrap_err();

    assert_rejected(&err, None, "autobuyer 424242 does not exist");
    assert_eq!(
        sandbox.ledger().requests_of(Op::StopAutobuyers, "rejected"),
        1
    );
}

#[tokio::test]
async fn a_closed_port_is_a_connect_error_and_nothing_was_executed() {
    let sandbox = sandbox::start(sandbox_config()).await;
    let base = sandbox.base_url();
    sandbox.shutdown().await;
    let client = client_with(&base, |_| {});

    let err = client.create_project(DOMAIN).await.unwrap_err();

    assert!(matches!(err, MarketError::Connect { .. }), "{err:?}");
    assert_eq!(err.executed(), Executed::No);
}

#[tokio::test]
async fn a_create_answer_without_a_readable_id_is_undecodable_but_executed() {
    let sandbox = sandbox::start(sandbox_config()).await;
    // An operator's field map naming a field that is present but holds no id.
    let map = FieldMap::parse("filter_id=isError").unwrap();
    let client = client_with(&sandbox.base_url(), |c| c.field_map = map);

    let err = client.create_filter(&cheap_filter()).await.unwrap_err();

    match &err {
        MarketError::Undecodable { field, body, .. } => {
            assert!(field.starts_with("isError"), "{err}");
            assert!(body.contains("isError"), "{err}");
        }
        other => panic!("expected Undecodable, got {other:?}"),
    }
    assert_eq!(err.executed(), Executed::Yes);
    assert_eq!(sandbox.ledger().filters.len(), 1);
}

#[tokio::test]
async fn donors_whose_mapped_price_field_is_unreadable_are_counted_never_offered() {
    let sandbox = sandbox::start(sandbox_config()).await;
    let map = FieldMap::parse("price=currency").unwrap();
    let client = client_with(&sandbox.base_url(), |c| c.field_map = map);
    let (_, shoes) = project_with_shoes(&client).await;
    let job = client
        .start_search(shoes.url_id, &search_params())
        .await
        .unwrap();

    let (donors, unpriced) = poll_until_ready(&client, &job).await;

    assert!(donors.is_empty(), "{donors:?}");
    assert_eq!(unpriced, 10);
}
