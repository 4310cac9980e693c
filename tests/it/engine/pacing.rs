//! Even pacing (issue 33): buy rounds on an injected clock stepping through the last days of a
//! month. Each day's purchases, read from the sandbox's ledger, stay within that day's share
//! (what was left of the cap over the days left); the month ends with the cap reached, never
//! passed; the next month buys nothing (the links keep their rent). A campaign with `asap`
//! beside it buys a whole round on the first day, as before.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate, TimeZone, Utc};
use linkrunner::clock::{ManualClock, SharedClock};
use linkrunner::decide::plan;
use linkrunner::decide::recorded::Recorded;
use linkrunner::money::Money;
use linkrunner::views::report;

use super::support::{self, World};
use crate::support::ledger;

const CAP_RUB: i64 = 1000;
const PRICE_RUB: i64 = 100;

fn campaign(name: &str, pacing: &str) -> String {
    let head = super::fixtures::one_page(name);
    format!(
        r##"{head}budget:
  monthly: {CAP_RUB}
  max_link_price: {PRICE_RUB}
  daily_links: 5
  total_links: 50
  pacing: {pacing}
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: 5
"##
    )
}

pub async fn even_pacing_spreads_the_cap_over_the_days_left_in_the_month(db: support::TestDb) {
    let start = Utc.with_ymd_and_hms(2026, 11, 26, 9, 0, 0).unwrap();
    let clock = ManualClock::new(start);
    let shared: SharedClock = clock.clone();
    let cfg = support::priced_config(200, PRICE_RUB);
    let w = World::on_clock(db, cfg, shared, |_| {}).await;
    w.write_campaign("even-shop", &campaign("even-shop", "even"));
    w.write_campaign("asap-shop", &campaign("asap-shop", "asap"));
    let campaigns = w.campaigns();

    // Nov 26 to 30, then Dec 1; two rounds a day, the second finding the share used.
    let mut spent_before = Money::ZERO;
    for day in 26..=31u32 {
        let today =
            NaiveDate::from_ymd_opt(2026, 11, 1).unwrap() + chrono::Days::new(u64::from(day - 1));
        clock.set(Utc.from_utc_datetime(&today.and_hms_opt(9, 0, 0).unwrap()));
        support::pass_with(&w.engine, &campaigns, true).await;
        clock.advance(chrono::Duration::hours(6));
        support::pass_with(&w.engine, &campaigns, true).await;

        let bought = bought_by_day(&w, "even-shop");
        let today_rent = bought.get(&today).copied().unwrap_or(Money::ZERO);
        let left = Money::from_rubles(CAP_RUB)
            .checked_sub(spent_before)
            .unwrap();
        let share = Money::from_kopecks(left.kopecks() / days_left_in_month(today));
        assert!(
            today_rent <= share,
            "{today}: even pacing bought {today_rent} RUB/month, its share was {share}"
        );
        if today.month() == 11 {
            // 1000 RUB over 5 days, links at 100: two links every day.
            assert_eq!(
                today_rent,
                Money::from_rubles(2 * PRICE_RUB),
                "{today}: the day's share is bought"
            );
        }
        spent_before = spent_before.checked_add(today_rent).unwrap();
        if day == 27 {
            let lc = campaigns
                .iter()
                .find(|l| l.campaign.name == "even-shop")
                .unwrap();
            let r = Recorded::load(w.store(), "even-shop", today)
                .await
                .expect("journal readable");
            let text = report::render_plan(&plan::plan_campaign(&lc.campaign, &r, true));
            assert!(
                text.contains("today's share (2026-11-27, spread evenly over the month): 200 RUB/month, buy rounds used 200, 0 left"),
                "{text}"
            );
            assert!(
                text.contains("the next buy round can buy nothing today"),
                "{text}"
            );
        }
    }

    let total: Money = bought_by_day(&w, "even-shop")
        .values()
        .fold(Money::ZERO, |a, m| a.checked_add(*m).unwrap());
    assert_eq!(
        total,
        Money::from_rubles(CAP_RUB),
        "the month ends with the cap reached and not passed"
    );
    // `asap` is unchanged: the first round buys a whole `per_run`.
    let asap = bought_by_day(&w, "asap-shop");
    assert_eq!(
        asap.get(&start.date_naive()).copied(),
        Some(Money::from_rubles(5 * PRICE_RUB)),
        "{asap:?}"
    );
    ledger::assert_no_duplicate_purchase(&w.ledger());
}

/// Days from `day` to its month's end, `day` included (computed here, not by the code under
/// test).
fn days_left_in_month(day: NaiveDate) -> i64 {
    let mut d = day;
    let mut n = 0;
    while d.month() == day.month() {
        n += 1;
        d = d.succ_opt().unwrap();
    }
    n
}

/// The rent of the purchases calls bought in the project of the domain naming `shop`, by
/// the UTC day of the sandbox's clock.
fn bought_by_day(w: &World, shop: &str) -> BTreeMap<NaiveDate, Money> {
    let ledger = w.ledger();
    let project = ledger
        .projects
        .iter()
        .find(|p| p.domain.contains(shop))
        .map(|p| p.id);
    let mut by_day = BTreeMap::new();
    for p in ledger
        .purchases
        .iter()
        .filter(|p| Some(p.project_id) == project && p.autobuyer_id.is_none())
    {
        let e = by_day.entry(p.at.date_naive()).or_insert(Money::ZERO);
        *e = e.checked_add(p.price).unwrap();
    }
    by_day
}
