//! One pass over the campaigns: for each, take its lease, settle what is uncertain, then run
//! the planned actions in order — the same actions `plan` shows.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::Semaphore;
use tracing::Instrument;

use crate::campaign::{Campaign, LoadedCampaign};
use crate::market::Market;
use crate::store::{CampaignCaps, LeaseToken};

use super::Engine;
use super::journal::EngineError;
use super::plan::{self, Action};
use super::recorded::Recorded;

/// How one campaign's pass ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignReport {
    pub campaign: String,
    /// `converged`, `spending_stopped`, `blocked` (a step cannot run yet: a cap, a missing id),
    /// `skipped` (lease held elsewhere) or `failed`.
    pub outcome: &'static str,
    pub detail: Option<String>,
    pub bought: u32,
    pub uncertain: u32,
    pub done: Vec<String>,
}

impl CampaignReport {
    fn new(campaign: &str) -> Self {
        CampaignReport {
            campaign: campaign.into(),
            outcome: "converged",
            detail: None,
            bought: 0,
            uncertain: 0,
            done: Vec::new(),
        }
    }
    pub fn converged(&self) -> bool {
        self.outcome == "converged"
    }
}

impl<M: Market> Engine<M> {
    /// Reconciles every loaded campaign, and every recorded campaign whose file is gone,
    /// at most `campaign_concurrency` at once.
    pub async fn pass(
        &self,
        campaigns: &[LoadedCampaign],
        buy_round: bool,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, buy_round, true).await
    }

    /// Reconciles (no buying) some campaigns; with `include_removed`, also every recorded
    /// campaign whose file is gone.
    pub async fn pass_some(
        &self,
        campaigns: &[LoadedCampaign],
        include_removed: bool,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, false, include_removed).await
    }

    async fn pass_with(
        &self,
        campaigns: &[LoadedCampaign],
        buy_round: bool,
        include_removed: bool,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        let known: Vec<String> = if include_removed {
            self.store.campaign_names().await?
        } else {
            Vec::new()
        };
        let removed: Vec<String> = known
            .into_iter()
            .filter(|n| !campaigns.iter().any(|c| &c.campaign.name == n))
            .collect();
        let sem = Arc::new(Semaphore::new(self.settings.campaign_concurrency.max(1)));
        let mut set = tokio::task::JoinSet::new();
        for lc in campaigns {
            let (e, c, sem) = (self.clone(), lc.campaign.clone(), sem.clone());
            set.spawn(async move {
                let _permit = sem.acquire_owned().await;
                e.reconcile(Some(&c), &c.name, buy_round).await
            });
        }
        for name in removed {
            let (e, sem) = (self.clone(), sem.clone());
            set.spawn(async move {
                let _permit = sem.acquire_owned().await;
                e.reconcile(None, &name, false).await
            });
        }
        let mut reports = Vec::new();
        while let Some(r) = set.join_next().await {
            reports.push(r.unwrap_or_else(|e| {
                let mut r = CampaignReport::new("?");
                r.outcome = "failed";
                r.detail = Some(format!("task failed: {e}"));
                r
            }));
        }
        reports.sort_by(|a, b| a.campaign.cmp(&b.campaign));
        Ok(reports)
    }

    /// One campaign: `c` is `None` when its file was removed.
    pub async fn reconcile(
        &self,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
    ) -> CampaignReport {
        let span = tracing::info_span!("campaign", campaign = %name, holder = %self.holder);
        let lock = self.campaign_lock(name);
        let _guard = lock.lock().await;
        let mut report = CampaignReport::new(name);
        let result = self
            .reconcile_inner(c, name, buy_round, &mut report)
            .instrument(span)
            .await;
        if let Err(e) = result {
            if let EngineError::Auth(m) = &e {
                // A read answered 401/403 (a changing call has already halted): every campaign
                // stops spending, not only this one.
                if let Err(halt) = self.halt_for_credentials(m).await {
                    tracing::error!(error = %halt, "could not record the credentials halt");
                }
            }
            report.outcome = match e {
                EngineError::Auth(_) => "spending_stopped",
                EngineError::Blocked(_) => "blocked",
                _ => "failed",
            };
            tracing::warn!(campaign = %name, error = %e, kind = e.label(), "campaign pass did not converge");
            report.detail = Some(e.to_string());
        }
        report
    }

    async fn reconcile_inner(
        &self,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        if let Some(c) = c {
            let caps = CampaignCaps {
                name: c.name.clone(),
                monthly_cap: c.budget.monthly,
                daily_links: c.budget.daily_links,
                total_links: c.budget.total_links,
            };
            self.store.upsert_campaign(&caps, self.clock.now()).await?;
        }
        let now = self.clock.now();
        let Some(lease) = self
            .store
            .try_acquire_lease(name, &self.holder, self.settings.lease_ttl, now)
            .await?
        else {
            report.outcome = "skipped";
            report.detail = Some("another process holds this campaign's lease".into());
            return Ok(());
        };
        let renewal = self.keep_lease(lease.clone());
        let result = self
            .reconcile_leased(&lease, c, name, buy_round, report)
            .await;
        renewal.abort();
        // Releasing is a courtesy: a crashed holder's lease simply expires.
        let _ = self.store.release_lease(&lease).await;
        result
    }

    async fn reconcile_leased(
        &self,
        lease: &LeaseToken,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        let marked = self
            .store
            .mark_in_flight_uncertain(name, lease, self.clock.now())
            .await?;
        if marked > 0 {
            tracing::warn!(campaign = %name, intents = marked, "intents left in flight by a stopped process are now uncertain");
        }
        let r = self.load(name).await?;
        self.check_credentials(&r).await?;
        let settled = self.settle(lease, name, &r).await?;
        report.bought += settled.bought;
        let r = self.load(name).await?;
        let p = match c {
            Some(c) => plan::plan_campaign(c, &r, buy_round),
            None => plan::plan_removed(name, &r),
        };
        for action in &p.actions {
            if matches!(action, Action::Settle { .. }) {
                continue;
            }
            let r = self.load(name).await?;
            let step = tracing::info_span!("step", action = action.label(), fence = lease.fence);
            self.run_action(lease, c, name, &r, action, report)
                .instrument(step)
                .await?;
            tracing::debug!(campaign = %name, action = action.label(), "step done");
            report.done.push(action.describe());
        }
        let r = self.load(name).await?;
        report.uncertain = r.uncertain.len() as u32;
        if let Some(why) = r
            .spending_stopped(c.is_some_and(|c| c.paused))
            .filter(|_| !r.halts.is_empty() || c.is_none())
        {
            report.outcome = "spending_stopped";
            report.detail = Some(why);
        }
        Ok(())
    }

    async fn run_action(
        &self,
        lease: &LeaseToken,
        c: Option<&Campaign>,
        name: &str,
        r: &Recorded,
        action: &Action,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        let Some(c) = c else {
            if let Action::SetAutobuyer {
                name: ab,
                id,
                running,
                ..
            } = action
            {
                let rec = r.ids.autobuyers.get(ab);
                let budget = rec.map(|a| a.monthly_budget).unwrap_or_default();
                let generation = r.autobuyer_generations.get(id).copied().unwrap_or(0);
                return self
                    .set_autobuyer(lease, name, ab, *id, *running, true, budget, generation)
                    .await;
            }
            return Ok(());
        };
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
            Action::SetAutobuyer {
                name: ab,
                id,
                running,
                ..
            } => {
                let rec = r.ids.autobuyers.get(ab);
                let budget = rec.map(|a| a.monthly_budget).unwrap_or_default();
                let counted = rec.is_some_and(|a| a.running);
                let generation = r.autobuyer_generations.get(id).copied().unwrap_or(0);
                self.set_autobuyer(lease, name, ab, *id, *running, counted, budget, generation)
                    .await
            }
            Action::BuyRound { .. } => {
                let res = self.buy_round(lease, c, r).await?;
                report.bought += res.bought;
                self.metrics
                    .links_bought_total
                    .with_label_values(&[name])
                    .inc_by(u64::from(res.bought));
                Ok(())
            }
            Action::SyncLinks => self.sync_links(name, r).await.map(|_| ()),
            Action::Settle { .. } => Ok(()),
        }
    }

    /// Renews the lease every third of its lifetime while a pass runs; if renewal fails, the
    /// fence check in the store stops this pass from starting anything new.
    fn keep_lease(&self, mut lease: LeaseToken) -> tokio::task::JoinHandle<()> {
        let (store, clock, ttl) = (
            self.store.clone(),
            self.clock.clone(),
            self.settings.lease_ttl,
        );
        let every = (ttl / 3)
            .to_std()
            .unwrap_or(std::time::Duration::from_secs(10));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match store.renew_lease(&lease, ttl, clock.now()).await {
                    Ok(Some(l)) => lease = l,
                    _ => return,
                }
            }
        })
    }

    /// Any project the journal knows, of any campaign: a read on it tells whether the
    /// credentials work again.
    async fn any_project(&self) -> Result<Option<i64>, EngineError> {
        for name in self.store.campaign_names().await? {
            if let Some(p) = self.store.remote_ids(&name).await?.project {
                return Ok(Some(p.project_id));
            }
        }
        Ok(None)
    }

    pub async fn load(&self, name: &str) -> Result<Recorded, EngineError> {
        Ok(Recorded::load(&self.store, name, self.clock.now().date_naive()).await?)
    }

    /// While credentials are known to be rejected, a cheap read tells whether they work again;
    /// if it does, the halt is lifted, else nothing changing is attempted.
    async fn check_credentials(&self, r: &Recorded) -> Result<(), EngineError> {
        if !r.halts.iter().any(|(s, _, _)| s == "global") {
            return Ok(());
        }
        let probe = match r.ids.project.as_ref() {
            Some(p) => Some(p.project_id),
            None => self.any_project().await?,
        };
        let Some(project) = probe else {
            // No project exists yet, so nothing can have been bought: creating the project
            // (free) is the probe. Its 401 halts again; its success lets the next pass resume.
            return Ok(());
        };
        match self.market.list_links(project).await {
            Ok(_) => {
                self.store.clear_halt("global").await?;
                self.metrics.credentials_rejected.set(0);
                tracing::info!("credentials accepted again; spending resumes");
                Ok(())
            }
            Err(e) => Err(self.read_error(e)),
        }
    }
}
