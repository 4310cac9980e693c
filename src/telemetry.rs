//! Logging through `tracing`: human-readable by default, JSON with `--log-format json`.
//! Logs go to stderr so command output on stdout stays machine-readable.

use clap::{Args, ValueEnum};
use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
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
    pub log_format: LogFormat,
    /// Log filter, in `tracing` EnvFilter syntax (e.g. `info`, `linkrunner=debug`).
    #[arg(long, env = "LINKRUNNER_LOG", default_value = "info", global = true)]
    pub log_level: String,
}

pub fn init(args: &LogArgs) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(&args.log_level).map_err(|e| {
        anyhow::anyhow!(
            "--log-level `{}` is not a valid filter: {e}",
            args.log_level
        )
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match args.log_format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    result.map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}
