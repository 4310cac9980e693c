//! The account-wide cap (issue 24): the sum of every campaign's commitment stays under it,
//! checked in the transaction of each reservation, also with two daemons racing.

use std::sync::Arc;

use linkrunner::store::{AccountBudget, BeginOutcome, CapKind, LeaseToken, NewIntent, Store};

use super::support::*;

const OTHER: &str = "acme-boots";
/// The account every campaign of these tests spends in unless it names one.
const DEFAULT: &str = "default";

/// [`purchase`] for `campaign`.
fn purchase_in(campaign: &str, page: i64, price_rub: i64) -> NewIntent {
    let mut p = purchase(page, price_rub);
    p.natural_key = format!("purchase:{campaign}:{page}:10:20");
    p.campaign = campaign.into();
    p
}

/// Two campaigns, each allowed far more than the account, with a lease on each.
async fn two_campaigns(store: &Store) -> (LeaseToken, LeaseToken) {
    let a = campaign_with_lease(store, &caps(100_000, 100, 100)).await;
    let mut other = caps(100_000, 100, 100);
    other.name = OTHER.into();
    let b = campaign_with_lease(store, &other).await;
    (a, b)
}

pub async fn account_cap_refuses_a_reservation_that_two_campaigns_together_would_pass(db: TestDb) {
    let (a, b) = two_campaigns(&db.store).await;
    set_account_cap(&db.store, Some(rub(500))).await;
    let first = begin(&db.store, &a, purchase_in(CAMPAIGN, 1, 300)).await;
    assert!(matches!(first, BeginOutcome::Started(_)), "{first:?}");

    let second = begin(&db.store, &b, purchase_in(OTHER, 2, 300)).await;

    assert_eq!(
        second,
        BeginOutcome::CapExceeded {
            campaign: OTHER.into(),
            cap: CapKind::Account,
            needed: 30_000,
            headroom: 20_000,
        }
    );
    assert_eq!(
        state_of(&db.store, &purchase_in(OTHER, 2, 0).natural_key).await,
        None
    );
    let other = db.store.campaigns().budget(OTHER, today()).await.unwrap();
    assert_eq!(
        (other.committed, other.links_total),
        (rub(0), 0),
        "rolled back"
    );
    assert!(db.store.campaigns().ledger(OTHER).await.unwrap().is_empty());
    assert_eq!(
        db.store.campaigns().account_budget(DEFAULT).await.unwrap(),
        AccountBudget {
            cap: Some(rub(500)),
            committed: rub(300)
        }
    );
    let fits = begin(&db.store, &b, purchase_in(OTHER, 3, 200)).await;
    assert!(
        matches!(fits, BeginOutcome::Started(_)),
        "exactly up to the cap: {fits:?}"
    );
    assert_books_balance(&db.store).await;
}

pub async fn removing_the_account_cap_lets_the_campaign_caps_alone_decide(db: TestDb) {
    let (a, _) = two_campaigns(&db.store).await;
    set_account_cap(&db.store, Some(rub(100))).await;
    let refused = begin(&db.store, &a, purchase_in(CAMPAIGN, 1, 150)).await;
    assert_refused_by(refused, CapKind::Account);

    set_account_cap(&db.store, None).await;
    let started = begin(&db.store, &a, purchase_in(CAMPAIGN, 1, 150)).await;

    assert!(matches!(started, BeginOutcome::Started(_)), "{started:?}");
    assert_eq!(
        db.store.campaigns().account_budget(DEFAULT).await.unwrap(),
        AccountBudget {
            cap: None,
            committed: rub(150)
        }
    );
    assert_books_balance(&db.store).await;
}

/// Two daemons (two pools), each buying for its own campaign: together they stay under the
/// account cap, though each campaign's own cap would allow far more.
pub async fn account_cap_holds_with_two_stores_racing_for_two_campaigns(db: TestDb) {
    let (a, b) = two_campaigns(&db.store).await;
    set_account_cap(&db.store, Some(rub(1000))).await;
    let stores = [db.store.clone(), db.another_store().await];
    let leases = [Arc::new(a), Arc::new(b)];
    let purchases = (0..24_i64)
        .map(|page| {
            let i = (page % 2) as usize;
            let campaign = [CAMPAIGN, OTHER][i];
            let purchase = purchase_in(campaign, page, 150);
            (stores[i].clone(), leases[i].clone(), purchase)
        })
        .collect();
    let started = race_purchases(purchases).await;

    let account = db.store.campaigns().account_budget(DEFAULT).await.unwrap();
    assert_eq!(
        started, 6,
        "1000 RUB fits six links at 150, whichever campaign buys"
    );
    assert_eq!(account.committed, rub(150 * started));
    assert_books_balance(&db.store).await;
}

/// Issue 34: each account's cap bounds only its own campaigns. Account B's reservations are
/// not counted against A's cap, and B's are refused at B's own cap while A keeps reserving.
pub async fn each_account_cap_counts_only_its_own_campaigns(db: TestDb) {
    let a = campaign_with_lease(&db.store, &caps(100_000, 100, 100)).await;
    let mut other = caps(100_000, 100, 100);
    other.name = OTHER.into();
    other.account = "client-b".into();
    let b = campaign_with_lease(&db.store, &other).await;
    let campaigns = db.store.campaigns();
    campaigns
        .set_account_cap(DEFAULT, Some(rub(500)), "test", t0())
        .await
        .unwrap();
    campaigns
        .set_account_cap("client-b", Some(rub(400)), "test", t0())
        .await
        .unwrap();

    // B spends 300 of its 400: A's cap of 500 does not see it.
    let b_first = begin(&db.store, &b, purchase_in(OTHER, 1, 300)).await;
    assert!(matches!(b_first, BeginOutcome::Started(_)), "{b_first:?}");
    let a_first = begin(&db.store, &a, purchase_in(CAMPAIGN, 2, 450)).await;
    assert!(
        matches!(a_first, BeginOutcome::Started(_)),
        "B's 300 do not count against A's 500: {a_first:?}"
    );
    // B's next 150 passes B's own cap (300 + 150 > 400), though A's has room for none of it
    // and the two together (750) would pass neither.
    let b_second = begin(&db.store, &b, purchase_in(OTHER, 3, 150)).await;

    assert_eq!(
        b_second,
        BeginOutcome::CapExceeded {
            campaign: OTHER.into(),
            cap: CapKind::Account,
            needed: 15_000,
            headroom: 10_000,
        }
    );
    let a_more = begin(&db.store, &a, purchase_in(CAMPAIGN, 4, 50)).await;
    assert!(matches!(a_more, BeginOutcome::Started(_)), "{a_more:?}");
    assert_eq!(
        campaigns.account_budget(DEFAULT).await.unwrap(),
        AccountBudget {
            cap: Some(rub(500)),
            committed: rub(500)
        }
    );
    assert_eq!(
        campaigns.account_budget("client-b").await.unwrap(),
        AccountBudget {
            cap: Some(rub(400)),
            committed: rub(300)
        }
    );
    assert_books_balance(&db.store).await;
}

/// Sets the account cap (`None`: no cap) at `t0`, by "test".
async fn set_account_cap(store: &Store, cap: Option<linkrunner::money::Money>) {
    let set = store
        .campaigns()
        .set_account_cap(DEFAULT, cap, "test", t0());
    set.await.unwrap();
}

/// The account cap the reservations check, as the journal holds it.
async fn account_cap(store: &Store) -> Option<linkrunner::money::Money> {
    store.campaigns().account_budget(DEFAULT).await.unwrap().cap
}

/// The account file's `approve_above` (issue 33): a raise of the account cap is spent only up
/// to the approved cap plus the threshold — raises add up against the same approval — until
/// `resolve approve --account` approves what the file asks.
pub async fn a_raised_account_cap_waits_for_approval_and_small_raises_add_up(db: TestDb) {
    let (a, _) = two_campaigns(&db.store).await;
    let campaigns = db.store.campaigns();
    campaigns
        .set_account_cap(DEFAULT, Some(rub(500)), "test", t0())
        .await
        .unwrap();

    // The threshold first seen with a raise: the cap held before is the baseline.
    let set = campaigns
        .set_account_cap_approving(DEFAULT, Some(rub(700)), Some(rub(150)), "test", t0())
        .await
        .unwrap();
    assert_eq!(
        (set.recorded, set.waiting),
        (Some(rub(650)), Some(rub(700)))
    );
    let refused = begin(&db.store, &a, purchase_in(CAMPAIGN, 1, 660)).await;
    assert_refused_by(refused, CapKind::Account);

    // A small raise within the threshold applies at once; another one past it does not.
    let small = campaigns
        .set_account_cap_approving(DEFAULT, Some(rub(600)), Some(rub(150)), "test", t0())
        .await
        .unwrap();
    assert_eq!((small.recorded, small.waiting), (Some(rub(600)), None));
    let again = campaigns
        .set_account_cap_approving(DEFAULT, Some(rub(800)), Some(rub(150)), "test", t0())
        .await
        .unwrap();
    assert_eq!(
        again.recorded,
        Some(rub(650)),
        "raises add up against the approval"
    );

    let approved = campaigns
        .approve_account(DEFAULT, "ann", "budget for the spring sale", t0())
        .await
        .unwrap()
        .expect("a threshold is in force");
    assert_eq!((approved.approved, approved.by.as_str()), (rub(800), "ann"));
    assert_eq!(account_cap(&db.store).await, Some(rub(800)));
    let bought = begin(&db.store, &a, purchase_in(CAMPAIGN, 1, 660)).await;
    assert!(matches!(bought, BeginOutcome::Started(_)), "{bought:?}");

    // Without the threshold the file's cap holds again; the approval is kept.
    let plain = campaigns
        .set_account_cap_approving(DEFAULT, Some(rub(5000)), None, "test", t0())
        .await
        .unwrap();
    assert_eq!((plain.recorded, plain.waiting), (Some(rub(5000)), None));
    assert!(
        campaigns
            .approve_account(DEFAULT, "ann", "again", t0())
            .await
            .unwrap()
            .is_none()
    );
}
