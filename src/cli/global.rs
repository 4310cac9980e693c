//! Settings every command takes: the journal, the campaign directory, logging and the
//! marketplace client (flags with `LINKRUNNER_*` fallbacks).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::api::ApiArgs;
use crate::telemetry::LogFormat;

/// `--database-url` when not given (the demo uses a file of its own instead, see `demo`).
pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://linkrunner.db";

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Where the journal lives: sqlite://FILE (embedded, one machine) or postgres://... (replicas).
    /// Default: sqlite://linkrunner.db; `demo`: sqlite://linkrunner-demo.db, started afresh on
    /// every run. (No clap default: the two commands' defaults differ, and `--help` must not
    /// show one that is not used.)
    #[arg(long, env = "LINKRUNNER_DATABASE_URL", global = true)]
    pub(crate) database_url: Option<String>,
    /// Directory of campaign files (one campaign per *.yaml / *.yml file).
    #[arg(
        long,
        env = "LINKRUNNER_CAMPAIGNS",
        default_value = "campaigns",
        global = true
    )]
    pub(crate) campaigns: PathBuf,
    /// The accounts file (or directory of them): the deployment's other marketplace accounts
    /// and every account's monthly cap (docs/autobuyers-and-account.md). A file with only
    /// `monthly_cap` (and `approve_above`) is the default account's cap, as before.
    #[arg(long, env = "LINKRUNNER_ACCOUNT_FILE", global = true)]
    pub(crate) account_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) log: LogArgs,
    #[command(flatten)]
    pub(crate) api: ApiArgs,
}

impl GlobalArgs {
    /// `--database-url`, or [`DEFAULT_DATABASE_URL`].
    pub(crate) fn database_url(&self) -> &str {
        self.database_url.as_deref().unwrap_or(DEFAULT_DATABASE_URL)
    }
}

/// `--log-format`: the command line's names for [`LogFormat`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormatArg {
    Human,
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(a: LogFormatArg) -> LogFormat {
        match a {
            LogFormatArg::Human => LogFormat::Human,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Log format: human or json (one JSON object per line).
    #[arg(
        long,
        env = "LINKRUNNER_LOG_FORMAT",
        value_enum,
        default_value = "human",
        global = true
    )]
    pub(crate) log_format: LogFormatArg,
    /// Log filter, in `tracing` EnvFilter syntax (e.g. `info`, `linkrunner=debug`).
    #[arg(long, env = "LINKRUNNER_LOG", default_value = "info", global = true)]
    pub(crate) log_level: String,
}
