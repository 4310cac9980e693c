//! What the store reports about itself: metrics, and errors that never leak a password.

use std::sync::Arc;

use linkrunner::metrics::Metrics;
use linkrunner::store::{BeginOutcome, Outcome, Store, StoreError};

use super::support::*;

pub async fn journal_writes_and_database_errors_are_measured(db: TestDb) {
    let metrics = Arc::new(Metrics::new());
    let mut store = db.another_store().await;
    store.set_metrics(metrics.clone());
    let lease = campaign_with_lease(&store, &caps(1000, 5, 50)).await;
    let BeginOutcome::Started(ids) = store
        .begin_intents(&lease, &[purchase(1, 10)], t0())
        .await
        .unwrap()
    else {
        panic!("not started")
    };
    store
        .complete_intent(ids[0], Outcome::Failed { error: "no".into() }, None, t0())
        .await
        .unwrap();
    let unknown = lease_on_unknown_campaign(&store).await;

    let failed = store
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
