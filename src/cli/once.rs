//! `linkrunner once`: one full pass over every campaign now (schedules ignored), then exit.
//! Progress on stderr while it works, then one line per campaign and a totals table
//! ([`progress`]); `--format json` prints the reports as JSON instead of lines and totals.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::global::GlobalArgs;
use super::progress;
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
    let mut settings = AppSettings::new(Journal::Url(g.database_url().to_string()), market);
    settings.engine = a.engine.settings();
    let e = App::build(settings).await?.into_engine();
    let stop = e.cancel.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let shown = tokio::spawn(progress::show(rx, e.metrics.clone()));
    let reports = e.pass_reporting(&loaded.campaigns, true, &tx).await;
    drop(tx);
    let _ = shown.await;
    let reports = reports?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => {
            for r in &reports {
                println!("{}", progress::report_line(r));
            }
            print!(
                "{}",
                progress::totals(&reports, money_totals(&e, &reports).await)
            );
        }
    }
    Ok(exit_code(loaded.problems.is_empty(), &reports))
}

/// The commitment, caps and uncertain money the journal holds after the pass (`None` when it
/// cannot be read: the totals then leave the line out rather than show a wrong 0).
async fn money_totals<M: crate::market::Market>(
    e: &crate::effects::Engine<M>,
    reports: &[CampaignReport],
) -> Option<progress::MoneyTotals> {
    let names: Vec<String> = reports.iter().map(|r| r.campaign.clone()).collect();
    let state = crate::views::state::read_state_of(&e.store, &names, e.clock.now())
        .await
        .ok()?;
    let sum = |f: fn(&crate::decide::recorded::Recorded) -> crate::money::Money| {
        state
            .campaigns
            .values()
            .fold(crate::money::Money::ZERO, |a, r| {
                a.checked_add(f(r)).unwrap_or(crate::money::Money::MAX)
            })
    };
    Some(progress::MoneyTotals {
        committed: sum(|r| r.budget.committed),
        caps: sum(|r| r.budget.cap),
        uncertain: sum(|r| r.budget.uncertain),
    })
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
