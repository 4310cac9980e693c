//! [`BenchSettings`]: what `linkrunner bench` measures and how hard it pushes.

use std::time::Duration;

use super::{accounts, fleet, flow};

#[derive(Debug, Clone)]
pub struct BenchSettings {
    /// Campaigns in the full-flow run (targets 1 and 2).
    pub(crate) flow_campaigns: usize,
    /// Sandbox latency added to every call, in milliseconds.
    pub(crate) latency_ms: u64,
    /// The client's rate limit (`--rate-limit`), and the sandbox's unless `sandbox_rate_limit`.
    pub(crate) rate_limit: u32,
    /// Campaigns working at once; `None`: the product's default.
    pub(crate) campaign_concurrency: Option<usize>,
    /// Marketplace requests in flight at once; `None`: the product's default.
    pub(crate) max_concurrency: Option<usize>,
    /// How the client spaces requests (targets 1 and 2).
    pub(crate) pacing: linkrunner::market::Pacing,
    /// The engine's first wait before polling a search, in milliseconds (doubled per pending answer).
    pub(crate) poll_initial_ms: u64,
    /// The sizes, in campaigns, at which `run` is measured (target 3), smallest first; the
    /// verdicts are judged at the largest.
    pub(crate) scale_campaigns: Vec<usize>,
    /// Seconds of idle CPU measured between rounds (target 3).
    pub(crate) idle_seconds: u64,
    /// Seconds of steady state measured with `run`'s defaults after the first
    /// reconciliation (target 3, SQLite); 0: none.
    pub(crate) steady_seconds: u64,
    /// Seconds under `run` with a fast cycle, after its first full one, to time CPU per
    /// converged reconciliation (target 3, SQLite); 0: none.
    pub(crate) looks_seconds: u64,
    /// The reconciliation cycle `run` is scaled to (its `--rate-limit` raised to fit) to
    /// measure it with 1 % of the campaigns' rounds due per hour of run's default cycle
    /// (target 3, SQLite; [`crate::cycle`]); 0: none.
    pub(crate) cycle_seconds: u64,
    /// Intents timed for the journal latency (target 4).
    pub(crate) journal_intents: usize,
    /// Journal rows (intents and ledger) before the SIGKILL restart (target 4).
    pub(crate) journal_rows: u64,
    /// Campaign files validated (target 5).
    pub(crate) validate_files: usize,
    /// Campaigns and journal rows (intents, and as many ledger rows) seeded for the reads
    /// (target 6: the status page, the summary, a page of the API).
    pub(crate) read_campaigns: usize,
    pub(crate) read_journal_rows: u64,
    /// Only these targets (1 to 7); empty: all.
    pub(crate) only: Vec<u8>,
    /// Polls a search answers "pending" before it is ready (the bench's sandbox).
    pub(crate) pending_polls: u32,
    /// The sandbox's own limit; `None`: `rate_limit`.
    pub(crate) sandbox_rate_limit: Option<u32>,
    /// Up to this much more sandbox latency per call, in milliseconds.
    pub(crate) latency_jitter_ms: u64,
    /// Targets 1 and 2 against a marketplace started outside the bench.
    pub(crate) market: Option<flow::ExternalMarket>,
    /// Target 7: accounts (0: skipped), each one's rate limit, campaigns per account, the
    /// numbers of processes, the measured window in seconds, and whether its checks decide
    /// the exit code.
    pub(crate) accounts: usize,
    pub(crate) account_rate_limit: u32,
    pub(crate) account_campaigns: usize,
    pub(crate) account_processes: Vec<usize>,
    pub(crate) accounts_seconds: u64,
    pub(crate) accounts_strict: bool,
}

impl BenchSettings {
    /// Target 3's sizes, smallest first, each once; none of them zero.
    pub(crate) fn scale_sizes(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = self.scale_campaigns.iter().map(|&n| n.max(1)).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// Target 7's setup (the sandbox's latency is `--latency-ms`'s).
    pub(crate) fn accounts_setup(&self) -> accounts::AccountsSetup {
        accounts::AccountsSetup {
            fleet: fleet::FleetSetup {
                accounts: self.accounts,
                rate_limit: self.account_rate_limit.max(1),
                per_account: self.account_campaigns.max(1),
                latency: Duration::from_millis(self.latency_ms),
            },
            processes: self.account_processes.iter().map(|&p| p.max(1)).collect(),
            window: Duration::from_secs(self.accounts_seconds.max(1)),
            strict: self.accounts_strict,
        }
    }

    pub(crate) fn wants(&self, target: u8) -> bool {
        self.only.is_empty() || self.only.contains(&target)
    }

    pub(crate) fn flow_setup(&self) -> flow::FlowSetup {
        flow::FlowSetup {
            campaigns: self.flow_campaigns,
            latency: Duration::from_millis(self.latency_ms),
            rate_limit: self.rate_limit.max(1),
            campaign_concurrency: self.campaign_concurrency.map(|n| n.max(1)),
            max_concurrency: self.max_concurrency.map(|n| n.max(1)),
            pacing: self.pacing,
            poll_initial: Duration::from_millis(self.poll_initial_ms),
            poll_max: Duration::from_secs(30).max(Duration::from_millis(self.poll_initial_ms)),
            pending_polls: self.pending_polls,
            sandbox_rate_limit: self.sandbox_rate_limit.unwrap_or(self.rate_limit).max(1),
            latency_jitter: Duration::from_millis(self.latency_jitter_ms),
            market: self.market.clone(),
        }
    }
}
