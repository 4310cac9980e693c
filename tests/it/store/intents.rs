//! Beginning and completing intents.

use linkrunner::store::{
    Backend, BeginOutcome, IntentFilter, IntentKind, IntentState, Outcome, StoreError,
};

use super::support::*;

fn bought(page: i64, price: i64) -> Outcome {
    Outcome::Succeeded(purchased(page, Some(900 + page), price))
}

pub async fn migrations_are_idempotent(db: TestDb) {
    db.store.migrate().await.expect("second run of migrations");
    let other = db.another_store().await;

    let again = other.migrate().await;

    assert!(again.is_ok(), "{again:?}");
}

pub async fn purchase_that_succeeds_becomes_a_held_link_and_keeps_its_commitment(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let id = started(&db.store, &lease, purchase(1, 150)).await;
    assert_books_balance(&db.store).await;

    db.store
        .intents()
        .complete_intent(id, bought(1, 150), Some("{\"ids\":[901]}"), t0())
        .await
        .expect("complete");

    let b = budget(&db.store).await;
    assert_eq!(
        (b.committed, b.held, b.reserved_in_flight),
        (rub(150), rub(150), rub(0))
    );
    let held = db.store.links().held_links(CAMPAIGN).await.unwrap();
    assert_eq!(
        (held.len(), held[0].link_id, held[0].intent_id),
        (1, Some(901), id.intent)
    );
    assert_books_balance(&db.store).await;
}

pub async fn failed_purchase_releases_its_reservation(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let id = started(&db.store, &lease, purchase(1, 150)).await;

    complete(&db.store, id, failed("HTTP 400")).await;

    let b = budget(&db.store).await;
    assert_eq!((b.committed, b.links_total, b.links_today), (rub(0), 0, 0));
    assert_books_balance(&db.store).await;
}

pub async fn uncertain_purchase_stays_counted_as_spent(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let id = started(&db.store, &lease, purchase(1, 150)).await;

    complete(&db.store, id, uncertain("timeout")).await;

    let b = budget(&db.store).await;
    assert_eq!(
        (b.committed, b.uncertain, b.links_today),
        (rub(150), rub(150), 1)
    );
    assert_books_balance(&db.store).await;
}

pub async fn duplicate_natural_key_is_not_started_again(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let first = started(&db.store, &lease, purchase(1, 150)).await;

    let again = db
        .store
        .intents()
        .begin_intents(&lease, &[purchase(1, 150)], t0())
        .await
        .expect("begin");

    match again {
        BeginOutcome::Exists(row) => {
            assert_eq!((row.id, row.state), (first.intent, IntentState::InFlight))
        }
        other => panic!("expected Exists, got {other:?}"),
    }
    assert_eq!(budget(&db.store).await.committed, rub(150));
    assert_books_balance(&db.store).await;
}

pub async fn failed_intent_is_rearmed_with_a_fresh_reservation(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let first = started(&db.store, &lease, purchase(1, 150)).await;
    complete(&db.store, first, failed("429")).await;

    let second = started(&db.store, &lease, purchase(1, 160)).await;

    let rows = db
        .store
        .intents()
        .find_intents(IntentFilter::default())
        .await
        .unwrap();
    assert_eq!((second.intent, second.attempt), (first.intent, 2));
    assert_eq!(
        (
            rows.len(),
            rows[0].attempts,
            rows[0].state,
            rows[0].error.clone()
        ),
        (1, 2, IntentState::InFlight, None)
    );
    assert_eq!(budget(&db.store).await.committed, rub(160));
    assert_books_balance(&db.store).await;
}

pub async fn batch_is_all_or_nothing(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let existing = started(&db.store, &lease, purchase(2, 100)).await;

    let outcome = db
        .store
        .intents()
        .begin_intents(
            &lease,
            &[purchase(1, 100), purchase(2, 100), purchase(3, 100)],
            t0(),
        )
        .await
        .unwrap();

    assert!(
        matches!(outcome, BeginOutcome::Exists(ref row) if row.id == existing.intent),
        "{outcome:?}"
    );
    assert_eq!(state_of(&db.store, &purchase(1, 0).natural_key).await, None);
    assert_eq!(state_of(&db.store, &purchase(3, 0).natural_key).await, None);
    assert_eq!(budget(&db.store).await.committed, rub(100));
    assert_books_balance(&db.store).await;
}

pub async fn completing_a_finished_intent_is_refused(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let id = started(&db.store, &lease, purchase(1, 150)).await;
    complete(&db.store, id, bought(1, 150)).await;

    let again = db
        .store
        .intents()
        .complete_intent(id, failed("late"), None, t0())
        .await;

    assert!(
        matches!(again, Err(StoreError::InvalidState { .. })),
        "{again:?}"
    );
    assert_eq!(budget(&db.store).await.committed, rub(150));
    assert_books_balance(&db.store).await;
}

pub async fn intents_are_filtered_by_campaign_state_and_kind(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let bought_id = started(&db.store, &lease, purchase(1, 100)).await;
    started(&db.store, &lease, purchase(2, 100)).await;
    let filter = free_intent(
        IntentKind::CreateFilter,
        "create_filter:acme-shoes:cheap",
        serde_json::json!({"name": "cheap"}),
    );
    started(&db.store, &lease, filter).await;
    complete(&db.store, bought_id, bought(1, 100)).await;

    let in_flight_purchases = db
        .store
        .intents()
        .find_intents(IntentFilter {
            campaign: Some(CAMPAIGN.into()),
            states: vec![IntentState::InFlight],
            kind: Some(IntentKind::Purchase),
        })
        .await
        .unwrap();
    let other_campaign = db
        .store
        .intents()
        .find_intents(IntentFilter {
            campaign: Some("other".into()),
            ..Default::default()
        })
        .await
        .unwrap();

    let keys: Vec<_> = in_flight_purchases
        .iter()
        .map(|i| i.natural_key.as_str())
        .collect();
    assert_eq!(keys, vec![purchase(2, 0).natural_key.as_str()]);
    assert!(other_campaign.is_empty());
}

pub async fn store_reports_the_backend_its_url_names(db: TestDb) {
    let expected = if db.url.starts_with("sqlite:") {
        Backend::Sqlite
    } else {
        Backend::Postgres
    };

    let backend = db.store.backend();

    assert_eq!(backend, expected);
}
