//! `linkrunner status`: per campaign, what the journal holds.

use std::process::ExitCode;

use clap::Args;

use super::global::GlobalArgs;
use super::shared::{Format, open_store_recorded};
use crate::clock;
use crate::views::report::{campaign_status, render_status};

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    /// One campaign (default: all recorded).
    pub campaign: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub async fn status(g: &GlobalArgs, a: &StatusArgs) -> anyhow::Result<ExitCode> {
    let store = open_store_recorded(g).await?;
    let names = match &a.campaign {
        Some(c) => vec![c.clone()],
        None => store.campaigns().campaign_names().await?,
    };
    let now = clock::system().now();
    let mut all = Vec::new();
    for n in &names {
        all.push(campaign_status(&store, n, now).await?);
    }
    match a.format {
        Format::Json => super::shared::print_json(&all)?,
        Format::Text => {
            // From this command's own settings (the daemon's, when they share an environment
            // file); no secret is read. The journal holds no credentials to ask.
            let mode = g.api.credentials_mode(&|name| std::env::var_os(name));
            println!("marketplace credentials: {}", mode.describe());
            let account = store.campaigns().account_budget().await?;
            if let Some(cap) = account.cap {
                println!(
                    "account: every campaign together commits {} of the account cap of {cap} RUB/month",
                    account.committed
                );
            }
            all.iter()
                .for_each(|s| super::shared::print_text(&render_status(s)))
        }
    }
    Ok(ExitCode::SUCCESS)
}
