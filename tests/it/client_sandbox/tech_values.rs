//! Per-donor technical values (`searchId`, `forceSeoWait`, `mosSites`): one purchase call
//! carries one set, so donors may share a call only when their values are equal. With
//! `vary_technical_values` every donor of a search has its own set.

use linkrunner::decide::choose::Pick;
use linkrunner::decide::round::group_by_tech;
use linkrunner::market::{CreatedUrl, Donor, Executed, Market, MarketError};
use linkrunner_sandbox::Op;

use super::support::{order, pair, ready_to_buy, sandbox_config};

fn varied() -> linkrunner_sandbox::SandboxConfig {
    let mut cfg = sandbox_config();
    cfg.vary_technical_values = true;
    cfg
}

/// The engine's grouping of `donors` for one URL and its first text.
fn groups(shoes: &CreatedUrl, donors: &[Donor]) -> Vec<Vec<Pick>> {
    let picks = donors
        .iter()
        .map(|d| Pick {
            url: shoes.url.clone(),
            url_id: shoes.url_id,
            text: shoes.texts[0].text.clone(),
            text_id: shoes.texts[0].text_id,
            donor: d.clone(),
        })
        .collect();
    group_by_tech(picks)
}

#[tokio::test]
async fn donors_of_one_search_share_one_group_by_default() {
    let (_sandbox, client) = pair(sandbox_config()).await;

    let (_, shoes, donors) = ready_to_buy(&client).await;

    let sizes: Vec<usize> = groups(&shoes, &donors).iter().map(Vec::len).collect();
    assert_eq!(sizes, [donors.len()]);
}

#[tokio::test]
async fn with_varied_values_the_engine_puts_each_donor_in_a_group_of_its_own() {
    let (_sandbox, client) = pair(varied()).await;

    let (_, shoes, donors) = ready_to_buy(&client).await;

    let sizes: Vec<usize> = groups(&shoes, &donors).iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![1; donors.len()]);
}

#[tokio::test]
async fn purchases_built_group_by_group_all_succeed() {
    let (sandbox, client) = pair(varied()).await;
    let (project, shoes, donors) = ready_to_buy(&client).await;
    let text_id = shoes.texts[0].text_id;

    for group in groups(&shoes, &donors[..3]) {
        let members: Vec<&Donor> = group.iter().map(|p| &p.donor).collect();
        let order = order(&members, shoes.url_id, text_id);
        client.buy(project.project_id, &order).await.unwrap();
    }

    let ledger = sandbox.ledger();
    let mut bought: Vec<i64> = ledger.purchases.iter().map(|p| p.page_id).collect();
    let mut wanted: Vec<i64> = donors[..3].iter().map(|d| d.page_id).collect();
    bought.sort_unstable();
    wanted.sort_unstable();
    assert_eq!(bought, wanted);
    assert_eq!(ledger.requests_of(Op::BuyLinks, "rejected"), 0);
}

#[tokio::test]
async fn a_purchase_mixing_groups_is_rejected_and_buys_nothing() {
    let (sandbox, client) = pair(varied()).await;
    let (project, shoes, donors) = ready_to_buy(&client).await;
    assert_ne!(donors[0].tech, donors[1].tech, "the donors must differ");
    let mixed = order(
        &[&donors[0], &donors[1]],
        shoes.url_id,
        shoes.texts[0].text_id,
    );

    let err = client.buy(project.project_id, &mixed).await.unwrap_err();

    assert!(
        matches!(&err, MarketError::Rejected { body, .. } if body.contains("do not match")),
        "{err:?}"
    );
    assert_eq!(err.executed(), Executed::No);
    let ledger = sandbox.ledger();
    assert!(ledger.purchases.is_empty());
    assert_eq!(ledger.requests_of(Op::BuyLinks, "rejected"), 1);
}
