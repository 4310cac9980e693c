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
    /// Show what the next pass would create, buy, start or stop, and the money; change nothing.
    /// Exit 0: nothing pending; 2: changes pending; 1: error.
    Plan(crate::engine::cli::PlanArgs),
    /// One full pass over every campaign now (schedules ignored), then exit.
    Once(crate::engine::cli::OnceArgs),
    /// The daemon: buy rounds on schedule, reload, health, metrics and status over HTTP.
    Run(crate::daemon::run::RunArgs),
    /// Per campaign: remote ids, links, commitment against the cap, last round, uncertain intents.
    Status(crate::engine::cli::StatusArgs),
    /// Settle an uncertain intent with the operator's evidence.
    Resolve(crate::engine::cli::ResolveArgs),
    /// Create or upgrade the journal database schema, then exit.
    Migrate,
    /// Serve the sandbox marketplace (for tests, demos and benchmarks).
    Sandbox(crate::sandbox::cli::SandboxArgs),
    /// The sandbox, an embedded database and the daemon in one process, on the example campaigns.
    Demo(crate::daemon::demo::DemoArgs),
    /// Benchmark against the sandbox: rate limit, calls, memory, start-up, journal; prints figures.
    Bench(crate::bench::BenchArgs),
}

pub async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let g = cli.global;
    match cli.command {
        Command::Validate(a) => crate::campaign::cli::validate(&g, &a),
        Command::Schema => crate::campaign::cli::schema(),
        Command::Plan(a) => crate::engine::cli::plan(&g, &a).await,
        Command::Once(a) => crate::engine::cli::once(&g, &a).await,
        Command::Run(a) => crate::daemon::run::command(&g, &a).await,
        Command::Status(a) => crate::engine::cli::status(&g, &a).await,
        Command::Resolve(a) => crate::engine::cli::resolve(&g, &a).await,
        Command::Migrate => crate::engine::cli::migrate(&g).await,
        Command::Demo(a) => crate::daemon::demo::demo(&g, &a).await,
        Command::Bench(a) => crate::bench::run(&g, &a).await,
        Command::Sandbox(a) => crate::sandbox::cli::run(a)
            .await
            .map(|()| ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_subcommand_parses_without_clashing_with_the_global_settings() {
        Cli::command().debug_assert();
    }

    #[test]
    fn plan_takes_campaign_names_next_to_the_campaigns_directory() {
        let cli = Cli::try_parse_from(["linkrunner", "--campaigns", "dir", "plan", "acme", "bolt"])
            .unwrap();
        let Command::Plan(a) = cli.command else {
            panic!("not plan")
        };
        assert_eq!(a.only, ["acme", "bolt"]);
        assert_eq!(cli.global.campaigns, std::path::PathBuf::from("dir"));
    }
}
