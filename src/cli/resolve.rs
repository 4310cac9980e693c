//! `linkrunner resolve`: an operator's word, recorded with the time and the reason —
//! settling an uncertain intent, letting a once-uncertain page be bought again, or
//! releasing a link that left the project.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::global::GlobalArgs;
use super::shared::open_store;
use crate::decide::recorded::Recorded;
use crate::store::{HaltScope, IntentId, IntentKind, IntentRow, LinkRef, Resolution, Store};
use linkrunner_domain::clock;

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("evidence").required(true)
    .args(["created", "not_created", "allow_rebuy", "release_link"]).multiple(true)))]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct ResolveArgs {
    /// An account already in use (issue 24): `adopt CAMPAIGN` or `list-complete CAMPAIGN`.
    #[command(subcommand)]
    pub(crate) word: Option<super::resolve_words::ResolveWord>,
    /// The intent's id (from `linkrunner status`).
    #[arg(required_unless_present = "release_link", value_parser = super::ranges::id())]
    intent: Option<i64>,
    /// It happened: the id the marketplace gave it (autobuyer id, link id, ...).
    #[arg(long, value_name = "REMOTE_ID", value_parser = super::ranges::id(), conflicts_with_all = ["not_created", "release_link"])]
    created: Option<i64>,
    /// It did not happen: its money is released. A purchase's page stays blocked from being
    /// bought again unless `--allow-rebuy` is given too.
    #[arg(long, conflicts_with = "release_link")]
    not_created: bool,
    /// A purchase that was once uncertain did not buy its page: the page may be bought again.
    #[arg(long, conflicts_with_all = ["created", "release_link"])]
    allow_rebuy: bool,
    /// A link left the project (cancelled, removed): its rent no longer counts. LINK is the
    /// marketplace's link id, or `intent:ID` for a link of ours the list never gave an id.
    #[arg(long, value_name = "LINK", requires = "campaign")]
    release_link: Option<String>,
    /// The campaign of `--release-link`.
    #[arg(long, value_name = "CAMPAIGN")]
    campaign: Option<String>,
    /// Why you know: recorded in the journal with the time.
    #[arg(long, required = true)]
    reason: Option<String>,
}

pub(crate) async fn resolve(g: &GlobalArgs, a: &ResolveArgs) -> anyhow::Result<ExitCode> {
    if let Some(word) = &a.word {
        super::resolve_words::resolve_word(g, word).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(reason) = a.reason.as_deref() else {
        bail!("say why you know: --reason");
    };
    let store = open_store(g).await?;
    if let (Some(link), Some(campaign)) = (&a.release_link, &a.campaign) {
        return release_link(&store, campaign, link, reason).await;
    }
    let Some(intent) = a.intent.map(IntentId) else {
        bail!("name the intent to resolve (its id, from `linkrunner status`)");
    };
    let now = clock::system().now();
    let row = match (a.created, a.not_created) {
        (Some(remote_id), _) => {
            Some(settle(&store, intent, Resolution::Created { remote_id }, reason).await?)
        }
        (None, true) => Some(settle(&store, intent, Resolution::NotCreated, reason).await?),
        (None, false) => None,
    };
    if a.allow_rebuy {
        let at = match &row {
            Some(r) => r.attempt(),
            None => find(&store, intent).await?.attempt(),
        };
        let r = store
            .intents()
            .allow_rebuy(at, reason, now)
            .await
            .context("allowing the page to be bought again")?;
        println!(
            "intent #{} ({}) of campaign {}: its page may be bought again",
            r.id, r.kind, r.campaign
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Settles an uncertain intent; lifts the campaign's halt when nothing else waits.
async fn settle(
    store: &Store,
    intent: IntentId,
    resolution: Resolution,
    reason: &str,
) -> anyhow::Result<IntentRow> {
    let now = clock::system().now();
    let row = store
        .intents()
        .resolve_intent(intent, resolution, reason, now)
        .await
        .context("resolving the intent")?;
    let still = Recorded::load(store, &row.campaign, now.date_naive()).await?;
    if !still
        .uncertain
        .iter()
        .any(|i| i.kind == IntentKind::CreateAutobuyer)
    {
        store
            .clear_halt(&HaltScope::campaign(&row.campaign))
            .await?;
    }
    println!(
        "intent #{} ({}) of campaign {} is now {}",
        row.id,
        row.kind.as_str(),
        row.campaign,
        row.state.as_str()
    );
    Ok(row)
}

async fn find(store: &Store, intent: IntentId) -> anyhow::Result<IntentRow> {
    let all = store.intents().find_intents(Default::default()).await?;
    all.into_iter()
        .find(|i| i.id == intent)
        .with_context(|| format!("no intent #{intent} in the journal"))
}

/// Releases a held link (by link id, or `intent:ID`) or a foreign one (by link id).
async fn release_link(
    store: &Store,
    campaign: &str,
    link: &str,
    reason: &str,
) -> anyhow::Result<ExitCode> {
    let now = clock::system().now();
    let target = link_ref(store, campaign, link).await?;
    let why = format!("released by an operator: {reason}");
    if !store
        .links()
        .release_link(campaign, &target, &why, now)
        .await?
    {
        bail!("link {link} of campaign {campaign} is not counted (already released?)");
    }
    println!("link {link} of campaign {campaign} no longer counts against its cap");
    Ok(ExitCode::SUCCESS)
}

async fn link_ref(store: &Store, campaign: &str, link: &str) -> anyhow::Result<LinkRef> {
    if let Some(id) = link.strip_prefix("intent:") {
        let id: i64 = id
            .parse()
            .with_context(|| format!("`{link}`: expected intent:ID"))?;
        return Ok(LinkRef::Held(IntentId(id)));
    }
    let id: i64 = link
        .parse()
        .with_context(|| format!("`{link}`: expected the marketplace's link id, or intent:ID"))?;
    let held = store.links().held_links(campaign).await?;
    if let Some(h) = held.iter().find(|h| h.link_id == Some(id)) {
        return Ok(LinkRef::Held(h.intent_id));
    }
    let foreign = store.links().foreign_links(campaign).await?;
    match foreign.iter().find(|f| f.link_id == Some(id)) {
        Some(f) => Ok(LinkRef::Foreign(f.key.clone())),
        None => bail!("campaign {campaign} holds no link {id} that the journal knows of"),
    }
}
