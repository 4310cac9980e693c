//! What the store reports about itself: metrics, and errors that never leak a password.

use std::sync::Arc;

use linkrunner::metrics::Metrics;
use linkrunner::store::{BeginOutcome, Store, StoreError};

use super::support::*;

pub async fn journal_writes_and_database_errors_are_measured(db: TestDb) {
    let metrics = Arc::new(Metrics::new());
    let mut store = db.another_store().await;
    store.set_metrics(metrics.clone());
    let lease = campaign_with_lease(&store, &caps(1000, 5, 50)).await;
    let BeginOutcome::Started(ids) = begin(&store, &lease, purchase(1, 10)).await else {
        panic!("not started")
    };
    complete(&store, ids[0], failed("no")).await;
    let unknown = lease_on_unknown_campaign(&store).await;

    let failed = store
        .intents()
        .begin_intents(&unknown, &[purchase_for("nowhere", 2)], t0())
        .await;

    assert!(
        matches!(failed, Err(StoreError::Database { .. })),
        "{failed:?}"
    );
    let journal = &metrics.journal_write_duration_seconds;
    assert_eq!(journal.with_label_values(&["begin"]).get_sample_count(), 2);
    assert_eq!(
        journal.with_label_values(&["complete"]).get_sample_count(),
        1
    );
    assert_eq!(metrics.database_errors_total.get(), 1);
}

async fn lease_on_unknown_campaign(store: &Store) -> linkrunner::store::LeaseToken {
    lease(store, "nowhere", HOLDER).await
}

fn purchase_for(campaign: &str, page: i64) -> linkrunner::store::NewIntent {
    linkrunner::store::NewIntent {
        campaign: campaign.into(),
        natural_key: format!("purchase:{campaign}:{page}"),
        ..purchase(page, 10)
    }
}

#[tokio::test]
async fn unreachable_database_is_unavailable_and_its_error_hides_the_password() {
    let err = Store::connect("postgres://app:hunter2@127.0.0.1:1/linkrunner")
        .await
        .unwrap_err();

    assert!(err.is_unavailable(), "{err:?}");
    assert!(!format!("{err} {err:?}").contains("hunter2"), "{err:?}");
}

pub async fn ping_answers_while_the_database_is_up(db: TestDb) {
    let pinged = db.store.ping().await;

    assert!(pinged.is_ok(), "{pinged:?}");
}

/// SQLite runs `synchronous = NORMAL` and makes each write durable with an `fsync` of its log
/// before the write returns (`store/durable.rs`): one per write when writes come one after
/// another, never more than one per write when they come together. Fails if a write
/// returned without a sync that covers it.
#[tokio::test]
async fn sqlite_writes_are_synced_before_they_return() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/journal.db", dir.path().display());
    let store = Store::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    let lease = campaign_with_lease(&store, &caps(100_000, 500, 500)).await;

    for page in 0..5 {
        let before = store.wal_syncs();
        let started = begin(&store, &lease, purchase(page, 10)).await;
        assert!(matches!(started, BeginOutcome::Started(_)), "{started:?}");
        assert_eq!(
            store.wal_syncs(),
            before + 1,
            "intent {page} returned before its own fsync"
        );
    }

    let before = store.wal_syncs();
    let writers: Vec<_> = (100..164)
        .map(|page| {
            let (store, lease) = (store.clone(), lease.clone());
            tokio::spawn(async move {
                store
                    .intents()
                    .begin_intents(&lease, &[purchase(page, 10)], t0())
                    .await
            })
        })
        .collect();
    for w in writers {
        assert!(matches!(w.await.unwrap(), Ok(BeginOutcome::Started(_))));
    }
    // At most one fsync each; how many they share depends on how long an fsync takes
    // against a commit on this machine (`store/durable.rs`'s unit test shows them shared).
    let syncs = store.wal_syncs() - before;
    assert!(
        (1..=64).contains(&syncs),
        "64 concurrent writes took {syncs} fsyncs"
    );
    store.close().await;
}

#[tokio::test]
async fn an_in_memory_journal_makes_no_fsync_of_its_own() {
    let store = Store::connect("sqlite::memory:").await.unwrap();
    store.migrate().await.unwrap();
    campaign_with_lease(&store, &caps(1000, 5, 50)).await;
    assert_eq!(store.wal_syncs(), 0);
}
