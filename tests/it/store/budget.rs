//! Caps, autobuyer budgets and price adjustments.

use linkrunner::store::{BeginOutcome, CapKind, Effect, IntentKind, NewIntent, Outcome};

use super::support::*;

fn autobuyer_intent(kind: IntentKind, key: &str, budget_rub: i64) -> NewIntent {
    let intent = free_intent(kind, key, serde_json::json!({"name": "auto"}));
    if budget_rub > 0 {
        reserving(intent, budget_rub)
    } else {
        intent
    }
}

pub async fn reservation_past_the_monthly_cap_records_nothing(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(300, 5, 50)).await;
    started(&db.store, &lease, purchase(1, 200)).await;
    let ledger_before = db.store.campaigns().ledger(CAMPAIGN).await.unwrap();

    let outcome = begin(&db.store, &lease, purchase(2, 150)).await;

    assert_eq!(
        outcome,
        BeginOutcome::CapExceeded {
            campaign: CAMPAIGN.into(),
            cap: CapKind::Monthly,
            needed: 15_000,
            headroom: 10_000
        }
    );
    assert_eq!(state_of(&db.store, &purchase(2, 0).natural_key).await, None);
    assert_eq!(
        db.store.campaigns().ledger(CAMPAIGN).await.unwrap(),
        ledger_before
    );
    assert_books_balance(&db.store).await;
}

pub async fn daily_and_total_link_caps_refuse_a_reservation(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(10_000, 2, 3)).await;
    started(&db.store, &lease, purchase(1, 10)).await;
    started(&db.store, &lease, purchase(2, 10)).await;

    let third_today = begin(&db.store, &lease, purchase(3, 10)).await;
    let mut tomorrow = purchase(4, 10);
    tomorrow.reserve.as_mut().unwrap().day = today().succ_opt().unwrap();
    started(&db.store, &lease, tomorrow).await;
    let mut later = purchase(5, 10);
    later.reserve.as_mut().unwrap().day = today().succ_opt().unwrap();
    let past_total = begin(&db.store, &lease, later).await;

    assert!(
        matches!(
            third_today,
            BeginOutcome::CapExceeded {
                cap: CapKind::Daily,
                needed: 1,
                headroom: 0,
                ..
            }
        ),
        "{third_today:?}"
    );
    assert!(
        matches!(
            past_total,
            BeginOutcome::CapExceeded {
                cap: CapKind::Total,
                needed: 1,
                headroom: 0,
                ..
            }
        ),
        "{past_total:?}"
    );
    let b = budget(&db.store).await;
    assert_eq!((b.links_total, b.links_today, b.committed), (3, 2, rub(30)));
    assert_books_balance(&db.store).await;
}

pub async fn autobuyer_budget_is_held_until_its_confirmed_stop_is_settled(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(3000, 5, 50)).await;
    let created = Effect::AutobuyerCreated {
        name: "auto".into(),
        id: 77,
        running: true,
        spec_fingerprint: "spec1".into(),
        monthly_budget: rub(1000),
    };
    let create = autobuyer_intent(IntentKind::CreateAutobuyer, "create_autobuyer:a", 1000);
    succeeded(&db.store, &lease, create, created).await;
    let running = budget(&db.store).await;
    assert_books_balance(&db.store).await;

    let stop = autobuyer_intent(IntentKind::StopAutobuyer, "stop_autobuyer:a:1", 0);
    let stopped_effect = Effect::AutobuyerRunning {
        name: "auto".into(),
        running: false,
    };
    succeeded(&db.store, &lease, stop, stopped_effect).await;

    // A confirmed stop keeps the budget counted: links it bought just before may not be
    // listed yet. Settling it (after the grace) releases the budget.
    let stopped = budget(&db.store).await;
    let settled = settle_stop(&db.store, "auto").await;
    let after = budget(&db.store).await;
    let record = autobuyer(&db.store, "auto").await;
    assert_eq!(
        (running.held, stopped.held, after.held, after.committed),
        (rub(1000), rub(1000), rub(0), rub(0))
    );
    assert_eq!(
        settled,
        linkrunner::store::StopSettlement::Settled {
            released: rub(1000),
            kept: rub(0)
        }
    );
    assert_eq!(
        (record.id, record.running, record.monthly_budget),
        (77, false, rub(1000))
    );
    assert_books_balance(&db.store).await;
}

pub async fn price_that_differs_from_the_reservation_adjusts_the_commitment(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let id = started(&db.store, &lease, purchase(1, 150)).await;

    complete(&db.store, id, Outcome::Succeeded(purchased(1, None, 120))).await;

    let b = budget(&db.store).await;
    assert_eq!((b.committed, b.held), (rub(120), rub(120)));
    assert_books_balance(&db.store).await;
}

pub async fn lowering_a_cap_keeps_the_commitment(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    started(&db.store, &lease, purchase(1, 400)).await;

    db.store
        .campaigns()
        .upsert_campaign(&caps(300, 1, 10), t0())
        .await
        .unwrap();

    let b = budget(&db.store).await;
    assert_eq!(
        (b.cap, b.committed, b.daily_cap, b.total_cap),
        (rub(300), rub(400), 1, 10)
    );
    assert_eq!(
        db.store.campaigns().campaign_names().await.unwrap(),
        vec![CAMPAIGN.to_string()]
    );
    assert_books_balance(&db.store).await;
}

/// Issue 33: `committed_today` (what even pacing counts against the day's share) is the rent
/// purchases reserved on the day read and did not release: bought, in flight and uncertain
/// ones count; a failed one (its reservation went back), another day's and an autobuyer's
/// budget do not.
pub async fn committed_today_counts_the_days_purchases_that_kept_their_reservation(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(10_000, 10, 50)).await;
    let bought = started(&db.store, &lease, purchase(1, 100)).await;
    complete(
        &db.store,
        bought,
        Outcome::Succeeded(purchased(1, Some(501), 100)),
    )
    .await;
    started(&db.store, &lease, purchase(2, 30)).await;
    let cut = started(&db.store, &lease, purchase(3, 20)).await;
    complete(&db.store, cut, uncertain("timeout")).await;
    let refused = started(&db.store, &lease, purchase(4, 7)).await;
    complete(&db.store, refused, failed("rejected")).await;
    let mut tomorrow = purchase(5, 1000);
    tomorrow.reserve.as_mut().unwrap().day = today().succ_opt().unwrap();
    started(&db.store, &lease, tomorrow).await;
    let autobuyer = autobuyer_intent(IntentKind::CreateAutobuyer, "ab-today", 500);
    started(&db.store, &lease, autobuyer).await;

    let b = budget(&db.store).await;
    assert_eq!(b.day, Some(today()));
    assert_eq!(
        b.committed_today,
        rub(150),
        "100 bought + 30 in flight + 20 uncertain"
    );
    let next = db
        .store
        .campaigns()
        .budget(CAMPAIGN, today().succ_opt().unwrap())
        .await
        .unwrap();
    assert_eq!(next.committed_today, rub(1000));
    assert_books_balance(&db.store).await;
}
