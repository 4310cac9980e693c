//! `linkrunner once`: one full pass over every campaign now (schedules ignored), then exit.
//! Exit codes: 0 converged, 1 a problem, 3 stalled ([`STALLED`]), 4 stopped by a signal
//! ([`INTERRUPTED`]); a second signal exits at once with 143 (SIGTERM) or 130 (SIGINT).
//!
//! Progress on stderr while it works, then one line per campaign and a totals table
//! ([`progress`]); `--format json` prints the reports as JSON instead of lines and totals.

use std::process::ExitCode;

use std::sync::atomic::Ordering;

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;

use super::global::GlobalArgs;
use super::progress;
use super::shared::{EngineArgs, Format, load_campaigns, spending_settings};
use crate::app::App;
use crate::daemon::signals::StopSignals;
use crate::effects::pass::{CampaignReport, PassOutcome};

#[derive(Debug, Clone, Args)]
pub(crate) struct OnceArgs {
    #[command(flatten)]
    engine: EngineArgs,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub(crate) async fn once(g: &GlobalArgs, a: &OnceArgs) -> anyhow::Result<ExitCode> {
    // First, so that no SIGTERM or SIGINT kills the pass half-way by default.
    let signals = StopSignals::install().context("installing the SIGTERM/SIGINT handlers")?;
    let signalled = signals.received();
    let stop = CancellationToken::new();
    signals.spawn(
        stop.clone(),
        "stopping: no new call is sent; the call in flight finishes and is recorded, the leases are released",
    );
    let loaded = load_campaigns(g)?;
    let settings = spending_settings(g, &a.engine)?;
    let e = tokio::select! {
        app = App::build(settings) => app?.into_engine(),
        _ = stop.cancelled() => return Ok(ExitCode::from(INTERRUPTED)),
    };
    let cancel = e.cancel_token().clone();
    a.engine
        .apply_account_cap(g, e.store(), e.clock().now())
        .await?;
    tokio::spawn(async move {
        stop.cancelled().await;
        cancel.cancel();
    });
    e.metrics()
        .campaign_file_invalid
        .set(loaded.invalid.len() as i64);
    // Before anything is stopped: many files gone at once hold their removal.
    let mut invalid = loaded.invalid.clone();
    let names: Vec<&str> = loaded
        .campaigns
        .iter()
        .map(|c| c.campaign.name.as_str())
        .collect();
    let removals = e
        .judge_removals(&names, &mut invalid)
        .await
        .context("judging the removed campaign files")?;
    if let Some(why) = &removals.held {
        eprintln!("linkrunner once: {why}");
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let shown = tokio::spawn(progress::show(rx, e.metrics().clone()));
    let reports = e.pass_reporting(&loaded.campaigns, &invalid, &tx).await;
    drop(tx);
    let _ = shown.await;
    let reports = reports?;
    match a.format {
        Format::Json => super::shared::print_json(&reports)?,
        Format::Text => {
            if let Some(d) = e.reach().down() {
                println!(
                    "marketplace_unreachable since {}: {}",
                    d.since.format("%Y-%m-%d %H:%M:%S UTC"),
                    linkrunner_domain::shown::line(&d.error)
                );
            }
            for r in &reports {
                println!("{}", progress::report_line(r));
            }
            print!(
                "{}",
                progress::totals(&reports, money_totals(&e, &reports).await)
            );
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

/// The commitment, caps and uncertain money the journal holds after the pass (`None` when it
/// cannot be read: the totals then leave the line out rather than show a wrong 0).
async fn money_totals<M: crate::market::Market>(
    e: &crate::effects::Engine<M>,
    reports: &[CampaignReport],
) -> Option<progress::MoneyTotals> {
    let names: Vec<String> = reports.iter().map(|r| r.campaign.clone()).collect();
    let state = crate::views::state::read_state_of(e.store(), &names, e.clock().now())
        .await
        .ok()?;
    let sum = |f: fn(&crate::decide::recorded::Recorded) -> linkrunner_domain::money::Money| {
        state
            .campaigns
            .values()
            .fold(linkrunner_domain::money::Money::ZERO, |a, r| {
                a.checked_add(f(r))
                    .unwrap_or(linkrunner_domain::money::Money::MAX)
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
/// campaign blocked, stopped or failed, or an invalid campaign file (its campaign is held
/// as recorded: `file_invalid`), or a held removal (`removal_held`: many files gone at once).
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
pub(crate) const STALLED: u8 = 3;

/// `once`'s exit code after a SIGTERM or SIGINT stopped it cleanly: no call was started after
/// the signal, the one in flight finished and is recorded, the leases are released; the next
/// `once` resumes. A second signal exits at once with 128 + its number (143, 130).
pub const INTERRUPTED: u8 = 4;
