//! Running one planned [`Action`] under the campaign's lease.

use crate::campaign::Campaign;
use crate::market::Market;
use linkrunner_domain::money::Money;

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use super::pass::CampaignReport;
use super::steps::AutobuyerSwitch;
use crate::decide::plan::Action;
use crate::decide::recorded::Recorded;

impl<M: Market> Engine<M> {
    /// Runs one action of campaign `name`. `c` is `None` for a campaign whose file was
    /// removed: only its stops, their settlement and the link sync run then. `wait_for_stops`:
    /// a stop's settlement waits for the settle grace (a later action needs its money).
    pub(super) async fn run_action(
        &self,
        lease: &HeldLease,
        (c, name): (Option<&Campaign>, &str),
        r: &Recorded,
        action: &Action,
        wait_for_stops: bool,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        match (action, c) {
            (
                Action::SetAutobuyer {
                    name: ab,
                    id,
                    running,
                    reserve,
                    ..
                },
                _,
            ) => {
                let switch = autobuyer_switch(r, name, ab, *id, *running, *reserve);
                self.set_autobuyer(lease, switch).await
            }
            (Action::SettleStop { name: ab, .. }, _) => {
                self.settle_stop(name, ab, c, r, wait_for_stops, report)
                    .await
            }
            (Action::SyncLinks, _) => {
                let fallback = r.fallback_price(c);
                let s = self.sync_list(name, r, fallback).await?;
                report.bought += s.bought + s.adopted;
                Ok(())
            }
            (Action::AdoptProject { adopting, .. }, _) => self.adopt(name, adopting).await,
            (Action::Settle { .. }, _) | (_, None) => Ok(()),
            (other, Some(c)) => self.run_acquisition(lease, c, name, r, other, report).await,
        }
    }

    async fn run_acquisition(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        name: &str,
        r: &Recorded,
        action: &Action,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        match action {
            Action::CreateProject { .. } => self.create_project(lease, c).await,
            Action::AddTexts { urls } => self.add_texts(lease, c, r, urls).await,
            Action::CreateFilter { name } => match c.filters.iter().find(|f| &f.name == name) {
                Some(f) => self.create_filter(lease, c, f).await,
                None => Ok(()),
            },
            Action::CreateAutobuyer { name, .. } => {
                match c.autobuyers.iter().find(|a| &a.name == name) {
                    Some(ab) => self.create_autobuyer(lease, c, r, ab).await,
                    None => Ok(()),
                }
            }
            Action::ReplaceAutobuyer { name, .. } => {
                match c.autobuyers.iter().find(|a| &a.name == name) {
                    Some(ab) => {
                        super::steps::old_autobuyer_settled(r, ab)?;
                        self.create_autobuyer(lease, c, r, ab).await
                    }
                    None => Ok(()),
                }
            }
            Action::BuyRound { .. } => {
                let res = self.buy_round(lease, c, r).await?;
                report.bought += res.bought;
                let prior = r.stall.as_ref().map_or(0, |s| s.rounds_without_purchase);
                let judgment = crate::decide::stall::judge(&res, prior);
                if let Some(s) = &judgment.stall {
                    tracing::warn!(campaign = %name, reason = s.reason.as_str(), detail = %s.detail, "buy round stalled: an operator must act");
                }
                report.judgment = Some(judgment);
                self.metrics.campaigns.bought(name, u64::from(res.bought));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Settles a confirmed stop once it is older than the settle grace (the list may show its
    /// last links late): waiting for that when an autobuyer creation or start later in the
    /// pass may need the money (`wait`), else leaving it to a later pass. Settling reads the
    /// list, which settles it if the read proves absence.
    async fn settle_stop(
        &self,
        name: &str,
        ab: &str,
        c: Option<&Campaign>,
        r: &Recorded,
        wait: bool,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        let Some(rec) = r.ids.autobuyers.get(ab) else {
            return Ok(());
        };
        if !rec.running {
            return Ok(());
        }
        let Some(stopped_at) = rec.stopped_at else {
            return Err(EngineError::Blocked(format!(
                "autobuyer {ab}: its stop is not confirmed yet, so its budget stays counted"
            )));
        };
        let due = stopped_at + self.settings.settle_grace;
        if let Ok(left) = (due - self.clock.now()).to_std() {
            if !wait {
                tracing::info!(
                    campaign = name,
                    autobuyer = ab,
                    "stop confirmed; it is settled at a pass after the settle grace"
                );
                return Ok(());
            }
            tracing::info!(
                campaign = name,
                autobuyer = ab,
                wait_ms = left.as_millis() as u64,
                until = %due.format("%Y-%m-%d %H:%M:%S UTC"),
                "waiting for the settle grace before settling the stop: a creation or start in this pass needs its money"
            );
            self.pause(left).await?;
        }
        let r = self.load(name).await?;
        let s = self.sync_list(name, &r, r.fallback_price(c)).await?;
        report.bought += s.bought + s.adopted;
        let settled = self.load(name).await?;
        match settled.ids.autobuyers.get(ab) {
            Some(rec) if rec.running => Err(EngineError::Blocked(format!(
                "autobuyer {ab}: its stop is not settled, so its budget stays counted: {}",
                s.why_not
                    .unwrap_or_else(|| "the link list has not had the settle grace yet".into())
            ))),
            _ => Ok(()),
        }
    }
}

/// A start or stop of autobuyer `ab` (id `id`) of `campaign`, with its budget, what a start
/// reserves and its generation as the journal records them. Not a rule: it copies what the
/// plan decided and the journal recorded into the step's arguments.
fn autobuyer_switch<'a>(
    r: &Recorded,
    campaign: &'a str,
    ab: &'a str,
    id: i64,
    running: bool,
    reserve: Money,
) -> AutobuyerSwitch<'a> {
    AutobuyerSwitch {
        campaign,
        name: ab,
        id,
        running,
        reserve,
        budget: r
            .ids
            .autobuyers
            .get(ab)
            .map(|a| a.monthly_budget)
            .unwrap_or_default(),
        generation: r.autobuyer_generations.get(&id).copied().unwrap_or(0),
    }
}
