//! Approval above a threshold (issue 33): the baseline, the cap recorded never past the
//! approved amount plus the threshold (so the database refuses a reservation past it),
//! cumulative raises, and the operator's approval recorded with who, when and why.

use linkrunner::store::{BeginOutcome, CapKind};

use super::support::*;

pub async fn an_approval_is_recorded_with_who_and_when_and_raises_the_recorded_cap(db: TestDb) {
    let store = &db.store;
    // Before the threshold: 3,000 recorded.
    campaign(store, &caps(3000, 100, 100)).await;
    // The edit that sets the threshold also raises the cap: the baseline is what was recorded.
    store
        .campaigns()
        .record_caps(&caps(30_000, 100, 100), Some(rub(1000)), t0())
        .await
        .unwrap();
    let b = store.campaigns().budget(CAMPAIGN, today()).await.unwrap();
    assert_eq!(b.cap, rub(4000), "never past the approved 3,000 plus 1,000");
    let a = b.approval.clone().expect("the baseline is recorded");
    assert_eq!(
        (a.approved, a.above, a.wanted),
        (rub(3000), Some(rub(1000)), rub(30_000))
    );
    assert_eq!(a.by, "linkrunner");

    // The database refuses a reservation past the approved amount plus the threshold.
    let lease = lease(store, CAMPAIGN, HOLDER).await;
    let past = begin(store, &lease, purchase(1, 4001)).await;
    assert_refused_by(past, CapKind::Monthly);

    let later = t0() + chrono::Duration::minutes(5);
    let approved = store
        .campaigns()
        .approve(CAMPAIGN, "alice", "Q4 push, agreed with finance", later)
        .await
        .unwrap()
        .expect("a threshold is recorded");
    assert_eq!(approved.approved, rub(30_000));
    assert_eq!((approved.by.as_str(), approved.at), ("alice", later));
    assert_eq!(approved.reason, "Q4 push, agreed with finance");

    // The next pass records the file's cap.
    store
        .campaigns()
        .record_caps(&caps(30_000, 100, 100), Some(rub(1000)), later)
        .await
        .unwrap();
    let b = store.campaigns().budget(CAMPAIGN, today()).await.unwrap();
    assert_eq!(b.cap, rub(30_000));
    assert_eq!(b.approval.as_ref().map(|a| a.by.as_str()), Some("alice"));
    // (At t0: the lease taken then is still held.)
    let fits = begin(store, &lease, purchase(1, 4001)).await;
    assert!(matches!(fits, BeginOutcome::Started(_)), "{fits:?}");
}

pub async fn small_raises_add_up_against_the_same_approval(db: TestDb) {
    let store = &db.store;
    let record = |monthly| {
        let caps = caps(monthly, 100, 100);
        async move {
            store
                .campaigns()
                .record_caps(&caps, Some(rub(1000)), t0())
                .await
                .unwrap();
            store.campaigns().budget(CAMPAIGN, today()).await.unwrap()
        }
    };
    // A new campaign: its file's cap is the baseline.
    assert_eq!(record(3000).await.cap, rub(3000));
    assert_eq!(
        record(3600).await.cap,
        rub(3600),
        "+600 within the threshold"
    );
    let b = record(4200).await;
    assert_eq!(b.cap, rub(4000), "+600 more passes 3,000 + 1,000");
    assert_eq!(b.approval.map(|a| a.approved), Some(rub(3000)));

    // Without a threshold the file's cap holds again, and `approve` has nothing to approve.
    store
        .campaigns()
        .upsert_campaign(&caps(4200, 100, 100), t0())
        .await
        .unwrap();
    let b = store.campaigns().budget(CAMPAIGN, today()).await.unwrap();
    assert_eq!(b.cap, rub(4200));
    assert_eq!(b.approval.and_then(|a| a.above), None);
    assert_eq!(
        store
            .campaigns()
            .approve(CAMPAIGN, "alice", "x", t0())
            .await
            .unwrap(),
        None
    );
}
