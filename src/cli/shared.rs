//! What several commands share: the engine's flags (`once`, `run`), `--format`, opening the
//! journal and loading the campaign directory.

use std::sync::Arc;

use clap::{Args, ValueEnum};

use super::global::GlobalArgs;
use super::ranges;
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
    #[arg(long, env = "LINKRUNNER_SEARCH_DEADLINE", default_value_t = 900, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    pub search_deadline: u64,
    /// Milliseconds before the first poll of a search result (doubled after each pending answer, at most the job's age).
    #[arg(long, env = "LINKRUNNER_POLL_INITIAL_MS", default_value_t = 2000, value_parser = ranges::u64_in(1..=ranges::HOUR_MS))]
    pub poll_initial_ms: u64,
    /// Upper bound of the poll interval, in milliseconds.
    #[arg(long, env = "LINKRUNNER_POLL_MAX_MS", default_value_t = 30000, value_parser = ranges::u64_in(1..=ranges::HOUR_MS))]
    pub poll_max_ms: u64,
    /// Seconds after an uncertain purchase before its absence from the link list means "not bought".
    #[arg(long, env = "LINKRUNNER_SETTLE_GRACE", default_value_t = 120, value_parser = ranges::u64_in(0..=ranges::DAY_SECS))]
    pub settle_grace: u64,
    /// Seconds a campaign lease lasts without renewal (below 5 counts as 5).
    #[arg(long, env = "LINKRUNNER_LEASE_TTL", default_value_t = 120, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    pub lease_ttl: u64,
    /// Campaigns working at once (a campaign waiting for a search result lends its slot out).
    /// Default: twice the marketplace requests allowed in flight, so campaigns never limit
    /// the load below `--rate-limit`.
    #[arg(long, env = "LINKRUNNER_CAMPAIGN_CONCURRENCY", value_parser = ranges::usize_in(1..=1024))]
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
            lease_ttl: chrono::Duration::seconds(secs(self.lease_ttl.max(5))),
            search_deadline: chrono::Duration::seconds(secs(self.search_deadline)),
            poll_initial: std::time::Duration::from_millis(self.poll_initial_ms),
            poll_max: std::time::Duration::from_millis(self.poll_max_ms.max(self.poll_initial_ms)),
            settle_grace: chrono::Duration::seconds(secs(self.settle_grace)),
            max_attempts: 3,
            campaign_concurrency: self.campaign_concurrency.map_or(0, |n| n.max(1)),
            unpaged_list: match self.unpaged_link_list {
                UnpagedListArg::Complete => UnpagedList::Complete,
                UnpagedListArg::Partial => UnpagedList::Partial,
            },
        }
    }
}

/// Seconds as chrono takes them. The flags' ranges keep them far below the limit; a value
/// past it (a library caller's) is held at one day, never wrapped into a negative.
fn secs(s: u64) -> i64 {
    i64::try_from(s.min(ranges::DAY_SECS)).unwrap_or(86_400)
}

/// Prints text a view laid out: its lines and tabs kept, and every other control character,
/// escape sequence or BIDI override (from the marketplace, a file) written as a visible
/// escape ([`crate::domain::shown::block`]).
pub fn print_text(text: &str) {
    print!("{}", crate::domain::shown::block(text));
}

/// Prints `value` as pretty JSON, with what serde_json leaves raw but a terminal would act
/// on (DEL, C1 controls, BIDI overrides) escaped as `\uXXXX` ([`crate::telemetry::json_safe`]).
pub fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    println!("{}", crate::telemetry::json_safe(&text));
    Ok(())
}

/// The journal of `--database-url`, migrated (`plan`, `status`, `resolve`, `migrate`).
pub async fn open_store(g: &GlobalArgs) -> anyhow::Result<Store> {
    crate::app::open_journal(&g.database_url, &Arc::new(Metrics::new())).await
}

/// The campaign directory; every problem is printed on stderr.
pub fn load_campaigns(g: &GlobalArgs) -> LoadReport {
    let report = campaign::load_dir(&g.campaigns);
    for p in &report.problems {
        eprintln!("{}", crate::domain::shown::block(&p.to_string()));
    }
    report
}
