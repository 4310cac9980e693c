//! Metrics: one [`Metrics`] struct owns the Prometheus registry (no globals). Every name has
//! the `linkrunner_` prefix, base units, `_total` on counters, and labels from closed sets or
//! validated campaign names — never ids, URLs or free text. The per-campaign families live
//! in [`campaigns`] as compact rows (see there why); the standard `process_*` series are read
//! from `/proc` on each scrape ([`process`]). The series of the daemon's load ([`load`]), the
//! HTTP side ([`http`]) and notifications ([`notify`]) have files of their own.
//!
//! May import: nothing.

mod campaigns;
pub(crate) mod http;
pub(crate) mod load;
pub(crate) mod notify;
mod process;

use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) use campaigns::{CAMPAIGN_STATES, CampaignGaugeValues, CampaignSeries, STALL_REASONS};
// The daemon's gauge tests check every round outcome has its series; nothing else names it.
#[cfg(test)]
pub(crate) use campaigns::ROUND_OUTCOMES;
pub use load::{LoadMetrics, Purpose, with_purpose};
use prometheus::{
    Counter, Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Outcome label values of `linkrunner_api_calls_total`: `ok` plus the marketplace client's closed error labels (`MarketError::metric_label`).
pub const API_OUTCOMES: [&str; 8] = [
    "ok",
    "unauthorized",
    "rate_limited",
    "rejected",
    "connect_failed",
    "uncertain",
    "undecodable",
    "invalid_request",
];

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    pub(crate) campaigns_loaded: IntGauge,
    pub api_calls_total: IntCounterVec,
    api_call_duration_seconds: HistogramVec,
    pub rate_limit_waits_total: IntCounter,
    pub rate_limit_wait_seconds_total: Counter,
    pub(crate) intents: IntGaugeVec,
    pub(crate) reloads_total: IntCounterVec,
    pub(crate) campaign_files_rejected: IntGauge,
    pub(crate) campaign_file_invalid: IntGauge,
    pub(crate) removals_held: IntGauge,
    pub database_errors_total: IntCounter,
    pub(crate) journal_writable: IntGauge,
    pub(crate) credentials_rejected: IntGauge,
    pub(crate) operator_halt: IntGauge,
    /// The anomaly brake's halts, by `scope` (`campaign`, `account`).
    pub(crate) anomaly_brake_trips_total: IntCounterVec,
    pub(crate) ready: IntGauge,
    pub journal_write_duration_seconds: HistogramVec,
    pub(crate) credentials: CredentialMetrics,
    /// Passes, the reconciliation cycle, calls by purpose, late rounds (`load.rs`).
    pub load: LoadMetrics,
    /// Connections and refusals of the HTTP listeners.
    pub(crate) http: http::HttpMetrics,
    /// Notifications sent and failed (`notify.rs`).
    pub(crate) notify: notify::NotifyMetrics,
    /// The per-campaign series, kept as rows rather than as the crate's vectors.
    pub(crate) campaigns: Arc<CampaignSeries>,
    /// `process_*`; `None` where `/proc/self` cannot be read.
    process: Option<process::ProcessMetrics>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics { .. }")
    }
}

fn reg<C: prometheus::core::Collector + Clone + 'static>(r: &Registry, c: C) -> C {
    r.register(Box::new(c.clone()))
        .expect("metric names are unique and valid");
    c
}

fn gauge_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    reg(
        r,
        IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric"),
    )
}

fn counter_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    reg(
        r,
        IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric"),
    )
}

/// [`counter_vec`] of one label whose series of each of `values` exist at zero from the
/// start: a family with no series is not exported, and `increase()` misses a first event
/// on a series that appears already at 1.
fn counter_vec_of(
    r: &Registry,
    name: &str,
    help: &str,
    label: &str,
    values: &[&str],
) -> IntCounterVec {
    let c = counter_vec(r, name, help, &[label]);
    for v in values {
        c.with_label_values(&[*v]).inc_by(0);
    }
    c
}

fn int_gauge(r: &Registry, name: &str, help: &str) -> IntGauge {
    reg(r, IntGauge::new(name, help).expect("valid metric"))
}

fn int_counter(r: &Registry, name: &str, help: &str) -> IntCounter {
    reg(r, IntCounter::new(name, help).expect("valid metric"))
}

fn gauge(r: &Registry, name: &str, help: &str) -> prometheus::Gauge {
    reg(r, prometheus::Gauge::new(name, help).expect("valid metric"))
}

impl Metrics {
    pub fn new() -> Self {
        let r = Registry::new();
        let build_info = gauge_vec(
            &r,
            "linkrunner_build_info",
            "Always 1; the version label says which build runs.",
            &["version"],
        );
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        let api_latency = HistogramOpts::new(
            "linkrunner_api_call_duration_seconds",
            "Latency of marketplace calls, including retries of reads.",
        )
        .buckets(vec![
            0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
        ]);
        let journal = HistogramOpts::new(
            "linkrunner_journal_write_duration_seconds",
            "Latency of journal transactions (intent recorded, outcome recorded).",
        )
        .buckets(vec![
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
        ]);
        let m = Metrics {
            campaigns_loaded: int_gauge(
                &r,
                "linkrunner_campaigns_loaded",
                "Campaign files loaded and valid.",
            ),
            api_calls_total: counter_vec(
                &r,
                "linkrunner_api_calls_total",
                "Marketplace calls by account, operation and outcome class.",
                &["account", "operation", "outcome"],
            ),
            api_call_duration_seconds: reg(
                &r,
                HistogramVec::new(api_latency, &["operation"]).expect("valid"),
            ),
            rate_limit_waits_total: int_counter(
                &r,
                "linkrunner_rate_limit_waits_total",
                "Calls that waited for the client-side rate limiter.",
            ),
            rate_limit_wait_seconds_total: reg(
                &r,
                Counter::new(
                    "linkrunner_rate_limit_wait_seconds_total",
                    "Time spent waiting for the client-side rate limiter.",
                )
                .expect("valid"),
            ),
            intents: gauge_vec(
                &r,
                "linkrunner_intents",
                "Journal intents by kind and state.",
                &["kind", "state"],
            ),
            reloads_total: counter_vec_of(
                &r,
                "linkrunner_reloads_total",
                "Campaign directory reloads by outcome (succeeded, failed).",
                "outcome",
                &["succeeded", "failed"],
            ),
            campaign_files_rejected: int_gauge(
                &r,
                "linkrunner_campaign_files_rejected",
                "Campaign files rejected by the last reload (their last good version keeps running).",
            ),
            campaign_file_invalid: int_gauge(
                &r,
                "linkrunner_campaign_file_invalid",
                "Campaign files that exist but fail validation and are ignored: each one's campaign is held as recorded (nothing stopped or bought) until the file loads again.",
            ),
            removals_held: int_gauge(
                &r,
                "linkrunner_removals_held",
                "Campaigns whose file is gone but whose removal is held because many files vanished at once (a failed checkout, an empty mount): nothing of them is stopped until the files return or `linkrunner resolve removals`.",
            ),
            journal_writable: {
                let g = int_gauge(
                    &r,
                    "linkrunner_journal_writable",
                    "1 while the journal can be written, 0 from a write that failed (a full disk, a read-only file, a locked or lost database) until one succeeds: nothing is sent meanwhile.",
                );
                g.set(1);
                g
            },
            database_errors_total: int_counter(
                &r,
                "linkrunner_database_errors_total",
                "Database operations that failed.",
            ),
            credentials_rejected: int_gauge(
                &r,
                "linkrunner_credentials_rejected",
                "1 while the marketplace rejects the credentials of any account; that account's spending is stopped.",
            ),
            operator_halt: int_gauge(
                &r,
                "linkrunner_operator_halt",
                "1 while an operator's halt (linkrunner halt) stops all spending and running autobuyers; only linkrunner resume lifts it.",
            ),
            // Both series from the start, so the alert's increase() sees the first trip.
            anomaly_brake_trips_total: counter_vec_of(
                &r,
                "linkrunner_anomaly_brake_trips_total",
                "Halts the anomaly brake set: what was committed or appeared ran above --anomaly-multiple times what schedules and budgets explain (scope: campaign, account).",
                "scope",
                &["campaign", "account"],
            ),
            ready: int_gauge(&r, "linkrunner_ready", "1 when /readyz reports ready."),
            journal_write_duration_seconds: reg(
                &r,
                HistogramVec::new(journal, &["step"]).expect("valid"),
            ),
            credentials: CredentialMetrics::register(&r),
            load: LoadMetrics::register(&r),
            http: http::HttpMetrics::register(&r),
            notify: notify::NotifyMetrics::register(&r),
            campaigns: Arc::default(),
            process: process::ProcessMetrics::register(&r),
            registry: r,
        };
        m.init_series();
        m
    }

    /// Sets the default account's series to zero, so each exists from the first scrape (see
    /// [`counter_vec_of`], which does so for the families of one closed label).
    pub(crate) fn init_series(&self) {
        self.init_account_series(linkrunner_domain::account::DEFAULT_ACCOUNT);
    }

    /// The series of one account's client, at zero (each account's client calls it when built:
    /// the accounts are a closed list, the accounts file's).
    pub(crate) fn init_account_series(&self, account: &str) {
        for op in linkrunner_domain::op::ALL {
            for outcome in API_OUTCOMES {
                self.api_calls_total
                    .with_label_values(&[account, op, outcome])
                    .inc_by(0);
            }
        }
    }

    /// Marketplace calls by `(operation, outcome)`, summed over every account: the counter
    /// family gathered once (the progress line reads every total each second; gathering the
    /// family per operation and outcome cost about 80 gathers a line).
    pub fn api_call_totals(&self) -> BTreeMap<(String, String), u64> {
        use prometheus::core::Collector;
        let mut totals = BTreeMap::new();
        for m in self
            .api_calls_total
            .collect()
            .iter()
            .flat_map(|f| f.get_metric())
        {
            let label = |n: &str| {
                m.get_label()
                    .iter()
                    .find(|l| l.name() == n)
                    .map(|l| l.value().to_string())
            };
            if let (Some(op), Some(outcome)) = (label("operation"), label("outcome")) {
                *totals.entry((op, outcome)).or_default() += m.get_counter().get_value() as u64;
            }
        }
        totals
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        if let Some(p) = &self.process {
            p.update();
        }
        let mut buf = Vec::new();
        let enc = TextEncoder::new();
        // Encoding into a Vec cannot fail for well-formed metric families.
        let _ = enc.encode(&self.registry.gather(), &mut buf);
        let mut text = String::from_utf8(buf).unwrap_or_default();
        self.campaigns.render(&mut text);
        text
    }

    /// Records one marketplace call.
    pub(crate) fn observe_call(&self, account: &str, operation: &str, outcome: &str, seconds: f64) {
        self.api_calls_total
            .with_label_values(&[account, operation, outcome])
            .inc();
        self.api_call_duration_seconds
            .with_label_values(&[operation])
            .observe(seconds);
        self.load.count_call();
    }
}

/// The credentials' lifecycle (`market::credentials`): which mode, when the token expires,
/// when it was last refreshed, and whether refreshing fails. Never a value of a secret.
#[derive(Clone)]
pub(crate) struct CredentialMetrics {
    /// 1 for the mode in use: `fixed`, `files` or `login`.
    pub(crate) mode: IntGaugeVec,
    /// The token's expiry (a JWT's `exp`), Unix seconds; 0 while unknown.
    pub(crate) expiry_timestamp_seconds: prometheus::Gauge,
    /// When new credentials were last read or obtained, Unix seconds.
    pub(crate) last_refresh_timestamp_seconds: prometheus::Gauge,
    /// Refresh attempts by outcome: `changed` (new values in use), `failed`.
    pub(crate) refreshes_total: IntCounterVec,
    /// 1 while the latest attempt to re-read or obtain credentials failed.
    pub(crate) refresh_failing: IntGauge,
}

impl CredentialMetrics {
    fn register(r: &Registry) -> CredentialMetrics {
        let refreshes_total = counter_vec_of(
            r,
            "linkrunner_credentials_refreshes_total",
            "Attempts to re-read or obtain marketplace credentials that changed them or failed, by outcome (changed, failed).",
            "outcome",
            &["changed", "failed"],
        );
        CredentialMetrics {
            mode: gauge_vec(
                r,
                "linkrunner_credentials_mode",
                "1 for how the marketplace credentials are obtained: fixed (environment), files (re-read on change) or login (built-in).",
                &["mode"],
            ),
            expiry_timestamp_seconds: gauge(
                r,
                "linkrunner_credentials_expiry_timestamp_seconds",
                "When the token in use expires (its JWT exp), in Unix seconds; 0 while unknown.",
            ),
            last_refresh_timestamp_seconds: gauge(
                r,
                "linkrunner_credentials_last_refresh_timestamp_seconds",
                "When credentials were last read or obtained successfully, in Unix seconds.",
            ),
            refreshes_total,
            refresh_failing: int_gauge(
                r,
                "linkrunner_credentials_refresh_failing",
                "1 while the latest attempt to re-read the credential files or to log in failed.",
            ),
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::op;

    #[test]
    fn api_call_totals_sum_every_account_by_operation_and_outcome_in_one_gather() {
        let m = Metrics::new();
        m.init_account_series("client-a");
        m.observe_call("default", op::BUY, "ok", 0.1);
        m.observe_call("client-a", op::BUY, "ok", 0.1);
        m.observe_call("client-a", op::BUY, "rate_limited", 0.1);
        let totals = m.api_call_totals();
        let of = |o: &str, outcome: &str| totals[&(o.to_string(), outcome.to_string())];
        assert_eq!(of(op::BUY, "ok"), 2, "both accounts' calls");
        assert_eq!(of(op::BUY, "rate_limited"), 1);
        assert_eq!(of(op::SEARCH, "ok"), 0, "a series at zero is a total of 0");
        assert_eq!(totals.len(), op::ALL.len() * API_OUTCOMES.len());
    }
}
