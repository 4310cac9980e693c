//! Pages held twice (issue 32): each finding is recorded once, across replicas and restarts,
//! kept while reads show it, and cleared only by a read shown complete that no longer does.

use chrono::Duration;
use linkrunner::store::{HeldTwice, Store};

use super::support::*;

fn twice(page_id: i64, link_ids: &[i64]) -> HeldTwice {
    HeldTwice {
        url_id: 11,
        page_id,
        links: link_ids.len() as u32,
        link_ids: link_ids.to_vec(),
    }
}

async fn note(store: &Store, found: &[HeldTwice], complete: bool, minutes: i64) -> Vec<HeldTwice> {
    store
        .links()
        .note_held_twice(CAMPAIGN, found, complete, t0() + Duration::minutes(minutes))
        .await
        .expect("note_held_twice")
}

pub async fn a_page_held_twice_is_recorded_once_until_a_complete_read_clears_it(db: TestDb) {
    let other = db.another_store().await;
    let page = twice(1, &[2001, 2002]);
    let found = std::slice::from_ref(&page);
    let (a, b) = tokio::join!(
        note(&db.store, found, false, 0),
        note(&other, found, false, 0)
    );
    assert_eq!(
        a.len() + b.len(),
        1,
        "one of two racing replicas records it: {a:?} {b:?}"
    );
    assert!(
        note(&db.store, found, false, 1).await.is_empty(),
        "seen again: not new"
    );
    let recorded = db.store.links().held_twice(CAMPAIGN).await.unwrap();
    assert_eq!(recorded, vec![page.clone()]);

    // A read that may be cut and does not show it proves nothing; a complete one clears it.
    assert!(note(&db.store, &[], false, 2).await.is_empty());
    assert_eq!(
        db.store.links().held_twice(CAMPAIGN).await.unwrap().len(),
        1
    );
    let another = twice(2, &[2003, 2004]);
    let new = note(&db.store, std::slice::from_ref(&another), true, 3).await;
    assert_eq!(new, vec![another.clone()]);
    assert_eq!(
        db.store.links().held_twice(CAMPAIGN).await.unwrap(),
        vec![another],
        "page 1 cleared by a complete read that shows it once"
    );

    // It recurs: recorded (and told) again.
    assert_eq!(note(&other, found, false, 4).await, vec![page]);
}
