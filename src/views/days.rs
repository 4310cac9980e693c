//! The month as a picture's data: the commitment at the end of each UTC day of the current
//! month, account-wide and per campaign, against the cap — what the status page draws
//! (`http::picture`), so pacing and a jump are seen without reading the tables.
//!
//! Read from the append-only ledger, whose movements of a campaign sum to its commitment
//! (`budgets.committed`): one aggregate query per page (`Store::ledger_days`, grouped by
//! campaign and day) is folded by [`MonthDays`] into the account's day totals and the day
//! totals of the few campaigns the page shows, so memory stays small at 10,000 campaigns. The
//! line is anchored on the commitment now and walked back: the month's start is the
//! commitment now minus the month's movements, so it ends exactly where the summary says.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Utc};

use crate::store::{DaySum, Store, StoreError};
use linkrunner_domain::money::Money;

use super::month::Month;

/// One line of the picture: the commitment at the end of each day of the month so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DaySeries {
    /// `YYYY-MM`, UTC.
    pub(crate) month: String,
    /// Days the month has (28 to 31): the picture's width.
    pub(crate) days: u32,
    /// The commitment when the month began (the close of the day before).
    pub(crate) start: Money,
    /// The commitment at the end of day 1, 2, ... up to today (today's: now). Never empty.
    pub(crate) closes: Vec<Money>,
    /// The cap the line is drawn against (no cap: zero).
    pub(crate) cap: Money,
}

impl DaySeries {
    /// The day of the month (1-based) whose close moved the most from the day before, and by
    /// how much (up or down); `None` in a month where nothing moved.
    pub(crate) fn biggest_move(&self) -> Option<(u32, Money)> {
        let mut before = self.start;
        let mut best: Option<(u32, Money)> = None;
        for (day, close) in (1..).zip(&self.closes) {
            let delta = close.kopecks() - before.kopecks();
            before = *close;
            if delta != 0 && best.is_none_or(|(_, b)| delta.abs() > b.kopecks().abs()) {
                best = Some((day, Money::from_kopecks(delta)));
            }
        }
        best
    }

    /// The highest close (or the start, if higher).
    pub(crate) fn peak(&self) -> Money {
        self.closes
            .iter()
            .copied()
            .chain([self.start])
            .max()
            .unwrap_or(Money::ZERO)
    }
}

/// The month's ledger movements summed per day: every campaign's together, and each of the
/// campaigns asked for apart. Fed the store's rows one by one ([`MonthDays::add`]).
#[derive(Debug, Clone)]
pub(crate) struct MonthDays {
    month: Month,
    /// Days since the month began of `now` (the last day drawn).
    today: usize,
    account: Vec<i64>,
    campaigns: BTreeMap<String, Vec<i64>>,
    /// The account-wide cap (issue 24), when one is set and was read (the list's month).
    account_cap: Option<Money>,
}

impl MonthDays {
    /// Empty days of the month holding `now`, keeping the days of `kept` campaigns apart.
    pub(crate) fn new<'a>(now: DateTime<Utc>, kept: impl IntoIterator<Item = &'a str>) -> Self {
        let month = Month::of(now);
        let today = now.date_naive().day0() as usize;
        MonthDays {
            month,
            today,
            account: vec![0; today + 1],
            campaigns: kept
                .into_iter()
                .map(|c| (c.to_string(), vec![0; today + 1]))
                .collect(),
            account_cap: None,
        }
    }

    /// With the account-wide cap `cap` (none: not set).
    pub(crate) fn with_account_cap(mut self, cap: Option<Money>) -> Self {
        self.account_cap = cap;
        self
    }

    /// The account-wide cap, if one is set.
    pub(crate) fn account_cap(&self) -> Option<Money> {
        self.account_cap
    }

    /// The month whose days these are.
    pub(crate) fn month(&self) -> Month {
        self.month
    }

    /// Adds one campaign's movements of one day. A day past today (a movement written by a
    /// clock ahead of ours) counts as today's, so the line still ends at the commitment now.
    pub(crate) fn add(&mut self, row: &DaySum) {
        self.add_to_account(row);
        self.add_to_kept(row);
    }

    /// Adds movements of one day to every campaign's line only (a row of every campaign's
    /// movements of a day, summed).
    pub(crate) fn add_to_account(&mut self, row: &DaySum) {
        let day = self.day_of(row);
        self.account[day] = self.account[day].saturating_add(row.delta.kopecks());
    }

    /// Adds one campaign's movements of one day to its own line only, if it is kept.
    pub(crate) fn add_to_kept(&mut self, row: &DaySum) {
        let day = self.day_of(row);
        if let Some(days) = self.campaigns.get_mut(&row.campaign) {
            days[day] = days[day].saturating_add(row.delta.kopecks());
        }
    }

    fn day_of(&self, row: &DaySum) -> usize {
        usize::try_from(row.day).unwrap_or(0).min(self.today)
    }

    /// Every campaign's line together: `committed` is their commitment now, `cap` what it is
    /// drawn against.
    pub(crate) fn account(&self, committed: Money, cap: Money) -> DaySeries {
        series(self.month, &self.account, committed, cap)
    }

    /// `campaign`'s line, if it was kept.
    pub(crate) fn campaign(
        &self,
        campaign: &str,
        committed: Money,
        cap: Money,
    ) -> Option<DaySeries> {
        let days = self.campaigns.get(campaign)?;
        Some(series(self.month, days, committed, cap))
    }
}

/// The line of `deltas` (the movements of day 1, 2, ... up to today) ending at `committed`.
pub(crate) fn series(month: Month, deltas: &[i64], committed: Money, cap: Money) -> DaySeries {
    let moved: i64 = deltas.iter().fold(0i64, |a, d| a.saturating_add(*d));
    let start = committed.kopecks().saturating_sub(moved);
    let mut level = start;
    let closes = deltas
        .iter()
        .map(|d| {
            level = level.saturating_add(*d);
            Money::from_kopecks(level)
        })
        .collect();
    DaySeries {
        month: month.to_string(),
        days: days_in(month),
        start: Money::from_kopecks(start),
        closes,
        cap,
    }
}

fn days_in(month: Month) -> u32 {
    u32::try_from((month.end() - month.start()).num_days()).unwrap_or(31)
}

/// The current month's days read from the journal, `kept` campaigns kept apart (the page's
/// rows; one campaign on its own page). Of every campaign (`only` none): the days of all of
/// them summed by the database (at most 31 rows), the kept campaigns' days by a second query
/// of those campaigns only, and the account-wide cap; of one campaign: its own rows.
pub(crate) async fn month_days(
    store: &Store,
    now: DateTime<Utc>,
    kept: &[&str],
    only: Option<&str>,
) -> Result<MonthDays, StoreError> {
    let mut days = MonthDays::new(now, kept.iter().copied());
    let month = days.month();
    let (from, to) = (month.start(), month.end());
    if only.is_some() {
        store
            .reports()
            .ledger_days(from, to, only, |row| days.add(&row))
            .await?;
        return Ok(days);
    }
    store
        .reports()
        .ledger_days_total(from, to, |row| days.add_to_account(&row))
        .await?;
    store
        .reports()
        .ledger_days_of(from, to, kept, |row| days.add_to_kept(&row))
        .await?;
    let cap = store
        .campaigns()
        .account_budget(linkrunner_domain::account::DEFAULT_ACCOUNT)
        .await?
        .cap;
    Ok(days.with_account_cap(cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
    }

    fn row(campaign: &str, day: i64, rub: i64) -> DaySum {
        DaySum {
            campaign: campaign.into(),
            day,
            delta: Money::from_rubles(rub),
        }
    }

    fn rubles(s: &DaySeries) -> Vec<i64> {
        s.closes.iter().map(|m| m.kopecks() / 100).collect()
    }

    #[test]
    fn an_empty_month_is_a_flat_line_at_the_commitment_now() {
        let days = MonthDays::new(at(2026, 11, 5, 12), []);
        let s = days.account(Money::from_rubles(700), Money::from_rubles(3000));
        assert_eq!(s.month, "2026-11");
        assert_eq!(s.days, 30);
        assert_eq!(s.start, Money::from_rubles(700));
        assert_eq!(rubles(&s), [700; 5]);
        assert_eq!(s.biggest_move(), None);
        assert_eq!(s.cap, Money::from_rubles(3000));
    }

    #[test]
    fn a_jump_shows_on_its_day_and_stays() {
        let mut days = MonthDays::new(at(2026, 11, 6, 8), ["acme", "dune"]);
        for r in [
            row("acme", 1, 150),
            row("acme", 3, 2000),
            row("dune", 3, 100),
            row("zeta", 4, 50),
        ] {
            days.add(&r);
        }
        let acme = days
            .campaign("acme", Money::from_rubles(2150), Money::from_rubles(3000))
            .unwrap();
        assert_eq!(acme.start, Money::ZERO);
        assert_eq!(rubles(&acme), [0, 150, 150, 2150, 2150, 2150]);
        assert_eq!(acme.biggest_move(), Some((4, Money::from_rubles(2000))));
        assert_eq!(acme.peak(), Money::from_rubles(2150));
        let all = days.account(Money::from_rubles(2400), Money::from_rubles(9000));
        assert_eq!(all.start, Money::from_rubles(100));
        assert_eq!(rubles(&all), [100, 250, 250, 2350, 2400, 2400]);
        assert!(days.campaign("zeta", Money::ZERO, Money::ZERO).is_none());
    }

    #[test]
    fn the_days_summed_apart_draw_the_lines_the_rows_draw() {
        // The page reads every campaign's days summed per day, and its rows' days apart.
        let rows = [
            row("acme", 0, 500),
            row("dune", 0, 70),
            row("acme", 2, -300),
            row("zeta", 2, 40),
        ];
        let mut whole = MonthDays::new(at(2026, 11, 4, 23), ["acme"]);
        let mut apart = MonthDays::new(at(2026, 11, 4, 23), ["acme"]);
        for r in &rows {
            whole.add(r);
        }
        for (day, rub) in [(0, 570), (2, -260)] {
            apart.add_to_account(&row("", day, rub));
        }
        for r in rows.iter().filter(|r| r.campaign == "acme") {
            apart.add_to_kept(r);
        }
        let (c, cap) = (Money::from_rubles(900), Money::from_rubles(2000));
        assert_eq!(apart.account(c, cap), whole.account(c, cap));
        assert_eq!(
            apart.campaign("acme", c, cap),
            whole.campaign("acme", c, cap)
        );
        assert_eq!(rubles(&apart.account(c, cap)), [1160, 1160, 900, 900]);
    }

    #[test]
    fn releases_lower_the_line() {
        let mut days = MonthDays::new(at(2026, 11, 4, 23), ["acme"]);
        for r in [
            row("acme", 0, 500),
            row("acme", 2, -300),
            row("acme", 3, -50),
        ] {
            days.add(&r);
        }
        let s = days
            .campaign("acme", Money::from_rubles(1150), Money::from_rubles(2000))
            .unwrap();
        assert_eq!(s.start, Money::from_rubles(1000));
        assert_eq!(rubles(&s), [1500, 1500, 1200, 1150]);
        assert_eq!(s.biggest_move(), Some((1, Money::from_rubles(500))));
        assert_eq!(s.peak(), Money::from_rubles(1500));
    }

    #[test]
    fn on_the_first_of_a_month_the_line_is_that_one_day_from_what_last_month_left() {
        // Just after midnight on 1 December: November's movements are the start, not a day.
        let mut days = MonthDays::new(at(2026, 12, 1, 0), ["acme"]);
        days.add(&row("acme", 0, 80));
        let s = days
            .campaign("acme", Money::from_rubles(1080), Money::from_rubles(2000))
            .unwrap();
        assert_eq!((s.month.as_str(), s.days), ("2026-12", 31));
        assert_eq!(s.start, Money::from_rubles(1000));
        assert_eq!(rubles(&s), [1080]);
        let feb = MonthDays::new(at(2027, 2, 28, 23), []).account(Money::ZERO, Money::ZERO);
        assert_eq!((feb.days, feb.closes.len()), (28, 28));
    }

    #[test]
    fn a_movement_dated_after_now_counts_today_so_the_line_ends_at_the_commitment() {
        let mut days = MonthDays::new(at(2026, 11, 2, 12), []);
        days.add(&row("acme", 5, 40));
        let s = days.account(Money::from_rubles(40), Money::ZERO);
        assert_eq!(rubles(&s), [0, 40]);
    }
}
