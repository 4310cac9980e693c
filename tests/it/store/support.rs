//! Fixtures and the invariant every test checks after each step; the databases come from
//! [`crate::support::db`].

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use linkrunner::money::Money;
use linkrunner::store::{
    AttemptRef, AutobuyerRecord, BeginOutcome, BudgetSnapshot, CampaignCaps, CapKind, Effect,
    IntentKind, IntentState, LeaseToken, NewIntent, Outcome, Reservation, StopSettlement, Store,
};

pub use crate::support::db::{TestDb, lease_at};

pub const CAMPAIGN: &str = "acme-shoes";
pub const HOLDER: &str = "daemon-a";

pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).unwrap()
}

pub fn today() -> NaiveDate {
    t0().date_naive()
}

pub fn rub(r: i64) -> Money {
    Money::from_rubles(r)
}

pub fn caps(monthly_rub: i64, daily_links: u32, total_links: u32) -> CampaignCaps {
    CampaignCaps {
        account: "default".into(),
        name: CAMPAIGN.into(),
        monthly_cap: rub(monthly_rub),
        daily_links,
        total_links,
    }
}

/// The campaign with the given caps, recorded at `t0`.
pub async fn campaign(store: &Store, c: &CampaignCaps) {
    store
        .campaigns()
        .upsert_campaign(c, t0())
        .await
        .expect("campaign");
}

/// The campaign with the given caps, and a lease on it for `HOLDER`.
pub async fn campaign_with_lease(store: &Store, c: &CampaignCaps) -> LeaseToken {
    campaign(store, c).await;
    lease(store, &c.name, HOLDER).await
}

pub async fn lease(store: &Store, campaign: &str, holder: &str) -> LeaseToken {
    lease_at(store, campaign, holder, t0()).await
}

/// Begins `intent` alone at `t0`; the test fails unless it was started.
pub async fn started(store: &Store, lease: &LeaseToken, intent: NewIntent) -> AttemptRef {
    started_all(store, lease, &[intent]).await[0]
}

/// Begins `intent` and records it done with `effect`.
pub async fn succeeded(store: &Store, lease: &LeaseToken, intent: NewIntent, effect: Effect) {
    let at = started(store, lease, intent).await;
    complete(store, at, Outcome::Succeeded(effect)).await;
}

/// Begins `batch` at `t0`; the test fails unless all of it was started.
pub async fn started_all(
    store: &Store,
    lease: &LeaseToken,
    batch: &[NewIntent],
) -> Vec<AttemptRef> {
    match store
        .intents()
        .begin_intents(lease, batch, t0())
        .await
        .expect("begin")
    {
        BeginOutcome::Started(ids) => ids,
        other => panic!("expected Started, got {other:?}"),
    }
}

/// Marks the campaign's in-flight intents uncertain at `t0`, as a takeover by `lease` does.
pub async fn mark_in_flight_uncertain(store: &Store, lease: &LeaseToken) -> u64 {
    store
        .intents()
        .mark_in_flight_uncertain(CAMPAIGN, lease, t0())
        .await
        .expect("mark in flight uncertain")
}

/// Begins each purchase at once on its own task, through its store and lease; returns how
/// many were started (the rest met a cap).
pub async fn race_purchases(tasks: Vec<(Store, Arc<LeaseToken>, NewIntent)>) -> i64 {
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|(store, lease, intent)| {
            tokio::spawn(async move {
                let outcome = store
                    .intents()
                    .begin_intents(&lease, &[intent], t0())
                    .await
                    .expect("begin never errors");
                matches!(outcome, BeginOutcome::Started(_))
            })
        })
        .collect();
    let mut started = 0;
    for h in handles {
        started += i64::from(h.await.expect("task"));
    }
    started
}

/// Records `outcome` for the attempt at `t0`, with no raw answer.
pub async fn complete(store: &Store, at: AttemptRef, outcome: Outcome) {
    store
        .intents()
        .complete_intent(at, outcome, None, t0())
        .await
        .expect("complete");
}

pub fn failed(error: &str) -> Outcome {
    Outcome::Failed {
        error: error.into(),
    }
}

pub fn uncertain(error: &str) -> Outcome {
    Outcome::Uncertain {
        error: error.into(),
    }
}

/// The effect of a purchase of [`purchase`]'s link on `page`, at `price_rub`.
pub fn purchased(page: i64, link: Option<i64>, price_rub: i64) -> Effect {
    Effect::Purchased {
        link,
        page_id: page,
        url_id: 10,
        text_id: 20,
        price: rub(price_rub),
    }
}

/// `intent` with a reservation of `amount_rub` and no link (an autobuyer's budget).
pub fn reserving(intent: NewIntent, amount_rub: i64) -> NewIntent {
    NewIntent {
        reserve: Some(Reservation {
            amount: rub(amount_rub),
            links: 0,
            day: today(),
        }),
        ..intent
    }
}

/// The campaign's budget as of `today`.
pub async fn budget(store: &Store) -> BudgetSnapshot {
    store
        .campaigns()
        .budget(CAMPAIGN, today())
        .await
        .expect("budget")
}

/// The campaign's recorded autobuyer `name`.
pub async fn autobuyer(store: &Store, name: &str) -> AutobuyerRecord {
    store
        .campaigns()
        .remote_ids(CAMPAIGN)
        .await
        .expect("remote ids")
        .autobuyers[name]
        .clone()
}

/// A purchase of one link on `page` for URL id 10 at `price` rubles, counted against today,
/// under the key the buy round makes.
pub fn purchase(page: i64, price_rub: i64) -> NewIntent {
    NewIntent {
        campaign: CAMPAIGN.into(),
        kind: IntentKind::Purchase,
        natural_key: linkrunner::decide::keys::purchase("default", 10, page),
        fingerprint: format!("fp-{page}"),
        request: serde_json::json!({"page_id": page, "url_id": 10, "text_id": 20}),
        reserve: Some(Reservation {
            amount: rub(price_rub),
            links: 1,
            day: today(),
        }),
    }
}

pub fn free_intent(kind: IntentKind, key: &str, request: serde_json::Value) -> NewIntent {
    NewIntent {
        campaign: CAMPAIGN.into(),
        kind,
        natural_key: key.into(),
        fingerprint: format!("fp-{key}"),
        request,
        reserve: None,
    }
}

/// Settles the confirmed stop of the campaign's autobuyer `name` at `t0`.
pub async fn settle_stop(store: &Store, name: &str) -> StopSettlement {
    store
        .campaigns()
        .settle_stopped_autobuyer(CAMPAIGN, name, t0())
        .await
        .expect("settle stop")
}

/// The journal's money invariant: the ledger sums to the commitment, and the commitment is
/// exactly what is held, in flight and uncertain.
pub async fn assert_books_balance(store: &Store) {
    let b = budget(store).await;
    let ledger: i64 = store
        .campaigns()
        .ledger(CAMPAIGN)
        .await
        .expect("ledger")
        .iter()
        .map(|e| e.delta.kopecks())
        .sum();
    assert_eq!(ledger, b.committed.kopecks(), "sum(ledger) == committed");
    let parts = b.held.kopecks() + b.reserved_in_flight.kopecks() + b.uncertain.kopecks();
    assert_eq!(
        parts,
        b.committed.kopecks(),
        "committed == held + in flight + uncertain: {b:?}"
    );
}

pub async fn state_of(store: &Store, key: &str) -> Option<IntentState> {
    let all = store
        .intents()
        .find_intents(Default::default())
        .await
        .expect("intents");
    all.into_iter()
        .find(|i| i.natural_key == key)
        .map(|i| i.state)
}

/// Begins `intent` alone at `t0` and returns what the journal said.
pub async fn begin(store: &Store, lease: &LeaseToken, intent: NewIntent) -> BeginOutcome {
    store
        .intents()
        .begin_intents(lease, &[intent], t0())
        .await
        .unwrap()
}

/// `outcome` is a refusal by the `cap` cap.
pub fn assert_refused_by(outcome: BeginOutcome, cap: CapKind) {
    assert!(
        matches!(&outcome, BeginOutcome::CapExceeded { cap: c, .. } if *c == cap),
        "{outcome:?}"
    );
}
