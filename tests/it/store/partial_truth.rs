//! The journal when the marketplace shows only part of the truth: attempts fence outcomes,
//! a page whose purchase was ever uncertain stays blocked, links no intent of ours bought
//! count once, stops settle after the grace, links that leave are released.

use chrono::{DateTime, Duration, Utc};
use linkrunner::market::LinkRecord;
use linkrunner::store::{
    BeginOutcome, Effect, IntentKind, IntentState, LeaseToken, LinkRef, ListRead, ListedLink,
    Outcome, StopSettlement, Store, StoreError,
};

use super::support::*;

fn link(id: i64, page: i64, url: i64, price_rub: Option<i64>, status: Option<&str>) -> LinkRecord {
    LinkRecord {
        link_id: Some(id),
        page_id: Some(page),
        url_id: Some(url),
        text_id: None,
        price: price_rub.map(rub),
        status: status.map(str::to_string),
    }
}

fn listed(l: LinkRecord, leaving: bool, autobuyer: Option<&str>) -> ListedLink {
    ListedLink {
        record: l,
        leaving,
        autobuyer: autobuyer.map(str::to_string),
    }
}

async fn sync(store: &Store, links: &[ListedLink], proven_complete: bool, at: DateTime<Utc>) {
    let read = ListRead {
        links,
        proven_complete,
        fallback_price: rub(150),
    };
    store
        .links()
        .record_link_list(CAMPAIGN, read, at)
        .await
        .expect("sync");
}

/// A running autobuyer `auto` (id 77) holding a budget of `budget_rub`.
async fn running_autobuyer(store: &Store, lease: &LeaseToken, budget_rub: i64) {
    let i = reserving(
        free_intent(
            IntentKind::CreateAutobuyer,
            "create_autobuyer:auto",
            serde_json::json!({"name": "auto"}),
        ),
        budget_rub,
    );
    let at = started(store, lease, i).await;
    let effect = Effect::AutobuyerCreated {
        name: "auto".into(),
        id: 77,
        running: true,
        spec_fingerprint: "spec".into(),
        monthly_budget: rub(budget_rub),
    };
    complete(store, at, Outcome::Succeeded(effect)).await;
}

/// A stop of `auto` that the marketplace confirmed (not settled yet).
async fn confirmed_stop(store: &Store, lease: &LeaseToken) {
    let stop = free_intent(
        IntentKind::StopAutobuyer,
        "stop:auto:1",
        serde_json::json!({"name": "auto"}),
    );
    let at = started(store, lease, stop).await;
    let effect = Effect::AutobuyerRunning {
        name: "auto".into(),
        running: false,
    };
    complete(store, at, Outcome::Succeeded(effect)).await;
}

/// Releases the held links that left the list at least the two-minute grace before `at`.
/// Releases what left the list 120 s before `at`; `complete`: the latest read was complete.
async fn release_left(store: &Store, at: DateTime<Utc>, complete: bool) -> u32 {
    store
        .links()
        .release_left_links(CAMPAIGN, Duration::seconds(120), at, complete)
        .await
        .expect("release left links")
}

pub async fn an_outcome_is_recorded_only_by_the_attempt_that_sent_the_call(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let first = started(&db.store, &lease, purchase(1, 100)).await;
    complete(&db.store, first, failed("429")).await;
    let second = started(&db.store, &lease, purchase(1, 100)).await;

    let late = db
        .store
        .intents()
        .complete_intent(first, uncertain("answer cut short"), None, t0())
        .await;

    assert!(matches!(late, Err(StoreError::Fenced { .. })), "{late:?}");
    assert_eq!(
        state_of(&db.store, &purchase(1, 100).natural_key).await,
        Some(IntentState::InFlight)
    );
    complete(&db.store, second, failed("no")).await;
    assert_eq!(budget(&db.store).await.committed, rub(0));
    assert_books_balance(&db.store).await;
}

pub async fn a_page_whose_purchase_was_uncertain_is_never_bought_again_without_an_operator(
    db: TestDb,
) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let at = started(&db.store, &lease, purchase(1, 100)).await;
    complete(&db.store, at, uncertain("answer cut short")).await;
    complete(&db.store, at, failed("absent from a complete list")).await;

    let again = begin(&db.store, &lease, purchase(1, 100)).await;

    let BeginOutcome::Exists(row) = again else {
        panic!("a once-uncertain purchase was re-armed: {again:?}");
    };
    assert!(row.rebuy_blocked && row.state == IntentState::Failed);
    db.store
        .intents()
        .allow_rebuy(row.attempt(), "checked in the UI", t0())
        .await
        .unwrap();
    let rearmed = started(&db.store, &lease, purchase(1, 100)).await;
    assert_eq!(rearmed.attempt, 2);
    assert_books_balance(&db.store).await;
}

pub async fn an_in_flight_purchase_taken_over_is_blocked_from_being_bought_again(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    started(&db.store, &lease, purchase(1, 100)).await;

    mark_in_flight_uncertain(&db.store, &lease).await;

    let rows = db
        .store
        .intents()
        .find_intents(Default::default())
        .await
        .unwrap();
    assert!(rows[0].rebuy_blocked && rows[0].state == IntentState::Uncertain);
}

pub async fn a_listed_link_of_a_purchase_settled_as_not_bought_is_adopted_and_counted(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let at = started(&db.store, &lease, purchase(1, 100)).await;
    complete(&db.store, at, uncertain("answer cut short")).await;
    complete(&db.store, at, failed("absent")).await;
    assert_eq!(budget(&db.store).await.committed, rub(0));

    let adopted = db
        .store
        .intents()
        .adopt_purchase(at, &link(901, 1, 10, Some(120), None), t0())
        .await
        .unwrap();

    let b = budget(&db.store).await;
    assert!(adopted);
    assert_eq!((b.committed, b.links_total), (rub(120), 1));
    assert_eq!(
        state_of(&db.store, &purchase(1, 100).natural_key).await,
        Some(IntentState::Succeeded)
    );
    assert!(
        !db.store
            .intents()
            .adopt_purchase(at, &link(901, 1, 10, Some(120), None), t0())
            .await
            .unwrap()
    );
    assert_books_balance(&db.store).await;
}

pub async fn foreign_links_count_once_whoever_bought_them(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(3000, 5, 50)).await;
    running_autobuyer(&db.store, &lease, 1000).await;
    let manual = listed(link(1, 11, 10, Some(70), None), false, None);
    let auto_a = listed(link(2, 12, 10, Some(600), None), false, Some("auto"));
    let unpriced = listed(link(3, 13, 10, None, None), false, None);

    for _ in 0..2 {
        sync(
            &db.store,
            &[manual.clone(), auto_a.clone(), unpriced.clone()],
            false,
            t0(),
        )
        .await;
    }
    assert_eq!(
        budget(&db.store).await.committed,
        rub(1000 + 70 + 150),
        "once each, seen twice"
    );

    let auto_b = listed(link(4, 14, 10, Some(500), None), false, Some("auto"));
    sync(
        &db.store,
        &[
            manual.clone(),
            auto_a.clone(),
            unpriced.clone(),
            auto_b.clone(),
        ],
        false,
        t0(),
    )
    .await;
    assert_eq!(
        budget(&db.store).await.committed,
        rub(1100 + 70 + 150),
        "links past its budget count"
    );

    confirmed_stop(&db.store, &lease).await;
    assert_eq!(
        budget(&db.store).await.committed,
        rub(1100 + 70 + 150),
        "a confirmed stop is not settled yet"
    );
    let settled = settle_stop(&db.store, "auto").await;
    assert_eq!(
        settled,
        StopSettlement::Settled {
            released: rub(0),
            kept: rub(1100)
        }
    );

    let gone = listed(
        link(4, 14, 10, Some(500), Some("removed")),
        true,
        Some("auto"),
    );
    sync(&db.store, &[manual, auto_a, unpriced, gone], false, t0()).await;
    let released = release_left(&db.store, t0() + Duration::seconds(121), false).await;
    assert_eq!(released, 1);
    assert_eq!(
        budget(&db.store).await.committed,
        rub(600 + 70 + 150),
        "its links count at their rent once settled"
    );
    assert_books_balance(&db.store).await;
}

pub async fn a_stopped_autobuyer_keeps_the_rent_of_its_links_and_releases_the_rest(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(3000, 5, 50)).await;
    running_autobuyer(&db.store, &lease, 1000).await;
    sync(
        &db.store,
        &[listed(
            link(2, 12, 10, Some(300), None),
            false,
            Some("auto"),
        )],
        false,
        t0(),
    )
    .await;
    confirmed_stop(&db.store, &lease).await;

    let settled = settle_stop(&db.store, "auto").await;

    assert_eq!(
        settled,
        StopSettlement::Settled {
            released: rub(700),
            kept: rub(300)
        }
    );
    assert_eq!(budget(&db.store).await.committed, rub(300));
    let record = autobuyer(&db.store, "auto").await;
    assert!(!record.running);
    assert_eq!(
        settle_stop(&db.store, "auto").await,
        StopSettlement::NotStopped
    );
    assert_books_balance(&db.store).await;
}

pub async fn an_uncertain_switch_counts_the_autobuyer_as_running_until_a_stop_is_settled(
    db: TestDb,
) {
    let lease = campaign_with_lease(&db.store, &caps(3000, 5, 50)).await;
    running_autobuyer(&db.store, &lease, 1000).await;
    confirmed_stop(&db.store, &lease).await;
    settle_stop(&db.store, "auto").await;
    let start = reserving(
        free_intent(
            IntentKind::StartAutobuyer,
            "start:auto:2",
            serde_json::json!({"name": "auto"}),
        ),
        1000,
    );
    let at = started(&db.store, &lease, start).await;
    complete(&db.store, at, uncertain("answer cut short")).await;

    let unknown = Outcome::Indeterminate {
        error: "start outcome unknown".into(),
        effect: Effect::AutobuyerSwitchUnknown {
            name: "auto".into(),
        },
    };
    complete(&db.store, at, unknown).await;

    let record = autobuyer(&db.store, "auto").await;
    assert!(record.running);
    assert_eq!(record.switch_state, linkrunner::store::SwitchState::Unknown);
    assert_eq!(budget(&db.store).await.committed, rub(1000));
    assert_books_balance(&db.store).await;
}

pub async fn held_links_that_leave_the_list_are_released_after_the_grace(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    for page in [1, 2] {
        let at = started(&db.store, &lease, purchase(page, 100)).await;
        let effect = purchased(page, Some(900 + page), 100);
        complete(&db.store, at, Outcome::Succeeded(effect)).await;
    }
    let rejected = listed(link(901, 1, 10, Some(100), Some("rejected")), true, None);

    // Page 2 is absent from a read with no paging proof: that proves nothing.
    sync(&db.store, std::slice::from_ref(&rejected), false, t0()).await;
    let early = release_left(&db.store, t0() + Duration::seconds(60), false).await;
    let late = release_left(&db.store, t0() + Duration::seconds(120), false).await;

    assert_eq!((early, late), (0, 1));
    assert_eq!(budget(&db.store).await.committed, rub(100));
    let held = db.store.links().held_links(CAMPAIGN).await.unwrap();
    assert!(
        held[0]
            .released
            .as_ref()
            .is_some_and(|(_, why)| why.contains("rejected"))
    );
    assert!(held[1].released.is_none() && held[1].leaving_since.is_none());

    // Absent from a read proven complete, it starts leaving. A later read that may be cut
    // (a purchase shown late by the complete one, say) does not release it, however long ago.
    sync(&db.store, &[rejected], true, t0() + Duration::seconds(200)).await;
    let cut = release_left(&db.store, t0() + Duration::seconds(900), false).await;
    assert_eq!((cut, budget(&db.store).await.committed), (0, rub(100)));
    let n = release_left(&db.store, t0() + Duration::seconds(320), true).await;
    assert_eq!((n, budget(&db.store).await.committed), (1, rub(0)));
    assert_books_balance(&db.store).await;
}

pub async fn an_operator_releases_a_held_or_foreign_link(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let at = started(&db.store, &lease, purchase(1, 100)).await;
    let effect = purchased(1, Some(901), 100);
    complete(&db.store, at, Outcome::Succeeded(effect)).await;
    sync(
        &db.store,
        &[listed(link(5, 50, 10, Some(40), None), false, None)],
        false,
        t0(),
    )
    .await;
    assert_eq!(budget(&db.store).await.committed, rub(140));

    let held = db
        .store
        .links()
        .release_link(
            CAMPAIGN,
            &LinkRef::Held(at.intent),
            "cancelled in the UI",
            t0(),
        )
        .await
        .unwrap();
    let foreign = db
        .store
        .links()
        .release_link(
            CAMPAIGN,
            &LinkRef::Foreign("id:5".into()),
            "cancelled",
            t0(),
        )
        .await
        .unwrap();
    let twice = db
        .store
        .links()
        .release_link(CAMPAIGN, &LinkRef::Foreign("id:5".into()), "again", t0())
        .await
        .unwrap();

    assert!(held && foreign && !twice);
    assert_eq!(budget(&db.store).await.committed, rub(0));
    assert_books_balance(&db.store).await;
}

pub async fn a_cut_list_is_noted_at_its_smallest_length(db: TestDb) {
    campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let project = Effect::ProjectCreated(linkrunner::market::ProjectIds {
        project_id: 1,
        url_id: 2,
        text_id: 3,
    });
    let lease = lease(&db.store, CAMPAIGN, HOLDER).await;
    let at = started(
        &db.store,
        &lease,
        free_intent(IntentKind::CreateProject, "project", serde_json::json!({})),
    )
    .await;
    complete(&db.store, at, Outcome::Succeeded(project)).await;

    db.store.intents().note_list_cut(CAMPAIGN, 5).await.unwrap();
    db.store.intents().note_list_cut(CAMPAIGN, 3).await.unwrap();
    db.store.intents().note_list_cut(CAMPAIGN, 4).await.unwrap();

    assert_eq!(
        db.store
            .campaigns()
            .remote_ids(CAMPAIGN)
            .await
            .unwrap()
            .list_cut_at,
        Some(3)
    );
}

/// What notifications tell as links lost (issue 33): links released because they left the
/// list, from the time asked; not what an operator released.
pub async fn links_that_leave_the_list_are_lost_and_an_operators_release_is_not(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let mut attempts = Vec::new();
    for page in [1, 2, 3] {
        let at = started(&db.store, &lease, purchase(page, 100)).await;
        complete(
            &db.store,
            at,
            Outcome::Succeeded(purchased(page, Some(900 + page), 100)),
        )
        .await;
        attempts.push(at);
    }
    assert!(db.store.links_lost_since(t0()).await.unwrap().is_empty());
    let listed_links = [
        listed(link(901, 1, 10, Some(100), Some("rejected")), true, None),
        listed(link(902, 2, 10, Some(100), None), false, None),
        listed(link(903, 3, 10, Some(100), None), false, None),
    ];
    sync(&db.store, &listed_links, false, t0()).await;
    let released_at = t0() + Duration::seconds(120);
    assert_eq!(release_left(&db.store, released_at, false).await, 1);
    db.store
        .links()
        .release_link(
            CAMPAIGN,
            &LinkRef::Held(attempts[1].intent),
            "cancelled in the UI",
            released_at,
        )
        .await
        .unwrap();

    let lost = db.store.links_lost_since(t0()).await.unwrap();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!((lost[0].campaign.as_str(), lost[0].links), (CAMPAIGN, 1));
    assert_eq!(lost[0].latest, released_at);
    let later = released_at + Duration::seconds(1);
    assert!(db.store.links_lost_since(later).await.unwrap().is_empty());
}
