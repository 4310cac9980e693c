//! The even spread of a month's money (issue 33, `even` in a campaign's budget): how much buy
//! rounds may still commit today. Pure; the round's money limit is the smaller of this and the
//! headroom under the cap (`plan::round_limits`).
//!
//! The cap bounds the **monthly commitment** (DESIGN §5): a link bought today costs its rent
//! every month it is held. So "committed today" is not money paid today but the rent that buy
//! rounds' purchases reserved today (UTC, the day of the reservation as for `daily_links`):
//! links bought today at their reservation, purchases still in flight or uncertain; a purchase
//! settled as not bought released its reservation and does not count. Autobuyers' budgets are
//! not spread: they count on the day they are created or started, as they always did, and so
//! shrink what is left for the days after.
//!
//! The day's share is what was left for rounds when the day began (what is left of the cap now
//! plus what rounds committed today) divided over the days left in the month, today
//! included, rounded down to the kopeck. Buying does not move it within the day: every round
//! of the day draws on the same share. On the month's last day the share is everything left,
//! so a month in which every day buys its share ends with the cap reached, never passed (the
//! share is never more than what is left). The next month starts from what is left then: the
//! links bought keep their rent, so a filled cap stays filled.

use chrono::{Datelike, NaiveDate};
use serde::Serialize;

use linkrunner_domain::money::Money;

/// Today's share of what is left, and how much of it buy rounds used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct TodayShare {
    /// The UTC day the share is for.
    pub(crate) day: NaiveDate,
    /// What buy rounds may commit over the whole day.
    pub(crate) share: Money,
    /// What buy rounds committed today (see the module's map).
    pub(crate) used: Money,
    /// What they may still commit today: `share - used`, never below zero.
    pub(crate) left: Money,
}

/// The days from `day` to the end of its month, `day` included: 1 on the last day.
pub(crate) fn days_left_in_month(day: NaiveDate) -> u32 {
    let (y, m) = (day.year(), day.month());
    let first_of_next = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)
    };
    first_of_next.map_or(1, |next| {
        u32::try_from((next - day).num_days()).unwrap_or(1).max(1)
    })
}

/// Today's share, given what is left of the cap now (`cap_left`, after everything the
/// commitment counts) and what buy rounds committed today (`used`).
pub(crate) fn today_share(day: NaiveDate, cap_left: Money, used: Money) -> TodayShare {
    let used = used.max(Money::ZERO);
    let at_dawn = cap_left
        .max(Money::ZERO)
        .checked_add(used)
        .unwrap_or(Money::MAX);
    let share = Money::from_kopecks(at_dawn.kopecks() / i64::from(days_left_in_month(day)));
    TodayShare {
        day,
        share,
        used,
        left: Money::saturating_headroom(share, used).min(cap_left.max(Money::ZERO)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn rub(r: i64) -> Money {
        Money::from_rubles(r)
    }

    #[test]
    fn the_days_left_count_today_and_end_on_the_months_last_day() {
        assert_eq!(days_left_in_month(day(2026, 11, 1)), 30);
        assert_eq!(days_left_in_month(day(2026, 11, 30)), 1);
        assert_eq!(days_left_in_month(day(2026, 12, 31)), 1, "December");
        assert_eq!(days_left_in_month(day(2027, 1, 1)), 31);
        assert_eq!(days_left_in_month(day(2027, 2, 28)), 1, "February");
        assert_eq!(days_left_in_month(day(2028, 2, 28)), 2, "leap February");
        assert_eq!(days_left_in_month(day(2028, 2, 29)), 1);
    }

    #[test]
    fn the_share_divides_what_is_left_over_the_days_left() {
        let s = today_share(day(2026, 11, 21), rub(1000), Money::ZERO);
        assert_eq!((s.share, s.used, s.left), (rub(100), Money::ZERO, rub(100)));
        // Rounded down to the kopeck: 1000 RUB over 3 days.
        let s = today_share(day(2026, 11, 28), rub(1000), Money::ZERO);
        assert_eq!(s.share, Money::from_kopecks(33_333));
    }

    #[test]
    fn the_last_day_of_a_month_may_take_everything_left() {
        for last in [
            day(2026, 11, 30),
            day(2026, 12, 31),
            day(2027, 2, 28),
            day(2028, 2, 29),
        ] {
            assert_eq!(
                today_share(last, rub(777), Money::ZERO).left,
                rub(777),
                "{last}"
            );
        }
        // The day before a leap day still leaves half for it.
        assert_eq!(
            today_share(day(2028, 2, 28), rub(500), Money::ZERO).left,
            rub(250)
        );
    }

    #[test]
    fn a_day_whose_share_is_used_may_commit_nothing_more() {
        // 1000 RUB left at dawn on the 21st (10 days): 100 a day; rounds took 100 already.
        let s = today_share(day(2026, 11, 21), rub(900), rub(100));
        assert_eq!((s.share, s.left), (rub(100), Money::ZERO));
        // Part of it used: the rest, not a new share of what is left now.
        let s = today_share(day(2026, 11, 21), rub(940), rub(60));
        assert_eq!((s.share, s.left), (rub(100), rub(40)));
        // Over the share (the cap was raised, a link cost more): nothing, never negative.
        let s = today_share(day(2026, 11, 21), rub(500), rub(300));
        assert_eq!(s.left, Money::ZERO);
    }

    #[test]
    fn nothing_left_of_the_cap_leaves_nothing_to_share() {
        let s = today_share(day(2026, 11, 30), Money::ZERO, Money::ZERO);
        assert_eq!(s.left, Money::ZERO);
        let over = Money::ZERO.checked_sub(rub(50)).unwrap();
        assert_eq!(
            today_share(day(2026, 11, 30), over, Money::ZERO).left,
            Money::ZERO
        );
    }

    /// A month from `start`, each day's rounds buying `buys[i]` parts (of 0..=4) of what the
    /// share leaves, in up to three rounds; returns (each day's share and commitment, total).
    fn spend_month(start: NaiveDate, left: Money, parts: &[u8]) -> (Vec<(Money, Money)>, Money) {
        let mut left = left;
        let mut total = Money::ZERO;
        let mut days = Vec::new();
        let mut d = start;
        let mut i = 0;
        while d.month() == start.month() {
            let mut used = Money::ZERO;
            let share = today_share(d, left, used).share;
            for _ in 0..3 {
                let may = today_share(d, left, used);
                assert_eq!(may.share, share, "a round moved the day's share on {d}");
                let part = i64::from(parts.get(i).copied().unwrap_or(4).min(4));
                i += 1;
                let buy = Money::from_kopecks(may.left.kopecks() * part / 4);
                used = used.checked_add(buy).unwrap();
                left = left.checked_sub(buy).unwrap();
                total = total.checked_add(buy).unwrap();
            }
            days.push((share, used));
            d = d.succ_opt().unwrap();
        }
        (days, total)
    }

    proptest! {
        #[test]
        fn a_month_never_commits_more_than_was_left_and_no_day_more_than_its_share(
            y in 2024i32..2030, m in 1u32..=12, d in 1u32..=31,
            kopecks in 0i64..=1_000_000_000,
            parts in proptest::collection::vec(0u8..=4, 0..100),
        ) {
            let Some(start) = NaiveDate::from_ymd_opt(y, m, d) else { return Ok(()) };
            let (days, total) = spend_month(start, Money::from_kopecks(kopecks), &parts);
            prop_assert!(total <= Money::from_kopecks(kopecks));
            for (share, used) in days {
                prop_assert!(used <= share, "a day committed {used} over its share {share}");
            }
        }

        #[test]
        fn a_month_that_buys_every_share_ends_with_the_cap_reached(
            y in 2024i32..2030, m in 1u32..=12, d in 1u32..=31,
            kopecks in 0i64..=1_000_000_000,
        ) {
            let Some(start) = NaiveDate::from_ymd_opt(y, m, d) else { return Ok(()) };
            let (days, total) = spend_month(start, Money::from_kopecks(kopecks), &[]);
            prop_assert_eq!(total, Money::from_kopecks(kopecks));
            // Spread, not front-loaded: no day's share is below the one before it.
            for w in days.windows(2) {
                prop_assert!(w[1].0 >= w[0].0, "{:?}", days);
            }
        }
    }
}
