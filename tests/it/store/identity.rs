//! Issue 32, item 1 in the journal: money follows the marketplace's ids. A purchase's natural
//! key names the URL id and the donor page (`decide::keys::purchase`), so a page bought before
//! a rename or a respelling is refused by the unique key itself, with no rekey step; and the
//! migration that re-keys journals written before keeps refusing the pages they hold.

use linkrunner::decide::keys;
use linkrunner::store::{
    BeginOutcome, IntentKind, IntentState, LeaseToken, NewIntent, Outcome, Store,
};

use super::support::*;

const NEW: &str = "acme-boots";
const OLD_URL: &str = "https://acme.example/running-shoes";
const NEW_URL: &str = "https://acme.example/running_shoes";

/// A purchase by `campaign` of `page` for URL id 11 spelt `url`, keyed as the buy round keys it.
fn purchase_for(campaign: &str, url: &str, page: i64) -> NewIntent {
    let mut i = purchase(page, 100);
    i.campaign = campaign.into();
    i.natural_key = keys::purchase("default", 11, page);
    i.request = serde_json::json!({"page_id": page, "url": url, "url_id": 11, "text_id": 21});
    i
}

/// The campaign, with page 7 bought for URL id 11 spelt `OLD_URL`; its lease.
async fn bought_page_7(store: &Store) -> LeaseToken {
    let lease = campaign_with_lease(store, &caps(1000, 5, 50)).await;
    let bought = started(store, &lease, purchase_for(CAMPAIGN, OLD_URL, 7)).await;
    let held = Outcome::Succeeded(purchased(7, Some(70), 100));
    complete(store, bought, held).await;
    lease
}

pub async fn a_page_bought_for_a_url_id_is_refused_under_a_new_name_without_a_rekey(db: TestDb) {
    // Arrange: the old name bought page 7 for URL id 11; its try of page 8 failed (not sent).
    let store = &db.store;
    let lease = bought_page_7(store).await;
    let refused = started(store, &lease, purchase_for(CAMPAIGN, OLD_URL, 8)).await;
    complete(store, refused, failed("refused")).await;
    let money = budget(store).await;
    // The new name is recorded beside the old with its own lease: no rename ran, no key moved.
    let mut renamed = caps(1000, 5, 50);
    renamed.name = NEW.into();
    let new_lease = campaign_with_lease(store, &renamed).await;

    // Act: the new name begins a purchase of the same page, spelt anew.
    let again = begin(store, &new_lease, purchase_for(NEW, NEW_URL, 7)).await;
    let failed_page = begin(store, &new_lease, purchase_for(NEW, NEW_URL, 8)).await;

    // Assert: the unique key refuses both with the old name's rows; the failed one is not
    // re-armed under the new name (its reservation would land on the old name's budget).
    match again {
        BeginOutcome::Exists(row) => assert_eq!(
            (row.campaign.as_str(), row.state),
            (CAMPAIGN, IntentState::Succeeded)
        ),
        other => panic!("the page bought for URL id 11 was begun again: {other:?}"),
    }
    match failed_page {
        BeginOutcome::Exists(row) => assert_eq!(
            (row.campaign.as_str(), row.state),
            (CAMPAIGN, IntentState::Failed)
        ),
        other => panic!("another campaign's failed purchase was re-armed: {other:?}"),
    }
    let after = budget(store).await;
    assert_eq!(
        (after.committed, after.links_total),
        (money.committed, money.links_total)
    );
    assert_books_balance(store).await;
}

pub async fn a_page_bought_before_a_respelling_is_refused_under_the_new_spelling_without_a_rekey(
    db: TestDb,
) {
    // Arrange: page 7 bought for URL id 11 spelt OLD_URL.
    let store = &db.store;
    let lease = bought_page_7(store).await;

    // Act: the same URL id, spelt NEW_URL, begins a purchase of the same page; no respelling
    // of the journal ran.
    let again = begin(store, &lease, purchase_for(CAMPAIGN, NEW_URL, 7)).await;

    // Assert: refused by the key; another page for the URL is still bought.
    assert!(matches!(again, BeginOutcome::Exists(_)), "{again:?}");
    let other = begin(store, &lease, purchase_for(CAMPAIGN, NEW_URL, 9)).await;
    assert!(matches!(other, BeginOutcome::Started(_)), "{other:?}");
}

/// A purchase recorded by a linkrunner before issue 32: its key names the campaign, the page
/// and the URL's text.
fn legacy(page: i64, url: &str, request: serde_json::Value) -> NewIntent {
    let mut i = purchase(page, 100);
    i.natural_key = format!("purchase:{CAMPAIGN}:{page}:{url}");
    i.request = request;
    i
}

/// Runs this version's migration `*_purchase_keys_by_ids.sql` again, on the test's database.
async fn rekey_migration(db: &TestDb) {
    use sqlx::Connection;
    let sql = match db.sqlite_file() {
        Some(_) => {
            include_str!("../../../migrations/sqlite/20261129310001_purchase_keys_by_ids.sql")
        }
        None => {
            include_str!("../../../migrations/postgres/20261129310001_purchase_keys_by_ids.sql")
        }
    };
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url)
        .await
        .expect("connects");
    sqlx::raw_sql(sql)
        .execute(&mut conn)
        .await
        .expect("the migration runs");
    conn.close().await.ok();
}

pub async fn the_migration_keys_existing_purchases_by_url_id_and_page(db: TestDb) {
    // Arrange: purchases keyed as before issue 32.
    let store = &db.store;
    let lease = campaign_with_lease(store, &caps(10_000, 50, 50)).await;
    let ids = |page: i64| serde_json::json!({"page_id": page, "url": OLD_URL, "url_id": 11});
    // Bought, with its ids in its request.
    let a = started(store, &lease, legacy(7, OLD_URL, ids(7))).await;
    complete(store, a, Outcome::Succeeded(purchased(7, Some(70), 100))).await;
    // Bought, its request without ids: the held link names URL id 10 and page 8.
    let b = started(store, &lease, legacy(8, OLD_URL, serde_json::json!({}))).await;
    complete(store, b, Outcome::Succeeded(purchased(8, Some(80), 100))).await;
    // Failed, nothing names its ids: kept as it is.
    let c = started(store, &lease, legacy(6, OLD_URL, serde_json::json!({}))).await;
    complete(store, c, failed("refused")).await;
    // Page 9 for URL id 11 under two spellings: a failed try, then a purchase that held.
    let d = started(store, &lease, legacy(9, OLD_URL, ids(9))).await;
    complete(store, d, failed("refused")).await;
    let e = started(store, &lease, legacy(9, NEW_URL, ids(9))).await;
    complete(store, e, Outcome::Succeeded(purchased(9, Some(90), 100))).await;
    let project = free_intent(
        IntentKind::CreateProject,
        &format!("create_project:{CAMPAIGN}"),
        serde_json::json!({"page_id": 1, "url_id": 1}),
    );
    started(store, &lease, project).await;
    let money = budget(store).await;

    // Act: the migration runs over them (again: this journal is migrated already).
    rekey_migration(&db).await;

    // Assert: each row found by its ids is keyed by them; the rest are kept.
    let key_of = |id: i64| async move {
        store
            .intents()
            .find_intents(Default::default())
            .await
            .expect("intents")
            .into_iter()
            .find(|i| i.id.0 == id)
            .map(|i| i.natural_key)
            .expect("the row is kept")
    };
    assert_eq!(key_of(a.intent.0).await, keys::purchase("default", 11, 7));
    assert_eq!(key_of(b.intent.0).await, keys::purchase("default", 10, 8));
    assert_eq!(
        key_of(c.intent.0).await,
        format!("purchase:{CAMPAIGN}:6:{OLD_URL}")
    );
    assert_eq!(
        key_of(e.intent.0).await,
        keys::purchase("default", 11, 9),
        "the purchase that held takes the key, not the failed try"
    );
    assert_eq!(
        key_of(d.intent.0).await,
        format!("purchase:{CAMPAIGN}:9:{OLD_URL}")
    );
    assert_eq!(
        state_of(store, &format!("create_project:{CAMPAIGN}")).await,
        Some(IntentState::InFlight),
        "other kinds keep their keys"
    );
    // The journal keeps refusing the pages it holds, under any name and spelling.
    for (url_id, page) in [(11, 7), (10, 8), (11, 9)] {
        let mut i = purchase_for(CAMPAIGN, NEW_URL, page);
        i.natural_key = keys::purchase("default", url_id, page);
        let again = begin(store, &lease, i).await;
        assert!(
            matches!(again, BeginOutcome::Exists(_)),
            "{url_id}/{page}: {again:?}"
        );
    }
    let after = budget(store).await;
    assert_eq!(after.committed, money.committed, "the money is as it was");
    assert_books_balance(store).await;
}

/// Issue 34: a marketplace's ids are its account's own, and two accounts (maybe two
/// marketplaces) may both have a URL 11 with a page 7. A purchase key of a non-default account
/// names it (`decide::keys::purchase`), so page 7 for URL id 11 in two accounts is two
/// purchases, each on its own campaign's money, while in one account the unique key still
/// refuses the second, under any campaign.
pub async fn the_same_url_id_and_page_in_two_accounts_are_two_purchases_and_in_one_account_one(
    db: TestDb,
) {
    // Arrange: a campaign in the default account, two in `client-a`, one in `client-b`.
    let store = &db.store;
    let in_account = |name: &str, account: &str| {
        let mut c = caps(1000, 5, 50);
        c.name = name.into();
        c.account = account.into();
        c
    };
    let default = campaign_with_lease(store, &caps(1000, 5, 50)).await;
    let a = campaign_with_lease(store, &in_account("shop-a", "client-a")).await;
    let a2 = campaign_with_lease(store, &in_account("shop-a2", "client-a")).await;
    let b = campaign_with_lease(store, &in_account("shop-b", "client-b")).await;
    let page_7 = |campaign: &str, account: &str| {
        let mut i = purchase_for(campaign, OLD_URL, 7);
        i.natural_key = keys::purchase(account, 11, 7);
        i
    };

    // Act: each begins (and buys) page 7 for URL id 11 in its account.
    for (lease, campaign, account) in [
        (&default, CAMPAIGN, "default"),
        (&a, "shop-a", "client-a"),
        (&b, "shop-b", "client-b"),
    ] {
        let at = started(store, lease, page_7(campaign, account)).await;
        complete(store, at, Outcome::Succeeded(purchased(7, Some(70), 100))).await;
    }
    let again = begin(store, &a2, page_7("shop-a2", "client-a")).await;

    // Assert: three purchases, one per account; the second in `client-a` is refused with the
    // first's row, and its campaign holds no money.
    match again {
        BeginOutcome::Exists(row) => assert_eq!(
            (row.campaign.as_str(), row.state),
            ("shop-a", IntentState::Succeeded)
        ),
        other => panic!("page 7 of URL id 11 was begun twice in one account: {other:?}"),
    }
    let purchases = store
        .intents()
        .find_intents(Default::default())
        .await
        .expect("intents");
    let mut keys: Vec<(String, String)> = purchases
        .iter()
        .filter(|i| i.kind == IntentKind::Purchase && i.state == IntentState::Succeeded)
        .map(|i| (i.campaign.clone(), i.natural_key.clone()))
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            (CAMPAIGN.to_string(), "purchase:url:11:page:7".to_string()),
            (
                "shop-a".into(),
                "purchase:account:client-a:url:11:page:7".into()
            ),
            (
                "shop-b".into(),
                "purchase:account:client-b:url:11:page:7".into()
            ),
        ]
    );
    for (campaign, committed) in [
        (CAMPAIGN, 100),
        ("shop-a", 100),
        ("shop-b", 100),
        ("shop-a2", 0),
    ] {
        let money = store.campaigns().budget(campaign, today()).await.unwrap();
        assert_eq!(money.committed, rub(committed), "{campaign}: {money:?}");
    }
    assert_books_balance(store).await;
}
