//! `linkrunner probe`: run once before the first `run`, and again when something looks
//! wrong. Checks the base URL, TLS, the `Authorization` form and the cookie; on an existing
//! project (`--project ID`) one donor search and the link list; prints what it saw (redacted)
//! and the settings to use, and writes a redacted report to attach to a bug report. Never
//! buys, creates nothing. The checks are in [`checks`], over the marketplace client's raw calls.
//!
//! May import: crate::app, crate::market, crate::metrics, crate::telemetry.

pub mod checks;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use self::checks::{self as probe, ProbeOptions};
use super::global::GlobalArgs;
use super::ranges;
use super::shared::{Format, open_store};
use crate::metrics::Metrics;

#[derive(Debug, Clone, Args)]
pub(crate) struct ProbeArgs {
    /// An existing project: start one donor search on it and read its link list.
    #[arg(long, value_parser = ranges::id())]
    project: Option<i64>,
    /// The promoted URL to search donors for (default: the project's first URL in the journal).
    #[arg(long, value_parser = ranges::id())]
    url_id: Option<i64>,
    /// Milliseconds between polls of the search result.
    #[arg(long, default_value_t = 1000, value_parser = ranges::u64_in(1..=ranges::HOUR_MS))]
    poll_ms: u64,
    /// Seconds the search may stay pending before the probe gives up on it.
    #[arg(long, default_value_t = 120, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    wait: u64,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Probe this account of the accounts file (--account-file) through its own settings.
    /// Default: the command line's account.
    #[arg(long, value_name = "ID")]
    account: Option<String>,
    /// Write the redacted report (JSON) to this file, to attach to a bug report.
    #[arg(long)]
    report: Option<PathBuf>,
}

/// Exit 0: every check passed; 1: a problem was found (each printed), or the probe could
/// not run.
pub(crate) async fn probe(g: &GlobalArgs, a: &ProbeArgs) -> anyhow::Result<ExitCode> {
    let config = super::accounts::client_config_of(g, a.account.as_deref())?;
    let url_id = match (a.project, a.url_id) {
        (Some(p), None) => first_url_of(g, p).await?,
        (_, u) => u,
    };
    let opts = ProbeOptions {
        project: a.project,
        url_id,
        poll_every: Duration::from_millis(a.poll_ms),
        wait: Duration::from_secs(a.wait),
    };
    let (report, redactor) =
        probe::probe_redacting(config, &opts, Arc::new(Metrics::new())).await?;
    let json = redactor.text(&serde_json::to_string_pretty(&report)?);
    match a.format {
        Format::Json => println!("{}", crate::telemetry::json_safe(&json)),
        Format::Text => super::shared::print_text(&redactor.text(&probe::render(&report))),
    }
    if let Some(path) = &a.report {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing the report to {}", path.display()))?;
        eprintln!("report written to {} (redacted)", path.display());
    }
    Ok(if report.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The first promoted URL the journal knows for `project`.
async fn first_url_of(g: &GlobalArgs, project: i64) -> anyhow::Result<Option<i64>> {
    let store = open_store(g).await?;
    for name in store.campaigns().campaign_names().await? {
        let ids = store.campaigns().remote_ids(&name).await?;
        if ids
            .project
            .as_ref()
            .is_some_and(|p| p.project_id == project)
        {
            return Ok(ids.urls.values().next().copied());
        }
    }
    anyhow::bail!(
        "project {project} is not in the journal of --database-url: name the promoted URL to search with --url-id"
    )
}
