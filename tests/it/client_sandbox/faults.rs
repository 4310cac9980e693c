//! Every injected fault, each limited to where it applies: 5xx errors (`error_rate`,
//! `error_ops`), latency past the client's request timeout, the server-wide rate limit, and
//! answers cut short after the change was made (`drop_after_commit_rate`, `drop_ops`).
//! Calls that change something are sent exactly once whatever happens; reads are retried.

use std::collections::BTreeSet;
use std::time::Duration;

use linkrunner::market::{Executed, Market, MarketClient, MarketError};
use linkrunner_sandbox::faults::FaultState;
use linkrunner_sandbox::{Faults, Op, SandboxConfig, SandboxHandle};

use super::flow::cheap_filter;
use super::support::{client_with, pair, ready_order, sandbox_config};
use crate::support::ledger;
use crate::support::sandbox;

fn only(op: Op) -> Option<BTreeSet<Op>> {
    Some(BTreeSet::from([op]))
}

fn errors_on(op: Op, rate: f64) -> Faults {
    Faults {
        error_rate: rate,
        error_ops: only(op),
        ..Faults::default()
    }
}

fn cut_on(op: Op) -> Faults {
    Faults {
        drop_after_commit_rate: 1.0,
        drop_ops: only(op),
        ..Faults::default()
    }
}

fn assert_uncertain(err: &MarketError, status: Option<u16>) {
    match err {
        MarketError::Uncertain { status: s, .. } => assert_eq!(*s, status, "{err}"),
        other => panic!("expected Uncertain, got {other:?}"),
    }
    assert_eq!(err.executed(), Executed::Maybe);
}

// --- error_rate ---------------------------------------------------------------------------

/// The purchase call reached the sandbox once, ended there as `outcome`, and bought nothing.
fn assert_one_purchase_call_bought_nothing(sandbox: &SandboxHandle, outcome: &str) {
    let ledger = sandbox.ledger();
    assert_eq!(ledger::requests(&ledger, Op::BuyLinks), 1);
    assert_eq!(ledger.requests_of(Op::BuyLinks, outcome), 1);
    assert!(ledger.purchases.is_empty());
}

#[tokio::test]
async fn an_injected_5xx_on_a_purchase_is_uncertain_and_sent_exactly_once() {
    let mut cfg = sandbox_config();
    cfg.faults = errors_on(Op::BuyLinks, 1.0);
    let (sandbox, client, project, order) = ready_order(cfg).await;

    let err = client.buy(project.project_id, &order).await.unwrap_err();

    assert_uncertain(&err, Some(503));
    assert_one_purchase_call_bought_nothing(&sandbox, "fault");
}

#[tokio::test]
async fn injected_errors_hit_only_the_operations_listed() {
    let mut cfg = sandbox_config();
    cfg.faults = errors_on(Op::BuyLinks, 1.0);
    let (sandbox, client, project, order) = ready_order(cfg).await;
    let _ = client.buy(project.project_id, &order).await;
    client.list_links(project.project_id).await.unwrap();
    client.create_filter(&cheap_filter()).await.unwrap();

    let ledger = sandbox.ledger();

    let faulted: Vec<&str> = ledger
        .requests
        .iter()
        .filter(|(_, by_outcome)| by_outcome.contains_key("fault"))
        .map(|(op, _)| op.as_str())
        .collect();
    assert_eq!(faulted, ["buy_links"], "{:?}", ledger.requests);
}

#[tokio::test]
async fn an_injected_5xx_on_a_read_is_retried_read_retries_times_then_uncertain() {
    let mut cfg = sandbox_config();
    cfg.faults = errors_on(Op::ListLinks, 1.0);
    let (sandbox, client) = pair(cfg).await;

    let err = client.list_links(1001).await.unwrap_err();

    assert_uncertain(&err, Some(503));
    assert_eq!(sandbox.ledger().requests_of(Op::ListLinks, "fault"), 3);
}

/// A seed whose fault sequence fails the first `list_links` and lets the second through.
fn seed_failing_only_the_first_read(faults: &Faults) -> u64 {
    (1..10_000)
        .find(|seed| {
            let mut state = FaultState::new(faults.clone(), *seed);
            state.draw_error(Op::ListLinks) && !state.draw_error(Op::ListLinks)
        })
        .expect("half of all seeds start with an error then a success")
}

/// A link-list read on a fresh project through a sandbox with `cfg`: it succeeds (no links)
/// after exactly one request that ended as `first`, retried once.
async fn assert_list_read_succeeds_after_one(cfg: SandboxConfig, first: &str) {
    let (sandbox, client) = pair(cfg).await;
    let project = client.create_project("https://acme.example").await.unwrap();

    let links = client.list_links(project.project_id).await.unwrap().links;

    assert!(links.is_empty());
    let ledger = sandbox.ledger();
    let seen = (
        ledger.requests_of(Op::ListLinks, first),
        ledger.requests_of(Op::ListLinks, "ok"),
    );
    assert_eq!(seen, (1, 1));
}

#[tokio::test]
async fn a_read_retried_after_an_injected_5xx_succeeds() {
    let faults = errors_on(Op::ListLinks, 0.5);
    let mut cfg = sandbox_config();
    cfg.seed = seed_failing_only_the_first_read(&faults);
    cfg.faults = faults;
    assert_list_read_succeeds_after_one(cfg, "fault").await;
}

// --- latency ------------------------------------------------------------------------------

/// A sandbox whose every call takes 600 ms, and a client that gives up after 250 ms (wide
/// margins, so a loaded machine still gets each request to the sandbox before the timeout).
async fn slow_sandbox() -> (SandboxHandle, MarketClient) {
    let mut cfg = sandbox_config();
    cfg.faults.latency_ms = 600;
    let sandbox = sandbox::start(cfg).await;
    let client = client_with(&sandbox.base_url(), |c| {
        c.request_timeout = Duration::from_millis(250);
    });
    (sandbox, client)
}

#[tokio::test]
async fn a_change_slower_than_the_request_timeout_is_uncertain_and_sent_exactly_once() {
    let (sandbox, client) = slow_sandbox().await;

    let err = client.create_filter(&cheap_filter()).await.unwrap_err();

    assert_uncertain(&err, None);
    let ledger = ledger::ledger_when(&sandbox, |l| ledger::requests(l, Op::AddFilter) >= 1).await;
    assert_eq!(ledger.requests_of(Op::AddFilter, "abandoned"), 1);
    assert_eq!(ledger::requests(&ledger, Op::AddFilter), 1);
    assert!(ledger.filters.is_empty());
}

#[tokio::test]
async fn a_read_slower_than_the_request_timeout_is_retried_then_uncertain() {
    let (sandbox, client) = slow_sandbox().await;

    let err = client.list_links(1001).await.unwrap_err();

    assert_uncertain(&err, None);
    let ledger = ledger::ledger_when(&sandbox, |l| ledger::requests(l, Op::ListLinks) >= 3).await;
    assert_eq!(ledger.requests_of(Op::ListLinks, "abandoned"), 3);
}

// --- rate_limit ---------------------------------------------------------------------------

#[tokio::test]
async fn a_purchase_refused_by_the_rate_limit_is_rate_limited_and_not_retried() {
    let (sandbox, client, project, order) = ready_order(sandbox_config()).await;
    sandbox
        .set_faults(Faults {
            rate_limit: Some(1),
            ..Faults::default()
        })
        .unwrap();
    client.list_links(project.project_id).await.unwrap();

    let err = client.buy(project.project_id, &order).await.unwrap_err();

    assert!(matches!(err, MarketError::RateLimited { .. }), "{err:?}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!(err.executed(), Executed::No);
    assert_one_purchase_call_bought_nothing(&sandbox, "rate_limited");
}

#[tokio::test]
async fn a_read_refused_by_the_rate_limit_is_retried_after_retry_after_and_succeeds() {
    let mut cfg = sandbox_config();
    cfg.faults.rate_limit = Some(1);
    assert_list_read_succeeds_after_one(cfg, "rate_limited").await;
}

// --- drop_after_commit --------------------------------------------------------------------

#[tokio::test]
async fn a_purchase_whose_answer_is_cut_after_commit_is_uncertain_yet_in_the_ledger() {
    let (sandbox, client, project, order) = ready_order(sandbox_config()).await;
    sandbox.set_faults(cut_on(Op::BuyLinks)).unwrap();

    let err = client.buy(project.project_id, &order).await.unwrap_err();

    assert_uncertain(&err, Some(200));
    let ledger = sandbox.ledger();
    assert_eq!(ledger::requests(&ledger, Op::BuyLinks), 1);
    let bought: Vec<i64> = ledger.purchases.iter().map(|p| p.page_id).collect();
    assert_eq!(bought, [order.pages[0].page_id]);
}

#[tokio::test]
async fn answers_are_cut_only_for_the_operations_listed() {
    let (sandbox, client, project, order) = ready_order(sandbox_config()).await;
    sandbox.set_faults(cut_on(Op::AddFilter)).unwrap();

    let bought = client.buy(project.project_id, &order).await;
    let filter = client.create_filter(&cheap_filter()).await;

    assert_eq!(bought.unwrap().len(), 1);
    assert_uncertain(&filter.unwrap_err(), Some(200));
    assert_eq!(sandbox.ledger().filters.len(), 1);
}

#[tokio::test]
async fn a_read_whose_answer_is_cut_is_retried_then_uncertain() {
    let (sandbox, client) = pair(sandbox_config()).await;
    let project = client.create_project("https://acme.example").await.unwrap();
    sandbox.set_faults(cut_on(Op::ListLinks)).unwrap();

    let err = client.list_links(project.project_id).await.unwrap_err();

    assert_uncertain(&err, Some(200));
    assert_eq!(sandbox.ledger().requests_of(Op::ListLinks, "ok"), 3);
}
