//! `linkrunner history` (what moved money and why) and `linkrunner explain` (one link's or
//! intent's story). Both only read the journal.

use std::process::ExitCode;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use clap::{Args, ValueEnum};

use crate::cli::global::GlobalArgs;
use crate::cli::shared::{Format, open_store_recorded, print_json, print_text};
use crate::views::story::{self, Subject};

/// `--format` of `history`: text for people, JSON and CSV for finance and scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum TableFormat {
    #[default]
    Text,
    Json,
    Csv,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct HistoryArgs {
    /// One campaign (default: all).
    #[arg(value_name = "CAMPAIGN")]
    campaign: Option<String>,
    /// Only movements from this day (YYYY-MM-DD, UTC) or instant (RFC 3339) on.
    #[arg(long, value_parser = story::parse_since)]
    since: Option<DateTime<Utc>>,
    #[arg(long, value_enum, default_value = "text")]
    format: TableFormat,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ExplainArgs {
    /// A link id the marketplace gave (`link:ID`), an intent id (`intent:ID` or `#ID`), or a
    /// bare number: a link id when one of our links has it, else an intent id.
    what: String,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub(crate) async fn history(g: &GlobalArgs, a: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let store = open_store_recorded(g).await?;
    if let Some(c) = &a.campaign
        && !store.campaigns().campaign_names().await?.contains(c)
    {
        anyhow::bail!("no campaign `{c}` in the journal (`linkrunner status` lists them)");
    }
    let lines = story::history(&store, a.campaign.as_deref(), a.since)
        .await
        .context("reading the ledger")?;
    match a.format {
        TableFormat::Text => print_text(&story::render_history_text(&lines)),
        TableFormat::Json => print_json(&lines)?,
        TableFormat::Csv => print_text(&story::render_history_csv(&lines)),
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn explain(g: &GlobalArgs, a: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let what = Subject::parse(&a.what).with_context(|| {
        format!(
            "`{}` is not a link or intent id (e.g. 1234, link:1234, intent:12)",
            a.what
        )
    })?;
    let store = open_store_recorded(g).await?;
    let Some(s) = story::explain(&store, what).await? else {
        anyhow::bail!("the journal knows no link or intent `{}`", a.what);
    };
    match a.format {
        Format::Text => print_text(&story::render_story(&s)),
        Format::Json => print_json(&s)?,
    }
    Ok(ExitCode::SUCCESS)
}
