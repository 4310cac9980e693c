//! What a reconciliation that only looks reads and writes (issue 34, item 3): the journal's
//! stamp of a campaign stays put while nothing a plan reads is written, even across reads of
//! an unchanged link list, and moves with each thing that is; a look moves the "last seen"
//! of exactly the links the last read showed.

use chrono::Duration;
use linkrunner::market::LinkRecord;
use linkrunner::store::{HaltScope, LinkRef, ListRead, ListedLink, Outcome, Store};

use super::support::*;

fn listed(id: i64, page: i64) -> ListedLink {
    ListedLink {
        record: LinkRecord {
            link_id: Some(id),
            page_id: Some(page),
            url_id: Some(10),
            text_id: Some(20),
            price: Some(rub(100)),
            status: None,
        },
        leaving: false,
        autobuyer: None,
    }
}

async fn read(store: &Store, links: &[ListedLink], at: chrono::DateTime<chrono::Utc>) {
    let read = ListRead {
        links,
        proven_complete: true,
        fallback_price: rub(150),
    };
    store
        .links()
        .record_link_list(CAMPAIGN, read, at)
        .await
        .expect("read");
}

async fn stamp(store: &Store) -> Vec<i64> {
    store
        .campaigns()
        .quiet_stamp(CAMPAIGN)
        .await
        .expect("stamp")
}

pub async fn the_stamp_moves_only_with_what_a_plan_reads_and_a_look_moves_what_the_last_read_saw(
    db: TestDb,
) {
    let store = &db.store;
    let lease = campaign_with_lease(store, &caps(1000, 10, 100)).await;
    let empty = stamp(store).await;
    assert_eq!(stamp(store).await, empty, "nothing written, the same stamp");

    // A purchase moves it; reads of the list that show nothing new do not.
    let at = started(store, &lease, purchase(5, 100)).await;
    complete(store, at, Outcome::Succeeded(purchased(5, Some(11), 100))).await;
    let bought = stamp(store).await;
    assert_ne!(bought, empty, "a purchase");
    let (t1, t2) = (t0() + Duration::minutes(1), t0() + Duration::minutes(2));
    let links = [listed(11, 5), listed(99, 6)];
    read(store, &links, t1).await;
    let listed_once = stamp(store).await;
    assert_ne!(listed_once, bought, "a foreign link first seen");
    read(store, &links, t2).await;
    assert_eq!(
        stamp(store).await,
        listed_once,
        "a read that shows what the last one showed writes nothing a plan reads"
    );

    // Act: a look at t3 of the list read at t2, then one that names a read that is not
    // the last.
    let t3 = t0() + Duration::minutes(3);
    let moved = store
        .campaigns()
        .record_look(&lease, t2, t3)
        .await
        .expect("look");
    let released = store
        .leases()
        .lease_holder(CAMPAIGN)
        .await
        .expect("holder")
        .expect("a lease row");
    let stale = store
        .campaigns()
        .record_look(&lease, t2, t3 + Duration::minutes(1))
        .await
        .expect("look");

    // Assert: both links seen at t3, the look's lease released, nothing else written.
    assert_eq!((moved, stale), (2, 0));
    assert_eq!(released.expires_at.timestamp_millis(), 0, "released");
    let held = store.links().held_links(CAMPAIGN).await.expect("held");
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].seen_in_list_at, Some(t3));
    let foreign = store
        .links()
        .foreign_links(CAMPAIGN)
        .await
        .expect("foreign");
    assert_eq!(foreign.len(), 1);
    assert_eq!(foreign[0].last_seen_at, t3);
    assert_eq!(
        stamp(store).await,
        listed_once,
        "a look writes nothing a plan reads"
    );

    // Each write a plan reads moves the stamp: a halt of the campaign, an operator's halt
    // and resume, a link released by an operator.
    store
        .set_halt(&HaltScope::campaign(CAMPAIGN), "autobuyer creation", t3)
        .await
        .unwrap();
    let halted = stamp(store).await;
    assert_ne!(halted, listed_once, "a campaign's halt");
    store
        .clear_halt(&HaltScope::campaign(CAMPAIGN))
        .await
        .unwrap();
    store.operator_halt("alice", "why", t3).await.unwrap();
    let operator = stamp(store).await;
    assert_ne!(operator, listed_once, "an operator's halt");
    store.operator_resume("bob", "fixed", t3).await.unwrap();
    let resumed = stamp(store).await;
    assert_ne!(
        resumed, listed_once,
        "a halt and its resume in between are seen"
    );
    assert_ne!(resumed, operator, "a resume");
    let released = store
        .links()
        .release_link(CAMPAIGN, &LinkRef::Foreign("id:99".into()), "gone", t3)
        .await
        .unwrap();
    assert!(released, "the foreign link was released");
    assert_ne!(
        stamp(store).await,
        resumed,
        "a link released by an operator"
    );
}
