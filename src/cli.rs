//! The command line: global settings (flags with `LINKRUNNER_*` fallbacks) and one
//! subcommand per job. Each subcommand hands off to the module that owns the work.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::config::ApiArgs;
use crate::telemetry::LogArgs;

#[derive(Debug, Parser)]
#[command(
    name = "linkrunner",
    version,
    about = "Buys links on a link marketplace from YAML campaign files: exactly once, within budget, observable."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Where the journal lives: sqlite://FILE (embedded, one machine) or postgres://... (replicas).
    #[arg(
        long,
        env = "LINKRUNNER_DATABASE_URL",
        default_value = "sqlite://linkrunner.db",
        global = true
    )]
    pub database_url: String,
    /// Directory of campaign files (one campaign per *.yaml / *.yml file).
    #[arg(
        long,
        env = "LINKRUNNER_CAMPAIGNS",
        default_value = "campaigns",
        global = true
    )]
    pub campaigns: PathBuf,
    #[command(flatten)]
    pub log: LogArgs,
    #[command(flatten)]
    pub api: ApiArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check campaign files: every problem at once, as path:line:column.
    Validate(crate::campaign::cli::ValidateArgs),
    /// Print the JSON Schema (draft-07) of a campaign file.
    Schema,
    /// Serve the sandbox marketplace (for tests, demos and benchmarks).
    Sandbox(crate::sandbox::cli::SandboxArgs),
}

pub async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let g = cli.global;
    match cli.command {
        Command::Validate(a) => crate::campaign::cli::validate(&g, &a),
        Command::Schema => crate::campaign::cli::schema(),
        Command::Sandbox(a) => crate::sandbox::cli::run(a)
            .await
            .map(|()| ExitCode::SUCCESS),
    }
}
