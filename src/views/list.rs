//! The campaign list's read model: one [`CampaignRow`] per campaign, what the status page's
//! table shows and filters and sorts by, and what the summary (`/api/v1/summary`, the top of
//! the page) adds up.
//!
//! Why a model of its own: the list covers every campaign on every view, and reading every
//! campaign's whole record (intents, links, ids: what [`CampaignStatus`] shows) made one
//! page of the table take longer than the endpoint's 10 s at 10,000 campaigns. The rows are
//! read by [`campaign_rows`] from counts (`Store::list_of`: eight aggregate queries for all
//! campaigns, nothing decoded per intent or link). They are not a second truth: each row is
//! what [`CampaignRow::of`] takes from the campaign's [`CampaignStatus`], state and reason
//! decided by the same code ([`StateInputs`]); tests/it `engine::recorded_many` holds the
//! two reads equal on both backends, and the API's page of statuses is chosen by these rows.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// What a row shows of its money and links; re-exported for the rooms that read rows but may
/// not import `decide` (notify).
pub(crate) use crate::decide::caps::{LinkUse, MoneyUse};
use crate::store::{CampaignListFacts, Halt, HaltAccounts, RoundState, Store, StoreError};

use super::accounts::Accounts;
use super::overview::{CampaignState, FileFacts};
use super::report::{CampaignStatus, StateInputs};

/// One campaign as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CampaignRow {
    pub(crate) campaign: String,
    /// The marketplace account it spends in (issue 34).
    pub(crate) account: String,
    pub state: CampaignState,
    pub(crate) state_reason: Option<String>,
    /// When its next buy round is due, as the daemon's timer has it (`None` outside it).
    pub(crate) next_round: Option<DateTime<Utc>>,
    #[serde(flatten)]
    pub(crate) money: MoneyUse,
    pub links_held: usize,
    pub(crate) other_links: usize,
    #[serde(flatten)]
    pub(crate) links: LinkUse,
    pub autobuyers: usize,
    pub(crate) autobuyers_running: usize,
    /// Intents that wait to be settled.
    pub uncertain: usize,
    /// The latest round's slot and outcome.
    pub(crate) last_round: Option<(DateTime<Utc>, RoundState)>,
}

impl CampaignRow {
    /// The row of a campaign's full status: what the list read gives for it.
    pub fn of(s: &CampaignStatus) -> CampaignRow {
        CampaignRow {
            campaign: s.campaign.clone(),
            account: s.account_id.clone(),
            state: s.state,
            state_reason: s.state_reason.clone(),
            next_round: s.next_round,
            money: s.money,
            links_held: s.links_held,
            other_links: s.other_links,
            links: s.links,
            autobuyers: s.autobuyers.len(),
            autobuyers_running: s.autobuyers.iter().filter(|a| a.running).count(),
            uncertain: s.uncertain.len(),
            last_round: s.last_round.as_ref().map(|r| (r.slot, r.outcome)),
        }
    }

    /// The row from the list read of one campaign; `halts`: every halt in force.
    fn from_facts(
        (name, account): (&str, &str),
        f: &CampaignListFacts,
        (halts, accounts): (&[Halt], &HaltAccounts),
        files: &FileFacts,
    ) -> Self {
        let inputs = StateInputs {
            halts: halts.iter().filter(|h| accounts.covers(h, name)).collect(),
            uncertain: f.uncertain as usize,
            uncertain_creations: f.uncertain_creations as usize,
            stall: f.stall.as_ref(),
            last_round: f.last_round.as_ref(),
            approval: crate::decide::approval::waiting_in(&f.budget),
        };
        let (state, state_reason) = inputs.decide(name, files.of(name));
        let b = &f.budget;
        CampaignRow {
            campaign: name.to_string(),
            account: account.to_string(),
            state,
            state_reason,
            next_round: None,
            money: MoneyUse::of(b),
            links_held: f.links_held as usize,
            other_links: f.other_links as usize,
            links: LinkUse::of(b),
            autobuyers: f.autobuyers as usize,
            autobuyers_running: f.autobuyers_running as usize,
            uncertain: f.uncertain as usize,
            last_round: f.last_round.as_ref().map(|r| (r.slot, r.state)),
        }
    }
}

/// The row of each of `names` the journal knows, in their order (a name given twice gets
/// one row), from one list read (and one read of every campaign's account).
pub async fn campaign_rows(
    store: &Store,
    names: &[String],
    now: DateTime<Utc>,
    files: &FileFacts,
) -> Result<Vec<CampaignRow>, StoreError> {
    // Three reads at once (each a connection of its own on SQLite): the list's facts, the
    // halts with their accounts, and each campaign's account.
    let halts = async {
        let halts = store.halts().await?;
        let accounts = store.halt_accounts(&halts).await?;
        Ok((halts, accounts))
    };
    let (mut facts, (halts, accounts), spends_in) = futures_util::try_join!(
        store.reports().list_of(names, now.date_naive()),
        halts,
        Accounts::read(store),
    )?;
    let halts = (halts.as_slice(), &accounts);
    // Each campaign's facts are dropped as its row is built, so a read holds about one of the
    // two at a time for all campaigns, not both (at 10,000 campaigns the facts are 3.7 MB).
    let mut rows = Vec::with_capacity(facts.len());
    for n in names {
        if let Some(f) = facts.remove(n) {
            let name = (n.as_str(), spends_in.of(n));
            rows.push(CampaignRow::from_facts(name, &f, halts, files));
        }
    }
    Ok(rows)
}
