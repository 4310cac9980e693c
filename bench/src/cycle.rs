//! Target 3, the reconciliation cycle with buy rounds due (issue 34, item 6): "at 10,000
//! campaigns with 1 % of rounds due per hour the cycle stays <= 1.05 x the planned one".
//!
//! At `run`'s defaults (`--rate-limit 5`) one cycle of 10,000 campaigns takes 2,500 s, so the
//! run is scaled: `run`'s `--rate-limit` is raised until its planned cycle of the campaigns is
//! `--cycle-seconds` (`--reconcile-interval 5`, so the rate sets the cycle, not the interval).
//! Time then runs faster by the same factor, so as many rounds fall due in one cycle as 1 % of
//! the campaigns per hour bring into one cycle at the defaults (69 at 10,000): the rounds take
//! the same share of the rate limit as they would. What does not scale is a round's own wall
//! time (its poll waits), so more rounds overlap than they would: a harsher test, not a
//! kinder one.
//!
//! A fresh daemon's first cycle (every campaign's first full pass in this process, no round
//! due) is the control; the rounds fall due at whole minutes inside the second, whose length
//! the daemon itself measures (`linkrunner_reconcile_last_cycle_seconds`, the gauge an
//! operator reads), against its plan (`linkrunner_reconcile_cycle_seconds`). The daemon is run
//! by [`crate::daemon`]; this file plans the run and judges it.

use std::time::Duration;

use super::report::{Verdict, fmt_num};

/// Reconciliation's share of `--rate-limit` when campaigns buy on schedules
/// (`decide::capacity::RECONCILE_SHARE`).
const SHARE: f64 = 0.8;
/// `run`'s defaults: `--rate-limit` and `--reconcile-interval`.
const DEFAULT_RATE: f64 = 5.0;
const DEFAULT_INTERVAL_S: f64 = 300.0;
/// Campaigns whose round falls due per hour, as a share of all (the 1 %).
const DUE_PER_HOUR: f64 = 0.01;

/// The buy rounds due during the steady state, from the daemon's own metrics.
#[derive(Debug, Clone)]
pub(crate) struct RoundFigures {
    /// Rounds put inside the window by the fixture.
    pub(crate) due: usize,
    /// `linkrunner_round_start_delay_seconds`: rounds started, of them within a minute of
    /// their slot; `linkrunner_rounds_started_late_total`.
    pub(crate) started: f64,
    pub(crate) within_a_minute: f64,
    pub(crate) late: f64,
    /// `linkrunner_round_finish_delay_seconds`: rounds finished, and their delays' sum.
    pub(crate) finished: f64,
    finish_delay_sum: f64,
}

impl RoundFigures {
    /// The rounds' figures in a daemon's `/metrics` (`value` reads a series), `due` of them
    /// put in the window.
    pub(crate) fn from_metrics(value: impl Fn(&str) -> f64, due: usize) -> RoundFigures {
        RoundFigures {
            due,
            started: value("linkrunner_round_start_delay_seconds_count"),
            within_a_minute: value("linkrunner_round_start_delay_seconds_bucket{le=\"60\"}"),
            late: value("linkrunner_rounds_started_late_total"),
            finished: value("linkrunner_round_finish_delay_seconds_count"),
            finish_delay_sum: value("linkrunner_round_finish_delay_seconds_sum"),
        }
    }

    /// Rounds due that did not start within a minute of their slot (not started at all, too).
    pub(crate) fn missed(&self) -> f64 {
        self.due as f64 - self.within_a_minute
    }

    pub(crate) fn mean_finish_delay(&self) -> f64 {
        self.finish_delay_sum / self.finished.max(1.0)
    }
}

/// What the cycle with rounds due measured.
#[derive(Debug, Clone)]
pub(crate) struct CycleFigures {
    /// `run`'s `--rate-limit`, raised so that the planned cycle is the one asked for.
    pub(crate) rate_limit: u32,
    /// `linkrunner_reconcile_cycle_seconds` at the end.
    pub(crate) planned: f64,
    /// The first cycle (full passes, no round due) and the one with the rounds due.
    pub(crate) first: f64,
    pub(crate) measured: f64,
    pub(crate) rounds: RoundFigures,
    pub(crate) cpu_percent: f64,
}

/// The cycle of `n` converged campaigns at `run`'s defaults, in seconds.
pub(crate) fn default_cycle(n: usize) -> f64 {
    (n as f64 / (SHARE * DEFAULT_RATE)).max(DEFAULT_INTERVAL_S)
}

/// Rounds that 1 % of `n` campaigns per hour bring into one cycle at `run`'s defaults.
pub(crate) fn rounds_per_cycle(n: usize) -> usize {
    ((DUE_PER_HOUR * n as f64 * default_cycle(n) / 3600.0).round() as usize).max(1)
}

/// The `--rate-limit` whose planned cycle of `n` campaigns (one call each) is `cycle` or a
/// little longer.
pub(crate) fn scaled_rate(n: usize, cycle: Duration) -> u32 {
    (n as f64 / (SHARE * cycle.as_secs_f64().max(1.0)))
        .floor()
        .max(1.0) as u32
}

/// The cycle `rate` plans for `n` campaigns of one call each.
pub(crate) fn planned_cycle(n: usize, rate: u32) -> Duration {
    Duration::from_secs_f64(n as f64 / (SHARE * f64::from(rate.max(1))))
}

impl CycleFigures {
    /// The cycle with the rounds over the planned one.
    fn ratio(&self) -> f64 {
        self.measured / self.planned.max(f64::MIN_POSITIVE)
    }

    pub(crate) fn print(&self, n: usize) {
        let r = &self.rounds;
        println!(
            "   the cycle with rounds due (issue 34, item 6): --rate-limit {} plans a cycle of {:.1} s for {n} campaigns ({:.0} s at run's defaults, scaled {}x); {} rounds due in the second cycle (1 % of the campaigns per hour of the default cycle); first cycle (full passes, no round) {:.1} s ({} x planned); the cycle with the rounds {:.1} s: {} x planned; rounds {:.0} started, {:.0} late (more than a minute after the slot), {:.0} finished, {:.1} s after the slot on average; CPU {:.0}% of a core",
            self.rate_limit,
            self.planned,
            default_cycle(n),
            fmt_num(default_cycle(n) / self.planned.max(1.0)),
            r.due,
            self.first,
            fmt_num(self.first / self.planned.max(f64::MIN_POSITIVE)),
            self.measured,
            fmt_num(self.ratio()),
            r.started,
            r.late,
            r.finished,
            r.mean_finish_delay(),
            self.cpu_percent
        );
    }

    pub(crate) fn verdicts(&self, n: usize) -> Vec<Verdict> {
        vec![
            Verdict::at_most(
                3,
                &format!(
                    "reconciliation cycle over the planned one at {n} campaigns with 1 % of rounds due per hour (issue 34)"
                ),
                self.ratio(),
                1.05,
                "",
            ),
            Verdict::exactly(
                3,
                &format!(
                    "rounds due in that cycle not started within a minute (of {})",
                    self.rounds.due
                ),
                self.rounds.missed(),
                0.0,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_is_scaled_to_the_cycle_asked_for_with_the_default_cycles_rounds() {
        // 10,000 campaigns: 2,500 s at run's defaults, 1 % per hour brings 69 rounds into it.
        assert_eq!(default_cycle(10_000), 2500.0);
        assert_eq!(rounds_per_cycle(10_000), 69);
        assert_eq!(scaled_rate(10_000, Duration::from_secs(120)), 104);
        assert_eq!(planned_cycle(10_000, 104).as_secs(), 120);
        // Below 1,200 campaigns the default cycle is the interval.
        assert_eq!(default_cycle(300), 300.0);
        assert_eq!(rounds_per_cycle(300), 1);
    }
}
