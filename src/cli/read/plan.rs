//! `linkrunner plan`: what the next pass would do, and the money; changes nothing.
//! Exit 0: nothing pending; 2: changes pending; 1: a campaign file has a problem; 5: with
//! `--fail-above AMOUNT --base REV`, the caps rise by more than AMOUNT against REV.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::state_from::fetch_state;
use crate::campaign::{Campaign, load_at_revision};
use crate::cli::global::GlobalArgs;
use crate::cli::shared::{load_campaigns, open_store_to_read};
use crate::decide::capacity::round_warnings;
use crate::decide::plan::CampaignPlan;
use crate::views::report::render_plans_by_account;
use crate::views::review::diff::diff_campaigns;
use crate::views::review::gate::FailAbove;
use crate::views::review::{Review, render_markdown, render_review};
use crate::views::state::{RecordedState, StateSource, plan_all};
use linkrunner_domain::clock;
use linkrunner_domain::money::Money;

#[derive(Debug, Clone, Args)]
pub(crate) struct PlanArgs {
    /// Only these campaigns (default: all). Not named `campaigns`: that id is the global
    /// `--campaigns` directory, and clap panics when one id has two types.
    #[arg(value_name = "CAMPAIGN")]
    pub(crate) only: Vec<String>,
    /// `markdown`: the plan as a pull-request comment (see `deploy/ci/`).
    #[arg(long, value_enum, default_value = "text")]
    format: PlanFormat,
    /// Plan against the recorded state a daemon serves (`http://DAEMON:9464`) instead of
    /// opening the journal database (for review jobs without database access).
    #[arg(long, value_name = "URL")]
    state_from: Option<String>,
    /// File holding the daemon's HTTP token (its `--http-token-file`), sent with
    /// `--state-from` as `Authorization: Bearer`.
    #[arg(long, value_name = "FILE", env = "LINKRUNNER_STATE_TOKEN_FILE")]
    state_token_file: Option<std::path::PathBuf>,
    /// With `--format markdown`: compare the campaign files with those of this git revision
    /// (a pull request's base, e.g. `origin/main`) and show only the campaigns that change,
    /// field by field with their money effect. Runs `git` in the campaigns directory.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// With `--base REV` (text or markdown): exit 5 when the campaign files' caps together
    /// rise by more than AMOUNT rubles a month against REV (the pull request's cost guard).
    #[arg(long, value_name = "AMOUNT", requires = "base", value_parser = crate::cli::ranges::rubles)]
    fail_above: Option<linkrunner_domain::money::Money>,
}

/// `plan --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub(crate) enum PlanFormat {
    #[default]
    Text,
    Json,
    Markdown,
}

pub(crate) async fn plan(g: &GlobalArgs, a: &PlanArgs) -> anyhow::Result<ExitCode> {
    if a.base.is_some() {
        match (a.format, a.fail_above) {
            (PlanFormat::Markdown, _) | (PlanFormat::Text, Some(_)) => {}
            (PlanFormat::Json, Some(_)) => anyhow::bail!(
                "--fail-above says its verdict in text or markdown: use it with --format text or markdown"
            ),
            _ => anyhow::bail!(
                "--base compares for a pull-request comment: use it with --format markdown (or text with --fail-above)"
            ),
        }
    }
    let source = match &a.state_from {
        Some(url) => StateSource::Served(fetch_state(url, a.state_token_file.as_deref()).await?),
        None => match open_store_to_read(g).await? {
            Some(store) => StateSource::Journal(store),
            // Nothing recorded yet: everything is planned as new, and nothing is created.
            None => StateSource::Served(RecordedState {
                at: clock::system().now(),
                global_halts: Vec::new(),
                campaigns: Default::default(),
            }),
        },
    };
    let loaded = load_campaigns(g)?;
    let now = clock::system().now();
    let wanted = |n: &str| a.only.is_empty() || a.only.iter().any(|c| c == n);
    let campaigns: Vec<_> = loaded.campaigns.iter().map(|l| &l.campaign).collect();
    let plans = plan_all(&source, &campaigns, &loaded.invalid, wanted, now).await?;
    // On stderr: the plan on stdout stays what `--format` says.
    for w in round_warnings(&campaigns, now, g.api.rate_limit) {
        eprintln!("warning: {w}");
    }
    let base = match &a.base {
        Some(rev) => Some(Base::read(g, rev, &campaigns, a.fail_above)?),
        None => None,
    };
    let gate = base.as_ref().and_then(|b| b.gate.as_ref());
    match a.format {
        PlanFormat::Json => crate::cli::shared::print_json(&plans)?,
        PlanFormat::Text => {
            crate::cli::shared::print_text(&render_plans_by_account(&plans, &campaigns));
            if let (Some(b), Some(f)) = (&base, gate) {
                println!("{}", f.sentence(&b.commit));
            }
        }
        PlanFormat::Markdown => {
            let problems: Vec<String> = loaded.problems.iter().map(|d| d.to_string()).collect();
            match &base {
                Some(b) => crate::cli::shared::print_text(&b.review(&plans, &problems, gate)),
                None => crate::cli::shared::print_text(&render_markdown(&plans, &problems)),
            }
        }
    }
    if !loaded.problems.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if gate.is_some_and(FailAbove::fails) {
        return Ok(ExitCode::from(5));
    }
    Ok(if plans.iter().any(|p| p.has_changes()) {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// The campaign files of `--base REV` against the working tree's `campaigns`.
struct Base {
    commit: String,
    diffs: Vec<crate::views::review::diff::CampaignDiff>,
    base_problems: usize,
    campaigns: usize,
    /// `--fail-above`: the caps' rise against the limit.
    gate: Option<FailAbove>,
}

impl Base {
    fn read(
        g: &GlobalArgs,
        rev: &str,
        campaigns: &[&Campaign],
        fail_above: Option<Money>,
    ) -> anyhow::Result<Base> {
        let base = load_at_revision(&g.campaigns, rev)
            .with_context(|| format!("reading the campaign files at {rev}"))?;
        let head: Vec<Campaign> = campaigns.iter().map(|c| (*c).clone()).collect();
        let diffs = diff_campaigns(&base.campaigns, &head);
        let gate = fail_above.map(|limit| FailAbove::of(&diffs, limit));
        Ok(Base {
            commit: base.commit,
            diffs,
            base_problems: base.problems.len(),
            campaigns: head.len(),
            gate,
        })
    }

    /// The pull-request comment.
    fn review(
        &self,
        plans: &[CampaignPlan],
        problems: &[String],
        fail_above: Option<&FailAbove>,
    ) -> String {
        render_review(&Review {
            base: &self.commit,
            diffs: &self.diffs,
            plans,
            problems,
            base_problems: self.base_problems,
            campaigns: self.campaigns,
            fail_above,
        })
    }
}
