//! `linkrunner once`: one full pass over every campaign now (schedules ignored), then exit.
//! Exit codes: 0 converged, 1 a problem, 3 stalled ([`STALLED`]), 4 stopped by a signal
//! ([`INTERRUPTED`]); a second signal exits at once with 143 (SIGTERM) or 130 (SIGINT).

use std::process::ExitCode;

use std::sync::atomic::Ordering;

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;

use super::global::GlobalArgs;
use super::shared::{EngineArgs, Format, load_campaigns};
use crate::app::{App, AppSettings, Journal};
use crate::daemon::signals::StopSignals;
use crate::effects::pass::{CampaignReport, PassOutcome};

#[derive(Debug, Clone, Args)]
pub struct OnceArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub async fn once(g: &GlobalArgs, a: &OnceArgs) -> anyhow::Result<ExitCode> {
    // First, so that no SIGTERM or SIGINT kills the pass half-way by default.
    let signals = StopSignals::install().context("installing the SIGTERM/SIGINT handlers")?;
    let signalled = signals.received();
    let stop = CancellationToken::new();
    signals.spawn(
        stop.clone(),
        "stopping: no new call is sent; the call in flight finishes and is recorded, the leases are released",
    );
    let loaded = load_campaigns(g);
    let market = g
        .api
        .client_config()
        .context("marketplace client settings")?;
    let mut settings = AppSettings::new(Journal::Url(g.database_url.clone()), market);
    settings.engine = a.engine.settings();
    let e = tokio::select! {
        app = App::build(settings) => app?.into_engine(),
        _ = stop.cancelled() => return Ok(ExitCode::from(INTERRUPTED)),
    };
    let cancel = e.cancel_token().clone();
    a.engine
        .apply_account_cap(e.store(), e.clock().now())
        .await?;
    tokio::spawn(async move {
        stop.cancelled().await;
        cancel.cancel();
    });
    e.metrics()
        .campaign_file_invalid
        .set(loaded.invalid.len() as i64);
    let reports = e
        .pass_holding(&loaded.campaigns, true, &loaded.invalid)
        .await?;
    match a.format {
        Format::Json => super::shared::print_json(&reports)?,
        Format::Text => {
            if let Some(d) = e.reach().down() {
                println!(
                    "marketplace_unreachable since {}: {}",
                    d.since.format("%Y-%m-%d %H:%M:%S UTC"),
                    d.error
                );
            }
            for r in &reports {
                let detail = r
                    .detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                let reason = r.reason.map(|x| format!(" [{x}]")).unwrap_or_default();
                let line = format!(
                    "{}: {}{reason} (bought {}, uncertain {}){detail}",
                    r.campaign, r.outcome, r.bought, r.uncertain
                );
                println!("{}", crate::domain::shown::line(&line));
            }
        }
    }
    if signalled.load(Ordering::SeqCst) != 0 {
        eprintln!(
            "linkrunner once: stopped by a signal before the pass completed; what was sent is recorded, the next `once` resumes"
        );
        return Ok(ExitCode::from(INTERRUPTED));
    }
    Ok(exit_code(loaded.problems.is_empty(), &reports))
}

/// 0: every campaign converged. 3: every campaign converged or stalled, and at least one
/// stalled (an operator must act; each stalled line names its reason). 1: anything else — a
/// campaign blocked, stopped or failed, or an invalid campaign file (its campaign is held
/// as recorded: `file_invalid`).
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

/// `once`'s exit code after a SIGTERM or SIGINT stopped it cleanly: no call was started after
/// the signal, the one in flight finished and is recorded, the leases are released; the next
/// `once` resumes. A second signal exits at once with 128 + its number (143, 130).
pub const INTERRUPTED: u8 = 4;
