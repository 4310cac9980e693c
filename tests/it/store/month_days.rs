//! The month's commitment per UTC day (the status page's picture): the ledger's movements
//! summed by campaign and day, each day from midnight UTC, the month's edges exact.

use chrono::{DateTime, Duration, TimeZone, Utc};
use linkrunner::store::{AttemptRef, BeginOutcome, DaySum, Store};

use super::support::*;

fn nov(day: u32, h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, day, h, m, s).unwrap()
}

/// Begins the purchase of `page` at `price_rub` at `when`, under a lease taken then.
async fn bought_at(store: &Store, page: i64, price_rub: i64, when: DateTime<Utc>) -> AttemptRef {
    let lease = lease_at(store, CAMPAIGN, HOLDER, when).await;
    match store
        .intents()
        .begin_intents(&lease, &[purchase(page, price_rub)], when)
        .await
        .expect("begin")
    {
        BeginOutcome::Started(ids) => ids[0],
        other => panic!("expected Started, got {other:?}"),
    }
}

async fn days_of(store: &Store, campaign: Option<&str>) -> Vec<DaySum> {
    let (from, to) = (
        nov(1, 0, 0, 0),
        Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap(),
    );
    let mut rows = Vec::new();
    store
        .reports()
        .ledger_days(from, to, campaign, |r| rows.push(r))
        .await
        .expect("ledger days");
    rows.sort_by_key(|r| (r.campaign.clone(), r.day));
    rows
}

pub async fn the_month_is_summed_per_utc_day_from_its_first_millisecond_to_its_last(db: TestDb) {
    let s = &db.store;
    campaign(s, &caps(10_000, 100, 100)).await;
    let first_ms = nov(1, 0, 0, 0);
    let last_ms = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() - Duration::milliseconds(1);
    bought_at(s, 1, 100, first_ms - Duration::milliseconds(1)).await;
    let early = bought_at(s, 2, 120, first_ms).await;
    bought_at(s, 3, 30, nov(1, 23, 59, 59)).await;
    bought_at(s, 4, 80, nov(22, 9, 0, 0)).await;
    let lease = lease_at(s, CAMPAIGN, HOLDER, nov(23, 10, 0, 0)).await;
    s.intents()
        .complete_intent(early, failed("refused"), None, nov(23, 10, 0, 0))
        .await
        .expect("release");
    drop(lease);
    bought_at(s, 5, 7, last_ms).await;
    bought_at(s, 6, 50, last_ms + Duration::milliseconds(1)).await;

    let all = days_of(s, None).await;
    let only = days_of(s, Some(CAMPAIGN)).await;
    let other = days_of(s, Some("dune-maps")).await;
    // What the page reads: every campaign summed per day, and the rows it shows apart.
    let (from, to) = (
        nov(1, 0, 0, 0),
        Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap(),
    );
    let mut total = Vec::new();
    s.reports()
        .ledger_days_total(from, to, |r| total.push(r))
        .await
        .expect("days of every campaign");
    total.sort_by_key(|r| r.day);
    let mut shown = Vec::new();
    s.reports()
        .ledger_days_of(from, to, &[CAMPAIGN, "dune-maps"], |r| shown.push(r))
        .await
        .expect("days of the rows shown");
    shown.sort_by_key(|r| (r.campaign.clone(), r.day));
    let mut none = Vec::new();
    s.reports()
        .ledger_days_of(from, to, &[], |r| none.push(r))
        .await
        .expect("days of no row");

    let day = |d: i64, rub: i64| DaySum {
        campaign: CAMPAIGN.into(),
        day: d,
        delta: linkrunner::money::Money::from_rubles(rub),
    };
    assert_eq!(
        all,
        [day(0, 150), day(21, 80), day(22, -120), day(29, 7)],
        "October's last millisecond and December's first are not November's"
    );
    assert_eq!(only, all);
    assert!(other.is_empty(), "{other:?}");
    let summed: Vec<DaySum> = all
        .iter()
        .map(|d| DaySum {
            campaign: String::new(),
            ..d.clone()
        })
        .collect();
    assert_eq!(total, summed, "every campaign's days, one row a day");
    assert_eq!(shown, all, "the rows shown, by name");
    assert!(none.is_empty(), "{none:?}");
    assert_books_balance(s).await;
}
