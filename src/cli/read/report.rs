//! `linkrunner report --month YYYY-MM`: the month's money for finance, read from the journal's
//! ledger. Only reads.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use super::history::TableFormat;
use crate::cli::global::GlobalArgs;
use crate::cli::shared::open_store_recorded;
use crate::views::month::{self, Month};

#[derive(Debug, Clone, Args)]
pub(crate) struct ReportArgs {
    /// The calendar month, UTC: YYYY-MM.
    #[arg(long, value_parser = Month::parse)]
    month: Month,
    #[arg(long, value_enum, default_value = "text")]
    format: TableFormat,
}

pub(crate) async fn report(g: &GlobalArgs, a: &ReportArgs) -> anyhow::Result<ExitCode> {
    let store = open_store_recorded(g).await?;
    let r = month::month_report(&store, a.month)
        .await
        .context("reading the ledger")?;
    match a.format {
        TableFormat::Text => crate::cli::shared::print_text(&month::render_text(&r)),
        TableFormat::Json => crate::cli::shared::print_json(&r)?,
        TableFormat::Csv => crate::cli::shared::print_text(&month::render_csv(&r)),
    }
    Ok(ExitCode::SUCCESS)
}
