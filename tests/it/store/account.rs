//! The account-wide cap (issue 24): the sum of every campaign's commitment stays under it,
//! checked in the transaction of each reservation, also with two daemons racing.

use std::sync::Arc;

use linkrunner::store::{AccountBudget, BeginOutcome, CapKind, LeaseToken, NewIntent, Store};

use super::support::*;

const OTHER: &str = "acme-boots";

/// [`purchase`] for `campaign`.
fn purchase_in(campaign: &str, page: i64, price_rub: i64) -> NewIntent {
    let mut p = purchase(page, price_rub);
    p.natural_key = format!("purchase:{campaign}:{page}:10:20");
    p.campaign = campaign.into();
    p
}

/// Two campaigns, each allowed far more than the account, with a lease on each.
async fn two_campaigns(store: &Store) -> (LeaseToken, LeaseToken) {
    let a = campaign_with_lease(store, &caps(100_000, 100, 100)).await;
    let mut other = caps(100_000, 100, 100);
    other.name = OTHER.into();
    let b = campaign_with_lease(store, &other).await;
    (a, b)
}

pub async fn account_cap_refuses_a_reservation_that_two_campaigns_together_would_pass(db: TestDb) {
    let (a, b) = two_campaigns(&db.store).await;
    db.store
        .campaigns()
        .set_account_cap(Some(rub(500)), "test", t0())
        .await
        .unwrap();
    let first = db
        .store
        .intents()
        .begin_intents(&a, &[purchase_in(CAMPAIGN, 1, 300)], t0())
        .await
        .unwrap();
    assert!(matches!(first, BeginOutcome::Started(_)), "{first:?}");

    let second = db
        .store
        .intents()
        .begin_intents(&b, &[purchase_in(OTHER, 2, 300)], t0())
        .await
        .unwrap();

    assert_eq!(
        second,
        BeginOutcome::CapExceeded {
            campaign: OTHER.into(),
            cap: CapKind::Account,
            needed: 30_000,
            headroom: 20_000,
        }
    );
    assert_eq!(
        state_of(&db.store, &purchase_in(OTHER, 2, 0).natural_key).await,
        None
    );
    let other = db.store.campaigns().budget(OTHER, today()).await.unwrap();
    assert_eq!(
        (other.committed, other.links_total),
        (rub(0), 0),
        "rolled back"
    );
    assert!(db.store.campaigns().ledger(OTHER).await.unwrap().is_empty());
    assert_eq!(
        db.store.campaigns().account_budget().await.unwrap(),
        AccountBudget {
            cap: Some(rub(500)),
            committed: rub(300)
        }
    );
    let fits = db
        .store
        .intents()
        .begin_intents(&b, &[purchase_in(OTHER, 3, 200)], t0())
        .await
        .unwrap();
    assert!(
        matches!(fits, BeginOutcome::Started(_)),
        "exactly up to the cap: {fits:?}"
    );
    assert_books_balance(&db.store).await;
}

pub async fn removing_the_account_cap_lets_the_campaign_caps_alone_decide(db: TestDb) {
    let (a, _) = two_campaigns(&db.store).await;
    db.store
        .campaigns()
        .set_account_cap(Some(rub(100)), "test", t0())
        .await
        .unwrap();
    let refused = db
        .store
        .intents()
        .begin_intents(&a, &[purchase_in(CAMPAIGN, 1, 150)], t0())
        .await
        .unwrap();
    assert!(
        matches!(
            refused,
            BeginOutcome::CapExceeded {
                cap: CapKind::Account,
                ..
            }
        ),
        "{refused:?}"
    );

    db.store
        .campaigns()
        .set_account_cap(None, "test", t0())
        .await
        .unwrap();
    let started = db
        .store
        .intents()
        .begin_intents(&a, &[purchase_in(CAMPAIGN, 1, 150)], t0())
        .await
        .unwrap();

    assert!(matches!(started, BeginOutcome::Started(_)), "{started:?}");
    assert_eq!(
        db.store.campaigns().account_budget().await.unwrap(),
        AccountBudget {
            cap: None,
            committed: rub(150)
        }
    );
    assert_books_balance(&db.store).await;
}

/// Two daemons (two pools), each buying for its own campaign: together they stay under the
/// account cap, though each campaign's own cap would allow far more.
pub async fn account_cap_holds_with_two_stores_racing_for_two_campaigns(db: TestDb) {
    let (a, b) = two_campaigns(&db.store).await;
    db.store
        .campaigns()
        .set_account_cap(Some(rub(1000)), "test", t0())
        .await
        .unwrap();
    let stores = [db.store.clone(), db.another_store().await];
    let leases = [Arc::new(a), Arc::new(b)];
    let purchases = (0..24_i64)
        .map(|page| {
            let i = (page % 2) as usize;
            let campaign = [CAMPAIGN, OTHER][i];
            let purchase = purchase_in(campaign, page, 150);
            (stores[i].clone(), leases[i].clone(), purchase)
        })
        .collect();
    let started = race_purchases(purchases).await;

    let account = db.store.campaigns().account_budget().await.unwrap();
    assert_eq!(
        started, 6,
        "1000 RUB fits six links at 150, whichever campaign buys"
    );
    assert_eq!(account.committed, rub(150 * started));
    assert_books_balance(&db.store).await;
}
