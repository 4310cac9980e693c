//! The diff between what a campaign file wants and what the journal recorded: a list of
//! [`Action`]s and the money they imply. Pure — no I/O — so `plan` shows exactly what `once`
//! and `run` will do, and tests can check it without a marketplace.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::campaign::{AutobuyerState, Campaign};
use crate::market::UrlTexts;
use crate::money::Money;

use super::choose::RoundLimits;
use super::recorded::Recorded;

/// One thing the engine will do for a campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    CreateProject {
        domain: String,
    },
    AddTexts {
        urls: Vec<UrlTexts>,
    },
    CreateFilter {
        name: String,
    },
    CreateAutobuyer {
        name: String,
        monthly_budget: Money,
        running: bool,
    },
    SetAutobuyer {
        name: String,
        id: i64,
        running: bool,
        why: String,
    },
    Settle {
        intent_id: i64,
        kind: String,
        how: String,
    },
    BuyRound {
        max_links: u32,
        max_price: Money,
        worst_case: Money,
    },
    SyncLinks,
}

impl Action {
    /// Whether the action changes anything on the marketplace (a link sync only reads).
    pub fn is_change(&self) -> bool {
        !matches!(self, Action::SyncLinks)
    }

    /// A closed label for logs and spans.
    pub fn label(&self) -> &'static str {
        match self {
            Action::CreateProject { .. } => "create_project",
            Action::AddTexts { .. } => "add_texts",
            Action::CreateFilter { .. } => "create_filter",
            Action::CreateAutobuyer { .. } => "create_autobuyer",
            Action::SetAutobuyer { running: true, .. } => "start_autobuyer",
            Action::SetAutobuyer { running: false, .. } => "stop_autobuyer",
            Action::Settle { .. } => "settle",
            Action::BuyRound { .. } => "buy_round",
            Action::SyncLinks => "sync_links",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Action::CreateProject { domain } => format!("create the project for {domain}"),
            Action::AddTexts { urls } => {
                let texts: usize = urls.iter().map(|u| u.texts.len()).sum();
                format!(
                    "add {} promoted URL(s) with {texts} anchor text(s)",
                    urls.len()
                )
            }
            Action::CreateFilter { name } => format!("create search filter {name}"),
            Action::CreateAutobuyer {
                name,
                monthly_budget,
                running,
            } => format!(
                "create autobuyer {name} (monthly budget {monthly_budget} RUB) and {}",
                if *running {
                    "start it"
                } else {
                    "leave it stopped"
                }
            ),
            Action::SetAutobuyer {
                name,
                id,
                running,
                why,
            } => {
                format!(
                    "{} autobuyer {name} (id {id}): {why}",
                    if *running { "start" } else { "stop" }
                )
            }
            Action::Settle {
                intent_id,
                kind,
                how,
            } => format!("settle uncertain {kind} #{intent_id}: {how}"),
            Action::BuyRound {
                max_links,
                max_price,
                worst_case,
            } => format!(
                "buy up to {max_links} link(s) at most {max_price} RUB each (adds at most {worst_case} RUB/month)"
            ),
            Action::SyncLinks => "sync the project's link list".to_string(),
        }
    }
}

/// The money view of a campaign: what it is committed to now and at worst after the next round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MoneyView {
    pub cap: Money,
    pub committed: Money,
    pub uncertain: Money,
    pub worst_after_round: Money,
    pub headroom: Money,
    pub headroom_after_round: Money,
    pub links_total: u32,
    pub total_links_cap: u32,
    pub links_today: u32,
    pub daily_links_cap: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignPlan {
    pub campaign: String,
    pub actions: Vec<Action>,
    /// Things that cannot or will not be applied, said plainly.
    pub notices: Vec<String>,
    /// Why spending is stopped, when it is (credentials rejected, waiting for an operator, paused).
    pub spending_stopped: Option<String>,
    pub money: MoneyView,
}

impl CampaignPlan {
    pub fn has_changes(&self) -> bool {
        self.actions.iter().any(Action::is_change)
    }
}

/// What the next round may buy, given the campaign and what is already committed.
pub fn round_limits(c: &Campaign, r: &Recorded) -> Option<RoundLimits> {
    let buy = c.buy.as_ref()?;
    let b = &r.budget;
    Some(RoundLimits {
        order: buy.order,
        seed: r.budget.links_total as u64 ^ r.budget.committed.kopecks() as u64,
        per_run: buy.per_run,
        max_price: c.budget.max_link_price,
        monthly_headroom: Money::saturating_headroom(b.cap, b.committed),
        daily_left: b.daily_cap.saturating_sub(b.links_today),
        total_left: b.total_cap.saturating_sub(b.links_total),
    })
}

/// Plans one campaign that has a valid file. The caps are the file's, which may be newer
/// than what the journal last recorded.
pub fn plan_campaign(c: &Campaign, r: &Recorded, buy_round: bool) -> CampaignPlan {
    let mut r = r.clone();
    r.budget.cap = c.budget.monthly;
    r.budget.daily_cap = c.budget.daily_links;
    r.budget.total_cap = c.budget.total_links;
    let r = &r;
    let mut p = CampaignPlan {
        campaign: c.name.clone(),
        actions: Vec::new(),
        notices: Vec::new(),
        spending_stopped: r.spending_stopped(c.paused),
        money: money_view(r, Money::ZERO, Money::ZERO),
    };
    settle_actions(r, &mut p);
    if r.ids.project.is_none() {
        p.actions.push(Action::CreateProject {
            domain: c.domain.clone(),
        });
    }
    let missing = missing_texts(c, r);
    if !missing.is_empty() {
        p.actions.push(Action::AddTexts { urls: missing });
    }
    for f in &c.filters {
        if !r.ids.filters.contains_key(&f.name) {
            p.actions.push(Action::CreateFilter {
                name: f.name.clone(),
            });
        }
    }
    autobuyer_actions(c, r, &mut p);
    // Autobuyers created or started by this pass commit their budgets before the round runs.
    let pending = pending_autobuyer_money(&p, r);
    let mut after = r.clone();
    after.budget.committed = r
        .budget
        .committed
        .checked_add(pending)
        .unwrap_or(Money::MAX);
    p.money = money_view(r, pending, Money::ZERO);
    if buy_round && p.spending_stopped.is_none() {
        buy_action(c, &after, &mut p, r, pending);
    }
    p.actions.push(Action::SyncLinks);
    p
}

/// Money that autobuyers created or started by the planned actions will commit.
fn pending_autobuyer_money(p: &CampaignPlan, r: &Recorded) -> Money {
    let each = |a: &Action| match a {
        Action::CreateAutobuyer {
            monthly_budget,
            running: true,
            ..
        } => *monthly_budget,
        Action::SetAutobuyer {
            name,
            running: true,
            ..
        } => r
            .ids
            .autobuyers
            .get(name)
            .filter(|x| !x.running)
            .map(|x| x.monthly_budget)
            .unwrap_or_default(),
        _ => Money::ZERO,
    };
    p.actions.iter().map(each).fold(Money::ZERO, |acc, m| {
        acc.checked_add(m).unwrap_or(Money::MAX)
    })
}

/// Plans a campaign whose file is gone: nothing is destroyed, but no money keeps flowing —
/// its running autobuyers are stopped, and nothing new is bought.
pub fn plan_removed(name: &str, r: &Recorded) -> CampaignPlan {
    let mut p = CampaignPlan {
        campaign: name.to_string(),
        actions: Vec::new(),
        notices: vec![
            "campaign file removed: nothing new is bought; held links stay (the API has no delete)"
                .into(),
        ],
        spending_stopped: Some("campaign file removed".into()),
        money: money_view(r, Money::ZERO, Money::ZERO),
    };
    settle_actions(r, &mut p);
    for (ab, rec) in &r.ids.autobuyers {
        if rec.running {
            let why = "its campaign file was removed".to_string();
            p.actions.push(Action::SetAutobuyer {
                name: ab.clone(),
                id: rec.id,
                running: false,
                why,
            });
        }
    }
    p
}

fn settle_actions(r: &Recorded, p: &mut CampaignPlan) {
    for i in &r.uncertain {
        let how = super::settle::policy(i.kind).to_string();
        p.actions.push(Action::Settle {
            intent_id: i.id.0,
            kind: i.kind.as_str().to_string(),
            how,
        });
    }
}

fn missing_texts(c: &Campaign, r: &Recorded) -> Vec<UrlTexts> {
    c.urls
        .iter()
        .filter_map(|u| {
            let texts: Vec<String> = u
                .texts
                .iter()
                .filter(|t| !r.ids.texts.contains_key(&(u.url.clone(), (*t).clone())))
                .cloned()
                .collect();
            (!texts.is_empty()).then(|| UrlTexts {
                url: u.url.clone(),
                texts,
            })
        })
        .collect()
}

fn autobuyer_actions(c: &Campaign, r: &Recorded, p: &mut CampaignPlan) {
    let spending_ok = p.spending_stopped.is_none();
    let mut wanted = BTreeSet::new();
    for ab in &c.autobuyers {
        wanted.insert(ab.name.clone());
        let desired_running = ab.state == AutobuyerState::Running && !c.paused;
        let fp = super::autobuyer_fingerprint(c, ab);
        match r.ids.autobuyers.get(&ab.name) {
            None if spending_ok || !desired_running => p.actions.push(Action::CreateAutobuyer {
                name: ab.name.clone(),
                monthly_budget: super::autobuyer_budget(ab),
                running: desired_running,
            }),
            None => p.notices.push(format!(
                "autobuyer {} is not created while spending is stopped",
                ab.name
            )),
            Some(rec) => {
                if rec.spec_fingerprint != fp {
                    p.notices.push(format!(
                        "autobuyer {} changed in the file, but the marketplace has no update call: the existing one \
                         (id {}) keeps its old settings; to replace it, give the new spec a new name (the old one is then stopped)",
                        ab.name, rec.id
                    ));
                }
                let confirmed = r.confirmed_running.get(&rec.id) == Some(&desired_running);
                if (rec.running != desired_running || !confirmed)
                    && (spending_ok || !desired_running)
                {
                    let why = if c.paused && !desired_running {
                        "the campaign is paused"
                    } else {
                        "desired state in the file"
                    };
                    p.actions.push(Action::SetAutobuyer {
                        name: ab.name.clone(),
                        id: rec.id,
                        running: desired_running,
                        why: why.into(),
                    });
                }
            }
        }
    }
    for (name, rec) in &r.ids.autobuyers {
        if !wanted.contains(name) && rec.running {
            let why = "removed from the campaign file".to_string();
            p.actions.push(Action::SetAutobuyer {
                name: name.clone(),
                id: rec.id,
                running: false,
                why,
            });
        }
    }
}

/// `after` is the journal as it will be once the planned autobuyers committed their budgets.
fn buy_action(
    c: &Campaign,
    after: &Recorded,
    p: &mut CampaignPlan,
    now: &Recorded,
    pending: Money,
) {
    let Some(limits) = round_limits(c, after) else {
        return;
    };
    if c.paused {
        return;
    }
    let max_links = limits.max_links();
    let worst = limits.worst_case();
    if max_links == 0 || worst == Money::ZERO {
        p.notices
            .push("the next buy round can buy nothing: a link or money limit is reached".into());
        return;
    }
    p.money = money_view(now, pending, worst);
    p.actions.push(Action::BuyRound {
        max_links,
        max_price: limits.max_price,
        worst_case: worst,
    });
}

/// The money now, and at worst once `pending` autobuyer budgets and a round of at most
/// `round_worst` are committed.
fn money_view(r: &Recorded, pending: Money, round_worst: Money) -> MoneyView {
    let b = &r.budget;
    let worst = b
        .committed
        .checked_add(pending)
        .and_then(|m| m.checked_add(round_worst))
        .unwrap_or(Money::MAX);
    MoneyView {
        cap: b.cap,
        committed: b.committed,
        uncertain: b.uncertain,
        worst_after_round: worst,
        headroom: Money::saturating_headroom(b.cap, b.committed),
        headroom_after_round: Money::saturating_headroom(b.cap, worst),
        links_total: b.links_total,
        total_links_cap: b.total_cap,
        links_today: b.links_today,
        daily_links_cap: b.daily_cap,
    }
}

#[cfg(test)]
mod tests;
