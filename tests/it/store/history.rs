//! Why money moved: causes recorded with each attempt (and by an operator's resolve), and the
//! history that joins them to the ledger.

use chrono::Duration;
use linkrunner::store::{
    BeginOutcome, CauseKind, HistoryEntry, IntentCause, Outcome, Resolution, Store,
};

use super::support::*;

fn round_cause() -> IntentCause {
    let mut c = IntentCause::bare(CauseKind::Round);
    c.slot = Some(t0());
    c.file_digest = Some("ab".repeat(32));
    c.git_commit = Some("cd".repeat(20));
    c.monthly_cap = Some(rub(1000));
    c.max_link_price = Some(rub(150));
    c
}

/// The whole history of the campaign.
async fn campaign_history(store: &Store) -> Vec<HistoryEntry> {
    store
        .reports()
        .history(Some(CAMPAIGN), None)
        .await
        .expect("history")
}

pub async fn each_attempt_records_its_cause_and_a_resolve_adds_the_operators(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let cause = round_cause();
    let BeginOutcome::Started(ids) = db
        .store
        .intents()
        .begin_intents_because(
            &lease,
            &[purchase(1, 120), purchase(2, 80)],
            Some(&cause),
            t0(),
        )
        .await
        .unwrap()
    else {
        panic!("started")
    };
    let error = "reset after send".to_string();
    for id in &ids {
        db.store
            .intents()
            .complete_intent(
                *id,
                Outcome::Uncertain {
                    error: error.clone(),
                },
                None,
                t0(),
            )
            .await
            .unwrap();
    }
    let later = t0() + Duration::minutes(1);
    db.store
        .intents()
        .resolve_intent(
            ids[1].intent,
            Resolution::NotCreated,
            "not in the web UI",
            later,
        )
        .await
        .unwrap();

    let first = db.store.reports().causes_of(ids[0].intent).await.unwrap();
    let second = db.store.reports().causes_of(ids[1].intent).await.unwrap();
    let history = campaign_history(&db.store).await;
    let since_later = db.store.reports().history(None, Some(later)).await.unwrap();

    assert_eq!(first.len(), 1);
    assert_eq!(first[0].cause, cause);
    assert_eq!(first[0].attempt, 1);
    let kinds: Vec<_> = second.iter().map(|c| c.cause.kind).collect();
    assert_eq!(kinds, [CauseKind::Round, CauseKind::Resolve]);
    assert_eq!(second[1].cause.note, "not in the web UI");
    let moves: Vec<_> = history
        .iter()
        .map(|h| {
            (
                h.ledger.reason.as_str(),
                h.ledger.delta,
                h.cause.as_ref().map(|c| c.cause.kind),
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("reserve", rub(120), Some(CauseKind::Round)),
            ("reserve", rub(80), Some(CauseKind::Round)),
            ("release", rub(-80), Some(CauseKind::Resolve)),
        ]
    );
    assert_eq!(
        since_later.len(),
        1,
        "only the release is on or after `later`"
    );
    assert_books_balance(&db.store).await;
}

pub async fn intents_begun_without_a_cause_have_none_and_history_still_lists_them(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let ids = started_all(&db.store, &lease, &[purchase(3, 50)]).await;

    let history = campaign_history(&db.store).await;

    assert!(
        db.store
            .reports()
            .causes_of(ids[0].intent)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].cause, None);
    assert_eq!(
        history[0].intent.as_ref().map(|i| i.id),
        Some(ids[0].intent)
    );
}
