//! Leases, fencing, takeover and operator resolution.

use chrono::Duration;
use linkrunner::store::{
    AttemptRef, BeginOutcome, IntentKind, IntentRow, IntentState, Resolution, Store, StoreError,
};

use super::support::*;

/// The operator's word on the uncertain intent of `at`, recorded at `t0`.
async fn resolve(store: &Store, at: AttemptRef, word: Resolution, note: &str) -> IntentRow {
    store
        .intents()
        .resolve_intent(at.intent, word, note, t0())
        .await
        .expect("resolve")
}

pub async fn fenced_lease_writes_nothing(db: TestDb) {
    let old = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let later = t0() + Duration::minutes(6);
    let new = lease_at(&db.store, CAMPAIGN, "daemon-b", later).await;

    let outcome = db
        .store
        .intents()
        .begin_intents(&old, &[purchase(1, 100)], later)
        .await
        .unwrap();

    assert_eq!(outcome, BeginOutcome::Fenced);
    assert!(new.fence > old.fence);
    assert_eq!(state_of(&db.store, &purchase(1, 0).natural_key).await, None);
    assert!(
        db.store
            .campaigns()
            .ledger(CAMPAIGN)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn takeover_bumps_the_fence_and_marks_in_flight_intents_uncertain(db: TestDb) {
    let old = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    started(&db.store, &old, purchase(1, 100)).await;
    let refused = db
        .store
        .leases()
        .try_acquire_lease(CAMPAIGN, "daemon-b", Duration::minutes(5), t0())
        .await
        .unwrap();
    let later = t0() + Duration::minutes(6);
    let new = lease_at(&db.store, CAMPAIGN, "daemon-b", later).await;

    let marked = db
        .store
        .intents()
        .mark_in_flight_uncertain(CAMPAIGN, &new, later)
        .await
        .unwrap();

    assert!(refused.is_none(), "a live lease is not taken over");
    assert_eq!((new.fence, marked), (old.fence + 1, 1));
    assert_eq!(
        state_of(&db.store, &purchase(1, 0).natural_key).await,
        Some(IntentState::Uncertain)
    );
    let stale = db
        .store
        .intents()
        .mark_in_flight_uncertain(CAMPAIGN, &old, later)
        .await;
    assert!(
        matches!(stale, Err(StoreError::Fenced { .. })),
        "old holder is fenced: {stale:?}"
    );
    assert_books_balance(&db.store).await;
}

pub async fn lease_is_renewed_by_its_holder_only(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let stranger = linkrunner::store::LeaseToken {
        holder: "daemon-b".into(),
        ..lease.clone()
    };

    let renewed = db
        .store
        .leases()
        .renew_lease(&lease, Duration::minutes(10), t0() + Duration::minutes(1))
        .await
        .unwrap();
    let not_ours = db
        .store
        .leases()
        .renew_lease(&stranger, Duration::minutes(10), t0())
        .await
        .unwrap();

    let renewed = renewed.expect("holder renews");
    assert_eq!(
        (renewed.fence, renewed.expires_at),
        (lease.fence, t0() + Duration::minutes(11))
    );
    assert!(not_ours.is_none());
}

pub async fn released_lease_never_hands_out_an_old_fence(db: TestDb) {
    let first = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    db.store.leases().release_lease(&first).await.unwrap();

    let next = lease(&db.store, CAMPAIGN, "daemon-b").await;

    assert_eq!(next.fence, first.fence + 1);
    assert_eq!(
        begin(&db.store, &first, purchase(1, 10)).await,
        BeginOutcome::Fenced
    );
}

pub async fn resolve_created_records_the_autobuyer_and_keeps_its_budget(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(3000, 5, 50)).await;
    let request = serde_json::json!({"name": "auto", "spec_fingerprint": "spec1"});
    let intent = reserving(
        free_intent(IntentKind::CreateAutobuyer, "create_autobuyer:x", request),
        1000,
    );
    let id = started(&db.store, &lease, intent).await;
    mark_in_flight_uncertain(&db.store, &lease).await;

    let row = resolve(
        &db.store,
        id,
        Resolution::Created { remote_id: 4242 },
        "seen in the web UI",
    )
    .await;

    let auto = autobuyer(&db.store, "auto").await;
    assert_eq!(
        (row.state, row.resolution.as_deref()),
        (IntentState::Succeeded, Some("seen in the web UI"))
    );
    assert_eq!(
        (auto.id, auto.running, auto.spec_fingerprint.as_str()),
        (4242, true, "spec1")
    );
    assert_eq!(budget(&db.store).await.held, rub(1000));
    assert_books_balance(&db.store).await;
}

pub async fn resolve_not_created_releases_the_reservation(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let id = started(&db.store, &lease, purchase(1, 150)).await;
    let in_flight = db
        .store
        .intents()
        .resolve_intent(id.intent, Resolution::NotCreated, "too early", t0())
        .await;
    mark_in_flight_uncertain(&db.store, &lease).await;

    let row = resolve(
        &db.store,
        id,
        Resolution::NotCreated,
        "not in the link list",
    )
    .await;

    assert!(in_flight.is_err(), "only uncertain intents are resolved");
    assert_eq!(row.state, IntentState::Failed);
    assert_eq!(budget(&db.store).await.committed, rub(0));
    assert_books_balance(&db.store).await;
}

/// Account leases (issue 34): one daemon holds an account until it expires or is given back;
/// heartbeats count the daemons alive.
pub async fn an_account_is_held_by_one_daemon_until_it_expires_or_is_given_back(db: TestDb) {
    let leases = || db.store.leases();
    let ttl = Duration::seconds(30);
    assert!(
        leases()
            .hold_account("acme", "d1", ttl, t0())
            .await
            .unwrap()
    );
    assert!(
        !leases()
            .hold_account("acme", "d2", ttl, t0())
            .await
            .unwrap(),
        "a held account is not taken"
    );
    assert!(
        leases()
            .hold_account("acme", "d1", ttl, t0() + Duration::seconds(20))
            .await
            .unwrap()
    );
    let later = t0() + Duration::seconds(45);
    assert!(
        !leases()
            .hold_account("acme", "d2", ttl, later)
            .await
            .unwrap(),
        "the renewal holds it past the first expiry"
    );
    let expired = t0() + Duration::seconds(51);
    assert!(
        leases()
            .hold_account("acme", "d2", ttl, expired)
            .await
            .unwrap()
    );
    let all = leases().account_leases().await.unwrap();
    assert_eq!((all.len(), all[0].holder.as_str()), (1, "d2"));

    leases().release_account("acme", "d1").await.unwrap();
    assert!(
        !leases()
            .hold_account("acme", "d1", ttl, expired)
            .await
            .unwrap(),
        "only its holder gives an account back"
    );
    leases().leave("d2").await.unwrap();
    assert!(
        leases()
            .hold_account("acme", "d1", ttl, expired)
            .await
            .unwrap()
    );

    leases().heartbeat("d1", t0()).await.unwrap();
    leases()
        .heartbeat("d2", t0() + Duration::seconds(10))
        .await
        .unwrap();
    assert_eq!(
        leases()
            .live_daemons(t0() - Duration::seconds(1))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        leases()
            .live_daemons(t0() + Duration::seconds(5))
            .await
            .unwrap(),
        1
    );
    leases().leave("d2").await.unwrap();
    assert_eq!(
        leases()
            .live_daemons(t0() - Duration::seconds(1))
            .await
            .unwrap(),
        1
    );
}
