//! Records the store keeps beside intents: campaigns and their caps, remote ids, the budget
//! and its ledger, held links, searches, rounds and leases.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};

use super::types::{IntentId, text_enum};
use crate::market::ProjectIds;
use crate::money::Money;

/// A campaign's caps as its file states them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignCaps {
    pub name: String,
    pub monthly_cap: Money,
    pub daily_links: u32,
    pub total_links: u32,
}

/// What the marketplace already created for a campaign, by the campaign's own names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteIds {
    pub project: Option<ProjectIds>,
    /// url → url id
    pub urls: BTreeMap<String, i64>,
    /// (url, text) → text id
    pub texts: BTreeMap<(String, String), i64>,
    /// filter name → filter id
    pub filters: BTreeMap<String, i64>,
    /// autobuyer name → what we know of it
    pub autobuyers: BTreeMap<String, AutobuyerRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutobuyerRecord {
    pub id: i64,
    pub running: bool,
    pub spec_fingerprint: String,
    pub monthly_budget: Money,
}

/// The monthly commitment of a campaign, split by where the money stands.
/// `committed == held + reserved_in_flight + uncertain` (tested).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetSnapshot {
    pub cap: Money,
    pub committed: Money,
    /// Held links plus running autobuyers' budgets.
    pub held: Money,
    pub reserved_in_flight: Money,
    pub uncertain: Money,
    pub links_total: u32,
    pub links_today: u32,
    pub daily_cap: u32,
    pub total_cap: u32,
}

impl BudgetSnapshot {
    pub fn headroom(&self) -> Money {
        Money::saturating_headroom(self.cap, self.committed)
    }
}

/// One append-only movement of the commitment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub id: i64,
    pub campaign: String,
    pub intent_id: Option<IntentId>,
    pub delta: Money,
    pub links: i64,
    /// `reserve`, `release`, `price_adjust`, `autobuyer_stop`.
    pub reason: String,
    pub at: DateTime<Utc>,
}

/// A link bought by one of our purchase intents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLink {
    pub intent_id: IntentId,
    pub link_id: Option<i64>,
    pub page_id: i64,
    pub url_id: i64,
    pub text_id: i64,
    pub price: Money,
    pub bought_at: DateTime<Utc>,
    /// When the project's link list last showed it.
    pub seen_in_list_at: Option<DateTime<Utc>>,
}

/// What one `record_link_list` matched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Listed links matched to held links.
    pub matched: u32,
    /// Listed links no intent of ours bought (kept in `foreign_links`).
    pub foreign: u32,
    /// Held links the list did not show (kept held: absence never releases money).
    pub missing: u32,
}

text_enum!(
    SearchState {
        Open => "open",
        Ready => "ready",
        Failed => "failed",
        Expired => "expired",
    }
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRow {
    pub id: i64,
    pub campaign: String,
    pub url_id: i64,
    pub job: crate::market::SearchJob,
    pub state: SearchState,
    pub polls: u32,
    pub deadline: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

text_enum!(
    /// `running` is a claimed slot not yet finished.
    RoundState {
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Skipped => "skipped",
    }
);

text_enum!(
    RoundOutcome {
        Succeeded => "succeeded",
        Failed => "failed",
        Skipped => "skipped",
    }
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundRow {
    pub campaign: String,
    pub slot: DateTime<Utc>,
    pub holder: String,
    pub state: RoundState,
    pub detail: String,
    pub claimed_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// Proof of holding a campaign's lease. `fence` grows whenever the holder changes; writes
/// made under a lease check it in their own transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseToken {
    pub campaign: String,
    pub holder: String,
    pub fence: i64,
    pub expires_at: DateTime<Utc>,
}

/// A day as stored: `YYYY-MM-DD`.
pub(crate) fn day_text(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}
