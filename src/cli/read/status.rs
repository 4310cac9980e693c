//! `linkrunner status`: per campaign, what the journal holds.

use std::process::ExitCode;

use clap::Args;

use crate::campaign;
use crate::cli::global::GlobalArgs;
use crate::cli::shared::{Format, open_store_recorded};
use crate::views::overview::FileFacts;
use crate::views::report::{campaign_status_with, campaign_statuses, render_status};
use linkrunner_domain::clock;

#[derive(Debug, Clone, Args)]
pub(crate) struct StatusArgs {
    /// One campaign (default: all recorded).
    campaign: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub(crate) async fn status(g: &GlobalArgs, a: &StatusArgs) -> anyhow::Result<ExitCode> {
    let store = open_store_recorded(g).await?;
    let (files, read) = read_files(&g.campaigns);
    let now = clock::system().now();
    let all = match &a.campaign {
        Some(c) => vec![campaign_status_with(&store, c, now, &files).await?],
        None => {
            let names = store.campaigns().campaign_names().await?;
            campaign_statuses(&store, &names, now, &files).await?
        }
    };
    match a.format {
        Format::Json => crate::cli::shared::print_json(&all)?,
        Format::Text => {
            // From this command's own settings (the daemon's, when they share an environment
            // file); no secret is read. The journal holds no credentials to ask.
            let mode = g.api.credentials_mode(&|name| std::env::var_os(name));
            println!("marketplace credentials: {}", mode.describe());
            if let Some(h) = store
                .halts()
                .await?
                .iter()
                .find(|h| h.is_operator() && h.is_global())
            {
                println!("ALL SPENDING STOPPED: {}", h.describe());
            }
            print_halt_history(&store).await?;
            let account = store
                .campaigns()
                .account_budget(linkrunner_domain::account::DEFAULT_ACCOUNT)
                .await?;
            if let Some(cap) = account.cap {
                println!(
                    "account: every campaign together commits {} of the account cap of {cap} RUB/month",
                    account.committed
                );
            }
            println!("campaign files: {read}");
            let removals = store.campaigns().removals().await?;
            if let Some(line) = held_removals_line(&removals) {
                println!("{line}");
            }
            all.iter()
                .for_each(|s| crate::cli::shared::print_text(&render_status(s)))
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The last halts and resumes, newest first, so an operator sees later who pressed what.
async fn print_halt_history(store: &crate::store::Store) -> anyhow::Result<()> {
    let events = store.halt_events(HALT_HISTORY).await?;
    if events.is_empty() {
        return Ok(());
    }
    println!("halts and resumes (newest first):");
    for e in events {
        println!(
            "  {} {} by {}: {}",
            e.at.format("%Y-%m-%d %H:%M:%S UTC"),
            e.action,
            e.by,
            e.reason
        );
    }
    Ok(())
}

/// How many halts and resumes `status` lists.
const HALT_HISTORY: u32 = 5;

/// What the campaign directory says (paused, removed), as the daemon reading it knows, and
/// a line saying how far it could be read. A directory that is missing or has a rejected
/// file leaves those campaigns' `paused` unknown rather than guessed.
fn read_files(dir: &std::path::Path) -> (FileFacts, String) {
    if !dir.is_dir() {
        let why = format!("{} is not a directory: paused unknown", dir.display());
        return (FileFacts::unknown(), why);
    }
    let report = campaign::load_dir(dir);
    let paused = report
        .campaigns
        .iter()
        .map(|lc| (lc.campaign.name.clone(), lc.campaign.paused))
        .collect();
    let line = match report.problems.len() {
        0 => format!("{} read", dir.display()),
        n => format!(
            "{} read with {n} problem(s) (`linkrunner validate`): a campaign without a valid file shows paused unknown",
            dir.display()
        ),
    };
    (FileFacts::read(paused, report.is_clean()), line)
}

/// The journal's held removals (issue 32) in one line, if any are held.
fn held_removals_line(rows: &[crate::store::RemovalRow]) -> Option<String> {
    let held: Vec<&crate::store::RemovalRow> = rows
        .iter()
        .filter(|r| r.state == crate::store::RemovalState::Held)
        .collect();
    let since = held.iter().map(|r| r.seen_at).min()?;
    let names: Vec<&str> = held.iter().map(|r| r.campaign.as_str()).collect();
    Some(format!(
        "removals held: {} campaign file(s) gone since {} together with many others ({}): nothing of them is stopped until the files return or `linkrunner resolve removals --reason …`",
        held.len(),
        since.format("%Y-%m-%d %H:%M:%S UTC"),
        names.join(", ")
    ))
}
