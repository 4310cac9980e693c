//! One pass over the campaigns: for each, take its lease, settle what is uncertain, then run
//! the planned actions in order — the same actions `plan` shows.

use std::borrow::Borrow;

use serde::Serialize;
use tracing::Instrument;

use crate::campaign::{Campaign, LoadedCampaign};
use crate::market::Market;
use crate::store::{CauseKind, Halt, HaltScope, IntentCause, StallReason};

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use crate::decide::plan::{self, Action};
use crate::decide::recorded::{Parts, Recorded};
use crate::decide::stall::Judgment;

/// What [`Engine::pass_reporting`] says while a pass works.
#[derive(Debug, Clone)]
pub enum PassProgress {
    /// How many campaigns the pass works on (said again when removed ones are added).
    Total(usize),
    /// A campaign got a slot and started.
    Started(String),
    /// A campaign's pass ended.
    Done(CampaignReport),
}

/// How one campaign's pass ended. Serialised (`once --format json`) and printed in snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassOutcome {
    /// Everything the file asks for is done.
    Converged,
    /// A halt (credentials rejected, an operator awaited) or a removed file stops spending.
    SpendingStopped,
    /// A step cannot run yet: a cap a later step needs, a missing id, money still uncertain.
    Blocked,
    /// Everything ran, but the buy round, with room under the caps, bought less than it
    /// could for a reason an operator must act on: the report's `reason` (see `stall.rs`).
    Stalled,
    /// Another process holds the campaign's lease.
    Skipped,
    Failed,
}

impl PassOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            PassOutcome::Converged => "converged",
            PassOutcome::SpendingStopped => "spending_stopped",
            PassOutcome::Blocked => "blocked",
            PassOutcome::Stalled => "stalled",
            PassOutcome::Skipped => "skipped",
            PassOutcome::Failed => "failed",
        }
    }
}

impl std::fmt::Display for PassOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How one campaign's pass ended, and what it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignReport {
    pub campaign: String,
    pub outcome: PassOutcome,
    /// Why the pass stalled (`outcome` is `stalled`): a closed set, in snake_case.
    #[serde(serialize_with = "serialize_reason")]
    pub reason: Option<StallReason>,
    pub detail: Option<String>,
    pub bought: u32,
    pub uncertain: u32,
    pub done: Vec<String>,
    /// What stopped the pass, or a step it skipped, may pass by itself (see
    /// [`EngineError::is_transient`]; a lease held elsewhere): a daemon round is tried again.
    #[serde(skip)]
    pub transient: bool,
    /// The judgment of the buy round, when one ran.
    #[serde(skip)]
    pub judgment: Option<Judgment>,
}

fn serialize_reason<S: serde::Serializer>(
    r: &Option<StallReason>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_some(&r.map(StallReason::as_str))
}

impl CampaignReport {
    fn new(campaign: &str) -> Self {
        CampaignReport {
            campaign: campaign.into(),
            outcome: PassOutcome::Converged,
            reason: None,
            detail: None,
            bought: 0,
            uncertain: 0,
            done: Vec::new(),
            transient: false,
            judgment: None,
        }
    }
    pub fn converged(&self) -> bool {
        self.outcome == PassOutcome::Converged
    }
}

impl<M: Market> Engine<M> {
    /// Reconciles every loaded campaign, and every recorded campaign whose file is gone,
    /// at most `campaign_concurrency` working at once (see [`super::slots`]).
    pub async fn pass<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        buy_round: bool,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, buy_round, true, None).await
    }

    /// [`Self::pass`] that says on `progress` when each campaign starts and ends (`once`'s
    /// progress display); a closed receiver changes nothing.
    pub async fn pass_reporting<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        buy_round: bool,
        progress: &tokio::sync::mpsc::UnboundedSender<PassProgress>,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, buy_round, true, Some(progress))
            .await
    }

    /// Reconciles (no buying) some campaigns; with `include_removed`, also every recorded
    /// campaign whose file is gone.
    pub async fn pass_some<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        include_removed: bool,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, false, include_removed, None)
            .await
    }

    async fn pass_with<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        buy_round: bool,
        include_removed: bool,
        progress: Option<&tokio::sync::mpsc::UnboundedSender<PassProgress>>,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        let tell = |p: PassProgress| {
            if let Some(tx) = progress {
                let _ = tx.send(p);
            }
        };
        tell(PassProgress::Total(campaigns.len()));
        let known: Vec<String> = if include_removed {
            self.store.campaign_names().await?
        } else {
            Vec::new()
        };
        let loaded: std::collections::HashSet<&str> = campaigns
            .iter()
            .map(|c| c.borrow().campaign.name.as_str())
            .collect();
        let removed: Vec<String> = known
            .into_iter()
            .filter(|n| !loaded.contains(n.as_str()))
            .collect();
        // A campaign's task is created only once a slot is free for it (waits for a search
        // lend the slot out, so campaigns that wait do not hold others back).
        let mut set = tokio::task::JoinSet::new();
        let mut reports = Vec::new();
        for lc in campaigns {
            let lc = lc.borrow();
            let slot = self.slots.take().await;
            // A finished task keeps its whole future's memory until joined (16 KiB a
            // campaign): joined as they finish, 10,000 campaigns do not pile up 160 MiB.
            while let Some(r) = set.try_join_next() {
                let r = joined(r);
                tell(PassProgress::Done(r.clone()));
                reports.push(r);
            }
            tell(PassProgress::Started(lc.campaign.name.clone()));
            let (e, c) = (self.clone(), lc.campaign.clone());
            let kind = if buy_round {
                CauseKind::Round
            } else {
                CauseKind::Reconcile
            };
            let cause = pass_cause(Some(lc), kind, None);
            set.spawn(
                slot.run(async move { e.campaign_pass(Some(&c), &c.name, buy_round, cause).await }),
            );
        }
        if !removed.is_empty() {
            tell(PassProgress::Total(campaigns.len() + removed.len()));
        }
        for name in removed {
            let slot = self.slots.take().await;
            tell(PassProgress::Started(name.clone()));
            let e = self.clone();
            let cause = pass_cause(None, CauseKind::Removal, None);
            set.spawn(slot.run(async move { e.campaign_pass(None, &name, false, cause).await }));
        }
        while let Some(r) = set.join_next().await {
            let r = joined(r);
            tell(PassProgress::Done(r.clone()));
            reports.push(r);
        }
        reports.sort_by(|a, b| a.campaign.cmp(&b.campaign));
        Ok(reports)
    }

    /// One campaign's pass, under its in-process lock: `c` is `None` when its file was
    /// removed; `cause` is recorded with every intent the pass begins. Never fails: how it
    /// ended is in the report.
    pub async fn campaign_pass(
        &self,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
        cause: IntentCause,
    ) -> CampaignReport {
        let span = tracing::info_span!("campaign", campaign = %name, holder = %self.holder);
        let lock = self.campaign_lock(name);
        // Waiting for another pass of the same campaign lends the slot out: that pass may
        // need a slot back after a wait of its own.
        let _guard = self.slots.idle(lock.lock()).await;
        let mut report = CampaignReport::new(name);
        let result = self
            .pass_under_lease(c, name, (buy_round, cause), &mut report)
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
                EngineError::Auth(_) => PassOutcome::SpendingStopped,
                EngineError::Blocked(_) => PassOutcome::Blocked,
                EngineError::Store(_)
                | EngineError::Fenced
                | EngineError::Market(_)
                | EngineError::Cancelled => PassOutcome::Failed,
            };
            tracing::warn!(campaign = %name, error = %e, kind = e.label(), "campaign pass did not converge");
            report.transient |= e.is_transient();
            report.detail = Some(e.to_string());
        }
        report
    }

    /// Records the campaign's caps, takes its lease (or reports the pass skipped), keeps the
    /// lease renewed while [`Self::settle_and_run_plan`] works, then releases it.
    async fn pass_under_lease(
        &self,
        c: Option<&Campaign>,
        name: &str,
        (buy_round, cause): (bool, IntentCause),
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        if let Some(c) = c {
            self.store
                .upsert_campaign(&crate::decide::caps::caps(c), self.clock.now())
                .await?;
        }
        let now = self.clock.now();
        let Some(token) = self
            .store
            .try_acquire_lease(name, &self.holder, self.settings.lease_ttl, now)
            .await?
        else {
            report.outcome = PassOutcome::Skipped;
            report.transient = true;
            report.detail = Some("another process holds this campaign's lease".into());
            return Ok(());
        };
        let lease = HeldLease::new(token, self.settings.lease_ttl).with_cause(cause);
        // Aborted on drop too: a pass whose future is dropped (cancelled, or a test's crash)
        // must not leave a task renewing the lease of a holder that is gone, or no other
        // holder could ever take the campaign. Tested by `tests/it` `engine::partial_truth::
        // a_pass_dropped_mid_flow_leaves_no_lease_renewed_behind`.
        let renewal = tokio_util::task::AbortOnDropHandle::new(
            lease.keep_renewed(self.store.clone(), self.clock.clone()),
        );
        let result = self
            .settle_and_run_plan(&lease, c, name, buy_round, report)
            .await;
        renewal.abort();
        // Releasing is a courtesy: a crashed holder's lease simply expires.
        let _ = self.store.release_lease(lease.token()).await;
        result
    }

    /// With the lease held: marks what a stopped holder left in flight uncertain, checks the
    /// credentials, settles what is uncertain (reading the link list when anything needs it),
    /// then runs the planned actions in order. An action blocked by a cap or refused by the
    /// marketplace does not stop the independent ones after it; the report says what was not
    /// done, and the pass is then `blocked`, never `converged`.
    async fn settle_and_run_plan(
        &self,
        lease: &HeldLease,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        // The lease is ours now, so no other process can begin an intent of this campaign:
        // when none is in flight, none can appear behind this read.
        let marked = if self.store.has_in_flight(name).await? {
            self.store
                .mark_in_flight_uncertain(name, lease.token(), self.clock.now())
                .await?
        } else {
            0
        };
        if marked > 0 {
            tracing::warn!(campaign = %name, intents = marked, "intents left in flight by a stopped process are now uncertain");
        }
        let mut r = self.load(name).await?;
        // The record is read again only after a step that may have written to it: a halt
        // cleared or set, an uncertain creation settled, the link list recorded (issue 13:
        // each read is a dozen queries, and most passes have nothing to settle).
        let may_write = !r.halts.is_empty()
            || r.uncertain
                .iter()
                .any(|i| i.kind != crate::store::IntentKind::Purchase);
        self.check_credentials(&r).await?;
        self.settle_without_list(name, &r).await?;
        if may_write {
            r = self.load(name).await?;
        }
        if needs_list_first(&r) {
            let s = self.sync_list(name, &r, r.fallback_price(c)).await?;
            report.bought += s.bought + s.adopted;
            r = self.load(name).await?;
        }
        let p = match c {
            Some(c) => plan::plan_campaign(c, &r, buy_round),
            None => plan::plan_removed(name, &r),
        };
        let mut not_done = p.unapplied.clone();
        let today = self.clock.now().date_naive();
        // The record is kept current from step to step by reading again only what the step
        // just run may have written (issue 13: a whole read is a dozen queries).
        let runnable: Vec<usize> = (0..p.actions.len())
            .filter(|&i| !matches!(p.actions[i], Action::Settle { .. }))
            .collect();
        let round_at = p
            .actions
            .iter()
            .position(|a| matches!(a, Action::BuyRound { .. }));
        let mut searches_started = false;
        for (n, &i) in runnable.iter().enumerate() {
            let action = &p.actions[i];
            // The round's searches start as soon as the URLs are known, so the marketplace
            // prepares the donors while the steps before the round run.
            if let (Some(at), Some(c)) = (round_at, c)
                && !searches_started
                && i < at
                && r.halts.is_empty()
                && c.urls.iter().all(|u| r.ids.urls.contains_key(&u.url))
            {
                searches_started = true;
                self.start_searches(c, &r).await;
            }
            // A stop's settlement waits for the settle grace only when an autobuyer creation or
            // start later in the plan may need its money.
            let wait = p.actions[i..].iter().any(|a| {
                matches!(
                    a,
                    Action::CreateAutobuyer { .. } | Action::SetAutobuyer { running: true, .. }
                )
            });
            let step = tracing::info_span!("step", action = action.label(), fence = lease.fence());
            let run = self.run_action(lease, (c, name), &r, action, wait, report);
            let written = match run.instrument(step).await {
                Ok(()) => {
                    report.done.push(action.describe());
                    written_by(action)
                }
                Err(e) if e.leaves_nothing_uncertain() => {
                    report.transient |= e.is_transient();
                    tracing::warn!(campaign = %name, action = action.label(), error = %e, "step not done; the pass goes on with the independent ones");
                    not_done.push(format!("{}: {e}", action.label()));
                    Parts::ALL
                }
                // A call that may have executed ends the pass: the next one settles it first.
                Err(e) => return Err(e),
            };
            let last = n + 1 == runnable.len();
            let parts = if last { Parts::OUTCOME } else { written };
            r.refresh(&self.store, name, today, parts).await?;
        }
        if runnable.is_empty() {
            r.refresh(&self.store, name, today, Parts::OUTCOME).await?;
        }
        self.finish_report(c, &r, not_done, report);
        if buy_round && c.is_some() {
            self.record_stall(name, report).await?;
        }
        Ok(())
    }

    /// Records the judgment of a buy pass that reached its end: the round's stall, or none
    /// (converged, or no round because the caps leave no room), and the streak of rounds that
    /// bought nothing (kept as it was when no round ran).
    async fn record_stall(&self, name: &str, report: &CampaignReport) -> Result<(), EngineError> {
        if report.outcome == PassOutcome::SpendingStopped {
            return Ok(());
        }
        let stall = report.judgment.as_ref().and_then(|j| j.stall.as_ref());
        let streak = report
            .judgment
            .as_ref()
            .map(|j| j.rounds_without_purchase)
            .unwrap_or(0);
        let detail = stall.map(|s| s.detail.as_str()).unwrap_or("");
        self.store
            .record_stall(
                name,
                stall.map(|s| s.reason),
                detail,
                streak,
                self.clock.now(),
            )
            .await?;
        Ok(())
    }

    /// How the pass ended: a halt or a removed file stops spending; a stalled round stalls
    /// (with what else was not done after its reason); what was not done, or money still
    /// uncertain, blocks; else converged.
    fn finish_report(
        &self,
        c: Option<&Campaign>,
        r: &Recorded,
        mut not_done: Vec<String>,
        report: &mut CampaignReport,
    ) {
        report.uncertain = r.uncertain.len() as u32;
        if let Some(why) = r
            .spending_stopped(c.is_some_and(|c| c.paused))
            .filter(|_| !r.halts.is_empty() || c.is_none())
        {
            report.outcome = PassOutcome::SpendingStopped;
            // The credentials halt clears itself once a read works again; a campaign's own
            // halt waits for an operator.
            report.transient |= r.halts.iter().any(|h| h.is_global());
            report.detail = Some(why);
            return;
        }
        if !r.uncertain.is_empty() {
            not_done.push(format!(
                "{} intent(s) still uncertain (`linkrunner status` says why and what to run)",
                r.uncertain.len()
            ));
        }
        if let Some(stall) = report.judgment.as_ref().and_then(|j| j.stall.clone()) {
            not_done.insert(0, stall.detail);
            report.outcome = PassOutcome::Stalled;
            report.reason = Some(stall.reason);
            report.detail = Some(not_done.join("; "));
        } else if !not_done.is_empty() {
            report.outcome = PassOutcome::Blocked;
            report.detail = Some(not_done.join("; "));
        }
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
        if !r.halts.iter().any(Halt::is_global) {
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
                self.store.clear_halt(&HaltScope::Global).await?;
                self.metrics.credentials_rejected.set(0);
                tracing::info!("credentials accepted again; spending resumes");
                Ok(())
            }
            Err(e) => Err(self.read_error(e)),
        }
    }
}

/// A campaign task's report, or a failed one when the task panicked.
fn joined(r: Result<CampaignReport, tokio::task::JoinError>) -> CampaignReport {
    r.unwrap_or_else(|e| {
        let mut r = CampaignReport::new("?");
        r.outcome = PassOutcome::Failed;
        r.detail = Some(format!("task failed: {e}"));
        r
    })
}

/// Why a pass runs, with the file version it runs: `lc` is `None` for a removed file; `slot`
/// is a scheduled round's.
pub fn pass_cause(
    lc: Option<&LoadedCampaign>,
    kind: CauseKind,
    slot: Option<chrono::DateTime<chrono::Utc>>,
) -> IntentCause {
    let mut cause = IntentCause::bare(kind);
    cause.slot = slot;
    if let Some(lc) = lc {
        cause.file_digest = Some(lc.fingerprint.clone());
        cause.git_commit = lc.git_commit.clone();
        cause.monthly_cap = Some(lc.campaign.budget.monthly);
        cause.max_link_price = Some(lc.campaign.budget.max_link_price);
    }
    cause
}

/// What a step that succeeded may have written to the campaign's record.
fn written_by(action: &Action) -> Parts {
    match action {
        Action::CreateProject { .. } | Action::AddTexts { .. } | Action::CreateFilter { .. } => {
            Parts::CREATED
        }
        Action::CreateAutobuyer { .. } | Action::SetAutobuyer { .. } => Parts::SWITCHED,
        _ => Parts::ALL,
    }
}

/// Whether the pass reads the link list before it plans: something waits for it (an
/// uncertain or blocked purchase, a link leaving), or autobuyers may have bought pages the
/// round must not buy again (and their stops wait to be settled).
fn needs_list_first(r: &Recorded) -> bool {
    r.ids.project.is_some()
        && (r
            .uncertain
            .iter()
            .any(|i| i.kind == crate::store::IntentKind::Purchase)
            || !r.blocked.is_empty()
            || r.has_autobuyers()
            || r.held
                .iter()
                .any(|h| h.released.is_none() && h.leaving_since.is_some()))
}
