//! `linkrunner sandbox`: serve the sandbox marketplace until SIGINT or SIGTERM. The first
//! line of stdout is the base URL, so a script can start it on port 0 and read where it is.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use super::ranges;
use linkrunner_domain::money::Money;
use linkrunner_sandbox::{Faults, SandboxAuth, SandboxConfig, SandboxLogin, Shape};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AuthArg {
    Bearer,
    Raw,
    Either,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct SandboxArgs {
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8480")]
    listen: SocketAddr,
    #[command(flatten)]
    secrets: Box<SecretArgs>,
    /// Path prefix before /rest/..., e.g. /api.
    #[arg(long, default_value = "")]
    prefix: String,
    /// Accepted Authorization forms. (Not `--auth-scheme`: that global flag is the client's.)
    #[arg(long, value_enum, default_value = "bearer")]
    sandbox_auth_scheme: AuthArg,
    /// Seeds the donor inventory and the fault sequence.
    #[arg(long, default_value_t = 1, value_parser = ranges::u64_in(0..=u64::MAX))]
    seed: u64,
    #[command(flatten)]
    faults: Box<FaultArgs>,
    #[command(flatten)]
    behaviour: Box<super::sandbox_behaviour::BehaviourArgs>,
    /// Polls answered "pending" before a search is ready.
    #[arg(long, default_value_t = 2, value_parser = ranges::u32_in(0..=1000))]
    ready_after_polls: u32,
    /// Milliseconds a search stays pending at least.
    #[arg(long, default_value_t = 0, value_parser = ranges::u64_in(0..=ranges::HOUR_MS))]
    ready_after_ms: u64,
    /// Donors in one search result.
    #[arg(long, default_value_t = 10, value_parser = ranges::usize_in(0..=10_000))]
    donors_per_search: usize,
    /// Give each donor of a search its own forceSeoWait and mosSites.
    #[arg(long)]
    vary_technical_values: bool,
    /// Create autobuyers running instead of stopped.
    #[arg(long)]
    autobuyers_start_running: bool,
    /// Starting balance of the default account (the one of --token and --ticket), in rubles.
    #[arg(long, default_value = "1000000", value_parser = ranges::rubles)]
    balance: Money,
    /// YAML list of accounts served beside the default one, each with its own token and
    /// ticket files, balance and rate limit (`id`, `token_file`, `ticket_file`, `balance`,
    /// `rate_limit`).
    #[arg(long)]
    accounts_file: Option<PathBuf>,
    /// Answer shapes, e.g. `results=grouped,pending=http404,price=nested,ids=named,
    /// buy=result_ids,links=data_items,texts=nested_objects,errors=http`.
    #[arg(long, default_value = "")]
    shape: Shape,
}

/// Token and ticket: a flag, a file or the environment. Never printed.
#[derive(Debug, Clone, Args)]
pub(crate) struct SecretArgs {
    /// The access token clients must send (else --token-file, else $LINKRUNNER_SANDBOX_TOKEN).
    #[arg(long, env = "LINKRUNNER_SANDBOX_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// File holding the token (wins over --token and the environment).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// The AUTH_TICKET cookie clients must send (else --ticket-file, else $LINKRUNNER_SANDBOX_TICKET).
    #[arg(long, env = "LINKRUNNER_SANDBOX_TICKET", hide_env_values = true)]
    ticket: Option<String>,
    /// File holding the ticket (wins over --ticket and the environment).
    #[arg(long)]
    ticket_file: Option<PathBuf>,
    /// Seconds a token is valid: the configured one from start, each issued one from its
    /// issue (401 "token expired" after). Default: tokens never expire.
    #[arg(long, value_parser = ranges::u64_in(1..=ranges::DAY_SECS * 365))]
    token_ttl: Option<u64>,
    /// Enables POST /login and GET /auth for this account name (with --sandbox-api-key-file).
    /// (Not `--login`: that global flag is the client's.)
    #[arg(long, requires = "sandbox_api_key_file")]
    sandbox_login: Option<String>,
    /// File holding the account's API key (the `apiToken` of POST /login).
    #[arg(long, requires = "sandbox_login")]
    sandbox_api_key_file: Option<PathBuf>,
}

/// Faults the sandbox starts with (changeable later through `POST {prefix}/__sandbox/faults`).
#[derive(Debug, Clone, Args)]
pub(crate) struct FaultArgs {
    /// Delay added to every call, in milliseconds.
    #[arg(long, default_value_t = 0, value_parser = ranges::u64_in(0..=ranges::HOUR_MS))]
    latency_ms: u64,
    /// Up to this many more milliseconds per call, drawn uniformly (a marketplace whose
    /// latency varies).
    #[arg(long, default_value_t = 0)]
    latency_jitter_ms: u64,
    /// Requests per second of the default account; beyond it, 429 with Retry-After: 1
    /// (each account of --accounts-file has its own `rate_limit`).
    /// (Not `--rate-limit`: that global flag is the client's own limiter.)
    #[arg(long, value_parser = ranges::u32_in(1..=1_000_000))]
    sandbox_rate_limit: Option<u32>,
    /// Chance (0..1) of a 5xx before a call executes.
    #[arg(long, default_value_t = 0.0, value_parser = ranges::probability)]
    error_rate: f64,
    /// Chance (0..1) that an executed change is answered with a body cut short.
    #[arg(long, default_value_t = 0.0, value_parser = ranges::probability)]
    drop_rate: f64,
    /// Chance (0..1) that an answer to a read (search result, link list) is whole at the
    /// HTTP level but its JSON is cut in half.
    #[arg(long, default_value_t = 0.0, value_parser = ranges::probability)]
    truncate_rate: f64,
}

fn secret(value: Option<String>, file: Option<PathBuf>, what: &str) -> anyhow::Result<String> {
    let text = match (file, value) {
        (Some(path), _) => std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read the sandbox {what} from {}", path.display()))?,
        (None, Some(v)) => v,
        (None, None) => anyhow::bail!(
            "the sandbox needs a {what}: --{what}, --{what}-file or $LINKRUNNER_SANDBOX_{}",
            what.to_uppercase()
        ),
    };
    let text = text.trim().to_string();
    anyhow::ensure!(!text.is_empty(), "the sandbox {what} is empty");
    Ok(text)
}

impl SandboxArgs {
    pub(crate) fn config(&self) -> anyhow::Result<SandboxConfig> {
        let token = secret(
            self.secrets.token.clone(),
            self.secrets.token_file.clone(),
            "token",
        )?;
        let ticket = secret(
            self.secrets.ticket.clone(),
            self.secrets.ticket_file.clone(),
            "ticket",
        )?;
        let mut cfg = SandboxConfig::new(token, ticket);
        cfg.token_ttl = self.secrets.token_ttl.map(Duration::from_secs);
        if let (Some(login), Some(file)) = (
            &self.secrets.sandbox_login,
            &self.secrets.sandbox_api_key_file,
        ) {
            let key = secret(None, Some(file.clone()), "API key")?;
            cfg.login = Some(SandboxLogin::new(login.clone(), key));
        }
        cfg.auth_scheme = match self.sandbox_auth_scheme {
            AuthArg::Bearer => SandboxAuth::Bearer,
            AuthArg::Raw => SandboxAuth::Raw,
            AuthArg::Either => SandboxAuth::Either,
        };
        cfg.prefix = self.prefix.clone();
        cfg.seed = self.seed;
        cfg.search_ready_after_polls = self.ready_after_polls;
        cfg.search_ready_after = Duration::from_millis(self.ready_after_ms);
        cfg.donors_per_search = self.donors_per_search;
        cfg.vary_technical_values = self.vary_technical_values;
        cfg.autobuyers_start_running = self.autobuyers_start_running;
        cfg.initial_balance = self.balance;
        cfg.shape = self.shape;
        let f = &self.faults;
        cfg.faults = Faults {
            error_rate: f.error_rate,
            latency_ms: f.latency_ms,
            latency_jitter_ms: f.latency_jitter_ms,
            rate_limit: f.sandbox_rate_limit,
            drop_after_commit_rate: f.drop_rate,
            truncate_rate: f.truncate_rate,
            ..Faults::default()
        };
        self.behaviour.apply(&mut cfg);
        if let Some(path) = &self.accounts_file {
            let accounts = super::sandbox_accounts::load_accounts_file(path)
                .map_err(|e| anyhow::anyhow!("--accounts-file {e}"))?;
            cfg = accounts.into_iter().fold(cfg, SandboxConfig::with_account);
        }
        Ok(cfg)
    }
}

pub(crate) async fn sandbox(args: SandboxArgs) -> anyhow::Result<()> {
    let cfg = args.config()?;
    let handle = linkrunner_sandbox::start(cfg, args.listen).await?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", handle.base_url()).context("cannot write the base URL to stdout")?;
    out.flush().context("cannot flush stdout")?;
    drop(out);
    tracing::info!(base_url = %handle.base_url(), "sandbox marketplace serving");
    wait_for_signal().await?;
    tracing::info!("sandbox marketplace stopping");
    handle.shutdown().await;
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("cannot listen for SIGINT"),
        _ = term.recv() => Ok(()),
    }
}
