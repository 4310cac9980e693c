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
//! operator reads), against its plan (`linkrunner_reconcile_cycle_seconds`).

use std::time::{Duration, Instant};

use super::daemon::{Killed, RoundFigures, Run, exited, free_port, metrics_body, series_value};
use super::fixture;
use super::procfs::Proc;
use super::report::{Verdict, fmt_num};

/// Reconciliation's share of `--rate-limit` when campaigns buy on schedules
/// (`decide::capacity::RECONCILE_SHARE`).
const SHARE: f64 = 0.8;
/// `run`'s defaults: `--rate-limit` and `--reconcile-interval`.
const DEFAULT_RATE: f64 = 5.0;
const DEFAULT_INTERVAL_S: f64 = 300.0;
/// Campaigns whose round falls due per hour, as a share of all (the 1 %).
const DUE_PER_HOUR: f64 = 0.01;

/// What the cycle with rounds due measured.
#[derive(Debug, Clone)]
pub(crate) struct CycleFigures {
    /// `run`'s `--rate-limit`, raised so that the planned cycle is the one asked for.
    rate_limit: u32,
    /// `linkrunner_reconcile_cycle_seconds` at the end.
    planned: f64,
    /// The first cycle (full passes, no round due) and the one with the rounds due.
    first: f64,
    measured: f64,
    rounds: RoundFigures,
    cpu_percent: f64,
}

/// The cycle of `n` converged campaigns at `run`'s defaults, in seconds.
fn default_cycle(n: usize) -> f64 {
    (n as f64 / (SHARE * DEFAULT_RATE)).max(DEFAULT_INTERVAL_S)
}

/// Rounds that 1 % of `n` campaigns per hour bring into one cycle at `run`'s defaults.
fn rounds_per_cycle(n: usize) -> usize {
    ((DUE_PER_HOUR * n as f64 * default_cycle(n) / 3600.0).round() as usize).max(1)
}

/// The `--rate-limit` whose planned cycle of `n` campaigns (one call each) is `cycle` or a
/// little longer.
fn scaled_rate(n: usize, cycle: Duration) -> u32 {
    (n as f64 / (SHARE * cycle.as_secs_f64().max(1.0)))
        .floor()
        .max(1.0) as u32
}

/// The cycle `rate` plans for `n` campaigns of one call each.
fn planned_cycle(n: usize, rate: u32) -> Duration {
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

impl Run<'_> {
    /// The cycle with rounds due, planned at `cycle`: the rounds are put in the second cycle
    /// of a fresh daemon and put back on their yearly schedule afterwards.
    pub(crate) async fn measure_cycle(&self, cycle: Duration) -> anyhow::Result<CycleFigures> {
        let rate = scaled_rate(self.n, cycle);
        let cycle = planned_cycle(self.n, rate);
        let now = chrono::Utc::now();
        let second = (
            now + cycle + Duration::from_secs(15),
            now + cycle * 2 - Duration::from_secs(20),
        );
        let k = rounds_per_cycle(self.n);
        let due = fixture::schedule_rounds(self.campaigns, self.n, k, second)?;
        anyhow::ensure!(
            !due.is_empty(),
            "no whole minute in the second cycle of {cycle:?}: --cycle-seconds 100 or more"
        );
        let figures = self.measure_cycle_with(rate, cycle, due.len()).await;
        fixture::restore_schedules(self.campaigns, &due, fixture::FAR_SCHEDULE)?;
        figures
    }

    /// A fresh daemon at `--rate-limit rate` until it has measured two cycles.
    async fn measure_cycle_with(
        &self,
        rate: u32,
        cycle: Duration,
        due: usize,
    ) -> anyhow::Result<CycleFigures> {
        let port = free_port()?;
        let rate_arg = rate.to_string();
        let mut child = Killed(self.spawn_with(
            port,
            &["--rate-limit", &rate_arg],
            &["--reconcile-interval", "5"],
        )?);
        let started = Instant::now();
        self.wait_started(&mut child.0, port, started).await?;
        let pid = Proc::Pid(child.0.id());
        let (cpu0, t0) = (pid.cpu_time(), Instant::now());
        let limit = cycle * 4 + Duration::from_secs(120);
        let mut cycles: Vec<f64> = Vec::new();
        let body = loop {
            exited(&mut child.0)?;
            let body = metrics_body(port).await?;
            let last = series_value(&body, "linkrunner_reconcile_last_cycle_seconds");
            if last > 0.0 && cycles.last() != Some(&last) {
                cycles.push(last);
            }
            if cycles.len() >= 2 {
                break body;
            }
            anyhow::ensure!(
                t0.elapsed() < limit,
                "{} of two cycles measured in {limit:?}",
                cycles.len()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        let cpu = pid.cpu_time().saturating_sub(cpu0);
        Ok(CycleFigures {
            rate_limit: rate,
            planned: series_value(&body, "linkrunner_reconcile_cycle_seconds"),
            first: cycles[0],
            measured: cycles[1],
            rounds: RoundFigures::from_metrics(&body, due),
            cpu_percent: cpu.as_secs_f64() / t0.elapsed().as_secs_f64() * 100.0,
        })
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
