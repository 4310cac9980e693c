//! Targets 1 and 2: the full flow for every campaign against a rate-limited sandbox with a
//! fixed latency per call — wall time against the lower bound, 429s, and calls per campaign
//! against the minimum the flow needs.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use prometheus::core::Metric as _;
use tokio::net::TcpListener;

use linkrunner::app::{self, App, AppSettings, Journal};
use linkrunner::campaign;
use linkrunner::effects::EngineSettings;
use linkrunner::market::ClientConfig;
use linkrunner::metrics::Metrics;
use linkrunner_sandbox::{Faults, SandboxConfig};

use super::fixture::LINKS_PER_ROUND;
use super::procfs;

/// The shape of one flow run.
#[derive(Debug, Clone)]
pub(crate) struct FlowSetup {
    pub(crate) campaigns: usize,
    pub(crate) latency: Duration,
    pub(crate) rate_limit: u32,
    /// `None`: the product's default (what a user who sets only `--rate-limit` runs).
    pub(crate) campaign_concurrency: Option<usize>,
    /// `None`: the product's default.
    pub(crate) max_concurrency: Option<usize>,
    pub(crate) pacing: linkrunner::market::Pacing,
    pub(crate) poll_initial: Duration,
    pub(crate) poll_max: Duration,
    /// Polls a search answers "pending" before it is ready.
    pub(crate) pending_polls: u32,
    /// The sandbox's own limit (429 past it), which may differ from the client's.
    pub(crate) sandbox_rate_limit: u32,
    /// Up to this much more latency per call, drawn uniformly.
    pub(crate) latency_jitter: Duration,
    /// A marketplace started outside the bench (base URL, token, ticket) instead of its own
    /// sandbox: calls, 429s and purchases are then counted by linkrunner's own metrics.
    pub(crate) market: Option<ExternalMarket>,
}

/// A marketplace the bench does not run: `--market-url`.
#[derive(Debug, Clone)]
pub(crate) struct ExternalMarket {
    pub(crate) base_url: String,
    pub(crate) token: String,
    pub(crate) ticket: String,
}

impl FlowSetup {
    /// How the concurrency was chosen: the product's defaults, or tuned (then the figures
    /// are not what a user gets).
    pub(crate) fn concurrency_label(&self) -> String {
        let rate = NonZeroU32::new(self.rate_limit).unwrap_or(NonZeroU32::MIN);
        let http = self
            .max_concurrency
            .unwrap_or_else(|| ClientConfig::auto_concurrency(rate));
        let campaigns = self
            .campaign_concurrency
            .unwrap_or_else(|| linkrunner::effects::default_campaign_concurrency(http));
        let how = match (self.campaign_concurrency, self.max_concurrency) {
            (None, None) => "default settings",
            _ => "TUNED settings (not the defaults)",
        };
        let pacing = match self.pacing {
            linkrunner::market::Pacing::Window => "window pacing",
            linkrunner::market::Pacing::Even => "even pacing",
        };
        format!("{how}: {campaigns} campaigns working and {http} calls in flight at most, {pacing}")
    }

    /// Polls of one search: the pending answers, then the ready one.
    pub(crate) fn polls_per_search(&self) -> u64 {
        u64::from(self.pending_polls) + 1
    }

    /// The calls one campaign's flow needs at least: project, texts, filter, autobuyer create
    /// and start, one search and its polls, the link list read again right before buying
    /// (a running autobuyer covers the URL and may have bought a page meanwhile: issue 24),
    /// one purchase (the donors of one search share their technical values), one link list
    /// read for the sync.
    pub(crate) fn min_calls_per_campaign(&self) -> u64 {
        5 + 1 + self.polls_per_search() + 1 + 1 + 1
    }

    /// The engine waits before each poll, doubling up to `poll_max`.
    pub(crate) fn poll_waits(&self) -> Duration {
        let bounds = (self.poll_initial, self.poll_max);
        let mut wait = self.poll_initial;
        let mut total = Duration::ZERO;
        for _ in 0..self.polls_per_search() {
            total += wait;
            // At best each poll comes right on time, so the job's age is the waits so far.
            wait = linkrunner::decide::round::next_poll_wait(wait, total, bounds);
        }
        total
    }

    /// One campaign's calls run one after another, each at least the latency, plus the poll
    /// waits, less what the search's first wait hides: the pass starts the search once the
    /// project gave the URL its id, so texts, filter, autobuyer create and start (4 calls) run
    /// while the job waits for its first poll.
    pub(crate) fn critical_path(&self) -> Duration {
        let hidden = (self.latency * 4).min(self.poll_initial);
        self.latency * self.min_calls_per_campaign() as u32 + self.poll_waits() - hidden
    }

    /// The fastest a run of `calls` calls can be: the rate limit or the critical path.
    pub(crate) fn lower_bound(&self, calls: u64) -> Duration {
        let by_rate = Duration::from_secs_f64(calls as f64 / f64::from(self.rate_limit));
        by_rate.max(self.critical_path())
    }
}

/// What one flow run measured.
#[derive(Debug, Clone)]
pub(crate) struct FlowFigures {
    pub(crate) backend: String,
    pub(crate) wall: Duration,
    pub(crate) calls: u64,
    pub(crate) calls_by_op: BTreeMap<String, u64>,
    pub(crate) rate_limited: u64,
    pub(crate) searches: u64,
    pub(crate) polls: u64,
    pub(crate) bought: u64,
    pub(crate) duplicates: u64,
    pub(crate) converged: usize,
    pub(crate) peak_rss: u64,
    /// Journal transactions by step (`begin`, `complete`): count, p50 and p99 upper bucket bounds.
    pub(crate) journal: Vec<(String, u64, f64, f64)>,
    /// Calls received by the end of each second of the run.
    timeline: Vec<u64>,
}

impl FlowFigures {
    fn empty() -> FlowFigures {
        FlowFigures {
            backend: String::new(),
            wall: Duration::ZERO,
            calls: 0,
            calls_by_op: BTreeMap::new(),
            rate_limited: 0,
            searches: 0,
            polls: 0,
            bought: 0,
            duplicates: 0,
            converged: 0,
            peak_rss: 0,
            journal: Vec::new(),
            timeline: Vec::new(),
        }
    }

    pub(crate) fn achieved_rate(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64()
    }

    /// Calls per second in consecutive windows of `secs` seconds (the last may be shorter).
    pub(crate) fn rates(&self, secs: usize) -> Vec<u64> {
        let secs = secs.max(1);
        let mut at_end: Vec<u64> = self.timeline.clone();
        at_end.push(self.calls);
        let mut out = Vec::new();
        let mut before = 0;
        for chunk in at_end.chunks(secs) {
            let last = *chunk.last().unwrap_or(&before);
            out.push(last.saturating_sub(before) / chunk.len() as u64);
            before = last;
        }
        out
    }
}

/// Runs the full flow for every campaign in `dir` once, on the journal at `db_url`.
pub(crate) async fn run(
    setup: &FlowSetup,
    dir: &Path,
    db_url: &str,
) -> anyhow::Result<FlowFigures> {
    let loaded = campaign::load_dir(dir);
    anyhow::ensure!(loaded.is_clean(), "generated campaigns do not validate");
    let (sandbox, base, token, ticket) = match &setup.market {
        Some(m) => (None, m.base_url.clone(), m.token.clone(), m.ticket.clone()),
        None => {
            let (token, ticket) = ("bench-token", "bench-ticket");
            let mut sc = SandboxConfig::new(token, ticket);
            sc.search_ready_after_polls = setup.pending_polls;
            sc.faults = Faults {
                latency_ms: setup.latency.as_millis() as u64,
                latency_jitter_ms: setup.latency_jitter.as_millis() as u64,
                rate_limit: Some(setup.sandbox_rate_limit),
                ..Faults::default()
            };
            let sandbox = linkrunner_sandbox::spawn(sc, TcpListener::bind("127.0.0.1:0").await?)
                .await
                .context("starting the sandbox")?;
            let base = sandbox.base_url();
            (Some(sandbox), base, token.to_string(), ticket.to_string())
        }
    };
    let mut market = app::client_config(&base, &token, &ticket)?;
    market.rate_limit = NonZeroU32::new(setup.rate_limit).context("--rate-limit must be > 0")?;
    market.pacing = setup.pacing;
    if let Some(n) = setup.max_concurrency {
        market.max_concurrency = n;
    } else {
        market.max_concurrency = ClientConfig::auto_concurrency(market.rate_limit);
    }
    let mut settings = AppSettings::new(Journal::Url(db_url.to_string()), market);
    settings.engine = EngineSettings {
        poll_initial: setup.poll_initial,
        poll_max: setup.poll_max,
        // 0: resolved by `App::build` as for `run` and `once`.
        campaign_concurrency: setup.campaign_concurrency.unwrap_or(0),
        ..EngineSettings::default()
    };
    let engine = App::build(settings).await?.into_engine();
    let (store, metrics) = (engine.store().clone(), engine.metrics().clone());
    let calls_now = || match &sandbox {
        Some(s) => total_calls(&s.ledger()),
        None => client_calls(&metrics.api_call_totals()).values().sum(),
    };
    procfs::reset_peak_rss();
    let started = Instant::now();
    // The calls the marketplace has received, read once a second: where the rate fell short
    // of the limit (a slow start, a tail of campaigns waiting for their searches).
    let mut timeline = Vec::new();
    let mut tick = tokio::time::interval_at(
        tokio::time::Instant::from_std(started) + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    let pass = engine.pass(&loaded.campaigns, true);
    tokio::pin!(pass);
    let reports = loop {
        tokio::select! {
            r = &mut pass => break r?,
            _ = tick.tick() => timeline.push(calls_now()),
        }
    };
    let wall = started.elapsed();
    let peak_rss = procfs::peak_rss();
    store.close().await;
    let backend = linkrunner::store::redact_url(db_url)
        .split(':')
        .next()
        .unwrap_or("?")
        .to_string();
    let mut f = match sandbox {
        Some(sandbox) => {
            let ledger = sandbox.ledger();
            sandbox.shutdown().await;
            sandbox_figures(&ledger)
        }
        None => client_figures(&metrics, reports.iter().map(|r| u64::from(r.bought)).sum()),
    };
    f.backend = match setup.market {
        Some(_) => format!("{backend}, outside marketplace"),
        None => backend,
    };
    f.wall = wall;
    f.converged = reports
        .iter()
        .filter(|r| r.converged() && r.bought == LINKS_PER_ROUND)
        .count();
    f.peak_rss = peak_rss;
    f.journal = journal_quantiles(&metrics);
    f.timeline = timeline;
    Ok(f)
}

/// The counts the sandbox's ledger holds (the rest of the figures are filled by [`run`]).
fn sandbox_figures(ledger: &linkrunner_sandbox::Ledger) -> FlowFigures {
    let calls_by_op: BTreeMap<String, u64> = ledger
        .requests
        .iter()
        .map(|(op, outcomes)| (op.clone(), outcomes.values().sum()))
        .collect();
    FlowFigures {
        calls: calls_by_op.values().sum(),
        calls_by_op,
        rate_limited: ledger.rate_limited,
        searches: ledger.searches_started,
        polls: ledger.polls_served,
        bought: ledger.purchases.len() as u64,
        duplicates: ledger.duplicate_purchases,
        ..FlowFigures::empty()
    }
}

/// The counts linkrunner's own metrics hold, for a marketplace the bench cannot read:
/// duplicates are not known there (0), purchases are what the passes reported.
fn client_figures(m: &Metrics, bought: u64) -> FlowFigures {
    let totals = m.api_call_totals();
    let calls_by_op = client_calls(&totals);
    let of = |op: &str, outcome: &str| {
        totals
            .get(&(op.to_string(), outcome.to_string()))
            .copied()
            .unwrap_or(0)
    };
    let rate_limited = linkrunner::market::op::ALL
        .iter()
        .map(|op| of(op, "rate_limited"))
        .sum();
    FlowFigures {
        calls: calls_by_op.values().sum(),
        searches: calls_by_op
            .get(linkrunner::market::op::SEARCH)
            .copied()
            .unwrap_or(0),
        polls: calls_by_op
            .get(linkrunner::market::op::SEARCH_RESULT)
            .copied()
            .unwrap_or(0),
        calls_by_op,
        rate_limited,
        bought,
        duplicates: 0,
        ..FlowFigures::empty()
    }
}

/// Calls linkrunner sent, by operation (every outcome).
fn client_calls(totals: &BTreeMap<(String, String), u64>) -> BTreeMap<String, u64> {
    linkrunner::market::op::ALL
        .iter()
        .map(|op| {
            let n = linkrunner::metrics::API_OUTCOMES
                .iter()
                .filter_map(|o| totals.get(&(op.to_string(), o.to_string())))
                .sum();
            (op.to_string(), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn total_calls(l: &linkrunner_sandbox::Ledger) -> u64 {
    l.requests.values().flat_map(|m| m.values()).sum()
}

/// p50 and p99 of journal writes, as the upper bound of the histogram bucket they fall in.
fn journal_quantiles(m: &Metrics) -> Vec<(String, u64, f64, f64)> {
    ["begin", "complete"]
        .iter()
        .map(|step| {
            let h = m
                .journal_write_duration_seconds
                .with_label_values(&[step])
                .metric();
            let h = h.get_histogram();
            let n = h.get_sample_count();
            let at = |q: f64| {
                let want = (n as f64 * q).ceil() as u64;
                h.get_bucket()
                    .iter()
                    .find(|b| b.cumulative_count() >= want)
                    .map_or(f64::INFINITY, |b| b.upper_bound())
            };
            (step.to_string(), n, at(0.5), at(0.99))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> FlowSetup {
        FlowSetup {
            campaigns: 1000,
            latency: Duration::from_millis(50),
            rate_limit: 200,
            campaign_concurrency: None,
            max_concurrency: None,
            pacing: linkrunner::market::Pacing::Even,
            poll_initial: Duration::from_millis(2000),
            poll_max: Duration::from_millis(30000),
            pending_polls: 1,
            sandbox_rate_limit: 200,
            latency_jitter: Duration::ZERO,
            market: None,
        }
    }

    #[test]
    fn the_full_flow_needs_eleven_calls_with_one_pending_poll() {
        assert_eq!(setup().min_calls_per_campaign(), 11);
    }

    #[test]
    fn poll_waits_are_the_engines_fastest_schedule() {
        // Polled at 2 s (pending), then at 4 s: the wait after a pending is at most the age.
        assert_eq!(setup().poll_waits(), Duration::from_millis(2000 + 2000));
    }

    #[test]
    fn the_lower_bound_is_the_rate_when_calls_are_many() {
        assert_eq!(setup().lower_bound(10_000), Duration::from_secs(50));
    }

    #[test]
    fn the_lower_bound_is_the_critical_path_when_calls_are_few() {
        // 11 calls of 50 ms and 2 s + 2 s of waits, less the 4 calls during the first wait.
        assert_eq!(setup().lower_bound(100), Duration::from_millis(4350));
    }
}
