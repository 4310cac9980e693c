//! `linkrunner run`: the daemon, with the engine's and the daemon's flags.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::global::GlobalArgs;
use super::ranges;
use super::shared::{EngineArgs, spending_settings};
use crate::app::App;
use crate::daemon::run::{DEFAULT_ANOMALY_MULTIPLE, DaemonOptions};

#[derive(Debug, Clone, Args)]
pub(crate) struct RunArgs {
    /// Address of the HTTP endpoint (health, readiness, metrics, status API).
    #[arg(long, env = "LINKRUNNER_LISTEN", default_value = "127.0.0.1:9464")]
    listen: SocketAddr,
    /// Seconds between reconciliations of every campaign (no buying).
    #[arg(long, env = "LINKRUNNER_RECONCILE_INTERVAL", default_value_t = 300, value_parser = ranges::u64_in(5..=ranges::DAY_SECS))]
    reconcile_interval: u64,
    /// Seconds to let in-flight steps finish after SIGTERM.
    #[arg(long, env = "LINKRUNNER_SHUTDOWN_GRACE", default_value_t = 60, value_parser = ranges::u64_in(0..=3600))]
    shutdown_grace: u64,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    http: super::http_args::HttpArgs,
    /// Buy rounds every this many seconds instead of on the campaigns' schedules, with slots
    /// at multiples of it and no baseline slot. For tests of the binary (signals, replicas),
    /// which cannot wait for minute-granular cron slots.
    #[arg(long, env = "LINKRUNNER_ROUND_EVERY", hide = true, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    round_every: Option<u64>,
    /// A YAML (or JSON) file of webhooks to notify of what a person must act on (halts,
    /// campaigns waiting for an operator, caps reached, uncertain intents); read at start.
    /// Its addresses are secrets: keep the file like a credential.
    #[arg(long, env = "LINKRUNNER_NOTIFY_FILE")]
    notify_file: Option<std::path::PathBuf>,
    /// The anomaly brake: halt a campaign (or the account) whose commitment or appearing
    /// links over the last hour or 24 h run above this multiple of what its schedules and
    /// autobuyers' budgets explain, until `linkrunner resume` (0: off).
    #[arg(long, env = "LINKRUNNER_ANOMALY_MULTIPLE", default_value_t = DEFAULT_ANOMALY_MULTIPLE, value_parser = anomaly_multiple)]
    anomaly_multiple: f64,
}

/// `--anomaly-multiple`: 0 (off), or from 1 to 1000.
pub(crate) fn anomaly_multiple(s: &str) -> Result<f64, String> {
    let m: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    match m == 0.0 || (1.0..=1000.0).contains(&m) {
        true => Ok(m),
        false => Err(format!("{m} is neither 0 (off) nor from 1 to 1000")),
    }
}

/// `linkrunner run`.
pub(crate) async fn run(g: &GlobalArgs, a: &RunArgs) -> anyhow::Result<ExitCode> {
    let mut settings = spending_settings(g, &a.engine)?;
    settings.daemon = DaemonOptions {
        campaigns_dir: g.campaigns.clone(),
        reconcile_interval: Duration::from_secs(a.reconcile_interval.max(5)),
        shutdown_grace: Duration::from_secs(a.shutdown_grace),
        round_every: a.round_every.map(|s| Duration::from_secs(s.max(1))),
        watch: true,
        signals: true,
        anomaly_multiple: a.anomaly_multiple,
    };
    settings.http = a.http.options()?;
    settings.notify = match &a.notify_file {
        Some(path) => Some(crate::notify::load_notify_file(path).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let app = App::build(settings).await?;
    a.engine
        .apply_account_cap(g, app.engine().store(), app.engine().clock().now())
        .await?;
    let listener = TcpListener::bind(a.listen)
        .await
        .with_context(|| format!("binding --listen {}", a.listen))?;
    let probe = match a.http.probe_listen {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding --probe-listen {addr}"))?,
        ),
        None => None,
    };
    let probe_addr = probe.as_ref().and_then(|p| p.local_addr().ok());
    tracing::info!(listen = %listener.local_addr()?, probe_listen = ?probe_addr, campaigns = %g.campaigns.display(), "linkrunner daemon starting");
    app.run_with_probe(listener, probe, CancellationToken::new(), None)
        .await?;
    tracing::info!("linkrunner daemon stopped");
    Ok(ExitCode::SUCCESS)
}
