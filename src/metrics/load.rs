//! What the daemon's load costs and whether it keeps up (issue 27): passes, the
//! reconciliation cycle and its backlog, marketplace calls by purpose, and buy rounds that
//! started or finished late.
//!
//! A call's purpose is the pass it serves, carried as a task-local ([`with_purpose`]) from
//! the pass down to `Metrics::observe_call`, so the wire client needs to know nothing of it:
//!
//! | purpose | calls of |
//! |---|---|
//! | `buy` | a scheduled buy round's pass: searches, polls, purchases, its link list |
//! | `reconcile` | a reconciliation (no buying): creations, switches, the link list |
//! | `settle` | reads made to settle something uncertain (a purchase, a stop, a link leaving), in either |
//! | `other` | outside any pass: credential checks, `probe` |

use std::future::Future;

use prometheus::{
    Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Registry,
};

use super::{counter_vec_of, gauge, int_counter, int_gauge, reg};

/// The closed set of values of the `purpose` label of `linkrunner_api_calls_by_purpose_total`.
pub(crate) const PURPOSES: [&str; 4] = ["buy", "reconcile", "settle", "other"];

/// Why a marketplace call is made (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Buy,
    Reconcile,
    Settle,
    Other,
}

impl Purpose {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Purpose::Buy => "buy",
            Purpose::Reconcile => "reconcile",
            Purpose::Settle => "settle",
            Purpose::Other => "other",
        }
    }
}

tokio::task_local! {
    static PURPOSE: Purpose;
}

/// Runs `fut` with its marketplace calls counted under `purpose` (nested scopes win).
pub async fn with_purpose<F: Future>(purpose: Purpose, fut: F) -> F::Output {
    PURPOSE.scope(purpose, fut).await
}

/// The purpose of the calls made now, in this task.
pub(crate) fn current_purpose() -> Purpose {
    PURPOSE.try_with(|p| *p).unwrap_or(Purpose::Other)
}

/// The load families (`linkrunner_pass_duration_seconds`, `linkrunner_reconcile_*`,
/// `linkrunner_api_calls_by_purpose_total`, `linkrunner_rounds_started_late_total`, …).
#[derive(Clone)]
pub struct LoadMetrics {
    /// One campaign's pass, by kind (`buy`, `reconcile`).
    pub(crate) pass_duration_seconds: HistogramVec,
    calls_by_purpose_total: IntCounterVec,
    /// Campaigns due for reconciliation that have not been reconciled yet.
    pub(crate) reconcile_backlog: IntGauge,
    /// The planned length of a reconciliation cycle (every campaign once).
    pub(crate) reconcile_cycle_seconds: Gauge,
    /// How long the last full cycle took.
    pub(crate) reconcile_last_cycle_seconds: Gauge,
    /// Calls per second the reconciliation may use; the rest of `--rate-limit` is kept for
    /// buy rounds.
    pub(crate) reconcile_budget_calls_per_second: Gauge,
    pub(crate) reconciliations_total: IntCounter,
    /// Reconciliations that only looked: a converged campaign whose file, journal and link
    /// list were as its last full pass saw them, with nothing due (`effects/quiet.rs`).
    pub reconciliations_looked_total: IntCounter,
    /// Buy rounds started more than a minute after their slot.
    pub(crate) rounds_started_late_total: IntCounter,
    /// From a round's slot to its start, and to its end.
    pub(crate) round_start_delay_seconds: Histogram,
    pub(crate) round_finish_delay_seconds: Histogram,
    /// Rounds due but not started yet (waiting for a campaign slot).
    pub(crate) rounds_waiting: IntGauge,
    /// Accounts this daemon works (holds the account lease of): replicas divide them.
    pub(crate) accounts_worked: IntGauge,
}

const DELAY_BUCKETS: [f64; 10] = [
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0, 14400.0,
];

impl LoadMetrics {
    pub(super) fn register(r: &Registry) -> LoadMetrics {
        let delays = |n: &str, h: &str| {
            let opts = HistogramOpts::new(n, h).buckets(DELAY_BUCKETS.to_vec());
            reg(r, Histogram::with_opts(opts).expect("valid metric"))
        };
        let pass = HistogramOpts::new(
            "linkrunner_pass_duration_seconds",
            "How long one campaign's pass took, by kind (buy, reconcile).",
        )
        .buckets(vec![
            0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
        ]);
        let m = LoadMetrics {
            pass_duration_seconds: reg(r, HistogramVec::new(pass, &["kind"]).expect("valid")),
            calls_by_purpose_total: counter_vec_of(
                r,
                "linkrunner_api_calls_by_purpose_total",
                "Marketplace calls by what they serve: buy (rounds), reconcile, settle (reads that settle uncertainty), other.",
                "purpose",
                &PURPOSES,
            ),
            accounts_worked: int_gauge(
                r,
                "linkrunner_accounts_worked",
                "Marketplace accounts this daemon works (holds the account lease of); replicas divide the accounts between them.",
            ),
            reconcile_backlog: int_gauge(
                r,
                "linkrunner_reconcile_backlog",
                "Campaigns due for reconciliation that are not reconciled yet.",
            ),
            reconcile_cycle_seconds: gauge(
                r,
                "linkrunner_reconcile_cycle_seconds",
                "Planned time to reconcile every campaign once: --reconcile-interval, or longer when the rate limit cannot fit it.",
            ),
            reconcile_last_cycle_seconds: gauge(
                r,
                "linkrunner_reconcile_last_cycle_seconds",
                "How long the last full reconciliation cycle took.",
            ),
            reconcile_budget_calls_per_second: gauge(
                r,
                "linkrunner_reconcile_budget_calls_per_second",
                "Calls per second reconciliation may use; the rest of --rate-limit is kept for buy rounds.",
            ),
            reconciliations_total: int_counter(
                r,
                "linkrunner_reconciliations_total",
                "Campaign reconciliations (passes without buying) run.",
            ),
            reconciliations_looked_total: int_counter(
                r,
                "linkrunner_reconciliations_looked_total",
                "Reconciliations that only read the link list: converged, nothing changed or due.",
            ),
            rounds_started_late_total: int_counter(
                r,
                "linkrunner_rounds_started_late_total",
                "Buy rounds that started more than a minute after their slot.",
            ),
            round_start_delay_seconds: delays(
                "linkrunner_round_start_delay_seconds",
                "From a buy round's slot to its start.",
            ),
            round_finish_delay_seconds: delays(
                "linkrunner_round_finish_delay_seconds",
                "From a buy round's slot to its end.",
            ),
            rounds_waiting: int_gauge(
                r,
                "linkrunner_rounds_waiting",
                "Buy rounds due and not started yet.",
            ),
        };
        for kind in ["buy", "reconcile"] {
            let _ = m.pass_duration_seconds.with_label_values(&[kind]);
        }
        m
    }

    /// Counts one marketplace call under the current task's purpose.
    pub(crate) fn count_call(&self) {
        self.calls_by_purpose_total
            .with_label_values(&[current_purpose().as_str()])
            .inc();
    }

    /// Calls made so far for `purpose`.
    pub fn calls_for(&self, purpose: Purpose) -> u64 {
        self.calls_by_purpose_total
            .with_label_values(&[purpose.as_str()])
            .get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_are_counted_under_the_innermost_purpose_and_other_outside_any() {
        let r = Registry::new();
        let m = LoadMetrics::register(&r);
        m.count_call();
        with_purpose(Purpose::Reconcile, async {
            m.count_call();
            with_purpose(Purpose::Settle, async { m.count_call() }).await;
            m.count_call();
        })
        .await;
        assert_eq!(m.calls_for(Purpose::Other), 1);
        assert_eq!(m.calls_for(Purpose::Reconcile), 2);
        assert_eq!(m.calls_for(Purpose::Settle), 1);
        assert_eq!(m.calls_for(Purpose::Buy), 0);
    }
}
