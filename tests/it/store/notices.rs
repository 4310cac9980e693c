//! Notifications claimed once (issue 33): of replicas and restarts that see the same event,
//! exactly one claim wins; a cleared claim is won again when the condition recurs.

use chrono::Duration;
use linkrunner::store::Store;

use super::support::*;

const KEY: &str = "state:waiting_for_operator:acme-shoes";

async fn claim(store: &Store, holder: &str, at: chrono::DateTime<chrono::Utc>) -> bool {
    store
        .claim_notice(KEY, "waiting_for_operator", Some(CAMPAIGN), holder, at)
        .await
        .expect("claim")
}

pub async fn a_notice_is_claimed_once_across_stores_until_it_is_cleared(db: TestDb) {
    let other = db.another_store().await;
    let (a, b) = tokio::join!(
        claim(&db.store, "daemon-a", t0()),
        claim(&other, "daemon-b", t0())
    );
    assert!(a ^ b, "exactly one of two racing replicas wins: {a} {b}");
    // A restart (a new holder id) or the same daemon later does not win it again.
    assert!(!claim(&db.store, "daemon-c", t0() + Duration::minutes(1)).await);
    let rows = db.store.notices().await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].key, KEY);
    assert_eq!(rows[0].campaign.as_deref(), Some(CAMPAIGN));
    assert_eq!(rows[0].claimed_by, if a { "daemon-a" } else { "daemon-b" });

    // A reader that began before the claim keeps it (another replica saw it since) ...
    other
        .clear_notice(KEY, t0() - Duration::milliseconds(1))
        .await
        .unwrap();
    assert_eq!(db.store.notices().await.unwrap().len(), 1);
    // ... one that began after it clears it, and the recurrence is claimed again.
    other.clear_notice(KEY, t0()).await.unwrap();
    assert!(db.store.notices().await.unwrap().is_empty());
    assert!(claim(&other, "daemon-b", t0() + Duration::minutes(2)).await);
    assert!(!claim(&db.store, "daemon-a", t0() + Duration::minutes(2)).await);
}
