//! `linkrunner plan`: what the next pass would do, and the money; changes nothing.
//! Exit 0: nothing pending; 2: changes pending; 1: a campaign file has a problem.

use std::process::ExitCode;

use clap::Args;

use super::global::GlobalArgs;
use super::shared::{load_campaigns, open_store};
use super::state_from::fetch_state;
use crate::clock;
use crate::engine::plan::{plan_campaign, plan_removed};
use crate::engine::report::render_plan;
use crate::engine::review::render_markdown;
use crate::engine::state::StateSource;

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Only these campaigns (default: all). Not named `campaigns`: that id is the global
    /// `--campaigns` directory, and clap panics when one id has two types.
    #[arg(value_name = "CAMPAIGN")]
    pub only: Vec<String>,
    /// `markdown`: the plan as a pull-request comment (see `deploy/ci/`).
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
    /// Plan against the recorded state a daemon serves (`http://DAEMON:9464`) instead of
    /// opening the journal database (for review jobs without database access).
    #[arg(long, value_name = "URL")]
    pub state_from: Option<String>,
}

/// `plan --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum PlanFormat {
    #[default]
    Text,
    Json,
    Markdown,
}

pub async fn plan(g: &GlobalArgs, a: &PlanArgs) -> anyhow::Result<ExitCode> {
    let source = match &a.state_from {
        Some(url) => StateSource::Served(fetch_state(url).await?),
        None => StateSource::Journal(open_store(g).await?),
    };
    let loaded = load_campaigns(g);
    let now = clock::system().now();
    let wanted = |n: &str| a.only.is_empty() || a.only.iter().any(|c| c == n);
    let known = source.campaign_names().await?;
    let mut plans = Vec::new();
    for lc in loaded.campaigns.iter().filter(|l| wanted(&l.campaign.name)) {
        let c = &lc.campaign;
        let r = source.load_or_new(c, now).await?;
        plans.push(plan_campaign(c, &r, c.buy.is_some()));
    }
    for name in known {
        if wanted(&name) && !loaded.campaigns.iter().any(|l| l.campaign.name == name) {
            let r = source.load(&name, now).await?;
            plans.push(plan_removed(&name, &r));
        }
    }
    match a.format {
        PlanFormat::Json => println!("{}", serde_json::to_string_pretty(&plans)?),
        PlanFormat::Text => plans.iter().for_each(|p| print!("{}", render_plan(p))),
        PlanFormat::Markdown => {
            let problems: Vec<String> = loaded.problems.iter().map(|d| d.to_string()).collect();
            print!("{}", render_markdown(&plans, &problems));
        }
    }
    if !loaded.problems.is_empty() {
        return Ok(ExitCode::from(1));
    }
    Ok(if plans.iter().any(|p| p.has_changes()) {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
