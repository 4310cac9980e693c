//! The diff between what a campaign file wants and what the journal recorded: a list of
//! [`Action`]s and the money they imply. Pure — no I/O — so `plan` shows exactly what `once`
//! and `run` will do, and tests can check it without a marketplace.
//!
//! Releases come before acquisitions: stops (autobuyers wanted stopped, paused or removed
//! from the file) and their settlement are planned first, then creations and starts, each
//! only if it fits under the cap after what comes before it, then the round within what is
//! left. A changed autobuyer spec wanted running is a replacement (`replace.rs`): the old
//! one's stop and settlement join the releases, the new one's creation comes first among the
//! acquisitions, all or nothing. What does not fit is a `!` notice and in `unapplied`, never counted: the worst case
//! `plan` shows is over the cap only when the commitment already is (and then a `!` says
//! so). Property-tested in `plan/tests.rs`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::campaign::{AutobuyerState, Campaign, Pacing};
use linkrunner_domain::market::UrlTexts;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{AutobuyerRecord, BudgetSnapshot, SwitchState};

use super::caps::LinkUse;
use super::choose::RoundLimits;
use super::recorded::Recorded;
use super::spread::TodayShare;

/// One thing the engine will do for a campaign. A pass runs them in the order `plan`
/// lists them: settle, free creations, releases, acquisitions, the round, the link sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    CreateProject {
        domain: String,
    },
    /// The file adopts an existing project (issue 24): nothing is created; `found` says what
    /// the journal knows it holds. Shown until the operator's `resolve adopt`. Its effect is
    /// the journal's record of `adopting` (`effects/adopt.rs`), which a pass runs first, before
    /// it reads the link list and plans (`decide::pass::pre_plan`).
    AdoptProject {
        project_id: i64,
        found: String,
        #[serde(skip)]
        adopting: super::adoption::Adopting,
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
    /// `reserve`: what a start adds to the commitment (its budget, less what it already counts).
    SetAutobuyer {
        name: String,
        id: i64,
        running: bool,
        why: String,
        reserve: Money,
    },
    /// A changed spec applied by replacement (the API has no update): the old autobuyer's stop
    /// and its settlement are the actions before it; this creates the new one, of the same
    /// name, with what is left of the file's limits, and starts it if the file wants it
    /// running. `adds`: the new budget; the old one's links stay counted at their rent.
    ReplaceAutobuyer {
        name: String,
        old: super::replace::AutobuyerSide,
        new: super::replace::AutobuyerSide,
        urls: Vec<super::replace::ReplacedUrl>,
        adds: Money,
        releases: Money,
    },
    /// A confirmed stop is settled once the list had the settle grace to show the autobuyer's
    /// last links: its budget leaves the commitment, the rent of its links stays. (Right after
    /// the creation of an autobuyer wanted stopped, whose `id` is then not known yet: 0.)
    SettleStop {
        name: String,
        id: i64,
        releases: Money,
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
    /// Whether the action changes anything on the marketplace or in the commitment (a link
    /// sync only reads).
    pub(crate) fn is_change(&self) -> bool {
        !matches!(self, Action::SyncLinks)
    }

    /// A closed label for logs and spans.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Action::CreateProject { .. } => "create_project",
            Action::AdoptProject { .. } => "adopt_project",
            Action::AddTexts { .. } => "add_texts",
            Action::CreateFilter { .. } => "create_filter",
            Action::CreateAutobuyer { .. } => "create_autobuyer",
            Action::ReplaceAutobuyer { .. } => "replace_autobuyer",
            Action::SetAutobuyer { running: true, .. } => "start_autobuyer",
            Action::SetAutobuyer { running: false, .. } => "stop_autobuyer",
            Action::SettleStop { .. } => "settle_stop",
            Action::Settle { .. } => "settle",
            Action::BuyRound { .. } => "buy_round",
            Action::SyncLinks => "sync_links",
        }
    }

    /// Whether it waits for `resolve adopt` on an adopted project: every change (settling
    /// uncertain intents, the link sync and the adoption itself do not).
    pub(crate) fn waits_for_adoption(&self) -> bool {
        !matches!(
            self,
            Action::SyncLinks | Action::Settle { .. } | Action::AdoptProject { .. }
        )
    }

    /// Whether it commits more money (creations, starts, rounds): what a cap can refuse.
    #[cfg(test)]
    pub(crate) fn is_acquisition(&self) -> bool {
        matches!(
            self,
            Action::CreateAutobuyer { .. }
                | Action::ReplaceAutobuyer { .. }
                | Action::SetAutobuyer { running: true, .. }
                | Action::BuyRound { .. }
        )
    }

    /// The `- old` / `+ new` lines of a replacement, shown under its description; none for
    /// other actions.
    pub(crate) fn diff(&self) -> Vec<String> {
        match self {
            Action::ReplaceAutobuyer { old, new, urls, .. } => {
                super::replace::diff_lines(old, new, urls)
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Action::CreateProject { domain } => format!("create the project for {domain}"),
            Action::AdoptProject { found, .. } => found.clone(),
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
                    "stop it (its budget counts until the stop is settled)"
                }
            ),
            Action::SetAutobuyer {
                name,
                id,
                running,
                why,
                reserve,
            } => match running {
                true => {
                    format!("start autobuyer {name} (id {id}, adds {reserve} RUB/month): {why}")
                }
                false => format!("stop autobuyer {name} (id {id}): {why}"),
            },
            Action::ReplaceAutobuyer {
                name,
                old,
                adds,
                releases,
                ..
            } => format!(
                "replace autobuyer {name} (its spec changed; the marketplace has no update): the old one \
                 (id {}) is stopped first and releases {releases} RUB/month once settled, the rent of its \
                 links stays counted; then the new one is created (adds {adds} RUB/month) and started",
                old.id.unwrap_or_default(),
            ),
            Action::SettleStop { name, releases, .. } => format!(
                "settle the stop of autobuyer {name} once the link list had the settle grace to show its \
                 last links (waited for when a creation or start below needs the money, else at a later \
                 pass): releases {releases} RUB/month, the rent of its links stays counted"
            ),
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

/// The money view of a campaign: what it is committed to now and at worst after the pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MoneyView {
    pub cap: Money,
    pub(crate) committed: Money,
    pub(crate) uncertain: Money,
    /// Released by the pass's settled stops, before anything is acquired.
    pub(crate) releases: Money,
    /// Committed by the autobuyers the pass creates or starts.
    pub(crate) acquisitions: Money,
    pub worst_after_round: Money,
    pub(crate) headroom: Money,
    pub(crate) headroom_after_round: Money,
    #[serde(flatten)]
    pub(crate) links: LinkUse,
    /// Under even pacing, today's share for buy rounds after this pass's releases and
    /// acquisitions (issue 33); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) today_share: Option<TodayShare>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignPlan {
    pub(crate) campaign: String,
    pub actions: Vec<Action>,
    /// Things that cannot or will not be applied, said plainly (`!` lines).
    pub notices: Vec<String>,
    /// What the file asks that this pass will not do (a cap, a missing release): each also
    /// a notice. A pass with any is `blocked`, never `converged`.
    pub unapplied: Vec<String>,
    /// Why spending is stopped, when it is (credentials rejected, waiting for an operator, paused).
    pub(crate) spending_stopped: Option<String>,
    /// The file's caps that differ from those the journal recorded: the next pass records
    /// them. A money edit is a change even when nothing is created, started or bought.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) cap_changes: Vec<CapChange>,
    /// The file asks more than may be committed without a person (issue 33): the amount and
    /// what is spent meanwhile; also a notice and unapplied.
    #[serde(skip_serializing_if = "Option::is_none")]
    waiting_for_approval: Option<super::approval::Waiting>,
    /// The file says `renamed_from` and the journal holds the old name: the next pass hands
    /// its record to this campaign first (`decide::rename`); this plan is against that record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) renamed: Option<super::rename::Renamed>,
    /// URLs the file gives under a new spelling with their recorded `url_id`: the next pass
    /// re-spells them first (`decide::respell`); this plan is against the re-spelt record.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) respelt: Vec<super::respell::Respelt>,
    /// Autobuyers the pending rename carries from the old name (`moved_from`, `decide::moves`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) moved: Vec<super::moves::Moved>,
    pub money: MoneyView,
}

/// A cap of the file that differs from the one the journal recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "cap", rename_all = "snake_case")]
pub(crate) enum CapChange {
    Monthly { recorded: Money, file: Money },
    DailyLinks { recorded: u32, file: u32 },
    TotalLinks { recorded: u32, file: u32 },
}

impl CapChange {
    /// `monthly cap 2500 → 3000 RUB`, `daily links cap 3 → 5`.
    pub(crate) fn describe(&self) -> String {
        match self {
            CapChange::Monthly { recorded, file } => {
                format!("record the monthly cap {recorded} → {file} RUB")
            }
            CapChange::DailyLinks { recorded, file } => {
                format!("record the daily links cap {recorded} → {file}")
            }
            CapChange::TotalLinks { recorded, file } => {
                format!("record the total links cap {recorded} → {file}")
            }
        }
    }
}

/// The caps of `c` that differ from what `r` recorded (none for a campaign never recorded:
/// its recorded caps are the file's).
fn cap_changes(c: &Campaign, r: &Recorded) -> Vec<CapChange> {
    let b = &r.budget;
    let mut v = Vec::new();
    // Past what is approved, the cap recorded is the most that may be committed without a
    // person (`approval.rs`): that is what the next pass records.
    let monthly = super::approval::monthly_cap(c, b);
    if b.cap != monthly {
        v.push(CapChange::Monthly {
            recorded: b.cap,
            file: monthly,
        });
    }
    if b.daily_cap != c.budget.daily_links {
        v.push(CapChange::DailyLinks {
            recorded: b.daily_cap,
            file: c.budget.daily_links,
        });
    }
    if b.total_cap != c.budget.total_links {
        v.push(CapChange::TotalLinks {
            recorded: b.total_cap,
            file: c.budget.total_links,
        });
    }
    v
}

impl CampaignPlan {
    /// Anything to do: an action that changes something, or a cap to record.
    pub fn has_changes(&self) -> bool {
        self.actions.iter().any(Action::is_change)
            || !self.cap_changes.is_empty()
            || self.renamed.is_some()
            || !self.respelt.is_empty()
    }

    fn not_applied(&mut self, why: String) {
        self.notices.push(why.clone());
        self.unapplied.push(why);
    }
}

/// What the next round may buy, given the campaign and what is already committed.
/// Under even pacing the money is also bounded by what is left of today's share.
pub(crate) fn round_limits(c: &Campaign, r: &Recorded) -> Option<RoundLimits> {
    let buy = c.buy.as_ref()?;
    let b = &r.budget;
    let headroom = Money::saturating_headroom(b.cap, b.committed);
    let monthly_headroom = match (c.budget.pacing, today_share(c, b)) {
        (Pacing::Asap, _) => headroom,
        (Pacing::Even, Some(s)) => headroom.min(s.left),
        // No day read (never from the journal the engine buys with): nothing, not everything.
        (Pacing::Even, None) => Money::ZERO,
    };
    Some(RoundLimits {
        order: buy.order,
        seed: r.budget.links_total as u64 ^ r.budget.committed.kopecks() as u64,
        per_run: buy.per_run,
        max_price: c.budget.max_link_price,
        monthly_headroom,
        daily_left: b.daily_cap.saturating_sub(b.links_today),
        total_left: b.total_cap.saturating_sub(b.links_total),
    })
}

/// Today's share of what is left for buy rounds, when the campaign paces evenly and the
/// journal was read for a day (`None` otherwise).
pub(crate) fn today_share(c: &Campaign, b: &BudgetSnapshot) -> Option<TodayShare> {
    match (c.budget.pacing, b.day) {
        (Pacing::Even, Some(day)) => Some(super::spread::today_share(
            day,
            Money::saturating_headroom(b.cap, b.committed),
            b.committed_today,
        )),
        _ => None,
    }
}

/// The money a pass moves, in the order it moves it: releases first, then acquisitions
/// while they fit.
#[derive(Debug, Clone, Copy)]
struct Tally {
    cap: Money,
    committed: Money,
    releases: Money,
    acquisitions: Money,
}

impl Tally {
    fn after(&self) -> Money {
        self.committed
            .checked_add(self.acquisitions)
            .unwrap_or(Money::MAX)
            .checked_sub(self.releases)
            .unwrap_or(Money::ZERO)
            .max(Money::ZERO)
    }

    /// Counts `need` if it fits under the cap after what is already counted.
    fn take(&mut self, need: Money) -> Result<(), Money> {
        let left = Money::saturating_headroom(self.cap, self.after());
        if need > left {
            return Err(left);
        }
        self.acquisitions = self.acquisitions.checked_add(need).unwrap_or(Money::MAX);
        Ok(())
    }
}

/// Plans one campaign that has a valid file. The caps are the file's, which may be newer
/// than what the journal last recorded.
pub fn plan_campaign(c: &Campaign, r: &Recorded, buy_round: bool) -> CampaignPlan {
    let caps = cap_changes(c, r);
    let waiting = super::approval::approval_for(c, &r.budget)
        .as_ref()
        .and_then(super::approval::waiting);
    let mut r = r.clone();
    r.budget.cap = super::approval::monthly_cap(c, &r.budget);
    r.budget.daily_cap = c.budget.daily_links;
    r.budget.total_cap = c.budget.total_links;
    if let Some(why) = super::adoption::project_clash(c, &r) {
        let mut p = new_plan(&c.name, &r, Some(why.clone()));
        p.not_applied(why);
        return p;
    }
    let respelling = match super::respell::respelling(c, &r) {
        Ok(s) => s,
        Err(why) => return plan_claimed(&c.name, &r, &why),
    };
    if !respelling.is_empty() {
        r = super::respell::applied(&r, &respelling);
    }
    let r = &r;
    let mut p = new_plan(&c.name, r, r.spending_stopped(c.paused));
    p.respelt = respelling.urls;
    p.cap_changes = caps;
    if let Some(w) = waiting {
        p.not_applied(w.describe(&c.name));
        p.waiting_for_approval = Some(w);
    }
    settle_actions(r, &mut p);
    free_creations(c, r, &mut p);
    p.notices.extend(super::adoption::drift(r));
    let wanted = desired_states(c, r);
    let mut t = releases(r, &wanted, &mut p);
    let replaced = replacements(c, r, &mut t, &mut p);
    over_cap_notice(&t, &mut p);
    p.actions.extend(replaced);
    acquisitions(c, r, &mut t, &mut p);
    if buy_round && p.spending_stopped.is_none() && !c.paused {
        buy_action(c, r, &mut t, &mut p);
    }
    adoption_gate(c, r, &mut p);
    p.money = money_view(r, &t, Money::ZERO);
    if let Some(Action::BuyRound { worst_case, .. }) = p
        .actions
        .iter()
        .find(|a| matches!(a, Action::BuyRound { .. }))
    {
        p.money = money_view(r, &t, *worst_case);
    }
    let mut after = r.budget.clone();
    after.committed = t.after();
    p.money.today_share = today_share(c, &after);
    p.actions.push(Action::SyncLinks);
    p
}

/// Plans a campaign whose file is gone: nothing is destroyed, but no money keeps flowing —
/// its running autobuyers are stopped (and their stops settled), and nothing new is bought.
///
/// A campaign held by its file (invalid, or its removal held) is planned so too while an
/// operator's halt covers it: the halt stops every running autobuyer, and says so.
pub fn plan_removed(name: &str, r: &Recorded) -> CampaignPlan {
    let halt = r.halts.iter().find(|h| h.is_operator());
    let (stopped, why) = match halt {
        Some(h) => (h.describe(), "all spending halted by an operator"),
        None => (
            "campaign file removed".into(),
            "removed from the campaign file",
        ),
    };
    let mut p = new_plan(name, r, Some(stopped));
    p.notices.push(match halt {
        Some(_) => "no campaign file loaded (removed, invalid, or its removal held), under an operator's halt: its autobuyers stop, nothing new is bought; held links stay".into(),
        None => "campaign file removed: nothing new is bought; held links stay (the API has no delete)".into(),
    });
    settle_actions(r, &mut p);
    let stop_all: BTreeMap<String, (bool, &'static str)> = r
        .ids
        .autobuyers
        .keys()
        .map(|n| (n.clone(), (false, why)))
        .collect();
    let t = releases(r, &stop_all, &mut p);
    p.money = money_view(r, &t, Money::ZERO);
    if r.ids.project.is_some() {
        p.actions.push(Action::SyncLinks);
    }
    p
}

/// Plans a campaign whose file exists but fails validation: nothing at all. It is kept as
/// recorded (running autobuyers keep running, nothing new is bought) until the file is
/// fixed or really removed (issue 25: an invalid file is not a removal).
pub(crate) fn plan_held(name: &str, r: &Recorded, file: &str) -> CampaignPlan {
    let mut p = new_plan(name, r, None);
    p.notices.push(format!(
        "campaign file {file} fails validation: the campaign is kept as recorded, nothing is stopped or bought until the file is fixed or removed"
    ));
    p
}

/// A new campaign whose site a recorded campaign's project is for (`decide::rename::
/// domain_owner`): blocked, nothing created or bought; `why` names the owner and the way out.
pub(crate) fn plan_claimed(name: &str, r: &Recorded, why: &str) -> CampaignPlan {
    let mut p = new_plan(name, r, None);
    p.not_applied(format!("blocked: {why}"));
    p
}

fn new_plan(name: &str, r: &Recorded, spending_stopped: Option<String>) -> CampaignPlan {
    let t = tally(r);
    CampaignPlan {
        campaign: name.to_string(),
        actions: Vec::new(),
        notices: Vec::new(),
        unapplied: Vec::new(),
        spending_stopped,
        cap_changes: Vec::new(),
        waiting_for_approval: None,
        renamed: None,
        respelt: Vec::new(),
        moved: Vec::new(),
        money: money_view(r, &t, Money::ZERO),
    }
}

fn tally(r: &Recorded) -> Tally {
    Tally {
        cap: r.budget.cap,
        committed: r.budget.committed,
        releases: Money::ZERO,
        acquisitions: Money::ZERO,
    }
}

fn settle_actions(r: &Recorded, p: &mut CampaignPlan) {
    for i in &r.uncertain {
        let how = super::policy::policy(i.kind).to_string();
        p.actions.push(Action::Settle {
            intent_id: i.id.0,
            kind: i.kind.as_str().to_string(),
            how,
        });
    }
}

/// The action that records what a file adopts (`adopting`), described with what the journal
/// knows the project holds.
pub(crate) fn adopt_project(r: &Recorded, adopting: super::adoption::Adopting) -> Action {
    let project_id = adopting.project_id;
    Action::AdoptProject {
        project_id,
        found: super::adoption::found(r).describe(project_id),
        adopting,
    }
}

/// Project, promoted URLs and texts, filters: free, so they never wait for money. An
/// adopted project is never created: it is adopted, and shown until the operator's word.
fn free_creations(c: &Campaign, r: &Recorded, p: &mut CampaignPlan) {
    match c.project_id {
        Some(_) if r.ids.project.is_none() || r.ids.account.adoption_pending() => {
            let step = super::adoption::adoption_step(c, r);
            p.actions.extend(step.record.map(|a| adopt_project(r, a)));
        }
        Some(_) => {}
        None if r.ids.project.is_none() => p.actions.push(Action::CreateProject {
            domain: c.domain.clone(),
        }),
        None => {}
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
}

/// Each autobuyer of the file, by name: whether it is wanted running, and why not. An
/// operator's halt stops running autobuyers too; once `resume` lifts it, the file's wish
/// holds again and the plan starts those it still wants running.
fn desired_states(c: &Campaign, r: &Recorded) -> BTreeMap<String, (bool, &'static str)> {
    let halt = r.operator_halt();
    let halted = halt.is_some();
    let every_account = halt.is_some_and(|h| h.is_global());
    let one_account = halt.is_some_and(|h| h.is_wide() && !h.is_global());
    c.autobuyers
        .iter()
        .map(|ab| {
            let wanted = ab.state == AutobuyerState::Running;
            let running = wanted && !c.paused && !halted;
            let why = if c.paused && wanted {
                "the campaign is paused"
            } else if halted && wanted && every_account {
                "an operator halted all spending (`linkrunner resume` lifts it)"
            } else if halted && wanted && one_account {
                "an operator halted this account's spending (`linkrunner resume --account` lifts it)"
            } else if halted && wanted {
                "this campaign is halted (`linkrunner resume --campaign` lifts it)"
            } else {
                "desired state in the file"
            };
            (ab.name.clone(), (running, why))
        })
        .collect()
}

/// Stops of every recorded autobuyer not wanted running (removed from the file included)
/// whose stop is not confirmed, then the settlement of every stop: releases come first.
fn releases(
    r: &Recorded,
    wanted: &BTreeMap<String, (bool, &'static str)>,
    p: &mut CampaignPlan,
) -> Tally {
    let mut t = tally(r);
    for (name, rec) in &r.ids.autobuyers {
        let (running, why) = wanted
            .get(name)
            .copied()
            .unwrap_or((false, "removed from the campaign file"));
        if running {
            continue;
        }
        if rec.switch_state != SwitchState::Stopped {
            p.actions.push(Action::SetAutobuyer {
                name: name.clone(),
                id: rec.id,
                running: false,
                why: why.into(),
                reserve: Money::ZERO,
            });
        }
        if rec.running {
            let releases = rec
                .reserved
                .checked_sub(attributed_rent(r, name))
                .unwrap_or(Money::ZERO)
                .max(Money::ZERO);
            t.releases = t.releases.checked_add(releases).unwrap_or(Money::MAX);
            p.actions.push(Action::SettleStop {
                name: name.clone(),
                id: rec.id,
                releases,
            });
        }
    }
    t
}

/// The rent of the links the list showed for an autobuyer that have not left.
pub(crate) fn attributed_rent(r: &Recorded, name: &str) -> Money {
    r.foreign
        .iter()
        .filter(|f| f.released.is_none() && f.autobuyer.as_deref() == Some(name))
        .filter_map(|f| f.price)
        .fold(Money::ZERO, |acc, m| {
            acc.checked_add(m).unwrap_or(Money::MAX)
        })
}

fn over_cap_notice(t: &Tally, p: &mut CampaignPlan) {
    if t.after() > t.cap {
        p.notices.push(format!(
            "committed {} RUB is above the cap of {} RUB even after this pass's releases: nothing new is \
             created, started or bought until links leave or the cap is raised",
            t.after(),
            t.cap
        ));
    }
}

/// Creations and starts, in file order, each only if it fits what is left after the
/// releases; what does not fit is said and not counted (`!`).
fn acquisitions(c: &Campaign, r: &Recorded, t: &mut Tally, p: &mut CampaignPlan) {
    let spending_ok = p.spending_stopped.is_none();
    for ab in &c.autobuyers {
        let desired_running = ab.state == AutobuyerState::Running && !c.paused;
        match r.ids.autobuyers.get(&ab.name) {
            // No autobuyer is created under an operator's halt, not even a stopped one: its
            // creation reserves its budget, and may start it.
            None if r.operator_halt().is_some() => p.notices.push(format!(
                "autobuyer {} is not created while an operator's halt stops all spending",
                ab.name
            )),
            None => create_autobuyer(ab, desired_running, spending_ok, t, p),
            // Replaced, or said why not, by `replacements`.
            Some(rec) if rec.spec_fingerprint != super::caps::autobuyer_fingerprint(c, ab) => {}
            Some(rec) => {
                if desired_running && spending_ok && rec.switch_state != SwitchState::Running {
                    start_autobuyer(&ab.name, rec, t, p);
                }
            }
        }
    }
}

fn create_autobuyer(
    ab: &crate::campaign::Autobuyer,
    running: bool,
    spending_ok: bool,
    t: &mut Tally,
    p: &mut CampaignPlan,
) {
    if !spending_ok && running {
        p.notices.push(format!(
            "autobuyer {} is not created while spending is stopped",
            ab.name
        ));
        return;
    }
    let budget = super::caps::autobuyer_budget(ab);
    match t.take(budget) {
        Ok(()) => {
            p.actions.push(Action::CreateAutobuyer {
                name: ab.name.clone(),
                monthly_budget: budget,
                running,
            });
            if !running {
                // It may have started at its creation; its stop is settled like any other.
                t.releases = t.releases.checked_add(budget).unwrap_or(Money::MAX);
                p.actions.push(Action::SettleStop {
                    name: ab.name.clone(),
                    id: 0,
                    releases: budget,
                });
            }
        }
        Err(left) => p.not_applied(format!(
            "autobuyer {} is not created: its budget of {budget} RUB must fit under the cap while it is \
             created, and {left} RUB are left after this pass's releases",
            ab.name
        )),
    }
}

/// Autobuyers whose spec changed in the file. Wanted running (and spending allowed): the old
/// one's stop and settlement are planned here, with the releases, and the new one's creation
/// is returned, to come before the other acquisitions; else a notice says when it happens.
fn replacements(c: &Campaign, r: &Recorded, t: &mut Tally, p: &mut CampaignPlan) -> Vec<Action> {
    let spending_ok = p.spending_stopped.is_none();
    let mut creations = Vec::new();
    for ab in &c.autobuyers {
        let Some(rec) = r.ids.autobuyers.get(&ab.name) else {
            continue;
        };
        if rec.spec_fingerprint == super::caps::autobuyer_fingerprint(c, ab) {
            continue;
        }
        // An adopted autobuyer (`id` in the file) is replaced like one linkrunner created: the
        // file's `id` then names the stopped old one, which the journal keeps accepting.
        let desired_running = ab.state == AutobuyerState::Running && !c.paused;
        let why = (!desired_running)
            .then_some("the file wants it stopped")
            .or((!spending_ok).then_some("spending is stopped"));
        match why {
            Some(why) => p.notices.push(format!(
                "autobuyer {} changed in the file: it is replaced (stopped, then created anew with the \
                 new spec) once {why} no longer holds; until then the old one (id {}) keeps its settings",
                ab.name, rec.id
            )),
            None => creations.extend(replace_autobuyer(ab, rec, r, t, p)),
        }
    }
    creations
}

/// One replacement, all or nothing: the old autobuyer's stop and its settlement (pushed), the
/// new one's creation (returned). The commitment during and after counts the old one's links
/// at their rent plus the new budget; if that does not fit under the cap, nothing is stopped.
fn replace_autobuyer(
    ab: &crate::campaign::Autobuyer,
    rec: &AutobuyerRecord,
    r: &Recorded,
    t: &mut Tally,
    p: &mut CampaignPlan,
) -> Option<Action> {
    let (sent, urls) = super::replace::replacement_spec(ab, r);
    if sent.urls.is_empty() {
        p.not_applied(format!(
            "autobuyer {} is not replaced: the links bought before use up the total_links_limit of every \
             URL in the file, so the old one (id {}) keeps its settings and is not stopped",
            ab.name, rec.id
        ));
        return None;
    }
    let adds = super::caps::autobuyer_budget(&sent);
    let releases = if rec.running {
        rec.reserved
            .checked_sub(attributed_rent(r, &ab.name))
            .unwrap_or(Money::ZERO)
            .max(Money::ZERO)
    } else {
        Money::ZERO
    };
    t.releases = t.releases.checked_add(releases).unwrap_or(Money::MAX);
    if let Err(left) = t.take(adds) {
        t.releases = t.releases.checked_sub(releases).unwrap_or(Money::ZERO);
        p.not_applied(format!(
            "autobuyer {} is not replaced, and the old one (id {}) is not stopped: its links stay counted at \
             their rent and the new budget of {adds} RUB/month must fit under the cap, and {left} RUB are \
             left after the old budget's release",
            ab.name, rec.id
        ));
        return None;
    }
    if rec.switch_state != SwitchState::Stopped {
        p.actions.push(Action::SetAutobuyer {
            name: ab.name.clone(),
            id: rec.id,
            running: false,
            why: "replaced: its spec changed in the file".into(),
            reserve: Money::ZERO,
        });
    }
    if rec.running {
        p.actions.push(Action::SettleStop {
            name: ab.name.clone(),
            id: rec.id,
            releases,
        });
    }
    Some(Action::ReplaceAutobuyer {
        name: ab.name.clone(),
        old: super::replace::old_side(r, &ab.name, rec.id, rec.monthly_budget),
        new: super::replace::new_side(&sent, adds),
        urls,
        adds,
        releases,
    })
}

fn start_autobuyer(name: &str, rec: &AutobuyerRecord, t: &mut Tally, p: &mut CampaignPlan) {
    let reserve = if rec.running {
        Money::ZERO
    } else {
        rec.monthly_budget
            .checked_sub(rec.reserved)
            .unwrap_or(Money::ZERO)
            .max(Money::ZERO)
    };
    match t.take(reserve) {
        Ok(()) => p.actions.push(Action::SetAutobuyer {
            name: name.to_string(),
            id: rec.id,
            running: true,
            why: "desired state in the file".into(),
            reserve,
        }),
        Err(left) => p.not_applied(format!(
            "autobuyer {name} (id {}) is not started: it adds {reserve} RUB/month and {left} RUB are left \
             after this pass's releases",
            rec.id
        )),
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

/// Changes on an adopted project (creating texts or autobuyers, starting, stopping, buying)
/// wait for the operator's `resolve adopt`, given after reading this plan: a mistyped id
/// would adopt someone else's project, and the API cannot confirm the domain. Reading the
/// link list does not wait.
fn adoption_gate(c: &Campaign, r: &Recorded, p: &mut CampaignPlan) {
    let Some(project_id) = c.project_id else {
        return;
    };
    let pending = r.ids.project.is_none() || r.ids.account.adoption_pending();
    let waiting = p.actions.iter().any(|a| a.waits_for_adoption());
    if pending && waiting {
        p.not_applied(format!(
            "changes on adopted project {project_id} (the actions above but the link sync) wait for `linkrunner resolve adopt {} --reason …`, given after reading this plan",
            c.name
        ));
    }
}

/// The round, within what is left once the pass's releases and acquisitions are counted;
/// URLs held back while the list may be cut are said, and a round with none left is not run.
fn buy_action(c: &Campaign, r: &Recorded, t: &mut Tally, p: &mut CampaignPlan) {
    // Without buy rounds nothing is held back: a file that only adopts, or only runs
    // autobuyers, is not blocked by a list that may be cut.
    if c.buy.is_none() {
        return;
    }
    let back = super::adoption::held_back(r, &c.name);
    for b in back.iter().take(10) {
        p.notices.push(b.why.clone());
    }
    if back.len() > 10 {
        p.notices.push(format!(
            "buying stopped for {} more URL(s) for the same reason",
            back.len() - 10
        ));
    }
    if !back.is_empty() && back.len() >= c.urls.len() {
        p.unapplied
            .push("no buy round: buying is stopped for every URL (see above)".into());
        return;
    }
    let left = super::contested::left_to_autobuyers(c, r);
    p.notices.extend(
        left.iter()
            .take(10)
            .map(super::contested::LeftToAutobuyer::describe),
    );
    if left.len() > 10 {
        p.notices.push(format!(
            "buy rounds leave {} more URL(s) to their autobuyers",
            left.len() - 10
        ));
    }
    p.notices
        .extend(super::lag::lag_warning(c, r).map(|w| w.describe()));
    if !left.is_empty() && left.len() >= c.urls.len() {
        p.notices.push(
            "no buy round: every URL is left to its autobuyer (buy.skip_autobuyer_urls)".into(),
        );
        return;
    }
    let mut after = r.clone();
    after.budget.committed = t.after();
    let Some(limits) = round_limits(c, &after) else {
        return;
    };
    let max_links = limits.max_links();
    let worst = limits.worst_case();
    if let Some(s) = today_share(c, &after.budget).filter(|s| s.left == Money::ZERO)
        && max_links > 0
        && Money::saturating_headroom(after.budget.cap, after.budget.committed) > Money::ZERO
    {
        p.notices.push(format!(
            "the next buy round can buy nothing today: even pacing's share for {} ({} RUB) is used              ({} RUB); rounds buy again tomorrow",
            s.day, s.share, s.used
        ));
        return;
    }
    if max_links == 0 || worst == Money::ZERO {
        p.notices
            .push("the next buy round can buy nothing: a link or money limit is reached".into());
        return;
    }
    p.actions.push(Action::BuyRound {
        max_links,
        max_price: limits.max_price,
        worst_case: worst,
    });
}

/// The money now, and at worst once the pass's releases, acquisitions and a round of at
/// most `round_worst` are counted.
fn money_view(r: &Recorded, t: &Tally, round_worst: Money) -> MoneyView {
    let b = &r.budget;
    let worst = t.after().checked_add(round_worst).unwrap_or(Money::MAX);
    MoneyView {
        cap: t.cap,
        committed: b.committed,
        uncertain: b.uncertain,
        releases: t.releases,
        acquisitions: t.acquisitions,
        worst_after_round: worst,
        headroom: Money::saturating_headroom(t.cap, b.committed),
        headroom_after_round: Money::saturating_headroom(t.cap, worst),
        links: LinkUse::of(b),
        today_share: None,
    }
}

#[cfg(test)]
mod tests;
