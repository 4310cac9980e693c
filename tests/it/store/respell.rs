//! Issue 32 in the journal: a URL respelt with its recorded `url_id` takes the new spelling in
//! one transaction (its row, its texts), only under the campaign's current lease, and only
//! once; a page bought before is refused by its key, which names the URL id, not the spelling.

use linkrunner::domain::market::{CreatedText, CreatedUrl, ProjectIds};
use linkrunner::store::{
    BeginOutcome, Effect, IntentKind, LeaseToken, Outcome, RespeltUrl, Store, StoreError,
};

use super::support::*;

const OLD: &str = "https://acme.example/running-shoes";
const NEW: &str = "https://acme.example/running_shoes";
const TEXT: &str = "#a#shoes#/a#";

async fn respell(store: &Store, lease: &LeaseToken) -> Result<usize, StoreError> {
    let urls = [RespeltUrl {
        url_id: 11,
        from: OLD,
        to: NEW,
    }];
    store
        .campaigns()
        .respell_urls(CAMPAIGN, lease, t0(), &urls, &[])
        .await
}

/// A purchase of `page` for the URL spelt `url` (the key `decide::keys::purchase` makes).
fn purchase_of(url: &str, page: i64) -> linkrunner::store::NewIntent {
    let mut i = purchase(page, 100);
    i.natural_key = linkrunner::decide::keys::purchase("default", 11, page);
    i.request = serde_json::json!({"page_id": page, "url": url, "url_id": 11, "text_id": 21});
    i
}

pub async fn a_respelt_url_keeps_its_id_texts_and_bought_pages_once(db: TestDb) {
    // Arrange: the project, the URL spelt OLD with its text, a page bought for it.
    let store = &db.store;
    let lease = campaign_with_lease(store, &caps(1000, 5, 50)).await;
    let batch = [
        free_intent(
            IntentKind::CreateProject,
            &format!("create_project:{CAMPAIGN}"),
            serde_json::json!({}),
        ),
        free_intent(
            IntentKind::AddTexts,
            &format!("add_texts:{CAMPAIGN}:1"),
            serde_json::json!({}),
        ),
    ];
    let at = started_all(store, &lease, &batch).await;
    let project = ProjectIds {
        project_id: 5000,
        url_id: 10,
        text_id: 20,
    };
    let texts = vec![CreatedUrl {
        url: OLD.into(),
        url_id: 11,
        texts: vec![CreatedText {
            text: TEXT.into(),
            text_id: 21,
        }],
    }];
    complete(
        store,
        at[0],
        Outcome::Succeeded(Effect::ProjectCreated(project)),
    )
    .await;
    complete(store, at[1], Outcome::Succeeded(Effect::TextsAdded(texts))).await;
    let bought = started(store, &lease, purchase_of(OLD, 7)).await;
    complete(
        store,
        bought,
        Outcome::Succeeded(purchased(7, Some(70), 100)),
    )
    .await;
    let money = budget(store).await;

    // Act + assert: a token that is not the current lease changes nothing.
    let stale = LeaseToken {
        fence: lease.fence + 1,
        ..lease.clone()
    };
    assert!(matches!(
        respell(store, &stale).await,
        Err(StoreError::Fenced { .. })
    ));
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    assert_eq!(ids.urls.get(OLD), Some(&11));

    // Act: re-spelt under the lease.
    assert_eq!(respell(store, &lease).await.unwrap(), 1);

    // Assert: one row, the new spelling, with its id and text; the money is as it was.
    let ids = store.campaigns().remote_ids(CAMPAIGN).await.unwrap();
    assert_eq!(ids.urls.get(NEW), Some(&11));
    assert!(!ids.urls.contains_key(OLD), "{:?}", ids.urls);
    assert_eq!(
        ids.texts.get(&(NEW.to_string(), TEXT.to_string())),
        Some(&21)
    );
    assert!(!ids.texts.contains_key(&(OLD.to_string(), TEXT.to_string())));
    let after = budget(store).await;
    assert_eq!(
        (after.committed, after.held, after.links_total),
        (money.committed, money.held, money.links_total)
    );

    // The page bought under the old spelling is refused by its key under the new one.
    let outcome = store
        .intents()
        .begin_intents(&lease, &[purchase_of(NEW, 7)], t0())
        .await
        .unwrap();
    assert!(matches!(outcome, BeginOutcome::Exists(_)), "{outcome:?}");

    // Honoured once: nothing is spelt OLD any more.
    assert_eq!(respell(store, &lease).await.unwrap(), 0);
    assert_eq!(
        store
            .campaigns()
            .remote_ids(CAMPAIGN)
            .await
            .unwrap()
            .urls
            .get(NEW),
        Some(&11)
    );
}
