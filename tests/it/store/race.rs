//! Two daemons (two pools) on one database racing for one campaign's budget: the database
//! refuses every reservation past a cap, without a leader.

use std::sync::Arc;

use linkrunner::store::{LeaseToken, Outcome, StoreError};

use super::support::*;

/// `tasks` concurrent purchases, half through each store; returns how many were started.
async fn race(db: &TestDb, lease: LeaseToken, tasks: i64, price_rub: i64) -> i64 {
    let stores = [db.store.clone(), db.another_store().await];
    let lease = Arc::new(lease);
    let purchases = (0..tasks)
        .map(|page| {
            let store = stores[(page % 2) as usize].clone();
            (store, lease.clone(), purchase(page, price_rub))
        })
        .collect();
    race_purchases(purchases).await
}

pub async fn monthly_cap_holds_with_two_stores_racing(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 100, 100)).await;

    let started = race(&db, lease, 24, 150).await;

    let b = budget(&db.store).await;
    assert_eq!(started, 6, "1000 RUB fits six links at 150");
    assert_eq!(b.committed, rub(150 * started));
    assert_books_balance(&db.store).await;
}

pub async fn link_caps_hold_with_two_stores_racing(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(100_000, 4, 10)).await;

    let started = race(&db, lease, 16, 10).await;

    let b = budget(&db.store).await;
    assert_eq!((started, b.links_today, b.links_total), (4, 4, 4));
    assert_eq!(b.committed, rub(10 * started));
    assert_books_balance(&db.store).await;
}

pub async fn racing_completions_settle_each_intent_once(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(100_000, 100, 100)).await;
    let batch: Vec<_> = (0..12).map(|page| purchase(page, 10)).collect();
    let ids = started_all(&db.store, &lease, &batch).await;
    let stores = [db.store.clone(), db.another_store().await];

    let mut handles = Vec::new();
    for (page, id) in (0i64..).zip(ids) {
        for (n, store) in stores.iter().enumerate() {
            let store = store.clone();
            let outcome = if n == 0 {
                failed("refused")
            } else {
                Outcome::Succeeded(purchased(page, None, 10))
            };
            handles.push(tokio::spawn(async move {
                store
                    .intents()
                    .complete_intent(id, outcome, None, t0())
                    .await
            }));
        }
    }
    let mut settled = 0;
    for h in handles {
        match h.await.expect("task") {
            Ok(()) => settled += 1,
            Err(StoreError::InvalidState { .. }) => {}
            Err(other) => panic!("a racing completion must lose cleanly, got {other}"),
        }
    }

    assert_eq!(settled, 12, "each intent is settled exactly once");
    assert_books_balance(&db.store).await;
}
