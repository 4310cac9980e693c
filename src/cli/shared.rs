//! What several commands share: the engine's flags (`once`, `run`), `--format`, opening the
//! journal and loading the campaign directory.

use std::sync::Arc;

use clap::{Args, ValueEnum};

use super::global::GlobalArgs;
use crate::campaign::{self, LoadReport};
use crate::effects::{EngineSettings, UnpagedList};
use crate::metrics::Metrics;
use crate::store::Store;

/// `--format` of `plan`, `once` and `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Engine tunables, shared by `once` and `run`.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// Seconds a donor search may stay pending before the round gives up on it.
    #[arg(long, env = "LINKRUNNER_SEARCH_DEADLINE", default_value_t = 900)]
    pub search_deadline: u64,
    /// Milliseconds before the first poll of a search result (doubled after each pending answer, at most the job's age).
    #[arg(long, env = "LINKRUNNER_POLL_INITIAL_MS", default_value_t = 2000)]
    pub poll_initial_ms: u64,
    /// Upper bound of the poll interval, in milliseconds.
    #[arg(long, env = "LINKRUNNER_POLL_MAX_MS", default_value_t = 30000)]
    pub poll_max_ms: u64,
    /// Seconds after an uncertain purchase before its absence from the link list means "not bought".
    #[arg(long, env = "LINKRUNNER_SETTLE_GRACE", default_value_t = 120)]
    pub settle_grace: u64,
    /// Seconds a campaign lease lasts without renewal.
    #[arg(long, env = "LINKRUNNER_LEASE_TTL", default_value_t = 120)]
    pub lease_ttl: u64,
    /// Campaigns working at once (a campaign waiting for a search result lends its slot out).
    /// Default: twice the marketplace requests allowed in flight, so campaigns never limit
    /// the load below `--rate-limit`.
    #[arg(long, env = "LINKRUNNER_CAMPAIGN_CONCURRENCY")]
    pub campaign_concurrency: Option<usize>,
    /// What a link list answer without paging fields shows: `complete` (every link, once it
    /// shows every link the journal holds) or `partial` (maybe a first page: its absences prove
    /// nothing, and uncertain purchases and stopped autobuyers wait for an operator).
    #[arg(
        long,
        env = "LINKRUNNER_UNPAGED_LINK_LIST",
        value_enum,
        default_value = "complete"
    )]
    pub unpaged_link_list: UnpagedListArg,
}

/// `--unpaged-link-list` (mapped onto [`UnpagedList`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UnpagedListArg {
    Complete,
    Partial,
}

impl EngineArgs {
    pub fn settings(&self) -> EngineSettings {
        EngineSettings {
            lease_ttl: chrono::Duration::seconds(self.lease_ttl.max(5) as i64),
            search_deadline: chrono::Duration::seconds(self.search_deadline as i64),
            poll_initial: std::time::Duration::from_millis(self.poll_initial_ms),
            poll_max: std::time::Duration::from_millis(self.poll_max_ms.max(self.poll_initial_ms)),
            settle_grace: chrono::Duration::seconds(self.settle_grace as i64),
            max_attempts: 3,
            campaign_concurrency: self.campaign_concurrency.map_or(0, |n| n.max(1)),
            unpaged_list: match self.unpaged_link_list {
                UnpagedListArg::Complete => UnpagedList::Complete,
                UnpagedListArg::Partial => UnpagedList::Partial,
            },
        }
    }
}

/// The journal of `--database-url`, migrated (`plan`, `status`, `resolve`, `migrate`).
pub async fn open_store(g: &GlobalArgs) -> anyhow::Result<Store> {
    crate::app::open_journal(g.database_url(), &Arc::new(Metrics::new())).await
}

/// The campaign directory; every problem is printed on stderr.
pub fn load_campaigns(g: &GlobalArgs) -> LoadReport {
    let report = campaign::load_dir(&g.campaigns);
    for p in &report.problems {
        eprintln!("{p}");
    }
    report
}
