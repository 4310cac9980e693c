//! `linkrunner import --project-id N --domain URL`: reads the project's link list (operation
//! 6, the only read the API offers) and writes a campaign file that adopts the project, for the
//! team to review ([`crate::views::import`]). It buys, creates and changes nothing on the
//! marketplace, and never touches the journal.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use super::global::GlobalArgs;
use crate::decide::listing::is_leaving;
use crate::market::Market;
use crate::metrics::Metrics;
use crate::views::import::{ImportInput, campaign_file};
use linkrunner_domain::market::LinkRecord;
use linkrunner_domain::money::Money;

#[derive(Debug, Clone, Args)]
pub(crate) struct ImportArgs {
    /// The project's id, as the marketplace's UI shows it.
    #[arg(long)]
    project_id: i64,
    /// The project's domain (absolute http(s) URL), e.g. https://acme.example.
    #[arg(long)]
    domain: String,
    /// The campaign's name; default: the domain's host with `-` for dots.
    #[arg(long)]
    name: Option<String>,
    /// RUB a held link counts when the list shows no rent for it; default: the highest rent
    /// the list shows (required when it shows none).
    #[arg(long)]
    unknown_link_rent: Option<Money>,
    /// The account of the accounts file (--account-file) the project is in: read through its
    /// client, and the file names it (`account: ID`). Default: the command line's account.
    #[arg(long, value_name = "ID")]
    account: Option<String>,
    /// Where to write the file (refused if it exists); default: standard output.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

pub(crate) async fn import(g: &GlobalArgs, a: &ImportArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(a.project_id > 0, "--project-id must be a positive id");
    let domain = domain_of(&a.domain)?;
    let name = match &a.name {
        Some(n) => n.clone(),
        None => name_from(&domain),
    };
    crate::campaign::check_name(&name).map_err(anyhow::Error::msg)?;
    let market = super::accounts::client_config_of(g, a.account.as_deref())?;
    let client = crate::app::market_client(market, &Arc::new(Metrics::new()))
        .context("building the marketplace client")?;
    let list = client
        .list_links(a.project_id)
        .await
        .with_context(|| format!("reading the link list of project {}", a.project_id))?;
    let (held, leaving): (Vec<LinkRecord>, Vec<LinkRecord>) = list
        .links
        .iter()
        .cloned()
        .partition(|l| !is_leaving(l.status.as_deref()));
    let input = ImportInput {
        name: &name,
        account: a
            .account
            .as_deref()
            .filter(|id| !linkrunner_domain::account::is_default(id)),
        domain: &domain,
        project_id: a.project_id,
        held: &held,
        leaving: leaving.len(),
        completeness: &list.completeness,
        unknown_link_rent: a.unknown_link_rent,
        generated_at: chrono::Utc::now(),
    };
    let text = campaign_file(&input)?;
    write_out(a.output.as_ref(), &text)?;
    eprintln!(
        "import: project {}: {} held link(s) written as a campaign file; review the placeholders before committing it",
        a.project_id,
        held.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// The domain as a campaign file writes it: scheme and host (and a non-default port).
fn domain_of(text: &str) -> anyhow::Result<String> {
    let u = url::Url::parse(text.trim()).with_context(|| format!("--domain `{text}`"))?;
    anyhow::ensure!(
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some(),
        "--domain `{text}` must be an absolute http(s) URL"
    );
    Ok(u.origin().ascii_serialization())
}

/// `https://www.Acme.example` → `www-acme-example`, cut to the 63 characters a name may have.
fn name_from(domain: &str) -> String {
    let host = url::Url::parse(domain)
        .ok()
        .and_then(|u| u.host_str().map(str::to_lowercase))
        .unwrap_or_default();
    let mut name: String = host
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    name.truncate(63);
    name.trim_matches('-').to_string()
}

fn write_out(path: Option<&PathBuf>, text: &str) -> anyhow::Result<()> {
    match path {
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .context("writing to standard output"),
        Some(p) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(p)
                .with_context(|| {
                    format!(
                        "creating {} (an existing file is never replaced)",
                        p.display()
                    )
                })?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.sync_all())
                .with_context(|| format!("writing {}", p.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_name_is_the_host_with_dashes() {
        assert_eq!(name_from("https://www.Acme.example"), "www-acme-example");
        assert_eq!(
            domain_of("https://Acme.example:443/shop").unwrap(),
            "https://acme.example"
        );
        assert!(domain_of("acme.example").is_err());
    }
}
