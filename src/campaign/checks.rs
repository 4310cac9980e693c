//! Limits and positioned checks shared by the parts of validation (`validate`, `spend`,
//! `autobuyers`): each reports at the value's position and returns something usable, so
//! later checks do not cascade.

use super::diag::Problems;
use super::rules;
use super::span::At;
use linkrunner_domain::money::Money;

/// The largest `budget.monthly` accepted: 10 million rubles a month is past any real campaign.
pub(super) const MAX_MONTHLY: Money = Money::from_rubles(10_000_000);
pub(super) const MAX_DAILY_LINKS: i64 = 1000;
pub(super) const MAX_TOTAL_LINKS: i64 = 100_000;
pub(super) const MAX_PER_RUN: i64 = 100;
pub(super) const MAX_LINK_TYPE_ID: i64 = 1000;

/// A name that passes [`rules::check_name`]; reports at its position otherwise.
pub(super) fn check_name(name: &At<String>, p: &mut Problems) {
    if let Err(e) = rules::check_name(&name.value) {
        p.at(name.pos, e);
    }
}

/// A count in `1..=max`; out of range is reported and clamped so later checks do not cascade.
pub(super) fn count(v: &At<i64>, key: &str, max: i64, p: &mut Problems) -> u32 {
    if !(1..=max).contains(&v.value) {
        p.at(
            v.pos,
            format!("`{key}` must be between 1 and {max}, not {}", v.value),
        );
    }
    u32::try_from(v.value.clamp(1, max)).unwrap_or(1)
}

/// An amount in `0 < amount <= max`.
pub(super) fn positive_money(v: &At<Money>, key: &str, max: Money, p: &mut Problems) -> bool {
    let ok = v.value > Money::ZERO && v.value <= max;
    if !ok {
        p.at(
            v.pos,
            format!(
                "`{key}` must be more than 0 and at most {max} RUB, not {}",
                v.value
            ),
        );
    }
    ok
}
