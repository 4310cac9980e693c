//! What `status`, `plan` and the HTTP status API say about a campaign — one set of facts,
//! rendered as text for people and JSON for machines.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::money::Money;
use crate::store::{IntentKind, Store, StoreError};

use super::plan::CampaignPlan;
use super::recorded::Recorded;
use super::settle;

/// Everything an operator needs to know about one campaign.
#[derive(Debug, Clone, Serialize)]
pub struct CampaignStatus {
    pub campaign: String,
    pub project_id: Option<i64>,
    pub urls: usize,
    pub texts: usize,
    pub filters: Vec<(String, i64)>,
    pub autobuyers: Vec<AutobuyerStatus>,
    pub links_held: usize,
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
    pub uncertain: Vec<UncertainStatus>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AutobuyerStatus {
    pub name: String,
    pub id: i64,
    pub running: bool,
    pub monthly_budget: Money,
}

#[derive(Debug, Clone, Serialize)]
pub struct RoundStatus {
    pub slot: DateTime<Utc>,
    pub outcome: String,
    pub detail: String,
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
    let held = store.held_links(name).await?;
    Ok(status_from(name, &r, held.len()))
}

fn status_from(name: &str, r: &Recorded, links_held: usize) -> CampaignStatus {
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
                monthly_budget: a.monthly_budget,
            })
            .collect(),
        links_held,
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
        }),
        last_successful_round: r.last_success.as_ref().map(|x| x.slot),
        spending_stopped: r.spending_stopped(false),
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
        k => format!(
            "settled automatically at the next pass ({}); or `linkrunner resolve {}`",
            settle::policy(k),
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
        let state = if a.running { "running" } else { "stopped" };
        let _ = writeln!(
            o,
            "  autobuyer {} (id {}): {state}, monthly budget {} RUB",
            a.name, a.id, a.monthly_budget
        );
    }
    let _ = writeln!(o, "  links held: {}", s.links_held);
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
            let _ = writeln!(
                o,
                "  last round: {} {} {}",
                r.slot.to_rfc3339(),
                r.outcome,
                r.detail
            );
        }
        None => {
            let _ = writeln!(o, "  last round: none");
        }
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
    }
    o
}

pub fn render_plan(p: &CampaignPlan) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "campaign {}", p.campaign);
    if let Some(why) = &p.spending_stopped {
        let _ = writeln!(o, "  spending stopped: {why}");
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

/// JSON text capped at 4 KiB, for answers kept in the journal.
pub fn short_json(v: &serde_json::Value) -> String {
    let mut s = v.to_string();
    if s.len() > 4096 {
        let mut cut = 4096;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}
