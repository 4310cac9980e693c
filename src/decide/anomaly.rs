//! The anomaly brake's rule (issue 33): what a campaign's schedule and its autobuyers'
//! budgets explain over a trailing window, and whether what the journal shows committed or
//! appearing in that window runs above a set multiple of it (pure).
//!
//! - **Rounds' worth**: the slots of the *effective* trigger in the window (the schedule, or
//!   the daemon's `--round-every`; the caller counts them) × `per_run` links, at most
//!   `daily_links`, each at most `max_link_price`.
//! - **Autobuyers' worth**: each autobuyer of the file (running or not: it may have run earlier
//!   in the window, as a paused campaign may have bought) may reserve its monthly
//!   budget once in the window (a create or a start), and its URLs' `daily_links_limit` of
//!   links may appear in it, all at once if it likes.
//! - A window straddling midnight may legitimately see two days' worth of `daily_links`: the
//!   multiple (default 3) is the headroom for it, so it should not be set below 2.
//! - An hour window tolerates a whole round at once: its rounds' worth is at least one round.
//!
//! It trips when an observed figure is above `multiple` × its expectation **and** above a
//! small absolute floor, so a link or two against an expectation of nearly nothing does not.

use std::time::Duration;

use chrono::{DateTime, Utc};
use croner::Cron;

use crate::campaign::Campaign;
use linkrunner_domain::money::Money;

use super::caps::autobuyer_budget;

/// Links appearing at or below this many in a window never trip, whatever was expected.
pub(crate) const LINKS_FLOOR: u64 = 5;
/// Commitment at or below this in a window never trips, whatever was expected.
pub(crate) const MONEY_FLOOR: Money = Money::from_rubles(1_000);

/// The two windows the brake watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Hour,
    Day,
}

impl Window {
    pub(crate) fn words(self) -> &'static str {
        match self {
            Window::Hour => "the last hour",
            Window::Day => "the last 24 h",
        }
    }
}

/// What a scope's files explain, or what its journal shows, over one window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub committed: Money,
    pub links: u64,
}

impl Figures {
    /// The sum of two scopes' figures (the account's is the sum over its campaigns).
    pub fn plus(self, o: Figures) -> Figures {
        Figures {
            committed: self
                .committed
                .checked_add(o.committed)
                .unwrap_or(Money::MAX),
            links: self.links.saturating_add(o.links),
        }
    }
}

/// What one campaign's file explains in a window in which its effective trigger has
/// `slots` slots. `adopted`: the team buys by hand in an adopted project, so its foreign
/// links are not observed at all (the caller leaves them out) and nothing is added here.
pub fn expected(c: &Campaign, slots: u64, window: Window) -> Figures {
    // The window looks back: a campaign paused, or an autobuyer stopped, a minute ago bought
    // before that, and its links may appear later still. The file's state now says nothing
    // of the window, so it is not read.
    let rounds = match &c.buy {
        Some(b) => {
            let slots = match window {
                // A whole round may land in one hour.
                Window::Hour => slots.max(1),
                Window::Day => slots,
            };
            let links = slots
                .saturating_mul(u64::from(b.per_run))
                .min(u64::from(c.budget.daily_links));
            Figures {
                committed: times(c.budget.max_link_price, links),
                links,
            }
        }
        None => Figures::default(),
    };
    let autobuyers = c
        .autobuyers
        .iter()
        .map(|ab| Figures {
            committed: autobuyer_budget(ab),
            links: ab.urls.iter().map(|u| u64::from(u.daily_links_limit)).sum(),
        })
        .fold(Figures::default(), Figures::plus);
    rounds.plus(autobuyers)
}

/// Why a scope tripped: the figure that ran above its multiple.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Trip {
    window: Window,
    /// `"committed"` or `"links appearing"`.
    what: &'static str,
    observed: String,
    explained: String,
    ratio: f64,
}

impl Trip {
    /// The reason recorded with the halt: the figures an operator needs at 3 a.m.
    pub(crate) fn reason(&self, multiple: f64) -> String {
        let ratio = if self.ratio.is_finite() {
            format!("{:.1}", self.ratio)
        } else {
            "∞".to_string()
        };
        format!(
            "anomaly: {} {} in {}; schedules and budgets explain {}; multiple {ratio} > {multiple}",
            self.what,
            self.observed,
            self.window.words(),
            self.explained,
        )
    }
}

/// Whether `observed` runs above `multiple` × `explained` (and above the floors) in
/// `window`. `multiple` ≤ 0 turns the brake off.
pub(crate) fn judge(
    observed: Figures,
    explained: Figures,
    multiple: f64,
    window: Window,
) -> Option<Trip> {
    if multiple <= 0.0 || !multiple.is_finite() {
        return None;
    }
    let money_over = observed.committed > MONEY_FLOOR
        && observed.committed.kopecks() as f64 > multiple * explained.committed.kopecks() as f64;
    if money_over {
        return Some(Trip {
            window,
            what: "committed",
            observed: format!("{} RUB", observed.committed),
            explained: format!("{} RUB", explained.committed),
            ratio: ratio(
                observed.committed.kopecks() as f64,
                explained.committed.kopecks() as f64,
            ),
        });
    }
    let links_over =
        observed.links > LINKS_FLOOR && observed.links as f64 > multiple * explained.links as f64;
    links_over.then(|| Trip {
        window,
        what: "links appearing",
        observed: format!("{} links", observed.links),
        explained: format!("{} links", explained.links),
        ratio: ratio(observed.links as f64, explained.links as f64),
    })
}

fn ratio(observed: f64, explained: f64) -> f64 {
    if explained > 0.0 {
        observed / explained
    } else {
        f64::INFINITY
    }
}

fn times(price: Money, n: u64) -> Money {
    i64::try_from(n)
        .ok()
        .and_then(|n| price.checked_mul(n))
        .unwrap_or(Money::MAX)
}

/// The pattern of a campaign's effective trigger: its file's schedule, or every minute when
/// the daemon runs with `--round-every` (the timer then ticks by `round_every`); `None`
/// without buy rounds. The timer schedules by it, and the brake judges by it the campaigns
/// it does not schedule.
pub(crate) fn trigger_pattern(c: &Campaign, round_every: Option<Duration>) -> Option<String> {
    match (&c.buy, round_every) {
        (Some(_), Some(_)) => Some("* * * * *".to_string()),
        (Some(b), None) => Some(b.schedule.clone()),
        (None, _) => None,
    }
}

/// The slots of `cron`, the campaign's effective trigger (or every `round_every` when the
/// daemon runs with `--round-every`), in `[since, now]`, as the brake counts them (`pub` for
/// the fake-clock month test, which checks the brake's figures).
pub fn slots_in(
    c: &Campaign,
    cron: Option<&Cron>,
    round_every: Option<Duration>,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> u64 {
    let (Some(cron), Some(buy)) = (cron, &c.buy) else {
        return 0;
    };
    match round_every {
        Some(every) => {
            let every = every.as_millis().max(1) as i64;
            ((now - since).num_milliseconds().max(0) / every) as u64 + 1
        }
        // Beyond the rounds that fill `daily_links`, more slots explain nothing more.
        None => count_slots(
            cron,
            since,
            now,
            u64::from(c.budget.daily_links).div_ceil(u64::from(buy.per_run.max(1))),
        ),
    }
}

/// Occurrences of `cron` in `[since, now]`, counted up to `enough` (at 10,000 campaigns a
/// count of every minute's slot at every check would cost seconds).
pub(crate) fn count_slots(
    cron: &Cron,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    enough: u64,
) -> u64 {
    let mut n = 0;
    let mut at = since;
    while n < enough {
        match cron.find_next_occurrence(&at, n == 0) {
            Ok(next) if next <= now => {
                n += 1;
                at = next;
            }
            _ => break,
        }
    }
    n
}

#[cfg(test)]
mod tests;
