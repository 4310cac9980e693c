//! `linkrunner halt` and `linkrunner resume`: the stop button (issue 33). `halt` records an
//! operator's halt in the journal — who, when, why — and every process that shares the
//! journal stops spending before its next spending call and stops its running autobuyers at
//! its next reconciliation; reads, settling and stops go on. Only `resume` lifts it: no
//! credential recovery or `resolve` does. Both are kept in the journal's history of halts.
//! `--account ID` halts or resumes one marketplace account's spending alone (issue 34); without
//! it, every account's.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::global::GlobalArgs;
use super::shared::open_store;
use crate::store::HaltScope;
use linkrunner_domain::clock;

#[derive(Debug, Clone, Args)]
pub(crate) struct HaltArgs {
    /// Why: recorded in the journal with the time, shown by `status`, `/readyz` and the page.
    #[arg(long)]
    reason: String,
    /// Who presses it, recorded with the reason (default: the `USER` of this shell).
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    /// Halt (or resume) this marketplace account's spending alone; the other accounts keep
    /// buying. Without it, `halt` stops every account and `resume` lifts the halt of every
    /// account and each account's.
    #[arg(long, value_name = "ID")]
    account: Option<String>,
}

/// `linkrunner resume`'s arguments: `halt`'s, and the scope.
#[derive(Debug, Clone, Args)]
pub(crate) struct ResumeArgs {
    #[command(flatten)]
    halt: HaltArgs,
    /// Lift the halt of this campaign alone (the anomaly brake's); without it (and without
    /// `--account`), the halt of every account and each account's are lifted and campaigns'
    /// halts stay.
    #[arg(long, value_name = "NAME")]
    campaign: Option<String>,
}

/// `linkrunner halt`: all spending stops (of one account with `--account`), on every replica.
pub(crate) async fn halt(g: &GlobalArgs, a: &HaltArgs) -> anyhow::Result<ExitCode> {
    let (by, reason) = who_and_why(a)?;
    let scope = account_scope(a)?;
    let store = open_store(g).await?;
    store
        .operator_halt_scope(&scope, &by, &reason, clock::system().now())
        .await
        .context("recording the halt")?;
    println!(
        "{} halted by {by}: {reason}\n\
         every linkrunner on this journal stops buying for it at its next spending call and stops \
         its running autobuyers at its next reconciliation; `linkrunner resume{} --reason …` lifts it",
        spending_of(&scope),
        scope.resume_flags()
    );
    Ok(ExitCode::SUCCESS)
}

/// `linkrunner resume`: lifts the operator's halt; the autobuyers it stopped that the files
/// still want running start again at the next reconciliation.
pub(crate) async fn resume(g: &GlobalArgs, a: &ResumeArgs) -> anyhow::Result<ExitCode> {
    let (by, reason) = who_and_why(&a.halt)?;
    let scope = match &a.campaign {
        Some(_) if a.halt.account.is_some() => {
            anyhow::bail!("--campaign and --account: resume one of them at a time")
        }
        Some(name) => HaltScope::campaign(name),
        None => account_scope(&a.halt)?,
    };
    let store = open_store(g).await?;
    let now = clock::system().now();
    let lifted = match scope {
        HaltScope::Global => store
            .operator_resume_accounts(&by, &reason, now)
            .await
            .context("recording the resume")?,
        _ => store
            .operator_resume_scope(&scope, &by, &reason, now)
            .await
            .context("recording the resume")?
            .then(|| scope.clone())
            .into_iter()
            .collect(),
    };
    match lifted.is_empty() {
        false => println!(
            "halt lifted by {by} ({}): {reason}\n\
             spending resumes; autobuyers the files want running start again at the next reconciliation",
            lifted
                .iter()
                .map(scope_words)
                .collect::<Vec<_>>()
                .join("; ")
        ),
        true => println!(
            "no operator's halt of {} was in force: nothing changed",
            scope_words(&scope)
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn scope_words(scope: &HaltScope) -> String {
    match scope {
        HaltScope::Global => "every account".to_string(),
        HaltScope::Account(a) => format!("account `{a}`"),
        HaltScope::Campaign(c) => format!("campaign `{c}`"),
    }
}

/// What a halt of `scope` stops, as the confirmation says it.
fn spending_of(scope: &HaltScope) -> String {
    match scope {
        HaltScope::Account(a) => format!("all spending of account `{a}`"),
        _ => "all spending".to_string(),
    }
}

/// `--account ID` (spelt as account ids are) or, without it, every account.
fn account_scope(a: &HaltArgs) -> anyhow::Result<HaltScope> {
    match a.account.as_deref().map(str::trim) {
        None => Ok(HaltScope::Global),
        Some(id) if linkrunner_domain::account::valid_id(id) => Ok(HaltScope::account(id)),
        Some(id) => anyhow::bail!(
            "--account `{id}` is not an account id: lowercase letters, digits and `-`, as in the accounts file"
        ),
    }
}

/// `--by` (else `$USER`, else `$LOGNAME`) and `--reason`, neither blank.
fn who_and_why(a: &HaltArgs) -> anyhow::Result<(String, String)> {
    let by =
        a.by.clone()
            .or_else(|| std::env::var("USER").ok())
            .or_else(|| std::env::var("LOGNAME").ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .context("say who you are: --by NAME (no USER in the environment)")?;
    let reason = a.reason.trim().to_string();
    anyhow::ensure!(!reason.is_empty(), "say why: --reason must not be blank");
    Ok((by, reason))
}
