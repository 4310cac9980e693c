//! What `status`, `plan` and the HTTP status API say about a campaign — one set of facts,
//! rendered as text for people and JSON for machines.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::money::Money;
use crate::store::{IntentKind, Store, StoreError};

use crate::decide::plan::CampaignPlan;
use crate::decide::policy::policy;
use crate::decide::recorded::Recorded;

/// Everything an operator needs to know about one campaign.
#[derive(Debug, Clone, Serialize)]
pub struct CampaignStatus {
    pub campaign: String,
    pub project_id: Option<i64>,
    pub urls: usize,
    pub texts: usize,
    pub filters: Vec<(String, i64)>,
    pub autobuyers: Vec<AutobuyerStatus>,
    /// Links our purchases bought that still count.
    pub links_held: usize,
    /// Links the list showed that no purchase of ours bought (autobuyers', or bought outside
    /// linkrunner) that still count.
    pub other_links: usize,
    /// Links released because they left the project.
    pub links_released: usize,
    /// Pages whose purchase was once uncertain: never bought again without an operator.
    pub blocked_pages: usize,
    pub monthly_commitment: Money,
    pub monthly_cap: Money,
    pub uncertain_money: Money,
    pub links_today: u32,
    pub daily_links_cap: u32,
    pub links_total: u32,
    pub total_links_cap: u32,
    pub last_round: Option<RoundStatus>,
    pub last_successful_round: Option<DateTime<Utc>>,
    pub spending_stopped: Option<String>,
    /// Why the last buy round, with room under the caps, bought less than it could; `None`
    /// when it converged (or no buy round was judged yet).
    pub stalled: Option<StalledStatus>,
    /// Buy rounds in a row that ran with room under the caps and bought nothing.
    pub rounds_without_purchase: u32,
    pub uncertain: Vec<UncertainStatus>,
}

/// A stalled campaign: the closed reason (the `reason` label of
/// `linkrunner_campaign_stalled`), since when, and what to do.
#[derive(Debug, Clone, Serialize)]
pub struct StalledStatus {
    pub reason: String,
    pub since: DateTime<Utc>,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AutobuyerStatus {
    pub name: String,
    pub id: i64,
    /// Counts as running for money (true until a confirmed stop is settled).
    pub running: bool,
    /// What the marketplace last confirmed: `running`, `stopped` or `unknown`.
    pub state: String,
    pub monthly_budget: Money,
    /// What it adds to the commitment now.
    pub counted: Money,
}

#[derive(Debug, Clone, Serialize)]
pub struct RoundStatus {
    pub slot: DateTime<Utc>,
    pub outcome: String,
    pub detail: String,
    /// Tries of the slot so far: more than 1 when a try was deferred (transient failure).
    pub attempts: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct UncertainStatus {
    pub intent_id: i64,
    pub kind: String,
    pub since: DateTime<Utc>,
    pub error: Option<String>,
    pub what_to_do: String,
}

pub async fn campaign_status(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<CampaignStatus, StoreError> {
    let r = Recorded::load(store, name, now.date_naive()).await?;
    Ok(status_from(name, &r))
}

fn status_from(name: &str, r: &Recorded) -> CampaignStatus {
    let counted_foreign = r.foreign.iter().filter(|f| f.released.is_none()).count();
    let released = r.held.iter().filter(|h| h.released.is_some()).count()
        + r.foreign.iter().filter(|f| f.released.is_some()).count();
    CampaignStatus {
        campaign: name.to_string(),
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
                state: a.switch_state.as_str().to_string(),
                monthly_budget: a.monthly_budget,
                counted: a.reserved,
            })
            .collect(),
        links_held: r.held.iter().filter(|h| h.released.is_none()).count(),
        other_links: counted_foreign,
        links_released: released,
        blocked_pages: r.blocked.len(),
        monthly_commitment: r.budget.committed,
        monthly_cap: r.budget.cap,
        uncertain_money: r.budget.uncertain,
        links_today: r.budget.links_today,
        daily_links_cap: r.budget.daily_cap,
        links_total: r.budget.links_total,
        total_links_cap: r.budget.total_cap,
        last_round: r.last_round.as_ref().map(|x| RoundStatus {
            slot: x.slot,
            outcome: x.state.as_str().to_string(),
            detail: x.detail.clone(),
            attempts: x.attempts,
        }),
        last_successful_round: r.last_success.as_ref().map(|x| x.slot),
        spending_stopped: r.spending_stopped(false),
        stalled: r.stall.as_ref().and_then(|s| {
            Some(StalledStatus {
                reason: s.reason?.as_str().to_string(),
                since: s.since,
                detail: s.detail.clone(),
            })
        }),
        rounds_without_purchase: r.stall.as_ref().map_or(0, |s| s.rounds_without_purchase),
        uncertain: r.uncertain.iter().map(uncertain_status).collect(),
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
        kind: i.kind.as_str().into(),
        since: i.updated_at,
        error: i.error.clone(),
        what_to_do,
    }
}

pub fn render_status(s: &CampaignStatus) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "campaign {}", s.campaign);
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
    let _ = writeln!(
        o,
        "  monthly commitment: {} of {} RUB (uncertain: {} RUB); links today {}/{}, total {}/{}",
        s.monthly_commitment,
        s.monthly_cap,
        s.uncertain_money,
        s.links_today,
        s.daily_links_cap,
        s.links_total,
        s.total_links_cap
    );
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

pub fn render_plan(p: &CampaignPlan) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "campaign {}", p.campaign);
    if let Some(why) = &p.spending_stopped {
        let _ = writeln!(o, "  spending stopped: {why}");
    }
    for c in &p.cap_changes {
        let _ = writeln!(o, "  + {}", c.describe());
    }
    for a in &p.actions {
        let mark = if a.is_change() { "+" } else { " " };
        let _ = writeln!(o, "  {mark} {}", a.describe());
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
    let _ = writeln!(
        o,
        "  links: today {}/{}, total {}/{}",
        m.links_today, m.daily_links_cap, m.links_total, m.total_links_cap
    );
    o
}
