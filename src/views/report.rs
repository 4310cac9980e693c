//! What `status`, `plan` and the HTTP status API say about a campaign — one set of facts,
//! rendered as text for people and JSON for machines.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::store::{
    CHUNK, Halt, IntentKind, RoundRow, RoundState, StallReason, StallRow, Store, StoreError,
    SwitchState,
};
use linkrunner_domain::money::Money;

use crate::decide::caps::{LinkUse, MoneyUse};
use crate::decide::plan::CampaignPlan;
use crate::decide::policy::policy;
use crate::decide::recorded::Recorded;

use super::accounts::{Accounts, by_account};
use super::overview::{CampaignState, FileFact, FileFacts, StateFacts, classify};
use super::state::read_state_of;

/// Everything an operator needs to know about one campaign: `status`, the API and the page
/// show this, and nothing else.
#[derive(Debug, Clone, Serialize)]
pub struct CampaignStatus {
    pub(crate) campaign: String,
    /// The marketplace account it spends in (issue 34; `default` unless its file names one).
    /// Not `account`: that name already holds what the account holds beyond linkrunner's
    /// links ([`AccountStatus`], issue 24), and clients read it.
    pub(crate) account_id: String,
    /// The one word for where it stands ([`CampaignState`], decided by `overview::classify`).
    pub state: CampaignState,
    /// Why it is in that state; `None` while running.
    pub state_reason: Option<String>,
    /// What its file says; `None` when the files were not read (see `overview::FileFacts`).
    pub(crate) paused: Option<bool>,
    /// When its next buy round is due, as the daemon's timer has it; `None` outside the
    /// daemon (`status`) and for campaigns that do not buy.
    pub(crate) next_round: Option<DateTime<Utc>>,
    pub(crate) project_id: Option<i64>,
    pub(crate) urls: usize,
    pub(crate) texts: usize,
    pub(crate) filters: Vec<(String, i64)>,
    pub(crate) autobuyers: Vec<AutobuyerStatus>,
    /// Links our purchases bought that still count.
    pub(crate) links_held: usize,
    /// Links the list showed that no purchase of ours bought (autobuyers', or bought outside
    /// linkrunner) that still count.
    pub(crate) other_links: usize,
    /// Links released because they left the project.
    pub(crate) links_released: usize,
    /// Pages whose purchase was once uncertain: never bought again without an operator.
    pub(crate) blocked_pages: usize,
    #[serde(flatten)]
    pub money: MoneyUse,
    #[serde(flatten)]
    pub(crate) links: LinkUse,
    pub(crate) last_round: Option<RoundStatus>,
    pub(crate) last_successful_round: Option<DateTime<Utc>>,
    pub spending_stopped: Option<String>,
    /// Why the last buy round, with room under the caps, bought less than it could; `None`
    /// when it converged (or no buy round was judged yet).
    pub stalled: Option<StalledStatus>,
    /// Buy rounds in a row that ran with room under the caps and bought nothing.
    pub(crate) rounds_without_purchase: u32,
    pub uncertain: Vec<UncertainStatus>,
    // --- adoption (issue 24) ---
    /// What the account holds beyond linkrunner's own links, and how far the list is trusted.
    pub account: AccountStatus,
    // --- guardrails (issue 33) ---
    /// The approved monthly commitment, when the file ever set a threshold: who approved it,
    /// when and why (`linkrunner` for the baseline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<linkrunner_domain::records::Approval>,
    /// The file asks more than may be committed without a person: the amount and the ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    waiting_for_approval: Option<crate::decide::approval::Waiting>,
}

/// An account already in use, as `status`, the API and the status page show it.
#[derive(Debug, Clone, Serialize)]
pub struct AccountStatus {
    /// The project the campaign adopted, if it adopted one.
    pub(crate) adopted_project: Option<i64>,
    /// `waiting for linkrunner resolve adopt`, or who confirmed it and when.
    pub(crate) adoption: Option<String>,
    /// The monthly rent of linkrunner's own links that still count.
    pub(crate) own_rent: Money,
    /// Links held by others (by hand, autobuyers) that count on their own, and their rent
    /// (`estimated`: the part counted at `unknown_link_rent`).
    pub(crate) others_rent: Money,
    pub(crate) others_estimated: Money,
    /// URL ids with links that no file names.
    unnamed_url_ids: Vec<i64>,
    /// Drift since the adoption: links added by hand, links that left the list.
    pub(crate) added_by_hand: u32,
    pub lost: u32,
    /// Whether the link list is shown complete, and how.
    pub(crate) list: String,
    /// URLs a buy round does not buy for now, and why.
    pub buying_stopped: Vec<crate::decide::adoption::HeldBack>,
    /// Pages held twice for one URL (two links or more, whoever bought them): withdraw one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    held_twice: Vec<linkrunner_domain::records::HeldTwice>,
}

/// A stalled campaign: the closed reason (the `reason` label of
/// `linkrunner_campaign_stalled`), since when, and what to do.
#[derive(Debug, Clone, Serialize)]
pub struct StalledStatus {
    pub reason: StallReason,
    pub(crate) since: DateTime<Utc>,
    pub(crate) detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AutobuyerStatus {
    pub(crate) name: String,
    pub(crate) id: i64,
    /// Counts as running for money (true until a confirmed stop is settled).
    pub(crate) running: bool,
    /// What the marketplace last confirmed: `running`, `stopped` or `unknown`.
    pub(crate) state: SwitchState,
    pub(crate) monthly_budget: Money,
    /// What it adds to the commitment now.
    pub(crate) counted: Money,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RoundStatus {
    pub(crate) slot: DateTime<Utc>,
    pub(crate) outcome: RoundState,
    pub(crate) detail: String,
    /// Tries of the slot so far: more than 1 when a try was deferred (transient failure).
    pub(crate) attempts: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct UncertainStatus {
    pub intent_id: i64,
    pub(crate) kind: IntentKind,
    pub(crate) since: DateTime<Utc>,
    pub(crate) error: Option<String>,
    pub(crate) what_to_do: String,
}

/// One campaign's status without knowing its file (not paused, not removed as far as known).
pub async fn campaign_status(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<CampaignStatus, StoreError> {
    campaign_status_with(store, name, now, &FileFacts::unknown()).await
}

/// One campaign's status, its file as `files` say.
pub(crate) async fn campaign_status_with(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
    files: &FileFacts,
) -> Result<CampaignStatus, StoreError> {
    let r = Recorded::load(store, name, now.date_naive()).await?;
    let mut st = status_from(name, &r, files.of(name));
    if let Some(account) = store.campaigns().campaign_account(name).await? {
        st.account_id = account;
    }
    Ok(st)
}

/// The status of each of `names` the journal knows, in their order, read [`CHUNK`]
/// campaigns at a time (a dozen queries a batch, not a dozen per campaign): the same values
/// [`campaign_status_with`] gives one by one.
pub async fn campaign_statuses(
    store: &Store,
    names: &[String],
    now: DateTime<Utc>,
    files: &FileFacts,
) -> Result<Vec<CampaignStatus>, StoreError> {
    let accounts = Accounts::read(store).await?;
    campaign_statuses_in(store, names, now, files, &accounts).await
}

/// As [`campaign_statuses`], with each campaign's account from `accounts` (read once by a
/// caller that reads statuses in many calls, as the API's stream does).
pub(crate) async fn campaign_statuses_in(
    store: &Store,
    names: &[String],
    now: DateTime<Utc>,
    files: &FileFacts,
    accounts: &Accounts,
) -> Result<Vec<CampaignStatus>, StoreError> {
    let mut all = Vec::with_capacity(names.len());
    for batch in names.chunks(CHUNK) {
        let mut state = read_state_of(store, batch, now).await?;
        for name in batch {
            if let Some(r) = state.campaigns.remove(name) {
                let mut st = status_from(name, &r, files.of(name));
                st.account_id = accounts.of(name).to_string();
                all.push(st);
            }
        }
    }
    Ok(all)
}

/// What a campaign's state and its reason are decided from: the whole record (`status`, the
/// API) and the list's counts ([`super::list`]) both fill it, so both decide alike.
pub(crate) struct StateInputs<'a> {
    /// The halts that cover the campaign, in the journal's order.
    pub(crate) halts: Vec<&'a Halt>,
    pub(crate) uncertain: usize,
    pub(crate) uncertain_creations: usize,
    pub(crate) stall: Option<&'a StallRow>,
    pub(crate) last_round: Option<&'a RoundRow>,
    /// The file asks more than may be committed without a person (issue 33).
    pub(crate) approval: Option<crate::decide::approval::Waiting>,
}

impl<'a> StateInputs<'a> {
    fn of(r: &'a Recorded) -> StateInputs<'a> {
        StateInputs {
            halts: r.halts.iter().collect(),
            uncertain: r.uncertain.len(),
            uncertain_creations: r
                .uncertain
                .iter()
                .filter(|i| i.kind == IntentKind::CreateAutobuyer)
                .count(),
            stall: r.stall.as_ref(),
            last_round: r.last_round.as_ref(),
            approval: crate::decide::approval::waiting_in(&r.budget),
        }
    }

    /// The state and why, the file as `file` says; `name` goes into the command to run.
    pub(crate) fn decide(&self, name: &str, file: FileFact) -> (CampaignState, Option<String>) {
        let state = classify(&StateFacts {
            file,
            halted: self.halts.iter().any(|h| h.is_wide()),
            own_halt: self.halts.iter().any(|h| !h.is_wide()),
            uncertain_creations: self.uncertain_creations,
            awaiting_approval: self.approval.is_some(),
            uncertain: self.uncertain,
            stalled: self.stall.is_some_and(|s| s.reason.is_some()),
            last_round: self.last_round.map(|x| x.state),
        });
        (state, self.reason(name, state))
    }

    /// Why the campaign is in `state`, in words; `None` while running.
    fn reason(&self, name: &str, state: CampaignState) -> Option<String> {
        let find = |wide: bool| self.halts.iter().find(move |h| h.is_wide() == wide);
        let halt = |wide: bool| find(wide).map(|h| h.describe());
        match state {
            CampaignState::Running => None,
            CampaignState::Removed => Some(
                "its campaign file is gone: nothing new is bought, its autobuyers stop".into(),
            ),
            CampaignState::Halted => {
                find(true).map(|h| format!("{}: {}", h.scope.stopped(), h.describe()))
            }
            CampaignState::WaitingForOperator => Some(match (halt(false), &self.approval) {
                (Some(h), _) => format!("waiting for an operator: {h}"),
                (None, Some(w)) if self.uncertain_creations == 0 => w.describe(name),
                _ => "an autobuyer creation may have executed: check the marketplace, then `linkrunner resolve` (see its uncertain intents)"
                    .into(),
            }),
            CampaignState::Paused => {
                Some("its file says `paused: true`: nothing new is bought".into())
            }
            CampaignState::Settling => Some(format!(
                "{} intent(s) may have executed and wait to be settled by the next pass",
                self.uncertain
            )),
            CampaignState::Stalled => self.stall.and_then(|s| {
                Some(format!("stalled ({}): {}", s.reason?.as_str(), s.detail))
            }),
            CampaignState::Failing => self
                .last_round
                .map(|x| format!("the last round {}: {}", x.state.as_str(), x.detail)),
        }
    }
}

/// The status of one campaign's record, its file as `file` says.
pub(crate) fn status_from(name: &str, r: &Recorded, file: FileFact) -> CampaignStatus {
    let (state, state_reason) = StateInputs::of(r).decide(name, file);
    let paused = file.paused();
    let counted_foreign = r.foreign.iter().filter(|f| f.released.is_none()).count();
    let released = r.held.iter().filter(|h| h.released.is_some()).count()
        + r.foreign.iter().filter(|f| f.released.is_some()).count();
    CampaignStatus {
        campaign: name.to_string(),
        account_id: linkrunner_domain::account::DEFAULT_ACCOUNT.to_string(),
        state,
        state_reason,
        paused,
        next_round: None,
        project_id: r.ids.project.as_ref().map(|p| p.project_id),
        urls: r.ids.urls.len(),
        texts: r.ids.texts.len(),
        filters: r.ids.filters.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        autobuyers: r
            .ids
            .autobuyers
            .iter()
            .map(|(n, a)| AutobuyerStatus {
                name: n.clone(),
                id: a.id,
                running: a.running,
                state: a.switch_state,
                monthly_budget: a.monthly_budget,
                counted: a.reserved,
            })
            .collect(),
        links_held: r.held.iter().filter(|h| h.released.is_none()).count(),
        other_links: counted_foreign,
        links_released: released,
        blocked_pages: r.blocked.len(),
        money: MoneyUse::of(&r.budget),
        links: LinkUse::of(&r.budget),
        last_round: r.last_round.as_ref().map(|x| RoundStatus {
            slot: x.slot,
            outcome: x.state,
            detail: x.detail.clone(),
            attempts: x.attempts,
        }),
        last_successful_round: r.last_success.as_ref().map(|x| x.slot),
        spending_stopped: r.spending_stopped(paused == Some(true)),
        stalled: r.stall.as_ref().and_then(|s| {
            Some(StalledStatus {
                reason: s.reason?,
                since: s.since,
                detail: s.detail.clone(),
            })
        }),
        rounds_without_purchase: r.stall.as_ref().map_or(0, |s| s.rounds_without_purchase),
        uncertain: r.uncertain.iter().map(uncertain_status).collect(),
        account: account_status(name, r),
        approval: r.budget.approval.clone(),
        waiting_for_approval: crate::decide::approval::waiting_in(&r.budget),
    }
}

fn account_status(name: &str, r: &Recorded) -> AccountStatus {
    let found = crate::decide::adoption::found(r);
    let truth = &r.ids.account;
    let adoption = truth.adoption.as_ref().map(|a| match &a.confirmed {
        Some(w) => format!(
            "confirmed by {} at {} ({})",
            w.by,
            w.at.to_rfc3339(),
            w.reason
        ),
        None => format!("changes wait for `linkrunner resolve adopt {name}`"),
    });
    let list = match (&truth.vouch, truth.last_read_complete) {
        (_, true) => {
            "shown complete: its last read had paging fields and every page was read".to_string()
        }
        (Some(w), false) => format!(
            "taken as complete by {} at {} ({}), until a read shows fewer than {} link(s)",
            w.by,
            w.at.to_rfc3339(),
            w.reason,
            w.links.unwrap_or_default()
        ),
        (None, false) => {
            "may be incomplete (no paging fields): buying stops where others buy".to_string()
        }
    };
    let own_rent = r
        .held
        .iter()
        .filter(|h| h.released.is_none())
        .fold(Money::ZERO, |a, h| {
            a.checked_add(h.price).unwrap_or(Money::MAX)
        });
    AccountStatus {
        adopted_project: found.project_id,
        adoption,
        own_rent,
        others_rent: found.rent,
        others_estimated: found.estimated_rent,
        unnamed_url_ids: found.unnamed_url_ids,
        added_by_hand: found.added_by_hand,
        held_twice: crate::decide::contested::held_twice_recorded(r),
        lost: found.lost,
        list,
        buying_stopped: crate::decide::adoption::held_back(r, name),
    }
}

fn uncertain_status(i: &crate::store::IntentRow) -> UncertainStatus {
    let what_to_do = match i.kind {
        IntentKind::CreateAutobuyer => format!(
            "check the marketplace for this autobuyer, then `linkrunner resolve {} --created AUTOBUYER_ID --reason TEXT` \
             or `linkrunner resolve {} --not-created --reason TEXT`",
            i.id, i.id
        ),
        IntentKind::Purchase => format!(
            "settled by itself when the link list shows the link, or proves it absent after the settle grace; \
             else check the project's links in the marketplace, then `linkrunner resolve {} --created LINK_ID --reason TEXT` \
             or `linkrunner resolve {} --not-created [--allow-rebuy] --reason TEXT`",
            i.id, i.id
        ),
        k => format!(
            "settled automatically at the next pass ({}); or `linkrunner resolve {}`",
            policy(k),
            i.id
        ),
    };
    UncertainStatus {
        intent_id: i.id.0,
        kind: i.kind,
        since: i.updated_at,
        error: i.error.clone(),
        what_to_do,
    }
}

pub fn render_status(s: &CampaignStatus) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "campaign {}", s.campaign);
    let why = s.state_reason.as_deref().map(|w| format!(" ({w})"));
    let _ = writeln!(o, "  state: {}{}", s.state.words(), why.unwrap_or_default());
    let stopped = s.spending_stopped.as_deref().unwrap_or("no");
    let _ = writeln!(o, "  spending stopped: {stopped}");
    if let Some(st) = &s.stalled {
        let _ = writeln!(
            o,
            "  STALLED {} since {}: {}",
            st.reason,
            st.since.to_rfc3339(),
            st.detail
        );
    }
    let project = s
        .project_id
        .map(|p| p.to_string())
        .unwrap_or_else(|| "not created".into());
    let _ = writeln!(
        o,
        "  project: {project}; {} URL(s), {} text(s), {} filter(s)",
        s.urls,
        s.texts,
        s.filters.len()
    );
    for a in &s.autobuyers {
        let money = if a.running {
            "counts as running"
        } else {
            "its stop is settled"
        };
        let _ = writeln!(
            o,
            "  autobuyer {} (id {}): {} on the marketplace, {money}: monthly budget {} RUB, counted {} RUB",
            a.name, a.id, a.state, a.monthly_budget, a.counted
        );
    }
    let _ = writeln!(
        o,
        "  links held: {} bought by us, {} by others (autobuyers, outside linkrunner); {} released after leaving; \
         {} page(s) blocked from being bought again",
        s.links_held, s.other_links, s.links_released, s.blocked_pages
    );
    render_account(&mut o, &s.account);
    let _ = writeln!(
        o,
        "  monthly commitment: {} of {} RUB (uncertain: {} RUB); links {}",
        s.money.monthly_commitment,
        s.money.monthly_cap,
        s.money.uncertain_money,
        s.links.describe()
    );
    render_approval(&mut o, s);
    match &s.last_round {
        Some(r) => {
            let tries = match (r.outcome.as_str(), r.attempts) {
                ("deferred", n) => format!(" (try {n}; tried again within the slot)"),
                (_, n) if n > 1 => format!(" (after {n} tries)"),
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "  last round: {} {}{} {}",
                r.slot.to_rfc3339(),
                r.outcome,
                tries,
                r.detail
            );
        }
        None => {
            let _ = writeln!(o, "  last round: none");
        }
    }
    if s.rounds_without_purchase > 0 {
        let _ = writeln!(
            o,
            "  buy rounds in a row that bought nothing with room under the caps: {} (stalled as nothing_bought at {})",
            s.rounds_without_purchase,
            crate::decide::stall::NOTHING_BOUGHT_ROUNDS
        );
    }
    for u in &s.uncertain {
        let _ = writeln!(
            o,
            "  UNCERTAIN {} #{} since {}: {}",
            u.kind,
            u.intent_id,
            u.since.to_rfc3339(),
            u.what_to_do
        );
        if let Some(why) = &u.error {
            let _ = writeln!(o, "    why: {why}");
        }
    }
    o
}

/// The approved commitment and, while the file asks more, what to run.
fn render_approval(o: &mut String, s: &CampaignStatus) {
    let Some(a) = &s.approval else { return };
    let more = a
        .above
        .map(|x| format!("; up to {x} RUB/month more without a person"))
        .unwrap_or_else(|| "; no threshold set now".into());
    let _ = writeln!(
        o,
        "  approved commitment: {} RUB/month by {} at {} ({}){more}",
        a.approved,
        a.by,
        a.at.to_rfc3339(),
        a.reason
    );
    if let Some(w) = &s.waiting_for_approval {
        let _ = writeln!(o, "  WAITING FOR APPROVAL: {}", w.describe(&s.campaign));
    }
}

fn render_account(o: &mut String, a: &AccountStatus) {
    if let (Some(p), Some(how)) = (a.adopted_project, &a.adoption) {
        let _ = writeln!(o, "  adopted project {p}: {how}");
    }
    let _ = writeln!(
        o,
        "  monthly rent: {} RUB of our links, {} RUB of links held by others ({} RUB of it estimated at unknown_link_rent)",
        a.own_rent, a.others_rent, a.others_estimated
    );
    if !a.unnamed_url_ids.is_empty() {
        let ids: Vec<String> = a.unnamed_url_ids.iter().map(i64::to_string).collect();
        let _ = writeln!(
            o,
            "  links on URL ids no file names (counted): {}",
            ids.join(", ")
        );
    }
    if a.added_by_hand > 0 || a.lost > 0 {
        let _ = writeln!(
            o,
            "  DRIFT: {} link(s) added outside linkrunner since the adoption, {} link(s) left the list (rent released)",
            a.added_by_hand, a.lost
        );
    }
    for t in &a.held_twice {
        let ids: Vec<String> = t.link_ids.iter().map(i64::to_string).collect();
        let _ = writeln!(
            o,
            "  PAGE HELD TWICE: page {} holds {} links for URL id {} (links {}): withdraw one in the marketplace",
            t.page_id,
            t.links,
            t.url_id,
            ids.join(", ")
        );
    }
    let _ = writeln!(o, "  link list: {}", a.list);
    for b in &a.buying_stopped {
        let _ = writeln!(o, "  BUYING STOPPED {}", b.why);
    }
}

/// The plans in text (`plan`); when the campaigns spend in several accounts, account by
/// account under a line naming the account (a campaign without a file, whose removal is
/// planned, under the default account). Not a rule: it lays out text.
pub(crate) fn render_plans_by_account(
    plans: &[CampaignPlan],
    campaigns: &[&crate::campaign::Campaign],
) -> String {
    let groups = by_account(plans, |p| {
        campaigns
            .iter()
            .find(|c| c.name == p.campaign)
            .map_or(linkrunner_domain::account::DEFAULT_ACCOUNT, |c| {
                c.account.as_str()
            })
    });
    if groups.len() == 1 {
        // One account: the plans as given, named by no account.
        return plans.iter().map(render_plan).collect();
    }
    let mut out = String::new();
    for (account, mut group) in groups {
        group.sort_by(|a, b| a.campaign.cmp(&b.campaign));
        out.push_str(&format!("account {account}:\n"));
        group
            .into_iter()
            .for_each(|p| out.push_str(&render_plan(p)));
    }
    out
}

pub fn render_plan(p: &CampaignPlan) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "campaign {}", p.campaign);
    if let Some(r) = &p.renamed {
        let _ = writeln!(o, "  + {}", r.describe());
    }
    for m in &p.moved {
        let _ = writeln!(o, "  + {}", m.describe());
    }
    for u in &p.respelt {
        let _ = writeln!(o, "  + {}", u.describe());
    }
    if let Some(why) = &p.spending_stopped {
        let _ = writeln!(o, "  spending stopped: {why}");
    }
    for c in &p.cap_changes {
        let _ = writeln!(o, "  + {}", c.describe());
    }
    for a in &p.actions {
        let mark = if a.is_change() { "+" } else { " " };
        let _ = writeln!(o, "  {mark} {}", a.describe());
        for line in a.diff() {
            let _ = writeln!(o, "      {line}");
        }
    }
    for n in &p.notices {
        let _ = writeln!(o, "  ! {n}");
    }
    let m = &p.money;
    let _ = writeln!(
        o,
        "  money: committed {} of {} RUB (uncertain {}); worst case after the next pass {} RUB; headroom {} now, {} after",
        m.committed, m.cap, m.uncertain, m.worst_after_round, m.headroom, m.headroom_after_round
    );
    let _ = writeln!(o, "  links: {}", m.links.describe());
    if let Some(s) = &m.today_share {
        let _ = writeln!(
            o,
            "  today's share ({}, spread evenly over the month): {} RUB/month, buy rounds used {}, {} left",
            s.day, s.share, s.used, s.left
        );
    }
    o
}

#[cfg(test)]
mod plans_by_account_tests {
    use super::*;
    use crate::campaign::Campaign;
    use crate::decide::plan::{CampaignPlan, plan_campaign};
    use crate::decide::recorded::Recorded;

    fn campaign(name: &str, account: Option<&str>) -> Campaign {
        let yaml = format!(
            "{}name: {name}\ndomain: https://{name}.example\nurls:\n  - url: https://{name}.example/a\n    texts: [\"#a#a#/a#\"]\nbudget: {{monthly: 1000, max_link_price: 100, daily_links: 5, total_links: 50}}\n",
            account
                .map(|a| format!("account: {a}\n"))
                .unwrap_or_default()
        );
        crate::campaign::load_bytes(std::path::Path::new("t.yaml"), yaml.as_bytes()).unwrap()
    }

    fn plans(cs: &[&Campaign]) -> Vec<CampaignPlan> {
        cs.iter()
            .map(|c| plan_campaign(c, &Recorded::unrecorded_for_tests(&c.name), false))
            .collect()
    }

    #[test]
    fn plans_of_several_accounts_are_grouped_under_their_account() {
        let (a, b, c) = (
            campaign("zeta", Some("client-a")),
            campaign("alpha", Some("client-b")),
            campaign("beta", Some("client-a")),
        );
        let cs = [&a, &b, &c];
        let text = render_plans_by_account(&plans(&cs), &cs);
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(at("account client-a:") < at("beta"));
        assert!(at("beta") < at("zeta"));
        assert!(at("zeta") < at("account client-b:"));
        assert!(at("account client-b:") < at("alpha"));
    }

    #[test]
    fn plans_of_one_account_name_no_account() {
        let (a, b) = (campaign("zeta", None), campaign("alpha", None));
        let cs = [&a, &b];
        let text = render_plans_by_account(&plans(&cs), &cs);
        assert!(!text.contains("account "), "{text}");
        assert!(text.find("zeta") < text.find("alpha"), "order kept: {text}");
    }
}
