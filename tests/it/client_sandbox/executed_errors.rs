//! A change the sandbox made but answered as an error carrying the ids of what it did
//! (`isError: true`, or HTTP 422 in the `http` style): the client must not read it as "not
//! executed". It is `Uncertain` (may have executed), sent once, with the redacted body.

use std::collections::BTreeSet;

use linkrunner::market::{Executed, Market, MarketError};
use linkrunner_sandbox::{Faults, Op, SandboxConfig};

use super::flow::{autobuyer, cheap_filter, created_autobuyer};
use super::support::{
    DOMAIN, TICKET, TOKEN, order, pair, ready_order, ready_to_buy, sandbox_config,
};
use crate::support::ledger;

fn executed_errors(style: &str, ops: &[Op]) -> SandboxConfig {
    let mut cfg = sandbox_config();
    cfg.shape = format!("errors={style}").parse().unwrap();
    cfg.faults = Faults {
        executed_error_rate: 1.0,
        executed_error_ops: Some(ops.iter().copied().collect::<BTreeSet<_>>()),
        ..Faults::default()
    };
    cfg
}

fn assert_uncertain_with_ids(err: &MarketError, ids: &[i64]) {
    assert!(matches!(err, MarketError::Uncertain { .. }), "{err:?}");
    assert_eq!(err.executed(), Executed::Maybe);
    let text = err.to_string();
    for id in ids {
        assert!(text.contains(&id.to_string()), "{text}");
    }
    assert!(!text.contains(TOKEN) && !text.contains(TICKET));
}

async fn purchase_answered_as_error(style: &str) {
    let (sandbox, client) = pair(executed_errors(style, &[Op::BuyLinks])).await;
    let (project, shoes, donors) = ready_to_buy(&client).await;
    let pages = [&donors[0], &donors[1]];

    let err = client
        .buy(
            project.project_id,
            &order(&pages, shoes.url_id, shoes.texts[0].text_id),
        )
        .await
        .unwrap_err();

    let ledger = sandbox.ledger();
    let ids: Vec<i64> = ledger.purchases.iter().map(|p| p.link_id).collect();
    assert_eq!(ids.len(), 2, "the sandbox bought both pages");
    assert_uncertain_with_ids(&err, &ids);
    assert_eq!(ledger::requests(&ledger, Op::BuyLinks), 1, "never resent");
    assert_eq!(ledger.requests_of(Op::BuyLinks, "executed_error"), 1);
}

#[tokio::test]
async fn a_purchase_answered_is_error_with_link_ids_is_uncertain_not_nothing_bought() {
    purchase_answered_as_error("is_error").await;
}

#[tokio::test]
async fn a_purchase_answered_422_with_link_ids_is_uncertain_not_nothing_bought() {
    purchase_answered_as_error("http").await;
}

#[tokio::test]
async fn creations_answered_as_errors_with_their_ids_are_uncertain() {
    let ops = [Op::AddProject, Op::AddFilter, Op::CreateAutobuyer];
    let (sandbox, client) = pair(executed_errors("is_error", &ops)).await;

    let project = client.create_project(DOMAIN).await.unwrap_err();
    let filter = client.create_filter(&cheap_filter()).await.unwrap_err();
    let ledger = sandbox.ledger();
    let (project_id, url_id) = (ledger.projects[0].id, ledger.urls[0].id);
    let filter_id = ledger.filters[0].id;
    let created = client
        .create_autobuyer(project_id, &autobuyer(filter_id, url_id))
        .await
        .unwrap_err();

    assert_uncertain_with_ids(&project, &[project_id]);
    assert_uncertain_with_ids(&filter, &[filter_id]);
    assert_uncertain_with_ids(&created, &[sandbox.ledger().autobuyers[0].id]);
}

#[tokio::test]
async fn a_start_answered_as_an_error_with_the_autobuyer_ids_is_uncertain() {
    let (sandbox, client) = pair(executed_errors("http", &[Op::StartAutobuyers])).await;
    let id = created_autobuyer(&client).await;

    let err = client.start_autobuyers(&[id]).await.unwrap_err();

    assert_uncertain_with_ids(&err, &[id]);
    let state = sandbox.ledger().autobuyer(id).unwrap().state;
    assert_eq!(state, linkrunner_sandbox::AutobuyerState::Running);
}

#[tokio::test]
async fn a_refusal_without_ids_is_still_a_rejection_that_executed_nothing() {
    let (sandbox, client, project, mut wrong) =
        ready_order(executed_errors("http", &[Op::BuyLinks])).await;
    wrong.link_type_id = 9;

    let err = client.buy(project.project_id, &wrong).await.unwrap_err();

    assert!(
        matches!(
            err,
            MarketError::Rejected {
                status: Some(422),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.executed(), Executed::No);
    assert!(sandbox.ledger().purchases.is_empty());
}
