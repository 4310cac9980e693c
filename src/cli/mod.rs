//! `cli/`: the command layer. Clap types live here and nowhere below: each command turns its
//! flags into the plain settings of the module that owns the work ([`crate::app`], `engine`,
//! `daemon`, `campaign`, and the sandbox crate) and prints the result. Private to the crate: the
//! `linkrunner` binary and the benchmark (which runs the measured daemon as itself) enter through
//! [`main_with_args`] and [`run_logged`], which `lib.rs` re-exports as the front door.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Cli`], [`Command`], [`dispatch`]; the front door [`main_with_args`], [`run_logged`] |
//! | [`global`] | [`GlobalArgs`]: journal, campaign directory, logging, marketplace client |
//! | [`api`], [`secrets`] | marketplace flags → [`crate::market::ClientConfig`]; token and ticket from files or the environment |
//! | [`accounts`] | `--account-file`: the deployment's other accounts' clients, the ids campaigns may name, every account's cap |
//! | [`ranges`] | the range every numeric flag is held to |
//! | [`shared`] | what several commands share: engine flags, `--format`, opening the journal, loading campaigns |
//! | [`read`] | the commands that only read: `validate`, `schema`, `plan` (and `--state-from`), `status`, `history`, `explain`, `report`; never the engine |
//! | [`once`], [`progress`] | `once`, its progress display and totals table |
//! | [`run`], [`http_args`] | `run`, the daemon; its HTTP security flags |
//! | [`resolve`], [`resolve_words`] | `resolve`: an operator's word on an intent, a page, a link; `adopt`, `list-complete`, `approve` |
//! | [`halt`] | `halt` and `resume`: the operator's stop button |
//! | [`migrate`] | `migrate`: create or upgrade the journal's schema |
//! | [`import`] | `import`: a campaign file that adopts an existing project, from its link list |
//! | [`probe`] | what the marketplace accepts and how it answers, and the settings to use |
//! | `sandbox`, `sandbox_behaviour`, `sandbox_accounts`, `demo` | the sandbox marketplace and the demo (feature `sandbox`, on by default); the benchmark is the `linkrunner-bench` binary (`bench`) |
//!
//! May import: crate::app, crate::campaign, crate::daemon, crate::decide, crate::effects, crate::http, crate::market, crate::metrics, crate::notify, crate::store, crate::telemetry, crate::views.

pub(crate) mod accounts;
pub(crate) mod api;
#[cfg(feature = "sandbox")]
pub(crate) mod demo;
pub(crate) mod global;
pub(crate) mod halt;
pub(crate) mod http_args;
pub(crate) mod import;
pub(crate) mod migrate;
pub mod once;
pub mod probe;
pub(crate) mod progress;
pub(crate) mod ranges;
pub(crate) mod read;
pub(crate) mod resolve;
pub(crate) mod resolve_words;
pub(crate) mod run;
#[cfg(feature = "sandbox")]
pub(crate) mod sandbox;
#[cfg(feature = "sandbox")]
pub(crate) mod sandbox_accounts;
#[cfg(feature = "sandbox")]
pub(crate) mod sandbox_behaviour;
pub(crate) mod secrets;
pub(crate) mod shared;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use read::{history, plan, report, status, validate};

pub use global::{GlobalArgs, LogArgs};

#[derive(Debug, Parser)]
#[command(
    name = "linkrunner",
    version,
    about = "Buys links on a link marketplace from YAML campaign files: exactly once, within budget, observable."
)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Check campaign files: every problem at once, as path:line:column.
    Validate(validate::ValidateArgs),
    /// Print the JSON Schema (draft-07) of a campaign file.
    Schema,
    /// Show what the next pass would create, buy, start or stop, and the money; change nothing.
    /// Exit 0: nothing pending; 2: changes pending; 1: error.
    Plan(plan::PlanArgs),
    /// One full pass over every campaign now (schedules ignored), then exit.
    /// Exit 0: converged; 1: a problem; 3: stalled; 4: stopped by SIGTERM/SIGINT (a second
    /// signal exits at once: 143, 130). docs/faults.md lists them.
    Once(once::OnceArgs),
    /// The daemon: buy rounds on schedule, reload, health, metrics and status over HTTP.
    Run(run::RunArgs),
    /// Per campaign: remote ids, links, commitment against the cap, last round, uncertain intents.
    Status(status::StatusArgs),
    /// Record an operator's word: settle an uncertain intent, let a page be bought again, release a link.
    Resolve(resolve::ResolveArgs),
    /// Stop all spending on every process of this journal, and their running autobuyers,
    /// until `resume`; reads, settling and stops go on. Recorded with who and why.
    Halt(halt::HaltArgs),
    /// Lift an operator's or the anomaly brake's halt, account-wide or of one campaign
    /// (`--campaign`): buying resumes, autobuyers the files want running start again.
    Resume(halt::ResumeArgs),
    /// What moved money and why: the ledger with each movement's intent and cause.
    History(history::HistoryArgs),
    /// One link's or intent's story: file version, rule, price against cap, every attempt.
    Explain(history::ExplainArgs),
    /// The month's money for finance: links bought, rent committed, autobuyer budgets, releases.
    Report(report::ReportArgs),
    /// Create or upgrade the journal database schema, then exit.
    Migrate,
    /// Check the marketplace before the first run: base URL, TLS, auth form, cookie; with
    /// --project one donor search and the link list. Prints the settings to use. Never buys.
    /// Exit 0: every check passed; 1: a problem (printed).
    Probe(probe::ProbeArgs),
    /// Write a campaign file that adopts an existing project, from what its link list shows
    /// (URL and text ids, rents); caps at today's commitment. Buys and changes nothing.
    Import(import::ImportArgs),
    /// Serve the sandbox marketplace (for tests, demos and benchmarks).
    #[cfg(feature = "sandbox")]
    Sandbox(sandbox::SandboxArgs),
    /// The sandbox, an embedded database and the daemon in one process, on the example campaigns.
    #[cfg(feature = "sandbox")]
    Demo(demo::DemoArgs),
}

/// Runs one command; the exit code is the command's verdict, an error is exit 1.
pub(crate) async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let g = cli.global;
    match cli.command {
        Command::Validate(a) => validate::validate(&g, &a),
        Command::Schema => validate::schema(),
        Command::Plan(a) => plan::plan(&g, &a).await,
        Command::Once(a) => once::once(&g, &a).await,
        Command::Run(a) => run::run(&g, &a).await,
        Command::Status(a) => status::status(&g, &a).await,
        Command::Resolve(a) => resolve::resolve(&g, &a).await,
        Command::Halt(a) => halt::halt(&g, &a).await,
        Command::Resume(a) => halt::resume(&g, &a).await,
        Command::History(a) => history::history(&g, &a).await,
        Command::Explain(a) => history::explain(&g, &a).await,
        Command::Report(a) => report::report(&g, &a).await,
        Command::Migrate => migrate::migrate(&g).await,
        Command::Probe(a) => probe::probe(&g, &a).await,
        Command::Import(a) => import::import(&g, &a).await,
        #[cfg(feature = "sandbox")]
        Command::Demo(a) => demo::demo(&g, &a).await,
        #[cfg(feature = "sandbox")]
        Command::Sandbox(a) => sandbox::sandbox(a).await.map(|()| ExitCode::SUCCESS),
    }
}

/// linkrunner's whole command line: parse `args` (the program name first), set up logging,
/// run the command on a fresh runtime, and map the outcome to the exit code. A bad flag prints
/// clap's message and exits 2.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let log = cli.global.log.clone();
    run_logged(&log, dispatch(cli))
}

/// Logging set up from `log`, then `work` on a multi-threaded runtime; an error is printed
/// escaped (it may quote the marketplace or a file) and exits 1.
pub fn run_logged(log: &LogArgs, work: impl Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    if let Err(e) = crate::telemetry::init(log.log_format.into(), &log.log_level) {
        eprintln!("error: {e:#}");
        return ExitCode::from(1);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(work) {
        Ok(code) => code,
        Err(e) => {
            let text = format!("{e:#}");
            eprintln!("error: {}", linkrunner_domain::shown::block(&text));
            ExitCode::from(1)
        }
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

    /// Every `[default: …]` that `--help` shows, per command, as `(flag, value)`.
    fn shown_defaults(cmd: &mut clap::Command) -> Vec<(String, String)> {
        let help = cmd.render_long_help().to_string();
        let mut flag = String::new();
        let mut out = Vec::new();
        for line in help.lines().map(str::trim) {
            if line.starts_with("--") || line.starts_with('-') && line.contains(", --") {
                let at = line.find("--").unwrap_or(0);
                flag = line[at..]
                    .split([' ', '=', '<'])
                    .next()
                    .unwrap_or("")
                    .to_string();
            } else if let Some(v) = line.strip_prefix("[default: ") {
                out.push((flag.clone(), v.trim_end_matches(']').to_string()));
            }
        }
        out
    }

    /// The real default of each flag whose value a settings type's `Default` (or constructor)
    /// defines; the command's own flags (their clap default is the value used) are listed apart.
    fn real_default(flag: &str) -> Option<String> {
        use crate::effects::{EngineSettings, UnpagedList};
        let e = EngineSettings::default();
        let d = crate::daemon::run::DaemonOptions::default();
        let c = crate::market::ClientConfig::new(
            "http://127.0.0.1:1",
            crate::market::Credentials::new("t".to_string().into(), "t".to_string().into())
                .expect("test credentials"),
        )
        .expect("client config");
        let secs = |d: chrono::Duration| d.num_seconds().to_string();
        Some(match flag {
            "--lease-ttl" => secs(e.lease_ttl),
            "--search-deadline" => secs(e.search_deadline),
            "--settle-grace" => secs(e.settle_grace),
            "--poll-initial-ms" => e.poll_initial.as_millis().to_string(),
            "--poll-max-ms" => e.poll_max.as_millis().to_string(),
            "--unpaged-link-list" => match e.unpaged_list {
                UnpagedList::Complete => "complete".into(),
                UnpagedList::Partial => "partial".into(),
            },
            "--removal-hold-share" => e.removals.share.to_string(),
            "--removal-window" => e.removals.window.as_secs().to_string(),
            "--reconcile-interval" => d.reconcile_interval.as_secs().to_string(),
            "--shutdown-grace" => d.shutdown_grace.as_secs().to_string(),
            "--anomaly-multiple" => d.anomaly_multiple.to_string(),
            "--campaigns" => d.campaigns_dir.display().to_string(),
            "--rate-limit" => c.rate_limit.to_string(),
            "--request-timeout" => c.request_timeout.as_secs().to_string(),
            "--connect-timeout" => c.connect_timeout.as_secs().to_string(),
            "--max-answer-bytes" => c.max_answer_bytes.to_string(),
            "--read-retries" => c.read_retries.to_string(),
            "--auth-scheme" => match c.auth_scheme {
                crate::market::AuthScheme::Bearer => "bearer".into(),
                other => format!("{other:?}").to_lowercase(),
            },
            "--login-path" => crate::market::LoginSettings::DEFAULT_LOGIN_PATH.into(),
            "--http-max-connections" => crate::http::ServeLimits::MAIN.max_connections.to_string(),
            "--auth-path" => crate::market::LoginSettings::DEFAULT_AUTH_PATH.into(),
            _ => return sandbox_default(flag),
        })
    }

    /// `linkrunner sandbox`'s flags against [`linkrunner_sandbox::SandboxConfig::new`].
    #[cfg(feature = "sandbox")]
    fn sandbox_default(flag: &str) -> Option<String> {
        let s = linkrunner_sandbox::SandboxConfig::new("t", "t");
        Some(match flag {
            "--prefix" => format!("{:?}", s.prefix),
            "--seed" => s.seed.to_string(),
            "--ready-after-polls" => s.search_ready_after_polls.to_string(),
            "--ready-after-ms" => s.search_ready_after.as_millis().to_string(),
            "--donors-per-search" => s.donors_per_search.to_string(),
            "--balance" => s.initial_balance.to_string(),
            "--sandbox-auth-scheme" => format!("{:?}", s.auth_scheme).to_lowercase(),
            _ => return None,
        })
    }

    #[cfg(not(feature = "sandbox"))]
    fn sandbox_default(_: &str) -> Option<String> {
        None
    }

    /// Flags whose only definition is their clap default (nothing else could disagree): output
    /// formats, listen addresses, the demo's pace, the probe's own waits, logging, and the
    /// sandbox's fault and shape knobs (0, none or empty: off).
    const OWN_DEFAULTS: [&str; 18] = [
        "--format",
        "--listen",
        "--round-every",
        "--rounds",
        "--log-format",
        "--log-level",
        "--poll-ms",
        "--wait",
        "--latency-ms",
        "--latency-jitter-ms",
        "--error-rate",
        "--drop-rate",
        "--truncate-rate",
        "--executed-error-rate",
        "--list-paging",
        "--list-lag-ms",
        "--shape",
        "--behaviour",
    ];

    #[test]
    fn every_default_help_shows_is_the_default_the_command_uses() {
        let mut root = Cli::command();
        root.build();
        let mut checked = 0;
        let mut commands: Vec<clap::Command> = root.get_subcommands().cloned().collect();
        commands.push(root.clone());
        for mut cmd in commands {
            let name = cmd.get_name().to_string();
            for (flag, shown) in shown_defaults(&mut cmd) {
                checked += 1;
                match real_default(&flag) {
                    Some(real) => assert_eq!(
                        shown, real,
                        "`{name} --help` shows {flag} [default: {shown}]"
                    ),
                    None => assert!(
                        OWN_DEFAULTS.contains(&flag.as_str()),
                        "`{name} --help` shows {flag} [default: {shown}]: say in this test where its real default is"
                    ),
                }
            }
        }
        assert!(checked > 30, "the help was read: {checked} defaults");
        let demo = Cli::try_parse_from(["linkrunner", "demo"]).expect("demo parses");
        assert_eq!(
            demo.global.database_url, None,
            "no default shown, none taken"
        );
        assert_eq!(demo.global.database_url(), global::DEFAULT_DATABASE_URL);
    }
}
