//! `linkrunner demo`: the sandbox marketplace, an embedded database and the daemon with its
//! HTTP endpoint, in one process, on the example campaigns. Buy rounds run every
//! `--round-every` seconds instead of on the campaigns' schedules, so progress shows at once.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::global::GlobalArgs;
use super::ranges;
use crate::app::{self, App, AppSettings, Journal};
use crate::daemon::run::{DaemonOptions, Event};
use crate::effects::EngineSettings;
use linkrunner_sandbox::{SandboxConfig, SandboxHandle};

#[derive(Debug, Clone, Args)]
pub(crate) struct DemoArgs {
    /// Address of the daemon's HTTP endpoint.
    #[arg(long, default_value = "127.0.0.1:9464")]
    listen: std::net::SocketAddr,
    /// Seconds between buy rounds (the campaigns' own schedules are ignored in the demo).
    #[arg(long, default_value_t = 15, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    round_every: u64,
    /// Stop after this many rounds per active buying campaign (0: run until Ctrl-C).
    #[arg(long, default_value_t = 0, value_parser = ranges::u32_in(0..=1_000_000))]
    rounds: u32,
}

/// The demo's own journal when `--database-url` is left at its default.
pub(crate) const DEMO_DATABASE: &str = "sqlite://linkrunner-demo.db";

/// The demo never writes into the real journal by default: without `--database-url` it
/// uses a file of its own.
fn demo_database(g: &GlobalArgs) -> String {
    g.database_url
        .clone()
        .unwrap_or_else(|| DEMO_DATABASE.into())
}

/// The demo's marketplace starts empty on every run, so the journal of an earlier run names
/// projects and autobuyers it does not have: the default demo file is started afresh (it is
/// the demo's alone), and a journal given with `--database-url` must not hold campaigns yet.
fn start_afresh(db: &str) -> anyhow::Result<()> {
    if db != DEMO_DATABASE {
        return Ok(());
    }
    let file = db.trim_start_matches("sqlite://");
    let mut removed = false;
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let path = format!("{file}{suffix}");
        match std::fs::remove_file(&path) {
            Ok(()) => removed = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the last demo's {path}")),
        }
    }
    if removed {
        println!(
            "(the last demo's journal {file} was replaced: the demo's marketplace starts empty on every run)"
        );
    }
    Ok(())
}

/// Refuses a journal given with `--database-url` that already holds campaigns.
async fn refuse_used_journal(app: &App, db: &str) -> anyhow::Result<()> {
    let known = app.engine().store().campaigns().campaign_names().await?;
    if db != DEMO_DATABASE && !known.is_empty() {
        anyhow::bail!(
            "the journal {db} already holds {} campaign(s); the demo's marketplace starts empty, so \
             the demo needs a journal of its own: leave --database-url out (the demo then uses \
             {DEMO_DATABASE}, started afresh on every run) or give an empty one",
            known.len()
        );
    }
    Ok(())
}

pub(crate) async fn demo(g: &GlobalArgs, a: &DemoArgs) -> anyhow::Result<ExitCode> {
    let token = format!("demo-token-{}", std::process::id());
    let ticket = format!("demo-ticket-{}", std::process::id());
    let sb_listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the sandbox port")?;
    let sandbox = Arc::new(
        linkrunner_sandbox::spawn(SandboxConfig::new(&token, &ticket), sb_listener)
            .await
            .context("starting the sandbox")?,
    );
    let db = demo_database(g);
    start_afresh(&db)?;
    let mut market = app::client_config(&sandbox.base_url(), &token, &ticket)?;
    // The client flags hold here as everywhere (`--help` shows their real defaults).
    g.api.apply_limits(&mut market)?;
    let mut settings = AppSettings::new(Journal::Url(db.clone()), market);
    settings.engine = EngineSettings {
        poll_initial: Duration::from_millis(300),
        poll_max: Duration::from_secs(2),
        settle_grace: chrono::Duration::seconds(5),
        ..EngineSettings::default()
    };
    settings.daemon = DaemonOptions {
        campaigns_dir: g.campaigns.clone(),
        reconcile_interval: Duration::from_secs(300),
        shutdown_grace: Duration::from_secs(30),
        round_every: Some(Duration::from_secs(a.round_every.max(1))),
        watch: true,
        signals: true,
        anomaly_multiple: crate::daemon::run::DEFAULT_ANOMALY_MULTIPLE,
    };
    let app = App::build(settings).await?;
    refuse_used_journal(&app, &db).await?;
    let listener = TcpListener::bind(a.listen).await.with_context(|| {
        format!(
            "binding {} (is another linkrunner running? try --listen 127.0.0.1:0)",
            a.listen
        )
    })?;
    let http = listener.local_addr()?;
    print_banner(&sandbox, &db, http, g);
    let shutdown = CancellationToken::new();
    let (tx, rx) = mpsc::unbounded_channel();
    let loaded = crate::campaign::load_dir(&g.campaigns).campaigns;
    let buying: Vec<String> = loaded
        .iter()
        .filter(|c| c.campaign.buy.is_some() && !c.campaign.paused)
        .map(|c| c.campaign.name.clone())
        .collect();
    let stop = StopAfter {
        rounds: a.rounds,
        campaigns: buying,
        shutdown: shutdown.clone(),
    };
    let progress = tokio::spawn(show_progress(rx, sandbox.clone(), stop));
    app.run_until_stopped(listener, shutdown, Some(tx)).await?;
    progress.abort();
    let l = sandbox.ledger();
    println!(
        "demo stopped. sandbox ledger: {} purchase(s), {} duplicate(s), spend {} RUB",
        l.purchases.len(),
        l.duplicate_purchases,
        l.spend
    );
    if let Ok(sandbox) = Arc::try_unwrap(sandbox) {
        sandbox.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_banner(sandbox: &SandboxHandle, db: &str, http: std::net::SocketAddr, g: &GlobalArgs) {
    println!("linkrunner demo");
    println!("  sandbox marketplace: {}", sandbox.base_url());
    println!("  campaigns:           {}", g.campaigns.display());
    println!("  journal:             {db}");
    println!(
        "  look at:             http://{http}/   (the status page: every campaign, the month's picture)"
    );
    println!("                       http://{http}/metrics");
    println!("                       http://{http}/api/v1/campaigns");
    println!("                       http://{http}/readyz");
    println!("                       linkrunner --database-url {db} status");
    println!("  stop with Ctrl-C");
}

/// When the demo stops by itself: every active buying campaign has had `rounds` rounds.
struct StopAfter {
    rounds: u32,
    campaigns: Vec<String>,
    shutdown: CancellationToken,
}

impl StopAfter {
    fn reached(&self, seen: &BTreeMap<String, u32>) -> bool {
        let done = |c: &String| seen.get(c).copied().unwrap_or(0) >= self.rounds;
        self.rounds > 0 && self.campaigns.iter().all(done)
    }
}

async fn show_progress(
    mut rx: mpsc::UnboundedReceiver<Event>,
    sandbox: Arc<SandboxHandle>,
    stop: StopAfter,
) {
    let mut rounds: BTreeMap<String, u32> = BTreeMap::new();
    while let Some(ev) = rx.recv().await {
        match ev {
            Event::Reloaded(s) => println!(
                "loaded {} campaign(s); {} problem(s)",
                s.loaded,
                s.problems.len()
            ),
            Event::Reconciled(reports) => {
                for r in reports {
                    println!(
                        "reconciled {}: {} ({})",
                        r.campaign,
                        r.outcome,
                        r.done.join("; ")
                    );
                }
            }
            Event::Round { report, .. } if !stop.campaigns.contains(&report.campaign) => {}
            Event::Round { slot, report } => {
                let n = rounds.entry(report.campaign.clone()).or_default();
                *n += 1;
                let l = sandbox.ledger();
                println!(
                    "round {} of {} at {}: {}, bought {} link(s); sandbox ledger: {} purchase(s), {} duplicate(s), spend {} RUB",
                    n,
                    report.campaign,
                    slot.format("%H:%M:%S"),
                    report.outcome,
                    report.bought,
                    l.purchases.len(),
                    l.duplicate_purchases,
                    l.spend
                );
                if stop.reached(&rounds) {
                    stop.shutdown.cancel();
                }
            }
        }
    }
}
