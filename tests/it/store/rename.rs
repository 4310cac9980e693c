//! Issue 32 in the journal: `renamed_from` hands everything the old name owns to the new name
//! in one transaction (project, intents with the natural keys that name it, money, links, halts), only
//! under the old name's current lease, and only once.

use linkrunner::decide::rename::renamed_key;
use linkrunner::domain::market::ProjectIds;
use linkrunner::store::{BeginOutcome, HaltScope, IntentKind, Store, StoreError};

use super::support::*;

const NEW: &str = "acme-boots";

async fn rename(store: &Store, lease: &linkrunner::store::LeaseToken) -> Result<bool, StoreError> {
    let rekey = |k: &str| renamed_key(k, CAMPAIGN, NEW);
    store
        .campaigns()
        .rename_campaign(CAMPAIGN, NEW, lease, t0(), &rekey)
        .await
}

pub async fn a_rename_hands_everything_to_the_new_name_once_and_a_bought_page_stays_bought(
    db: TestDb,
) {
    let store = &db.store;
    let lease = campaign_with_lease(store, &caps(1000, 5, 50)).await;
    let project = free_intent(
        IntentKind::CreateProject,
        &format!("create_project:{CAMPAIGN}"),
        serde_json::json!({}),
    );
    let at = started(store, &lease, project).await;
    let ids = ProjectIds {
        project_id: 5000,
        url_id: 10,
        text_id: 20,
    };
    complete(
        store,
        at,
        linkrunner::store::Outcome::Succeeded(linkrunner::store::Effect::ProjectCreated(
            ids.clone(),
        )),
    )
    .await;
    let at = started(store, &lease, purchase(7, 100)).await;
    complete(
        store,
        at,
        linkrunner::store::Outcome::Succeeded(purchased(7, Some(70), 100)),
    )
    .await;
    store
        .set_halt(
            &HaltScope::campaign(CAMPAIGN),
            "waiting for an operator",
            t0(),
        )
        .await
        .unwrap();
    let before = budget(store).await;

    // A token that is not the current lease changes nothing.
    let stale = linkrunner::store::LeaseToken {
        fence: lease.fence + 1,
        ..lease.clone()
    };
    assert!(matches!(
        rename(store, &stale).await,
        Err(StoreError::Fenced { .. })
    ));
    assert_eq!(recorded(store).await, [CAMPAIGN]);

    assert!(rename(store, &lease).await.unwrap(), "handed over");

    assert_eq!(recorded(store).await, [NEW]);
    let moved = store.campaigns().budget(NEW, today()).await.unwrap();
    assert_eq!(
        (moved.committed, moved.held, moved.links_total),
        (before.committed, before.held, before.links_total)
    );
    assert_eq!(
        store.campaigns().remote_ids(NEW).await.unwrap().project,
        Some(ids)
    );
    let ledger: i64 = store
        .campaigns()
        .ledger(NEW)
        .await
        .unwrap()
        .iter()
        .map(|e| e.delta.kopecks())
        .sum();
    assert_eq!(
        ledger,
        moved.committed.kopecks(),
        "the money history moved too"
    );
    assert!(store.campaigns().ledger(CAMPAIGN).await.unwrap().is_empty());
    let halts = store.halts().await.unwrap();
    assert!(halts.iter().any(|h| h.scope == HaltScope::campaign(NEW)));
    assert!(
        !halts
            .iter()
            .any(|h| h.scope == HaltScope::campaign(CAMPAIGN))
    );

    // The old token is spent: nothing more is journaled under it.
    let again = begin(store, &lease, purchase(8, 100)).await;
    assert_eq!(again, BeginOutcome::Fenced);

    // Under the new name, the page bought before the rename is refused by its natural key.
    let new_lease = lease_at(store, NEW, HOLDER, t0()).await;
    assert!(
        new_lease.fence > lease.fence,
        "the new name's fences start above the old"
    );
    // No key names the campaign for a purchase: the new name's is the old name's.
    let mut same_page = purchase(7, 100);
    same_page.campaign = NEW.into();
    let outcome = begin(store, &new_lease, same_page).await;
    assert!(matches!(outcome, BeginOutcome::Exists(_)), "{outcome:?}");

    // Honoured once: with the new name recorded, a second hand-over changes nothing.
    let old_again = lease_at(store, CAMPAIGN, HOLDER, t0()).await;
    assert!(!rename(store, &old_again).await.unwrap());
    assert_eq!(recorded(store).await, [NEW]);
}

/// Which of the old and the new name the journal records.
async fn recorded(store: &Store) -> Vec<String> {
    store
        .campaigns()
        .recorded_among(&[CAMPAIGN, NEW])
        .await
        .unwrap()
}
