//! `linkrunner status`: per campaign, what the journal holds.

use std::process::ExitCode;

use clap::Args;

use crate::campaign;
use crate::cli::global::GlobalArgs;
use crate::cli::shared::{Format, open_store_recorded};
use crate::store::{Halt, HaltScope};
use crate::views::accounts::by_account;
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
            for line in wide_halt_lines(&store.halts().await?) {
                println!("{line}");
            }
            print_halt_history(&store).await?;
            let groups = by_account(&all, |s| s.account_id.as_str());
            if groups.len() == 1 {
                print_account_cap(&store, &groups[0].0, false).await?;
            }
            println!("campaign files: {read}");
            let removals = store.campaigns().removals().await?;
            if let Some(line) = held_removals_line(&removals) {
                println!("{line}");
            }
            for (account, statuses) in &groups {
                if groups.len() > 1 {
                    println!("account {account}: {} campaigns", statuses.len());
                    print_account_cap(&store, account, true).await?;
                }
                statuses
                    .iter()
                    .for_each(|s| crate::cli::shared::print_text(&render_status(s)));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The account's cap line, when the account has a cap; `several`: one of several accounts.
async fn print_account_cap(
    store: &crate::store::Store,
    account: &str,
    several: bool,
) -> anyhow::Result<()> {
    let budget = store.campaigns().account_budget(account).await?;
    match (budget.cap, several) {
        (Some(cap), false) => println!(
            "account: every campaign together commits {} of the account cap of {cap} RUB/month",
            budget.committed
        ),
        (Some(cap), true) => println!(
            "account {account}: its campaigns together commit {} of its cap of {cap} RUB/month",
            budget.committed
        ),
        (None, _) => {}
    }
    Ok(())
}

/// The last halts and resumes, newest first, so an operator sees later who pressed what.
async fn print_halt_history(store: &crate::store::Store) -> anyhow::Result<()> {
    let events = store.halt_events(HALT_HISTORY).await?;
    if events.is_empty() {
        return Ok(());
    }
    println!("halts and resumes (newest first):");
    for e in events {
        // Every account's halt says no scope, as before accounts; another names its scope.
        let scope = match e.scope {
            HaltScope::Global => String::new(),
            ref s => format!(" of {}", s.describe()),
        };
        println!(
            "  {} {}{scope} by {}: {}",
            e.at.format("%Y-%m-%d %H:%M:%S UTC"),
            e.action,
            e.by,
            e.reason
        );
    }
    Ok(())
}

/// The lines of the halts that stop more than a campaign: an operator's halt of every
/// account (`ALL SPENDING STOPPED`), then each account's halt, an operator's or its rejected
/// credentials (`ACCOUNT ID: ALL ITS SPENDING STOPPED`); the other accounts keep buying.
fn wide_halt_lines(halts: &[Halt]) -> Vec<String> {
    let every = halts
        .iter()
        .filter(|h| h.is_operator() && h.is_global())
        .map(|h| format!("ALL SPENDING STOPPED: {}", h.describe()));
    let accounts = halts.iter().filter_map(|h| match &h.scope {
        HaltScope::Account(a) => Some(format!(
            "ACCOUNT {a}: ALL ITS SPENDING STOPPED: {}",
            h.describe()
        )),
        _ => None,
    });
    every.chain(accounts).collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::HaltKind;

    #[test]
    fn each_halted_account_has_its_line_after_the_halt_of_every_account() {
        let now = chrono::Utc::now();
        let operator = |scope: HaltScope| Halt {
            kind: HaltKind::Operator,
            by: Some("alice".into()),
            ..Halt::automatic(scope, "audit", now)
        };
        let halts = [
            operator(HaltScope::Global),
            Halt::automatic(
                HaltScope::account("b"),
                "credentials rejected during x",
                now,
            ),
            operator(HaltScope::account("c")),
            Halt::automatic(HaltScope::campaign("shoes"), "waiting", now),
        ];
        let lines = wide_halt_lines(&halts);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("ALL SPENDING STOPPED: halted by alice"));
        assert_eq!(
            lines[1],
            "ACCOUNT b: ALL ITS SPENDING STOPPED: credentials rejected during x"
        );
        assert!(lines[2].contains("`linkrunner resume --account c` lifts it"));
    }
}
