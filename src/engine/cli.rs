//! `linkrunner plan`, `once`, `status`, `resolve` and `migrate`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::campaign::{self, LoadReport};
use crate::cli::GlobalArgs;
use crate::clock::{self, SharedClock};
use crate::market::MarketClient;
use crate::metrics::Metrics;
use crate::store::{Resolution, Store};

use super::plan::{plan_campaign, plan_removed};
use super::recorded::Recorded;
use super::report::{campaign_status, render_plan, render_status};
use super::{Engine, EngineSettings};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Engine tunables, shared by `once` and `run`.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// Seconds a donor search may stay pending before the round gives up on it.
    #[arg(long, env = "LINKRUNNER_SEARCH_DEADLINE", default_value_t = 900)]
    pub search_deadline: u64,
    /// Milliseconds before the first poll of a search result (doubled after each pending answer).
    #[arg(long, env = "LINKRUNNER_POLL_INITIAL_MS", default_value_t = 2000)]
    pub poll_initial_ms: u64,
    /// Upper bound of the poll interval, in milliseconds.
    #[arg(long, env = "LINKRUNNER_POLL_MAX_MS", default_value_t = 30000)]
    pub poll_max_ms: u64,
    /// Seconds after an uncertain purchase before its absence from the link list means "not bought".
    #[arg(long, env = "LINKRUNNER_SETTLE_GRACE", default_value_t = 120)]
    pub settle_grace: u64,
    /// Seconds a campaign lease lasts without renewal.
    #[arg(long, env = "LINKRUNNER_LEASE_TTL", default_value_t = 120)]
    pub lease_ttl: u64,
    /// Campaigns reconciled at once.
    #[arg(long, env = "LINKRUNNER_CAMPAIGN_CONCURRENCY", default_value_t = 8)]
    pub campaign_concurrency: usize,
}

impl EngineArgs {
    pub fn settings(&self) -> EngineSettings {
        EngineSettings {
            lease_ttl: chrono::Duration::seconds(self.lease_ttl.max(5) as i64),
            search_deadline: chrono::Duration::seconds(self.search_deadline as i64),
            poll_initial: std::time::Duration::from_millis(self.poll_initial_ms),
            poll_max: std::time::Duration::from_millis(self.poll_max_ms.max(self.poll_initial_ms)),
            settle_grace: chrono::Duration::seconds(self.settle_grace as i64),
            max_attempts: 3,
            campaign_concurrency: self.campaign_concurrency.max(1),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Only these campaigns (default: all). Not named `campaigns`: that id is the global
    /// `--campaigns` directory, and clap panics when one id has two types.
    #[arg(value_name = "CAMPAIGN")]
    pub only: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Clone, Args)]
pub struct OnceArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    /// One campaign (default: all recorded).
    pub campaign: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("evidence").required(true).args(["created", "not_created"])))]
pub struct ResolveArgs {
    /// The uncertain intent's id (from `linkrunner status`).
    pub intent: i64,
    /// It happened: the id the marketplace gave it (autobuyer id, link id, ...).
    #[arg(long, value_name = "REMOTE_ID")]
    pub created: Option<i64>,
    /// It did not happen: its money is released and the step may run again.
    #[arg(long)]
    pub not_created: bool,
    /// Why you know: recorded in the journal with the time.
    #[arg(long)]
    pub reason: String,
}

pub async fn open_store(g: &GlobalArgs, metrics: &Arc<Metrics>) -> anyhow::Result<Store> {
    let mut store = Store::connect(&g.database_url)
        .await
        .context("opening the journal database")?;
    store
        .migrate()
        .await
        .context("migrating the journal database")?;
    store.set_metrics(metrics.clone());
    Ok(store)
}

fn load_campaigns(g: &GlobalArgs) -> LoadReport {
    let report = campaign::load_dir(&g.campaigns);
    for p in &report.problems {
        eprintln!("{p}");
    }
    report
}

pub async fn plan(g: &GlobalArgs, a: &PlanArgs) -> anyhow::Result<ExitCode> {
    let metrics = Arc::new(Metrics::new());
    let store = open_store(g, &metrics).await?;
    let loaded = load_campaigns(g);
    let now = clock::system().now();
    let wanted = |n: &str| a.only.is_empty() || a.only.iter().any(|c| c == n);
    let known = store.campaign_names().await?;
    let mut plans = Vec::new();
    for lc in loaded.campaigns.iter().filter(|l| wanted(&l.campaign.name)) {
        let c = &lc.campaign;
        let r = Recorded::load_or_new(&store, c, now.date_naive()).await?;
        plans.push(plan_campaign(c, &r, c.buy.is_some()));
    }
    for name in known {
        if wanted(&name) && !loaded.campaigns.iter().any(|l| l.campaign.name == name) {
            let r = Recorded::load(&store, &name, now.date_naive()).await?;
            plans.push(plan_removed(&name, &r));
        }
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&plans)?),
        Format::Text => plans.iter().for_each(|p| print!("{}", render_plan(p))),
    }
    if !loaded.problems.is_empty() {
        return Ok(ExitCode::from(1));
    }
    Ok(if plans.iter().any(|p| p.has_changes()) {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Builds an engine over the real marketplace client.
pub async fn engine(
    g: &GlobalArgs,
    settings: EngineSettings,
    clock: SharedClock,
    metrics: Arc<Metrics>,
) -> anyhow::Result<Engine<MarketClient>> {
    let store = open_store(g, &metrics).await?;
    let config = g
        .api
        .client_config()
        .context("marketplace client settings")?;
    let market =
        MarketClient::new(config, metrics.clone()).context("building the marketplace client")?;
    Ok(Engine::new(
        Arc::new(market),
        store,
        clock,
        metrics,
        settings,
    ))
}

pub async fn once(g: &GlobalArgs, a: &OnceArgs) -> anyhow::Result<ExitCode> {
    let loaded = load_campaigns(g);
    let e = engine(
        g,
        a.engine.settings(),
        clock::system(),
        Arc::new(Metrics::new()),
    )
    .await?;
    let stop = e.cancel.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    let reports = e.pass(&loaded.campaigns, true).await?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => {
            for r in &reports {
                let detail = r
                    .detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                println!(
                    "{}: {} (bought {}, uncertain {}){detail}",
                    r.campaign, r.outcome, r.bought, r.uncertain
                );
            }
        }
    }
    let ok = loaded.problems.is_empty() && reports.iter().all(|r| r.converged());
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub async fn status(g: &GlobalArgs, a: &StatusArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(g, &Arc::new(Metrics::new())).await?;
    let names = match &a.campaign {
        Some(c) => vec![c.clone()],
        None => store.campaign_names().await?,
    };
    let now = clock::system().now();
    let mut all = Vec::new();
    for n in &names {
        all.push(campaign_status(&store, n, now).await?);
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&all)?),
        Format::Text => all.iter().for_each(|s| print!("{}", render_status(s))),
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn resolve(g: &GlobalArgs, a: &ResolveArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(g, &Arc::new(Metrics::new())).await?;
    let resolution = match a.created {
        Some(remote_id) => Resolution::Created { remote_id },
        None => Resolution::NotCreated,
    };
    let now = clock::system().now();
    let row = store
        .resolve_intent(crate::store::IntentId(a.intent), resolution, &a.reason, now)
        .await
        .context("resolving the intent")?;
    let still = Recorded::load(&store, &row.campaign, now.date_naive()).await?;
    if !still
        .uncertain
        .iter()
        .any(|i| i.kind == crate::store::IntentKind::CreateAutobuyer)
    {
        store.clear_halt(&row.campaign).await?;
    }
    println!(
        "intent #{} ({}) of campaign {} is now {}",
        row.id,
        row.kind.as_str(),
        row.campaign,
        row.state.as_str()
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn migrate(g: &GlobalArgs) -> anyhow::Result<ExitCode> {
    open_store(g, &Arc::new(Metrics::new())).await?;
    println!("journal database is migrated");
    Ok(ExitCode::SUCCESS)
}
