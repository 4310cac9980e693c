//! Issue 32 in the journal: a campaign whose file is gone is recorded once, seen when the first
//! process saw it; the verdict (held, proceeded) moves only forward; the operator's
//! `resolve removals` is recorded with who, when and why, and seen by every store on the
//! database; a file that returns ends its removal.

use std::collections::BTreeSet;

use linkrunner::store::{RemovalRow, RemovalState, Store};

use super::support::{TestDb, t0};

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn by_name(rows: &[RemovalRow]) -> Vec<(&str, RemovalState, i64)> {
    rows.iter()
        .map(|r| {
            (
                r.campaign.as_str(),
                r.state,
                (r.seen_at - t0()).num_seconds(),
            )
        })
        .collect()
}

async fn observe(store: &Store, gone: &[&str], present: &[&str], secs: i64) -> Vec<RemovalRow> {
    let present: BTreeSet<String> = names(present).into_iter().collect();
    store
        .campaigns()
        .observe_removals(
            &names(gone),
            &present,
            t0() + chrono::Duration::seconds(secs),
        )
        .await
        .expect("observe removals")
}

pub async fn a_removal_is_judged_once_shared_by_replicas_and_ends_when_its_file_returns(
    db: TestDb,
) {
    use RemovalState::*;
    let store = &db.store;
    let replica = db.another_store().await;

    // Two files gone; a replica sees them and a third a minute later.
    observe(store, &["a", "b"], &["d"], 0).await;
    let rows = observe(&replica, &["a", "b", "c"], &["d"], 60).await;
    assert_eq!(
        by_name(&rows),
        [("a", Pending, 0), ("b", Pending, 0), ("c", Pending, 60)],
        "the first process to see a file gone sets when"
    );

    // Verdicts: a and b held, c proceeds; a verdict never moves back.
    verdict(store, Verdict::Hold, &["a", "b"]).await;
    verdict(store, Verdict::Proceed, &["c"]).await;
    verdict(&replica, Verdict::Hold, &["c"]).await;
    let rows = replica.campaigns().removals().await.unwrap();
    assert_eq!(
        by_name(&rows),
        [("a", Held, 0), ("b", Held, 0), ("c", Proceeded, 60)]
    );

    // The operator's word lets the held ones proceed, recorded; given again, nothing is left.
    let at = t0() + chrono::Duration::seconds(120);
    let resolved = replica
        .campaigns()
        .resolve_removals("ann", "a and b retired", at)
        .await
        .unwrap();
    assert_eq!(resolved, names(&["a", "b"]));
    assert!(
        store
            .campaigns()
            .resolve_removals("bob", "again", at)
            .await
            .unwrap()
            .is_empty()
    );
    let rows = store.campaigns().removals().await.unwrap();
    assert_eq!(
        by_name(&rows),
        [("a", Resolved, 0), ("b", Resolved, 0), ("c", Proceeded, 60)]
    );
    let word = rows[0].resolved.as_ref().expect("who, when, why");
    assert_eq!(
        (word.by.as_str(), word.at, word.reason.as_str()),
        ("ann", at, "a and b retired")
    );
    // A verdict does not undo the word.
    verdict(store, Verdict::Proceed, &["a"]).await;
    verdict(store, Verdict::Hold, &["a"]).await;
    assert_eq!(
        store.campaigns().removals().await.unwrap()[0].state,
        Resolved
    );

    // a's file returns: its removal is over; b and c stay.
    let rows = observe(store, &["b", "c"], &["a", "d"], 180).await;
    assert_eq!(by_name(&rows), [("b", Resolved, 0), ("c", Proceeded, 60)]);
}

/// An operator's word on pending removals.
enum Verdict {
    Hold,
    Proceed,
}

/// Records `verdict` on the removals of `campaigns` through `store`.
async fn verdict(store: &Store, verdict: Verdict, campaigns_of: &[&str]) {
    let campaigns = store.campaigns();
    let done = match verdict {
        Verdict::Hold => campaigns.hold_removals(&names(campaigns_of)).await,
        Verdict::Proceed => campaigns.proceed_removals(&names(campaigns_of)).await,
    };
    done.unwrap();
}
