//! Issue 24 in the journal: an adopted project is never re-pointed, an adopted autobuyer
//! counts at its declared budget from the moment it is recorded (with a ledger row), and the
//! operators' words are recorded with who and when; the word on the list lapses on a read
//! that shows fewer links than the journal holds.

use linkrunner::store::{AdoptOutcome, AdoptedAutobuyer, Store};

use super::support::{CAMPAIGN, TestDb, budget, campaign, caps, rub, t0};

/// The campaign, with project 4711 adopted into it.
async fn campaign_with_adopted_project(store: &Store) {
    campaign(store, &caps(3000, 5, 50)).await;
    store
        .campaigns()
        .adopt_project(CAMPAIGN, 4711, t0())
        .await
        .unwrap();
}

/// Records the autobuyer `ab` as adopted at `t0`; the id it replaced, if any.
async fn adopt(store: &Store, ab: &AdoptedAutobuyer<'_>) -> Option<i64> {
    store
        .campaigns()
        .adopt_autobuyer(CAMPAIGN, ab, t0())
        .await
        .expect("adopt autobuyer")
}

pub async fn an_adopted_project_is_recorded_once_and_never_re_pointed(db: TestDb) {
    let store = &db.store;
    campaign(store, &caps(3000, 5, 50)).await;

    let first = store
        .campaigns()
        .adopt_project(CAMPAIGN, 4711, t0())
        .await
        .unwrap();
    let again = store
        .campaigns()
        .adopt_project(CAMPAIGN, 4711, t0())
        .await
        .unwrap();
    let other = store
        .campaigns()
        .adopt_project(CAMPAIGN, 4712, t0())
        .await
        .unwrap();

    assert_eq!(
        (first, again),
        (AdoptOutcome::Recorded, AdoptOutcome::Recorded)
    );
    assert_eq!(other, AdoptOutcome::OtherProject { recorded: 4711 });
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    assert_eq!(ids.project.unwrap().project_id, 4711);
    let adoption = ids.account.adoption.clone().expect("adoption recorded");
    assert!(adoption.confirmed.is_none() && ids.account.adoption_pending());
    let by = "ann";
    assert!(
        store
            .campaigns()
            .confirm_adoption(CAMPAIGN, by, "plan read", t0())
            .await
            .unwrap()
    );
    assert!(
        !store
            .campaigns()
            .confirm_adoption(CAMPAIGN, by, "twice", t0())
            .await
            .unwrap()
    );
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    let word = ids.account.adoption.unwrap().confirmed.expect("confirmed");
    assert_eq!(
        (word.by.as_str(), word.reason.as_str()),
        ("ann", "plan read")
    );
}

pub async fn an_adopted_autobuyer_counts_its_budget_from_the_start_with_a_ledger_row(db: TestDb) {
    let store = &db.store;
    campaign_with_adopted_project(store).await;
    let ab = AdoptedAutobuyer {
        name: "team-auto",
        id: 9876,
        spec_fingerprint: "fp",
        monthly_budget: rub(500),
        covers: vec![11, 12],
    };

    assert_eq!(adopt(store, &ab).await, None);
    assert_eq!(adopt(store, &ab).await, None);
    let moved = AdoptedAutobuyer {
        id: 9877,
        ..ab.clone()
    };
    assert_eq!(adopt(store, &moved).await, Some(9876));

    let b = budget(store).await;
    assert_eq!(
        b.committed,
        rub(500),
        "counted once, at its declared budget"
    );
    let ledger = store.campaigns().ledger(CAMPAIGN).await.unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].reason, "adopted_autobuyer");
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    let rec = &ids.autobuyers["team-auto"];
    assert!(rec.running && rec.adopted_at.is_some());
    assert_eq!((rec.id, rec.covers.clone()), (9876, vec![11, 12]));
}

/// The word lapses only as judged (`decide::adoption::word_lapses`), and only the word that
/// was judged: one given again meanwhile is kept.
pub async fn the_word_on_the_list_lapses_when_a_read_shows_fewer_links(db: TestDb) {
    let store = &db.store;
    campaign_with_adopted_project(store).await;
    store
        .campaigns()
        .vouch_list_complete(CAMPAIGN, 5, ("ann", "UI shows 5"), t0())
        .await
        .unwrap();
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    assert!(ids.account.list_shown_complete());
    assert_eq!(
        ids.account.vouch.as_ref().unwrap().links,
        Some(5),
        "the count seen"
    );

    let lapsed = store
        .campaigns()
        .note_list_read(CAMPAIGN, (false, 6), None, t0())
        .await
        .unwrap();
    assert!(!lapsed, "a read judged not to lapse it keeps the word");
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    assert!(
        ids.account
            .adoption
            .as_ref()
            .unwrap()
            .first_read_at
            .is_some()
    );
    assert!(ids.account.list_shown_complete());
    assert_eq!(ids.account.last_read_links, Some(6));

    // A read judged against the word of t0, while the operator gave it again later: kept.
    let later = t0() + chrono::Duration::seconds(5);
    store
        .campaigns()
        .vouch_list_complete(CAMPAIGN, 4, ("ann", "UI shows 4"), later)
        .await
        .unwrap();
    let lapsed = store
        .campaigns()
        .note_list_read(CAMPAIGN, (false, 3), Some(t0()), later)
        .await
        .unwrap();
    assert!(!lapsed, "the word given again is not the one judged");

    let lapsed = store
        .campaigns()
        .note_list_read(CAMPAIGN, (false, 3), Some(later), later)
        .await
        .unwrap();
    assert!(lapsed, "3 shown while the operator saw 4: the list is cut");
    assert!(
        !store
            .campaigns()
            .remote_ids(CAMPAIGN)
            .await
            .unwrap()
            .account
            .list_shown_complete()
    );
}
