//! `linkrunner halt` and `linkrunner resume`: the stop button (issue 33). `halt` records an
//! operator's halt in the journal — who, when, why — and every process that shares the
//! journal stops spending before its next spending call and stops its running autobuyers at
//! its next reconciliation; reads, settling and stops go on. Only `resume` lifts it: no
//! credential recovery or `resolve` does. Both are kept in the journal's history of halts.

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
}

/// `linkrunner resume`'s arguments: `halt`'s, and the scope.
#[derive(Debug, Clone, Args)]
pub(crate) struct ResumeArgs {
    #[command(flatten)]
    halt: HaltArgs,
    /// Lift the halt of this campaign alone (the anomaly brake's); without it, the
    /// account-wide halt is lifted and campaigns' halts stay.
    #[arg(long, value_name = "NAME")]
    campaign: Option<String>,
}

/// `linkrunner halt`: all spending stops, on every replica.
pub(crate) async fn halt(g: &GlobalArgs, a: &HaltArgs) -> anyhow::Result<ExitCode> {
    let (by, reason) = who_and_why(a)?;
    let store = open_store(g).await?;
    store
        .operator_halt(&by, &reason, clock::system().now())
        .await
        .context("recording the halt")?;
    println!(
        "all spending halted by {by}: {reason}\n\
         every linkrunner on this journal stops buying at its next spending call and stops its \
         running autobuyers at its next reconciliation; `linkrunner resume --reason …` lifts it"
    );
    Ok(ExitCode::SUCCESS)
}

/// `linkrunner resume`: lifts the operator's halt; the autobuyers it stopped that the files
/// still want running start again at the next reconciliation.
pub(crate) async fn resume(g: &GlobalArgs, a: &ResumeArgs) -> anyhow::Result<ExitCode> {
    let (by, reason) = who_and_why(&a.halt)?;
    let store = open_store(g).await?;
    let scope = match &a.campaign {
        Some(name) => HaltScope::campaign(name),
        None => HaltScope::Global,
    };
    let lifted = store
        .operator_resume_scope(&scope, &by, &reason, clock::system().now())
        .await
        .context("recording the resume")?;
    match lifted {
        true => println!(
            "halt lifted by {by}: {reason}\n\
             spending resumes; autobuyers the files want running start again at the next reconciliation"
        ),
        false => println!(
            "no operator's halt of {} was in force: nothing changed",
            scope_words(&scope)
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn scope_words(scope: &HaltScope) -> String {
    match scope {
        HaltScope::Global => "the account".to_string(),
        HaltScope::Campaign(c) => format!("campaign `{c}`"),
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
