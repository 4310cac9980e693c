//! What `--rate-limit` can carry (issue 27) — pure, no I/O, shared by `run` (at start and
//! as the daemon learns) and `plan`. The daemon's `reconciler` acts on it.
//!
//! - [`plan_reconcile`]: the reconciliation's share of the rate limit and the cycle it
//!   needs. A converged campaign costs one link-list call per reconciliation; when every
//!   campaign cannot be reconciled once per `--reconcile-interval` within that share, the
//!   cycle is longer (campaigns are spread over it), never the rate.
//! - [`round_load`]: the calls the scheduled buy rounds need at each slot, and which slots
//!   cannot start every round within a minute ([`LATE_AFTER`]) or finish before the next.
//!
//! Rounds go first: while a due round waits to start, reconciliation starts nothing; it
//! never uses more than [`RECONCILE_SHARE`] of the limit, and the client's queue gives a
//! round's calls the next turn before reconciliation's (`market/throttle/gate.rs`), so a
//! round's calls never queue behind a backlog of list reads while reconciliation keeps its
//! pace beside the rounds (issue 34, item 6).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};

/// The share of `--rate-limit` reconciliation may use when campaigns buy on schedules; the
/// rest is kept for buy rounds.
pub(crate) const RECONCILE_SHARE: f64 = 0.8;

/// A round that starts later than this after its slot counts as started late.
pub(crate) const LATE_AFTER: Duration = Duration::from_secs(60);

/// Calls one search costs in a round before it is ready, when the journal has not seen one
/// yet: the start and two polls.
pub(crate) const DEFAULT_CALLS_PER_SEARCH: f64 = 3.0;

/// How reconciliation runs within the rate limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ReconcilePlan {
    /// Calls per second reconciliation may use.
    pub(crate) budget: f64,
    /// Time to reconcile every campaign once.
    pub(crate) cycle: Duration,
    /// The cycle is longer than `--reconcile-interval`: campaigns are spread over it.
    pub(crate) spread: bool,
}

impl ReconcilePlan {
    /// The wait between two reconciliations' starts that keeps within the budget, for a
    /// campaign that costs `calls`.
    pub(crate) fn spacing(&self, calls: f64) -> Duration {
        Duration::from_secs_f64((calls.max(0.0) / self.budget).min(3600.0))
    }
}

/// Plans reconciliation of `campaigns` campaigns costing `calls_per_campaign` each, every
/// `interval`, at `rate` requests per second (`None`: no client limit, a double).
/// `rounds_scheduled`: some campaign buys on a schedule, so a share is kept for rounds.
pub(crate) fn plan_reconcile(
    rate: Option<u32>,
    campaigns: usize,
    interval: Duration,
    calls_per_campaign: f64,
    rounds_scheduled: bool,
) -> ReconcilePlan {
    let share = if rounds_scheduled {
        RECONCILE_SHARE
    } else {
        1.0
    };
    let budget = rate.map_or(f64::INFINITY, |r| f64::from(r.max(1)) * share);
    let need = campaigns as f64 * calls_per_campaign.max(0.0) / budget;
    let need = Duration::from_secs_f64(if need.is_finite() { need } else { 0.0 });
    ReconcilePlan {
        budget,
        cycle: need.max(interval),
        spread: need > interval,
    }
}

/// The rounds of one slot and what they need at the rate limit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlotLoad {
    slot: DateTime<Utc>,
    campaigns: usize,
    calls: f64,
    /// How long their calls take at the whole rate limit: the last of them starts about
    /// this long after the slot.
    takes: Duration,
    /// The next slot of any schedule after this one, if any within the horizon.
    next: Option<DateTime<Utc>>,
}

impl SlotLoad {
    /// Some round of this slot starts more than [`LATE_AFTER`] after it.
    pub(crate) fn starts_late(&self) -> bool {
        self.takes > LATE_AFTER
    }

    /// Its rounds are still running when the next slot comes.
    pub(crate) fn overruns(&self) -> bool {
        self.next.is_some_and(|n| {
            chrono::Duration::from_std(self.takes).is_ok_and(|t| self.slot + t > n)
        })
    }

    /// What an operator reads at start and in `plan`.
    pub(crate) fn warning(&self, rate: u32) -> String {
        let mut w = format!(
            "{} buy round(s) at {} need about {:.0} marketplace calls, {} at --rate-limit {rate}: \
             the last of them starts about {} after its slot",
            self.campaigns,
            self.slot.format("%Y-%m-%d %H:%M UTC"),
            self.calls,
            human(self.takes),
            human(self.takes),
        );
        if self.overruns()
            && let Some(n) = self.next
        {
            w.push_str(&format!(
                ", past the next slot at {}",
                n.format("%Y-%m-%d %H:%M UTC")
            ));
        }
        w.push_str(
            "; spread the schedules over more minutes or hours, or raise --rate-limit \
             (docs/sizing.md)",
        );
        w
    }
}

/// The slots of the next `horizon` after `now` at which rounds are due, each with the
/// campaigns due then and their calls, given `schedules` as (parsed schedule, calls one
/// round of the campaign needs). At most `per_schedule` slots of each schedule are looked
/// at (a minutely schedule has 1,440 a day). `rate`: requests per second.
pub(crate) fn round_load(
    schedules: &[(&croner::Cron, f64)],
    now: DateTime<Utc>,
    horizon: chrono::Duration,
    per_schedule: usize,
    rate: u32,
) -> Vec<SlotLoad> {
    let end = now + horizon;
    let mut at: BTreeMap<DateTime<Utc>, (usize, f64)> = BTreeMap::new();
    // Campaigns mostly share a few schedules: each distinct one is walked once.
    let mut by_pattern: HashMap<String, (&croner::Cron, usize, f64)> = HashMap::new();
    for (cron, calls) in schedules {
        let e = by_pattern
            .entry(cron.as_str().to_string())
            .or_insert((cron, 0, 0.0));
        e.1 += 1;
        e.2 += calls;
    }
    for (cron, n, calls) in by_pattern.values() {
        let mut t = now;
        for _ in 0..per_schedule {
            let Ok(next) = cron.find_next_occurrence(&t, false) else {
                break;
            };
            if next > end {
                break;
            }
            let e = at.entry(next).or_insert((0, 0.0));
            e.0 += n;
            e.1 += calls;
            t = next;
        }
    }
    let slots: Vec<_> = at.into_iter().collect();
    let rate = f64::from(rate.max(1));
    slots
        .iter()
        .enumerate()
        .map(|(i, (slot, (campaigns, calls)))| SlotLoad {
            slot: *slot,
            campaigns: *campaigns,
            calls: *calls,
            takes: Duration::from_secs_f64(calls / rate),
            next: slots.get(i + 1).map(|(t, _)| *t),
        })
        .collect()
}

/// The slots whose rounds start late, the worst first, at most `max`.
pub(crate) fn late_slots(loads: &[SlotLoad], max: usize) -> Vec<&SlotLoad> {
    let mut late: Vec<&SlotLoad> = loads.iter().filter(|l| l.starts_late()).collect();
    late.sort_by_key(|l| std::cmp::Reverse(l.takes));
    late.truncate(max);
    late
}

/// What `run` logs at start and `plan` prints: one line per slot (the worst three) whose
/// rounds start late at `rate` requests per second, for the campaigns that buy on a
/// schedule over the day after `now`. A schedule that does not parse is left to `validate`.
pub(crate) fn round_warnings(
    campaigns: &[&crate::campaign::Campaign],
    now: DateTime<Utc>,
    rate: u32,
) -> Vec<String> {
    let parser = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Disallowed)
        .build();
    let mut parsed: HashMap<&str, Option<croner::Cron>> = HashMap::new();
    for c in campaigns {
        if let Some(b) = &c.buy {
            parsed
                .entry(b.schedule.as_str())
                .or_insert_with(|| parser.parse(&b.schedule).ok());
        }
    }
    let schedules: Vec<(&croner::Cron, f64)> = campaigns
        .iter()
        .filter_map(|c| {
            let cron = parsed.get(c.buy.as_ref()?.schedule.as_str())?.as_ref()?;
            Some((cron, round_calls(c.urls.len(), DEFAULT_CALLS_PER_SEARCH)))
        })
        .collect();
    let loads = round_load(&schedules, now, chrono::Duration::days(1), 1440, rate);
    late_slots(&loads, 3)
        .into_iter()
        .map(|l| l.warning(rate))
        .collect()
}

/// Calls one buy round of a campaign with `urls` promoted URLs needs: per URL a search
/// (start and polls: `calls_per_search`) and a purchase, then one link list.
pub(crate) fn round_calls(urls: usize, calls_per_search: f64) -> f64 {
    urls as f64 * (calls_per_search + 1.0) + 1.0
}

/// `1 h 23 min`, `4 min 10 s`, `12 s`.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::str::FromStr;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, h, m, 0).unwrap()
    }

    #[test]
    fn ten_thousand_campaigns_at_five_requests_a_second_spread_over_a_longer_cycle() {
        let p = plan_reconcile(Some(5), 10_000, Duration::from_secs(300), 1.0, true);
        assert_eq!(p.budget, 4.0);
        assert_eq!(p.cycle, Duration::from_secs(2500));
        assert!(p.spread);
        assert_eq!(p.spacing(1.0), Duration::from_millis(250));
    }

    #[test]
    fn a_small_fleet_keeps_the_interval_and_uses_the_whole_limit_without_schedules() {
        let p = plan_reconcile(Some(5), 200, Duration::from_secs(300), 1.0, false);
        assert_eq!(p.budget, 5.0);
        assert_eq!(p.cycle, Duration::from_secs(300));
        assert!(!p.spread);
        let unlimited = plan_reconcile(None, 10_000, Duration::from_secs(300), 1.0, true);
        assert_eq!(unlimited.cycle, Duration::from_secs(300));
        assert_eq!(unlimited.spacing(1.0), Duration::ZERO);
    }

    #[test]
    fn ten_thousand_rounds_at_nine_start_late_and_the_warning_says_by_how_much() {
        let daily = croner::Cron::from_str("0 9 * * *").unwrap();
        let calls = round_calls(1, DEFAULT_CALLS_PER_SEARCH);
        let schedules: Vec<_> = (0..10_000).map(|_| (&daily, calls)).collect();
        let loads = round_load(&schedules, t(8, 0), chrono::Duration::days(1), 100, 5);
        assert_eq!(loads.len(), 1);
        let l = &loads[0];
        assert_eq!((l.slot, l.campaigns, l.calls), (t(9, 0), 10_000, 50_000.0));
        assert_eq!(l.takes, Duration::from_secs(10_000));
        assert!(l.starts_late() && !l.overruns());
        let w = l.warning(5);
        assert!(
            w.contains("10000 buy round(s) at 2026-11-22 09:00 UTC"),
            "{w}"
        );
        assert!(w.contains("2 h 46 min after its slot"), "{w}");
        assert_eq!(late_slots(&loads, 3).len(), 1);
    }

    #[test]
    fn rounds_spread_over_the_hour_start_on_time_and_an_overrun_is_named() {
        let a = croner::Cron::from_str("0 9 * * *").unwrap();
        let b = croner::Cron::from_str("30 9 * * *").unwrap();
        let mut schedules: Vec<_> = (0..50).map(|_| (&a, 5.0)).collect();
        schedules.extend((0..50).map(|_| (&b, 5.0)));
        let loads = round_load(&schedules, t(8, 0), chrono::Duration::days(1), 100, 5);
        assert_eq!(loads.len(), 2);
        assert!(loads.iter().all(|l| !l.starts_late()), "{loads:?}");
        // 2,000 campaigns at 09:00 need 10,000 calls: 2,000 s, past 09:30.
        let mut crowded: Vec<_> = (0..2000).map(|_| (&a, 5.0)).collect();
        crowded.push((&b, 5.0));
        let loads = round_load(&crowded, t(8, 0), chrono::Duration::days(1), 100, 5);
        assert!(loads[0].overruns());
        assert!(
            loads[0]
                .warning(5)
                .contains("past the next slot at 2026-11-22 09:30 UTC")
        );
    }

    #[test]
    fn plan_warns_for_ten_thousand_copies_of_the_example_at_nine_but_not_for_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/campaigns/acme-shoes.yaml");
        let loaded = crate::campaign::load_paths(&[path.into()]);
        let acme = &loaded.campaigns[0].campaign;
        assert_eq!(acme.buy.as_ref().unwrap().schedule, "0 9 * * *");
        assert!(round_warnings(&[acme], t(8, 0), 5).is_empty());
        let many: Vec<_> = (0..10_000).map(|_| acme).collect();
        let w = round_warnings(&many, t(8, 0), 5);
        assert_eq!(w.len(), 1, "{w:?}");
        // Two URLs: (3 + 1) * 2 + 1 = 9 calls a round, 90,000 at 5/s = 5 h.
        assert!(
            w[0].contains("10000 buy round(s) at 2026-11-22 09:00 UTC need about 90000"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("5 h 0 min after its slot"), "{}", w[0]);
    }

    #[test]
    fn durations_read_as_an_operator_writes_them() {
        assert_eq!(human(Duration::from_secs(12)), "12 s");
        assert_eq!(human(Duration::from_secs(250)), "4 min 10 s");
        assert_eq!(human(Duration::from_secs(4980)), "1 h 23 min");
    }
}
