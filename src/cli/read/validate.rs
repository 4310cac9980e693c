//! `linkrunner validate` and `linkrunner schema`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::campaign;
use crate::cli::global::GlobalArgs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum Format {
    /// `path:line:column: error: message`, one per line.
    #[default]
    Text,
    /// A JSON array of `{path, line, column, message}`.
    Json,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ValidateArgs {
    /// Files or directories to check (default: the campaigns directory).
    paths: Vec<PathBuf>,
    /// How problems are printed on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Prints every problem, then a summary on stderr; exit 1 when there is any problem.
pub(crate) fn validate(g: &GlobalArgs, a: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let paths = if a.paths.is_empty() {
        vec![g.campaigns.clone()]
    } else {
        a.paths.clone()
    };
    let mut report = campaign::load_paths(&paths);
    // With the accounts file, a campaign must name one of its accounts; without it, any valid
    // id passes here (`plan`, `once` and `run` refuse all but `default`).
    if let Some(file) = crate::cli::accounts::load(g.account_file.as_deref())? {
        campaign::reject_unknown_accounts(&mut report, &file.ids());
    }
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Text => {
            for d in &report.problems {
                writeln!(out, "{d}")?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report.problems).context("writing JSON")?;
            writeln!(out)?;
        }
    }
    let files_with_problems = report
        .problems
        .iter()
        .map(|d| &d.path)
        .collect::<std::collections::HashSet<_>>()
        .len();
    eprintln!(
        "{} campaign(s) valid, {} problem(s) in {} file(s)",
        report.campaigns.len(),
        report.problems.len(),
        files_with_problems
    );
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Prints the JSON Schema (draft-07) of a campaign file.
pub(crate) fn schema() -> anyhow::Result<ExitCode> {
    std::io::stdout()
        .lock()
        .write_all(campaign::schema_json().as_bytes())
        .context("writing the schema")?;
    Ok(ExitCode::SUCCESS)
}
