//! The operator's halt (issue 33): kept apart from the automatic halts, lifted only by a
//! resume, and every press kept with who, when and why.

use chrono::Duration;
use linkrunner::store::{HaltKind, HaltScope};

use super::support::*;

pub async fn an_operators_halt_is_lifted_only_by_resume_and_every_press_is_kept(db: TestDb) {
    // Arrange: the credentials halt and a campaign's halt, then an operator's halt.
    let store = &db.store;
    store
        .set_halt(&HaltScope::Global, "credentials rejected during x", t0())
        .await
        .unwrap();
    store
        .set_halt(&HaltScope::campaign(CAMPAIGN), "autobuyer creation", t0())
        .await
        .unwrap();
    store
        .operator_halt("alice", "marketplace double-charges", t0())
        .await
        .unwrap();
    // A second press keeps `since` and takes the new author and reason.
    let later = t0() + Duration::minutes(5);
    store
        .operator_halt("bob", "still double-charging", later)
        .await
        .unwrap();

    // Act: every automatic halt is lifted, as a credential recovery and `resolve` do.
    store.clear_halt(&HaltScope::Global).await.unwrap();
    store
        .clear_halt(&HaltScope::campaign(CAMPAIGN))
        .await
        .unwrap();
    let after_recovery = store.halts().await.unwrap();
    let resumed = store
        .operator_resume("carol", "fixed upstream", later + Duration::minutes(1))
        .await
        .unwrap();
    let resumed_again = store
        .operator_resume("carol", "again", later + Duration::minutes(2))
        .await
        .unwrap();

    // Assert
    assert_eq!(after_recovery.len(), 1, "{after_recovery:?}");
    let h = &after_recovery[0];
    assert_eq!(h.scope, HaltScope::Global);
    assert_eq!(h.kind, HaltKind::Operator);
    assert!(h.is_operator() && !h.is_credentials());
    assert_eq!(h.by.as_deref(), Some("bob"));
    assert_eq!(h.reason, "still double-charging");
    assert_eq!(h.since, t0());
    assert!(resumed, "the resume lifted the halt");
    assert!(!resumed_again, "nothing was left to resume");
    assert!(store.halts().await.unwrap().is_empty());
    let events = store.halt_events(10).await.unwrap();
    let seen: Vec<(&str, &str, &str)> = events
        .iter()
        .map(|e| (e.action.as_str(), e.by.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("resume", "carol", "fixed upstream"),
            ("halt", "bob", "still double-charging"),
            ("halt", "alice", "marketplace double-charges"),
        ]
    );
    assert_eq!(events[0].at, later + Duration::minutes(1));
    assert!(events.iter().all(|e| e.scope == HaltScope::Global));
}

pub async fn the_operators_halt_is_listed_before_the_credentials_halt(db: TestDb) {
    // Arrange
    let store = &db.store;
    store
        .set_halt(&HaltScope::Global, "credentials rejected during x", t0())
        .await
        .unwrap();
    store.operator_halt("alice", "stop", t0()).await.unwrap();

    // Act
    let halts = store.halts().await.unwrap();

    // Assert: both global, the operator's first (what `status` and the page show).
    let kinds: Vec<HaltKind> = halts.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, vec![HaltKind::Operator, HaltKind::Automatic]);
    assert!(halts.iter().all(|h| h.is_global()));
}
