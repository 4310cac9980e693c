//! `linkrunner once`: one full pass over every campaign now (schedules ignored), then exit.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::global::GlobalArgs;
use super::shared::{EngineArgs, Format, load_campaigns};
use crate::app::{App, AppSettings, Journal};
use crate::effects::pass::{CampaignReport, PassOutcome};

#[derive(Debug, Clone, Args)]
pub struct OnceArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub async fn once(g: &GlobalArgs, a: &OnceArgs) -> anyhow::Result<ExitCode> {
    let loaded = load_campaigns(g);
    let market = g
        .api
        .client_config()
        .context("marketplace client settings")?;
    let mut settings = AppSettings::new(Journal::Url(g.database_url.clone()), market);
    settings.engine = a.engine.settings();
    let e = App::build(settings).await?.into_engine();
    let stop = e.cancel_token().clone();
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
                let reason = r.reason.map(|x| format!(" [{x}]")).unwrap_or_default();
                println!(
                    "{}: {}{reason} (bought {}, uncertain {}){detail}",
                    r.campaign, r.outcome, r.bought, r.uncertain
                );
            }
        }
    }
    Ok(exit_code(loaded.problems.is_empty(), &reports))
}

/// 0: every campaign converged. 3: every campaign converged or stalled, and at least one
/// stalled (an operator must act; each stalled line names its reason). 1: anything else — a
/// campaign blocked, stopped or failed, or an invalid campaign file.
fn exit_code(files_valid: bool, reports: &[CampaignReport]) -> ExitCode {
    let ok_or_stalled = reports
        .iter()
        .all(|r| matches!(r.outcome, PassOutcome::Converged | PassOutcome::Stalled));
    if !files_valid || !ok_or_stalled {
        ExitCode::from(1)
    } else if reports.iter().any(|r| r.outcome == PassOutcome::Stalled) {
        ExitCode::from(STALLED)
    } else {
        ExitCode::SUCCESS
    }
}

/// `once`'s exit code when a campaign stalled (and nothing worse happened).
pub const STALLED: u8 = 3;
