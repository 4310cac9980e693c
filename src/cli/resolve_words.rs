//! `linkrunner resolve adopt CAMPAIGN`, `linkrunner resolve list-complete CAMPAIGN` (issue 24)
//! and `linkrunner resolve approve CAMPAIGN` (issue 33): an operator's word, recorded in the
//! journal with who gave it, when and why.
//!
//! - `adopt`: the operator read the plan that shows what the adopted project holds; changes
//!   on it (buying, creating, stopping, starting) may begin.
//! - `approve` (issue 33): the monthly cap the campaign's file asks, past its approval
//!   threshold, is approved; spending may go up to it.
//! - `list-complete --links N`: the project's link list shows every link, N of them (counted
//!   in the marketplace's web UI): buying resumes on URLs where others buy. It lapses by itself
//!   when a later read shows fewer than N plus the links linkrunner bought since that the list
//!   could already show (`decide::adoption::word_lapses`: links bought within the settle grace
//!   do not count, so a list that lags behind purchases does not lapse it).
//! - `removals` (issue 32): the campaign files that vanished together really were removed:
//!   the held removals proceed (their autobuyers stop), on every replica and after a restart.

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use super::global::GlobalArgs;
use super::shared::open_store;
use crate::decide::recorded::Recorded;
use crate::store::Store;
use linkrunner_domain::account::DEFAULT_ACCOUNT;
use linkrunner_domain::clock;

#[derive(Debug, Clone, Subcommand)]
pub(crate) enum ResolveWord {
    /// Let changes begin on the project (and autobuyers) the campaign adopts, after reading
    /// the plan that shows what it holds.
    Adopt(WordArgs),
    /// Say that the campaign's link list shows every link, `--links N` of them: buying
    /// resumes on URLs where others buy, until a read shows fewer than N (plus what linkrunner
    /// bought since that the list could already show).
    ListComplete(ListCompleteArgs),
    /// Approve the monthly cap the campaign's file asks past its approval threshold (issue
    /// 33): spending may then go up to it. `--account` approves the account file's cap.
    Approve(ApproveArgs),
    /// Let the held removals proceed: the campaign files that vanished together (see
    /// `linkrunner status`) really were removed; their campaigns stop spending.
    Removals(RemovalsArgs),
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ApproveArgs {
    /// The campaign's name (or `--account`).
    #[arg(required_unless_present = "account", conflicts_with = "account")]
    campaign: Option<String>,
    /// Approve an account's cap the accounts file asks past its `approve_above`: `--account`
    /// alone is the default account (the command line's), `--account ID` one of the file's.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = DEFAULT_ACCOUNT)]
    account: Option<String>,
    /// Why you know: recorded in the journal with the time and who gave it.
    #[arg(long)]
    reason: String,
    /// Who gives the word (default: the `USER` of this shell).
    #[arg(long, value_name = "WHO")]
    by: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct RemovalsArgs {
    /// Why you know: recorded in the journal with the time and who gave it.
    #[arg(long)]
    reason: String,
    /// Who gives the word (default: the `USER` of this shell).
    #[arg(long, value_name = "WHO")]
    by: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct WordArgs {
    /// The campaign's name.
    campaign: String,
    /// Why you know: recorded in the journal with the time and who gave it.
    #[arg(long)]
    reason: String,
    /// Who gives the word (default: the `USER` of this shell).
    #[arg(long, value_name = "WHO")]
    by: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ListCompleteArgs {
    #[command(flatten)]
    word: WordArgs,
    /// How many links you counted in the project's list in the marketplace's web UI (every
    /// page). The word lapses when a read shows fewer (plus what linkrunner bought since).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32))]
    links: u32,
}

impl WordArgs {
    fn who(&self) -> String {
        who(self.by.as_deref())
    }
}

/// `--by`, else the shell's `USER`.
fn who(by: Option<&str>) -> String {
    by.map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .filter(|w| !w.trim().is_empty())
        .unwrap_or_else(|| "unknown operator".into())
}

pub(crate) async fn resolve_word(g: &GlobalArgs, w: &ResolveWord) -> anyhow::Result<()> {
    let store = open_store(g).await?;
    match w {
        ResolveWord::Adopt(a) => adopt(&store, a).await,
        ResolveWord::ListComplete(a) => list_complete(&store, a).await,
        ResolveWord::Removals(a) => removals(&store, a).await,
        ResolveWord::Approve(a) => approve(&store, a).await,
    }
}

async fn removals(store: &Store, a: &RemovalsArgs) -> anyhow::Result<()> {
    let now = clock::system().now();
    let who = who(a.by.as_deref());
    let names = store
        .campaigns()
        .resolve_removals(&who, &a.reason, now)
        .await
        .context("recording the word on the held removals")?;
    if names.is_empty() {
        println!("no removal is held: nothing to let proceed");
        return Ok(());
    }
    println!(
        "{} removal(s) proceed (recorded: by {who}, {now}): {}; each campaign is reconciled as removed (nothing new bought, its autobuyers stopped)",
        names.len(),
        names.join(", ")
    );
    Ok(())
}

async fn adopt(store: &Store, a: &WordArgs) -> anyhow::Result<()> {
    let now = clock::system().now();
    let truth = store
        .campaigns()
        .account_truth(&a.campaign)
        .await
        .context("reading the campaign's adoption")?;
    let Some(adoption) = truth.adoption else {
        bail!(
            "campaign {} has adopted no project yet: its file needs `project_id`, and the daemon (or `linkrunner once`) \
             records the adoption and reads the link list first; then read `linkrunner plan` and run this again",
            a.campaign
        );
    };
    if adoption.first_read_at.is_none() {
        bail!(
            "the link list of project {} has not been read yet: wait for a pass, read `linkrunner plan`, then run this again",
            adoption.project_id
        );
    }
    let who = a.who();
    if !store
        .campaigns()
        .confirm_adoption(&a.campaign, &who, &a.reason, now)
        .await?
    {
        println!(
            "campaign {}: the adoption of project {} was already confirmed",
            a.campaign, adoption.project_id
        );
        return Ok(());
    }
    println!(
        "campaign {}: changes on project {} may begin (recorded: by {who}, {now})",
        a.campaign, adoption.project_id
    );
    Ok(())
}

/// Approves what the file asks, as the last pass recorded it; the next pass records the cap.
async fn approve(store: &Store, a: &ApproveArgs) -> anyhow::Result<()> {
    let Some(campaign) = a.campaign.clone() else {
        let account = a.account.as_deref().unwrap_or(DEFAULT_ACCOUNT);
        return approve_account(store, account, a).await;
    };
    let a = &WordArgs {
        campaign,
        reason: a.reason.clone(),
        by: a.by.clone(),
    };
    let now = clock::system().now();
    let before = store
        .campaigns()
        .approval(&a.campaign)
        .await
        .context("reading the campaign's approval")?;
    let who = a.who();
    let Some(after) = store
        .campaigns()
        .approve(&a.campaign, &who, &a.reason, now)
        .await?
    else {
        bail!(
            "campaign {} has no approval threshold in the journal: its file sets none, or no pass has recorded it yet \
             (the daemon, or `linkrunner once`, records it)",
            a.campaign
        );
    };
    let was = before.map_or(after.approved, |b| b.approved);
    println!(
        "campaign {}: a monthly commitment of {} RUB is approved (was {was} RUB; recorded: by {who}, {now}); \
         the next pass records the cap",
        a.campaign, after.approved
    );
    Ok(())
}

/// `resolve approve --account [ID]`: the cap of `account` the accounts file asks becomes the
/// approved amount and the cap every reservation of that account's campaigns checks.
async fn approve_account(store: &Store, account: &str, a: &ApproveArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        linkrunner_domain::account::valid_id(account),
        "`{}` is not an account id (1 to 63 lowercase letters, digits or `-`)",
        linkrunner_domain::shown::line(account)
    );
    let now = clock::system().now();
    let before = store
        .campaigns()
        .account_approval(account)
        .await
        .context("reading the account's approval")?;
    let who = who(a.by.as_deref());
    let Some(after) = store
        .campaigns()
        .approve_account(account, &who, &a.reason, now)
        .await?
    else {
        bail!(
            "account {account} has no approval threshold in the journal: the accounts file sets no `approve_above` for it, \
             or no `run`/`once` has applied it yet"
        );
    };
    let was = before.map_or(after.approved, |b| b.approved);
    println!(
        "account {account}: a monthly cap of {} RUB is approved and in force (was {was} RUB; recorded: by {who}, {now})",
        after.approved
    );
    Ok(())
}

async fn list_complete(store: &Store, a: &ListCompleteArgs) -> anyhow::Result<()> {
    let now = clock::system().now();
    let w = &a.word;
    let r = Recorded::load(store, &w.campaign, now.date_naive())
        .await
        .with_context(|| format!("reading campaign {}", w.campaign))?;
    if r.ids.project.is_none() {
        bail!("campaign {} has no project yet", w.campaign);
    }
    let who = w.who();
    store
        .campaigns()
        .vouch_list_complete(&w.campaign, a.links, (&who, &w.reason), now)
        .await?;
    let last = r
        .ids
        .account
        .last_read_links
        .map_or(String::new(), |n| format!(" (its last read showed {n})"));
    println!(
        "campaign {}: its link list is taken as complete with {} link(s){last} (by {who}, {now}) until a read \
         shows fewer than {} plus the links linkrunner buys from now on once the list could show them",
        w.campaign, a.links, a.links
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("linkrunner").chain(args.iter().copied()))
    }

    /// The word of `linkrunner resolve …` as `args` parse (they must).
    fn word(args: &[&str]) -> Option<super::ResolveWord> {
        let Command::Resolve(a) = parse(args).unwrap().command else {
            panic!("not resolve")
        };
        a.word
    }

    #[test]
    fn resolve_adopt_names_the_campaign_and_the_reason() {
        match word(&[
            "resolve",
            "adopt",
            "acme",
            "--reason",
            "read the plan",
            "--by",
            "ann",
        ]) {
            Some(super::ResolveWord::Adopt(w)) => {
                assert_eq!(
                    (w.campaign.as_str(), w.reason.as_str()),
                    ("acme", "read the plan")
                );
                assert_eq!(w.who(), "ann");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn resolve_removals_needs_a_reason_and_names_who() {
        assert!(parse(&["resolve", "removals"]).is_err());
        match word(&["resolve", "removals", "--reason", "retired", "--by", "ann"]) {
            Some(super::ResolveWord::Removals(r)) => {
                assert_eq!(r.reason, "retired");
                assert_eq!(super::who(r.by.as_deref()), "ann");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn resolve_approve_names_a_campaign_or_the_account_never_both() {
        assert!(parse(&["resolve", "approve", "--reason", "r"]).is_err());
        assert!(parse(&["resolve", "approve", "acme", "--account", "--reason", "r"]).is_err());
        for (args, campaign, account) in [
            (
                &["resolve", "approve", "acme", "--reason", "r"][..],
                Some("acme"),
                None,
            ),
            (
                &["resolve", "approve", "--account", "--reason", "r"][..],
                None,
                Some("default"),
            ),
            (
                &["resolve", "approve", "--reason", "r", "--account"][..],
                None,
                Some("default"),
            ),
            (
                &[
                    "resolve",
                    "approve",
                    "--account",
                    "client-a",
                    "--reason",
                    "r",
                ][..],
                None,
                Some("client-a"),
            ),
        ] {
            match word(args) {
                Some(super::ResolveWord::Approve(w)) => {
                    assert_eq!(
                        (w.campaign.as_deref(), w.account.as_deref()),
                        (campaign, account)
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn resolve_list_complete_needs_a_reason_and_the_count_seen_and_the_intent_form_still_parses() {
        assert!(parse(&["resolve", "list-complete", "acme"]).is_err());
        assert!(
            parse(&["resolve", "list-complete", "acme", "--reason", "UI shows 7"]).is_err(),
            "the count the operator saw is required"
        );
        match word(&[
            "resolve",
            "list-complete",
            "acme",
            "--links",
            "7",
            "--reason",
            "UI shows 7",
        ]) {
            Some(super::ResolveWord::ListComplete(l)) => {
                assert_eq!((l.word.campaign.as_str(), l.links), ("acme", 7));
            }
            other => panic!("{other:?}"),
        }
        assert!(parse(&["resolve", "12", "--not-created", "--reason", "r"]).is_ok());
        assert!(parse(&["resolve", "12", "--not-created"]).is_err());
    }
}
