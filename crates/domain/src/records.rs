//! Records the store keeps beside intents: campaigns and their caps, remote ids, the budget
//! and its ledger, held links, searches, rounds and leases.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::intents::IntentId;
use crate::market::ProjectIds;
use crate::money::Money;
use crate::text_enum;

/// A campaign's caps as its file states them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignCaps {
    pub name: String,
    /// The marketplace account the campaign spends in (`account::DEFAULT_ACCOUNT` unless its
    /// file names one): recorded with the campaign when it is first recorded.
    pub account: String,
    pub monthly_cap: Money,
    pub daily_links: u32,
    pub total_links: u32,
}

/// A campaign's approval above a threshold (issue 33), as the journal
/// keeps it: what a person approved, the threshold and the cap its file asks, as the last
/// pass recorded them. The rule over these is `decide::approval` in the product crate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Approval {
    /// The monthly commitment approved: the baseline, then each `resolve approve`.
    pub approved: Money,
    /// The file's approval threshold; `None` once the file no longer sets it.
    pub above: Option<Money>,
    /// The monthly cap the file asks (`budget.monthly`).
    pub wanted: Money,
    /// Who approved (`linkrunner` for the baseline), when and why.
    pub by: String,
    pub at: DateTime<Utc>,
    pub reason: String,
}

impl Approval {
    /// The most the commitment may reach without a person: the approved amount plus the
    /// threshold (the approved amount alone once no threshold is set).
    pub fn ceiling(&self) -> Money {
        approval_ceiling(self.approved, self.above)
    }

    /// The monthly cap the engine spends under when the file asks `file_cap`: the file's,
    /// never past [`Approval::ceiling`]. The journal records this one, so the reservation
    /// the database checks holds it even with two daemons racing.
    pub fn cap_for(&self, file_cap: Money) -> Money {
        approval_cap(file_cap, self.approved, self.above)
    }
}

/// Who the baseline approval is recorded as given by.
pub const APPROVAL_BASELINE_BY: &str = "linkrunner";

/// [`Approval::ceiling`] of an approved amount and a threshold: no ceiling without one.
pub(crate) fn approval_ceiling(approved: Money, above: Option<Money>) -> Money {
    match above {
        Some(above) => approved.checked_add(above).unwrap_or(Money::MAX),
        None => Money::MAX,
    }
}

/// [`Approval::cap_for`] of an approved amount and a threshold.
pub fn approval_cap(file_cap: Money, approved: Money, above: Option<Money>) -> Money {
    file_cap.min(approval_ceiling(approved, above))
}

/// What the marketplace already created for a campaign, by the campaign's own names.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteIds {
    pub project: Option<ProjectIds>,
    /// url → url id
    pub urls: BTreeMap<String, i64>,
    /// url → the marketplace's own spelling of it, for a URL respelt with `url_id` (issue 32):
    /// the text it was created or adopted with, which a call naming the URL by text sends.
    /// Absent: the same spelling. See [`RemoteIds::market_url`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub market_urls: BTreeMap<String, String>,
    /// (url, text) → text id; in JSON a list of `[[url, text], id]` (JSON keys are strings)
    #[serde(with = "pairs")]
    pub texts: BTreeMap<(String, String), i64>,
    /// filter name → filter id
    pub filters: BTreeMap<String, i64>,
    /// autobuyer name → what we know of it
    pub autobuyers: BTreeMap<String, AutobuyerRecord>,
    /// The smallest length at which the project's link list was seen cut, if ever.
    pub list_cut_at: Option<u32>,
    // --- adoption (issue 24) ---
    /// What the journal knows of the account beyond what linkrunner made: the adoption of
    /// the project, and whether the link list was shown complete.
    #[serde(default)]
    pub account: AccountTruth,
}

impl RemoteIds {
    /// The spelling the marketplace knows `url` by: the one it was created or adopted with
    /// when the file respelt it with `url_id`, else `url` itself.
    pub fn market_url<'a>(&'a self, url: &'a str) -> &'a str {
        self.market_urls.get(url).map_or(url, String::as_str)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AutobuyerRecord {
    pub id: i64,
    /// Counts as running for money: true until a confirmed stop is settled.
    pub running: bool,
    pub spec_fingerprint: String,
    pub monthly_budget: Money,
    /// What this autobuyer adds to the commitment now: its budget (or the rent of its links,
    /// if higher) while it counts as running, the rent of its links once its stop is settled.
    pub reserved: Money,
    /// What the marketplace last confirmed.
    pub switch_state: SwitchState,
    /// When a stop was confirmed; the stop is settled after the settle grace.
    pub stopped_at: Option<DateTime<Utc>>,
    // --- adoption (issue 24) ---
    /// When a file adopted it by id (`None`: linkrunner created it).
    #[serde(default)]
    pub adopted_at: Option<DateTime<Utc>>,
    /// The URL ids an adopted autobuyer covers, as its file names them.
    #[serde(default)]
    pub covers: Vec<i64>,
    /// The id a file adopted it under; after a replacement `id` is the new autobuyer's and
    /// this stays the adopted one's, so the file's `id` still matches
    /// (`decide::adoption`: an autobuyer is never re-pointed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted_id: Option<i64>,
}

text_enum!(
    /// An autobuyer's state as the marketplace last confirmed it: `unknown` after a creation
    /// or a switch whose answer was lost, until the next switch is confirmed.
    SwitchState {
        Running => "running",
        Stopped => "stopped",
        Unknown => "unknown",
    }
);

/// The monthly commitment of a campaign, split by where the money stands.
/// `committed == held + reserved_in_flight + uncertain` (tested).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BudgetSnapshot {
    pub cap: Money,
    pub committed: Money,
    /// Held links, counted foreign links and autobuyers' parts (budgets while they count as
    /// running, the rent of their links once their stop is settled).
    pub held: Money,
    pub reserved_in_flight: Money,
    pub uncertain: Money,
    pub links_total: u32,
    pub links_today: u32,
    pub daily_cap: u32,
    pub total_cap: u32,
    /// The UTC day `links_today` and `committed_today` are of; `None` when nothing was read
    /// for a day (a campaign the journal has not seen).
    #[serde(default)]
    pub day: Option<chrono::NaiveDate>,
    /// The rent buy rounds' purchases reserved on `day` and did not release: in flight,
    /// uncertain or bought (issue 33; what an even spread counts against the day's share).
    #[serde(default)]
    pub committed_today: Money,
    /// The campaign's approval above a threshold (issue 33), when its file ever set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

/// One append-only movement of the commitment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// How long after its purchase a read of the list first showed it (ms): the list's lag,
    /// as far as the reads can tell (an upper bound). `None` until shown, and for a link
    /// adopted from the list.
    #[serde(default)]
    pub listed_after_ms: Option<i64>,
    /// Its status in the list, when the list gives one.
    pub status: Option<String>,
    /// Since when the list shows it leaving (a leaving status, or absent from a list proven
    /// complete); its rent is released once this is older than the settle grace.
    pub leaving_since: Option<DateTime<Utc>>,
    /// Set when its rent was released, with why.
    pub released: Option<(DateTime<Utc>, String)>,
}

/// A link the project's list shows that no purchase intent of ours bought: an autobuyer's,
/// or one bought outside linkrunner. It counts once: inside the budget of the running
/// autobuyer it is attributed to, else at its own rent (`counted`). In an adopted project
/// none is attributed (a hand purchase cannot be told from an autobuyer's).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForeignLink {
    pub key: String,
    pub link_id: Option<i64>,
    pub page_id: Option<i64>,
    pub url_id: Option<i64>,
    pub text_id: Option<i64>,
    pub price: Option<Money>,
    pub status: Option<String>,
    /// The autobuyer it is attributed to, by name.
    pub autobuyer: Option<String>,
    /// What the link itself adds to the commitment (0 when an autobuyer's part covers it).
    pub counted: Money,
    /// The list showed no rent for it: `price` is the campaign's figure for unknown rents.
    #[serde(default)]
    pub price_estimated: bool,
    pub first_seen_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub leaving_since: Option<DateTime<Utc>>,
    pub released: Option<(DateTime<Utc>, String)>,
}

/// A page held more than once for one URL (issue 32): two links (or more) on one donor page
/// to one promoted URL, as the link list showed them, whoever bought them. One of them should
/// be withdrawn in the marketplace; linkrunner records it once, alerts and shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HeldTwice {
    pub url_id: i64,
    pub page_id: i64,
    /// How many links hold it (at least two).
    pub links: u32,
    /// Their ids, as far as the list gives them, ascending.
    pub link_ids: Vec<i64>,
}

/// One link of a read of the project's list, as the engine judged it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedLink {
    pub record: crate::market::LinkRecord,
    /// Its status says it left (removed, rejected, …): its rent is released after the grace.
    pub leaving: bool,
    /// The autobuyer a link no intent of ours bought is attributed to.
    pub autobuyer: Option<String>,
}

/// One read of the project's link list, for `Store::record_link_list`.
#[derive(Debug, Clone, Copy)]
pub struct ListRead<'a> {
    pub links: &'a [ListedLink],
    /// Paging fields showed that every page was read: a counted link absent from it is leaving.
    pub proven_complete: bool,
    /// What a link no intent of ours bought counts when the list gives no price.
    pub fallback_price: Money,
}

/// What one `record_link_list` matched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Listed links matched to held links.
    pub matched: u32,
    /// Listed links no intent of ours bought (kept in `foreign_links`).
    pub foreign: u32,
    /// Of those, seen for the first time and now counted.
    pub adopted: u32,
    /// Held or foreign links (not released) the list did not show.
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
    /// `running` is a claimed slot not yet finished; `deferred` one that could not run for a
    /// transient reason and is tried again within its slot (`Store::reclaim_round`).
    RoundState {
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Skipped => "skipped",
        Deferred => "deferred",
        Stalled => "stalled",
    }
);

text_enum!(
    /// `stalled`: the round ran with room under the caps and bought less than it could, for
    /// a reason an operator must act on ([`StallReason`]).
    RoundOutcome {
        Succeeded => "succeeded",
        Failed => "failed",
        Skipped => "skipped",
        Deferred => "deferred",
        Stalled => "stalled",
    }
);

/// A deferred round claimed again: which try this is, and what the slot's earlier tries bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundRetry {
    pub attempt: u32,
    pub bought: u32,
}

text_enum!(
    /// Why a buy round that could buy did not: a closed set, used as the `reason` label of
    /// `linkrunner_campaign_stalled`, in `status`, `/api/v1` and `once`. What the caps
    /// prevent is never a stall (`converged`).
    StallReason {
        NoReadablePrice => "no_readable_price",
        InsufficientBalance => "insufficient_balance",
        PurchaseRejected => "purchase_rejected",
        SearchNotReady => "search_not_ready",
        NothingBought => "nothing_bought",
    }
);

/// The judgment of a campaign's last buy pass (`campaign_stalls`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StallRow {
    /// `None`: the last buy pass converged.
    pub reason: Option<StallReason>,
    pub detail: String,
    /// Buy rounds in a row that ran with room under the caps and bought nothing.
    pub rounds_without_purchase: u32,
    /// When the reason in force was first recorded.
    pub since: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundRow {
    pub campaign: String,
    pub slot: DateTime<Utc>,
    pub holder: String,
    pub state: RoundState,
    pub detail: String,
    pub claimed_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Tries of this slot so far (1 unless it was deferred and claimed again).
    pub attempts: u32,
    /// Links the slot's tries bought, as far as they were recorded.
    pub bought: u32,
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

/// A map with tuple keys as a JSON list of `[key, value]` pairs: JSON object keys are strings.
mod pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        m: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter())
    }

    pub(super) fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

// --- adoption (issue 24) ---

/// What the journal knows of an account already in use: the adopted project and how far the
/// link list can be trusted to show everything held.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AccountTruth {
    /// Set when the campaign adopted an existing project.
    pub adoption: Option<Adoption>,
    /// The last read of the link list carried paging fields and every page was read.
    pub last_read_complete: bool,
    /// How many links the last read showed.
    pub last_read_links: Option<u32>,
    /// An operator's word that the list is complete; `None` once it lapsed.
    pub vouch: Option<OperatorWord>,
}

impl AccountTruth {
    /// The list is shown complete: its last read had every page, or an operator said so and
    /// no read since showed fewer links than the journal counted then.
    pub fn list_shown_complete(&self) -> bool {
        self.last_read_complete || self.vouch.is_some()
    }

    /// Changes on the adopted project wait for the operator's `resolve adopt`.
    pub fn adoption_pending(&self) -> bool {
        self.adoption
            .as_ref()
            .is_some_and(|a| a.confirmed.is_none())
    }
}

/// A campaign's adoption of an existing project.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Adoption {
    pub project_id: i64,
    pub recorded_at: DateTime<Utc>,
    /// The first read of the link list after the adoption: links seen then were there before
    /// linkrunner and count at their own rent, never inside an adopted autobuyer's budget.
    pub first_read_at: Option<DateTime<Utc>>,
    /// The operator's `linkrunner resolve adopt`: changes on the project may begin.
    pub confirmed: Option<OperatorWord>,
}

/// An operator's word, recorded with who, when and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OperatorWord {
    pub by: String,
    pub at: DateTime<Utc>,
    pub reason: String,
    /// For `list-complete`: the links the journal counted when it was given.
    pub links: Option<u32>,
}

text_enum!(
    /// Where a campaign's removal stands (issue 32): its file was seen gone and the decision
    /// (`decide::removal`) is not made yet (`pending`), was to hold it (`held`: nothing of the
    /// campaign is stopped), or to let it proceed (`proceeded`: the campaign is reconciled as
    /// removed); `resolved`: an operator's `resolve removals` let it proceed.
    RemovalState {
        Pending => "pending",
        Held => "held",
        Proceeded => "proceeded",
        Resolved => "resolved",
    }
);

/// A recorded campaign whose file was seen gone (issue 32). The row lives until the file
/// returns, so a restart or a replica judges the same removals the same way.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemovalRow {
    pub campaign: String,
    /// When a process first found the file gone (the first writer's time wins).
    pub seen_at: DateTime<Utc>,
    pub state: RemovalState,
    /// The operator's `resolve removals`, when given.
    pub resolved: Option<OperatorWord>,
}

/// A recorded campaign and the domain its project is for (issue 32): what a new campaign for
/// the same site is checked against.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DomainOwner {
    pub campaign: String,
    /// As the campaign's file gave it when first recorded (`scheme://host[:port]`).
    pub domain: String,
    /// Its project, once created or adopted.
    pub project_id: Option<i64>,
    /// The marketplace account the campaign spends in: a domain is owned within one account
    /// (issue 34), so another account's campaign may have a project for the same site.
    pub account: String,
}

/// An account lease as the journal holds it (issue 34): which daemon works the account, and
/// until when unless renewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountLease {
    pub account: String,
    pub holder: String,
    pub expires_at: DateTime<Utc>,
}
