//! One pass over the campaigns: for each, take its lease, settle what is uncertain, then run
//! the planned actions in order — the same actions `plan` shows.

use std::borrow::Borrow;

use serde::Serialize;
use tracing::Instrument;

use crate::campaign::{Campaign, InvalidFiles, LoadedCampaign, file_key};
use crate::market::Market;
use crate::metrics::{Purpose, with_purpose};
use crate::store::{
    CampaignFile, CauseKind, Halt, HaltAccounts, HaltScope, IntentCause, StallReason,
};

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use super::quiet::Begun;
use crate::decide::pass::{needs_list_first, pre_plan, runnable_actions, settles_something};
use crate::decide::plan::{self, Action};
use crate::decide::quiet::Seen;
use crate::decide::recorded::{Parts, Recorded};
use crate::decide::refused;
use crate::decide::stall::Judgment;

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
    /// The campaign's file exists but fails validation: the campaign is kept exactly as
    /// recorded (nothing stopped, nothing bought) until the file is fixed or removed.
    FileInvalid,
    /// The campaign's file is gone, but so are many others at once (a failed checkout, an
    /// empty mount): its removal is held (`decide::removal`), nothing stopped or bought,
    /// until the files return or an operator's `resolve removals`.
    RemovalHeld,
    /// The marketplace could not be connected to (nothing was sent); said once for the pass
    /// with since when and the last error (`Engine::reach`).
    MarketplaceUnreachable,
}

impl PassOutcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PassOutcome::Converged => "converged",
            PassOutcome::SpendingStopped => "spending_stopped",
            PassOutcome::Blocked => "blocked",
            PassOutcome::Stalled => "stalled",
            PassOutcome::Skipped => "skipped",
            PassOutcome::Failed => "failed",
            PassOutcome::FileInvalid => "file_invalid",
            PassOutcome::RemovalHeld => "removal_held",
            PassOutcome::MarketplaceUnreachable => "marketplace_unreachable",
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
    /// The marketplace account the campaign spends in (left out of JSON for the default one).
    #[serde(skip_serializing_if = "is_default_account")]
    pub account: String,
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
    pub(crate) transient: bool,
    /// The judgment of the buy round, when one ran.
    #[serde(skip)]
    pub(crate) judgment: Option<Judgment>,
}

fn is_default_account(a: &str) -> bool {
    linkrunner_domain::account::is_default(a)
}

fn serialize_reason<S: serde::Serializer>(
    r: &Option<StallReason>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_some(&r.map(StallReason::as_str))
}

impl CampaignReport {
    pub(crate) fn new(campaign: &str) -> Self {
        CampaignReport {
            campaign: campaign.into(),
            account: linkrunner_domain::account::DEFAULT_ACCOUNT.into(),
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

/// What one campaign's pass is of: the file's campaign (`None`: its file is gone), its name,
/// whether it is a buy round, and the cause recorded with every intent it begins.
struct PassOf<'a> {
    c: Option<&'a Campaign>,
    name: &'a str,
    buy_round: bool,
    cause: IntentCause,
}

impl<M: Market> Engine<M> {
    /// Reconciles every loaded campaign, and every recorded campaign whose file is gone,
    /// at most `campaign_concurrency` working at once (see [`super::slots`]).
    pub async fn pass<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        buy_round: bool,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, buy_round, true, &InvalidFiles::default(), None)
            .await
    }

    /// [`Self::pass_holding`] that says on `progress` when each campaign starts and ends
    /// (`once`'s progress display); a closed receiver changes nothing.
    pub(crate) async fn pass_reporting<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        invalid: &InvalidFiles,
        progress: &tokio::sync::mpsc::UnboundedSender<PassProgress>,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        self.pass_with(campaigns, true, true, invalid, Some(progress))
            .await
    }

    async fn pass_with<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        buy_round: bool,
        include_removed: bool,
        invalid: &InvalidFiles,
        progress: Option<&tokio::sync::mpsc::UnboundedSender<PassProgress>>,
    ) -> Result<Vec<CampaignReport>, EngineError> {
        let tell = |p: PassProgress| {
            if let Some(tx) = progress {
                let _ = tx.send(p);
            }
        };
        tell(PassProgress::Total(campaigns.len()));
        let known = self.store.campaigns().campaign_files().await?;
        let halts = self.store.halts().await?;
        let accounts = self.store.halt_accounts(&halts).await?;
        let (removed, mut reports) = match include_removed {
            true => removed_or_held(campaigns, &known, invalid, (&halts, &accounts)),
            false => (Vec::new(), Vec::new()),
        };
        // A campaign's task is created only once a slot is free for it (waits for a search
        // lend the slot out, so campaigns that wait do not hold others back).
        let mut set = tokio::task::JoinSet::new();
        self.spawn_file_passes(&mut set, campaigns, buy_round, &mut reports, &tell)
            .await;
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
        self.note_reach(&mut reports);
        if let Err(e) = self.record_files(campaigns, &known).await {
            // The passes themselves are recorded; only where their files are is not (the
            // next pass records it).
            tracing::warn!(error = %e, "could not record the campaigns' file paths");
        }
        reports.sort_by(|a, b| a.campaign.cmp(&b.campaign));
        Ok(reports)
    }

    /// Starts each file campaign's pass as a slot frees up, joining finished ones as it goes.
    async fn spawn_file_passes<C: Borrow<LoadedCampaign>>(
        &self,
        set: &mut tokio::task::JoinSet<CampaignReport>,
        campaigns: &[C],
        buy_round: bool,
        reports: &mut Vec<CampaignReport>,
        tell: &(dyn Fn(PassProgress) + Sync),
    ) {
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
            // The account's marketplace cannot be connected to: its campaigns not begun are not
            // tried (another account's marketplace may be up).
            if reports.iter().any(|r| {
                r.outcome == PassOutcome::MarketplaceUnreachable && r.account == lc.campaign.account
            }) {
                let mut r = CampaignReport::new(&lc.campaign.name);
                r.account = lc.campaign.account.clone();
                r.outcome = PassOutcome::MarketplaceUnreachable;
                r.transient = true;
                tell(PassProgress::Done(r.clone()));
                reports.push(r);
                continue;
            }
            tell(PassProgress::Started(lc.campaign.name.clone()));
            let (e, c) = (self.clone(), lc.campaign.clone());
            let kind = [CauseKind::Reconcile, CauseKind::Round][usize::from(buy_round)];
            let cause = pass_cause(Some(lc), kind, None);
            set.spawn(
                slot.run(async move { e.campaign_pass(Some(&c), &c.name, buy_round, cause).await }),
            );
        }
    }

    /// Says each account's marketplace reach once for the pass ([`Self::note_account_reach`]).
    fn note_reach(&self, reports: &mut [CampaignReport]) {
        let accounts: std::collections::BTreeSet<String> =
            reports.iter().map(|r| r.account.clone()).collect();
        for account in accounts {
            if let Some(e) = self.for_account(&account) {
                let mut mine: Vec<&mut CampaignReport> = reports
                    .iter_mut()
                    .filter(|r| r.account == account)
                    .collect();
                e.note_account_reach(&mut mine);
            }
        }
    }

    /// Says this account's marketplace reach once for the pass: when a campaign could not
    /// connect, its error becomes the engine's (`reach`: since when, the last error) and each
    /// such report says only since when; when campaigns reached it, it is reachable again.
    fn note_account_reach(&self, reports: &mut [&mut CampaignReport]) {
        let last = reports
            .iter_mut()
            .filter(|r| r.outcome == PassOutcome::MarketplaceUnreachable)
            .filter_map(|r| r.detail.take())
            .last();
        let down = reports
            .iter()
            .any(|r| r.outcome == PassOutcome::MarketplaceUnreachable);
        if !down {
            if reports.iter().any(|r| {
                !matches!(
                    r.outcome,
                    PassOutcome::Skipped
                        | PassOutcome::FileInvalid
                        | PassOutcome::RemovalHeld
                        | PassOutcome::Failed
                )
            }) {
                self.reach.reachable();
            }
            return;
        }
        let error = last.unwrap_or_else(|| "could not connect".into());
        let since = self.reach.unreachable(error.clone(), self.clock.now());
        tracing::error!(account = %self.account, since = %since, error = %error, "the marketplace is unreachable; nothing was sent");
        let detail = format!(
            "the marketplace is unreachable since {}",
            since.format("%Y-%m-%d %H:%M:%S UTC")
        );
        for r in reports
            .iter_mut()
            .filter(|r| r.outcome == PassOutcome::MarketplaceUnreachable)
        {
            r.detail = Some(detail.clone());
        }
    }

    /// Records the file each loaded campaign came from where the journal holds another (or
    /// none): one write for the files that moved, none when nothing did.
    async fn record_files<C: Borrow<LoadedCampaign>>(
        &self,
        campaigns: &[C],
        known: &[CampaignFile],
    ) -> Result<(), EngineError> {
        let recorded: std::collections::HashMap<&str, Option<&str>> = known
            .iter()
            .map(|k| (k.name.as_str(), k.file.as_deref()))
            .collect();
        let moved: Vec<CampaignFile> = campaigns
            .iter()
            .map(|c| c.borrow())
            .filter_map(|lc| {
                let file = file_key(&lc.path).to_string_lossy().into_owned();
                let name = lc.campaign.name.as_str();
                (recorded.get(name).copied().flatten() != Some(file.as_str())).then(|| {
                    CampaignFile {
                        name: name.to_string(),
                        file: Some(file),
                        renamed_from: None,
                    }
                })
            })
            .collect();
        Ok(self.store.campaigns().record_campaign_files(&moved).await?)
    }

    /// One campaign's pass, under its in-process lock, on its account's engine: `c` is `None`
    /// when its file was removed; `cause` is recorded with every intent the pass begins.
    /// Never fails: how it ended is in the report.
    pub(crate) async fn campaign_pass(
        &self,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
        cause: IntentCause,
    ) -> CampaignReport {
        let looks = self
            .quiet_candidate(c, name, buy_round, cause.file_digest.as_deref())
            .is_some();
        match self.account_engine(c, name, looks).await {
            Ok(e) => {
                let _under_way = e.enter();
                let of = PassOf {
                    c,
                    name,
                    buy_round,
                    cause,
                };
                e.campaign_pass_here(of).await
            }
            Err(report) => report,
        }
    }

    /// The engine of the campaign's account: the one its file names, or for a removed file
    /// the one the journal recorded. A campaign whose account this deployment does not serve,
    /// or whose file moves it to another account while the journal holds marketplace things
    /// of it in the first, is blocked: nothing of it is sent anywhere.
    ///
    /// `looks`: the pass may only look ([`super::quiet`]): the last full pass of this very
    /// file converged on the file's account, with a project there, which no pass can move to
    /// another account while it exists. Then the journal's account is not read (a converged
    /// reconciliation costs no query for it); a look that turns into a full pass reads it
    /// before anything is planned ([`Self::account_unmoved`]).
    async fn account_engine(
        &self,
        c: Option<&Campaign>,
        name: &str,
        looks: bool,
    ) -> Result<Engine<M>, CampaignReport> {
        let refused = |outcome: PassOutcome, detail: String| {
            let mut r = CampaignReport::new(name);
            r.outcome = outcome;
            r.transient = outcome == PassOutcome::Failed;
            r.detail = Some(detail);
            r
        };
        let failed = |e: crate::store::StoreError| refused(PassOutcome::Failed, e.to_string());
        let campaigns = self.store.campaigns();
        let recorded = match c.filter(|_| looks) {
            Some(c) => Some(c.account.clone()),
            None => campaigns.campaign_account(name).await.map_err(failed)?,
        };
        let account = match (c, recorded) {
            (Some(c), Some(was)) if was != c.account => {
                let ids = campaigns.remote_ids(name).await.map_err(failed)?;
                if ids.project.is_some() || !ids.filters.is_empty() {
                    return Err(refused(
                        PassOutcome::Blocked,
                        format!(
                            "the file moves campaign {name} from account `{was}` to `{}`, but its project and filters are in `{was}`: a campaign cannot change accounts; put `account: {was}` back (or remove the campaign and create a new one in `{}`)",
                            c.account, c.account
                        ),
                    ));
                }
                campaigns
                    .move_account(name, &c.account)
                    .await
                    .map_err(failed)?;
                c.account.clone()
            }
            (Some(c), _) => c.account.clone(),
            (None, Some(was)) => was,
            (None, None) => linkrunner_domain::account::DEFAULT_ACCOUNT.to_string(),
        };
        if !self.works(&account) {
            let mut r = refused(
                PassOutcome::Skipped,
                format!("account `{account}` is worked by another daemon (its account lease)"),
            );
            r.account = account;
            return Err(r);
        }
        self.for_account(&account).ok_or_else(|| {
            refused(
                PassOutcome::Blocked,
                format!(
                    "campaign {name} spends in account `{account}`, which this deployment does not serve (no such `id` in --account-file): nothing of it is sent or stopped until the account is served again"
                ),
            )
        })
    }

    /// [`Self::campaign_pass`] on the campaign's account's engine.
    async fn campaign_pass_here(&self, of: PassOf<'_>) -> CampaignReport {
        let (purpose, kind) = match of.buy_round {
            true => (Purpose::Buy, "buy"),
            false => (Purpose::Reconcile, "reconcile"),
        };
        let started = std::time::Instant::now();
        let pass = self.campaign_pass_counted(of);
        let report = with_purpose(purpose, pass).await;
        self.metrics
            .load
            .pass_duration_seconds
            .with_label_values(&[kind])
            .observe(started.elapsed().as_secs_f64());
        report
    }

    async fn campaign_pass_counted(&self, of: PassOf<'_>) -> CampaignReport {
        let (name, cause) = (of.name, &of.cause);
        let span = tracing::info_span!(
            "campaign",
            campaign = %name,
            account = %self.account,
            holder = %self.holder,
            round = tracing::field::Empty
        );
        if let Some(slot) = cause.slot {
            let slot = slot.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            span.record("round", tracing::field::display(slot));
        }
        let lock = self.campaign_lock(name);
        // Waiting for another pass of the same campaign lends the slot out: that pass may
        // need a slot back after a wait of its own.
        let _guard = self.slots.idle(lock.lock()).await;
        let mut report = CampaignReport::new(name);
        report.account = self.account.to_string();
        let result = self
            .pass_under_lease(of, &mut report)
            .instrument(span)
            .await;
        if let Err(e) = result {
            if let Some(m) = super::reach::connect_error(&e) {
                report.outcome = PassOutcome::MarketplaceUnreachable;
                report.transient = true;
                report.detail = Some(m.to_string());
                return report;
            }
            let mut e = e;
            if let EngineError::Auth(m) = &e {
                // A read answered 401/403 (a changing call has already halted): every campaign
                // stops spending — or, for a 403 on this campaign's project alone, this one.
                match self.halt_for_credentials(m, name).await {
                    Ok(Some(reason)) => e = EngineError::Blocked(reason),
                    Ok(None) => {}
                    Err(halt) => {
                        tracing::error!(error = %halt, "could not record the credentials halt")
                    }
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
        of: PassOf<'_>,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        let PassOf {
            c,
            name,
            buy_round,
            cause,
        } = of;
        // Stopping (a signal): a campaign not begun yet is not begun at all.
        if self.cancel.is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        // A pass that may only look (the same file as at the last full pass, which checked
        // its identity and handed any rename over) skips those journal reads: issue 34's
        // converged campaign that costs almost nothing.
        let file = cause.file_digest.clone();
        let seen = self.quiet_candidate(c, name, buy_round, file.as_deref());
        let checked = seen.is_some();
        // A rename is handed over before the new name is recorded at all: recorded first, it
        // would be a campaign of its own, and the old name's project would be created again.
        if let Some(old) = c
            .and_then(|c| c.renamed_from.as_deref())
            .filter(|_| !checked)
        {
            match self.hand_over(old, name).await? {
                super::rename::HandOver::Ignored => {}
                super::rename::HandOver::Done(renamed) => report.done.push(renamed.describe()),
                super::rename::HandOver::Waits(why) => {
                    report.outcome = PassOutcome::Skipped;
                    report.transient = true;
                    report.detail = Some(format!("the rename from {old} waits: {why}"));
                    return Ok(());
                }
                super::rename::HandOver::Refused(why) => {
                    report.outcome = PassOutcome::Blocked;
                    report.detail = Some(why);
                    return Ok(());
                }
            }
        }
        // A new campaign for a site another recorded campaign's project is for is blocked
        // before it is recorded: never a second project (issue 32).
        let record_domain = match c.filter(|_| !checked) {
            Some(c) => match self.check_identity(c).await? {
                super::rename::Identity::Ready { record_domain } => record_domain,
                super::rename::Identity::Claimed(why) => {
                    report.outcome = PassOutcome::Blocked;
                    report.detail = Some(why);
                    return Ok(());
                }
            },
            None => false,
        };
        // A pass that may only look records the caps only if it turns out full: the same
        // file recorded them at the last full pass.
        if seen.is_none() {
            self.record_caps(c).await?;
        }
        if let (Some(c), true) = (c, record_domain) {
            self.store
                .campaigns()
                .record_domain(name, &c.domain)
                .await?;
        }
        let token = match self.acquire_lease(name).await? {
            Ok(token) => token,
            Err(why) => {
                report.outcome = PassOutcome::Skipped;
                report.transient = true;
                report.detail = Some(why);
                return Ok(());
            }
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
            .look_or_run_plan(&lease, (c, file.as_deref(), seen), name, buy_round, report)
            .await;
        renewal.abort();
        // Releasing is a courtesy: a crashed holder's lease simply expires. A look released
        // it with its one write.
        if !matches!(result, Ok(Looked::Only)) {
            let _ = self.store.leases().release_lease(lease.token()).await;
        }
        result.map(|_| ())
    }

    /// Records the caps the campaign's file sets (none for a removed file).
    async fn record_caps(&self, c: Option<&Campaign>) -> Result<(), EngineError> {
        if let Some(c) = c {
            self.store
                .campaigns()
                .record_caps(
                    &crate::decide::caps::caps(c),
                    crate::decide::approval::threshold(c),
                    self.clock.now(),
                )
                .await?;
        }
        Ok(())
    }

    /// With the lease held: only looks when the last full pass left the campaign quiet and
    /// nothing changed since (see [`super::quiet`]); else the full pass, remembered for the
    /// looks after it when it converged with nothing open or due.
    async fn look_or_run_plan(
        &self,
        lease: &HeldLease,
        (c, file, seen): (Option<&Campaign>, Option<&str>, Option<Seen>),
        name: &str,
        buy_round: bool,
        report: &mut CampaignReport,
    ) -> Result<Looked, EngineError> {
        let mut begun = self.quiet_begin(lease, file, name, buy_round).await?;
        if let (Some(seen), Some(b)) = (seen, begun.as_ref()) {
            match self
                .look_only((&seen, b), lease, name, &mut report.done)
                .await?
            {
                None => return Ok(Looked::Only),
                Some(why) => {
                    tracing::debug!(campaign = %name, why = why.as_str(), "full pass");
                    if !self.account_unmoved(name, report).await? {
                        self.quiet_end(name, None, false);
                        return Ok(Looked::Full);
                    }
                    // Skipped for the look; the stamp is read again after it.
                    self.record_caps(c).await?;
                    begun = self.quiet_begin(lease, file, name, buy_round).await?;
                }
            }
        }
        let result = self
            .settle_and_run_plan(lease, c, name, buy_round, report, &mut begun)
            .await;
        let converged = result.is_ok() && report.converged() && !report.transient;
        self.quiet_end(name, begun, converged);
        result.map(|_| Looked::Full)
    }

    /// Before a full pass that began as a look: whether the journal still records the
    /// campaign in this engine's account (the look took it from the file, see
    /// [`Self::account_engine`]). When another process moved it since, this pass ends skipped,
    /// and the next one (a full pass: nothing is remembered now) chooses its account again.
    async fn account_unmoved(
        &self,
        name: &str,
        report: &mut CampaignReport,
    ) -> Result<bool, EngineError> {
        let recorded = self.store.campaigns().campaign_account(name).await?;
        match recorded.filter(|a| **a != *self.account) {
            None => Ok(true),
            Some(other) => {
                report.outcome = PassOutcome::Skipped;
                report.transient = true;
                report.detail = Some(format!(
                    "the journal moved campaign {name} to account `{other}` since its last pass; the next pass works it there"
                ));
                Ok(false)
            }
        }
    }

    /// Takes the campaign's lease: free, expired or ours; or held by a process of this host
    /// and pid namespace that is gone (killed), taken over at once (see [`super::holder`]).
    /// Else why not: who holds it and until when.
    pub(super) async fn acquire_lease(
        &self,
        name: &str,
    ) -> Result<Result<crate::store::LeaseToken, String>, EngineError> {
        let ttl = self.settings.lease_ttl;
        let now = self.clock.now();
        if let Some(token) = self
            .store
            .leases()
            .try_acquire_lease_as(name, &self.identity, ttl, now)
            .await?
        {
            return Ok(Ok(token));
        }
        let Some(held) = self.store.leases().lease_holder(name).await? else {
            return Ok(Err("another process holds this campaign's lease".into()));
        };
        if super::holder::judge(&self.identity, &held.identity) == super::holder::Holder::Gone
            && let Some(token) = self
                .store
                .leases()
                .take_over_lease(name, &held, &self.identity, ttl, now)
                .await?
        {
            tracing::warn!(campaign = %name, gone = %held.identity.holder, fence = token.fence, "the lease's holder no longer runs on this host: lease taken over; what it left in flight is settled first");
            return Ok(Ok(token));
        }
        Ok(Err(format!(
            "another process holds this campaign's lease: {}",
            super::holder::describe(&self.identity, &held)
        )))
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
        begun: &mut Option<Begun>,
    ) -> Result<(), EngineError> {
        let mut r = self.recover_and_load(lease, name).await?;
        // A respelt URL takes its new spelling before the adoption records the file's ids
        // and before anything is planned: never a second row for one url id.
        if self.respell_urls(lease, c, &r).await? {
            r = self.load(name).await?;
        }
        self.run_pre_plan(lease, c, name, &mut r, report).await?;
        let listed = self.list_first(&mut r, c, name, report).await?;
        self.quiet_planned(begun, c, &r);
        let p = match c {
            Some(c) => plan::plan_campaign(c, &r, buy_round),
            None => plan::plan_removed(name, &r),
        };
        let mut not_done = p.unapplied.clone();
        if let Some(c) = c.filter(|c| c.buy.is_some()) {
            let back = crate::decide::adoption::held_back(&r, name);
            self.metrics
                .campaigns
                .buying_stopped(&c.name, back.len() as u64);
        }
        let runnable = runnable_actions(&p, &r, c.is_none(), name, &mut not_done);
        let run = PlanRun {
            lease,
            c,
            name,
            plan: &p,
            runnable,
        };
        self.run_actions(&run, &mut r, listed, report, &mut not_done)
            .await?;
        self.finish_report(c, &r, not_done, report);
        if buy_round && c.is_some() {
            self.record_stall(name, report).await?;
        }
        Ok(())
    }

    /// Marks what a stopped holder left in flight uncertain, checks the credentials, settles
    /// what needs no link list; the campaign's record after it.
    async fn recover_and_load(
        &self,
        lease: &HeldLease,
        name: &str,
    ) -> Result<Recorded, EngineError> {
        // The lease is ours now, so no other process can begin an intent of this campaign:
        // when none is in flight, none can appear behind this read.
        let marked = if self.store.intents().has_in_flight(name).await? {
            self.store
                .intents()
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
        self.check_credentials(name, &r).await?;
        self.settle_without_list(name, &r).await?;
        if may_write {
            r = self.load(name).await?;
        }
        Ok(r)
    }

    /// Runs the pass's first step (`decide::pass::pre_plan`): what the file adopts is recorded
    /// before the link list is first read, so that read is matched against it; then the
    /// record is read again. An id the file would re-point stops the pass there.
    async fn run_pre_plan(
        &self,
        lease: &HeldLease,
        c: Option<&Campaign>,
        name: &str,
        r: &mut Recorded,
        report: &mut CampaignReport,
    ) -> Result<(), EngineError> {
        let first = pre_plan(c, r);
        for action in &first.actions {
            self.run_action(lease, (c, name), r, action, false, report)
                .await?;
        }
        if let Some(why) = first.refused {
            return Err(EngineError::Blocked(why));
        }
        if !first.actions.is_empty() {
            *r = self.load(name).await?;
        }
        Ok(())
    }

    /// Reads the link list before planning when something waits for it. Whether it did: the
    /// plan's closing sync then knows nothing new, and a converged campaign costs one list
    /// call per pass, not two (issue 27).
    async fn list_first(
        &self,
        r: &mut Recorded,
        c: Option<&Campaign>,
        name: &str,
        report: &mut CampaignReport,
    ) -> Result<bool, EngineError> {
        if !needs_list_first(r) {
            return Ok(false);
        }
        let purpose = match settles_something(r) {
            true => Purpose::Settle,
            false => crate::metrics::load::current_purpose(),
        };
        let sync = self.sync_list(name, r, r.fallback_price(c));
        let s = with_purpose(purpose, sync).await?;
        report.bought += s.bought + s.adopted;
        *r = self.load(name).await?;
        Ok(true)
    }

    /// Runs the plan's runnable actions in order, keeping the record current from step to
    /// step by reading again only what the step just run may have written (issue 13).
    async fn run_actions(
        &self,
        run: &PlanRun<'_>,
        r: &mut Recorded,
        mut listed: bool,
        report: &mut CampaignReport,
        not_done: &mut Vec<String>,
    ) -> Result<(), EngineError> {
        let (p, c, name) = (run.plan, run.c, run.name);
        let today = self.clock.now().date_naive();
        let round_at = p
            .actions
            .iter()
            .position(|a| matches!(a, Action::BuyRound { .. }));
        let mut searches_started = false;
        for (n, &i) in run.runnable.iter().enumerate() {
            let action = &p.actions[i];
            let last = n + 1 == run.runnable.len();
            // The round's searches start as soon as the URLs are known, so the marketplace
            // prepares the donors while the steps before the round run.
            if let (Some(at), Some(c)) = (round_at, c)
                && !searches_started
                && i < at
                && r.halts.is_empty()
                && c.urls.iter().all(|u| r.ids.urls.contains_key(&u.url))
            {
                searches_started = true;
                self.start_searches(c, r).await;
            }
            if listed && matches!(action, Action::SyncLinks) {
                report.done.push(action.describe());
                if last {
                    r.refresh(&self.store, name, today, Parts::OUTCOME).await?;
                }
                continue;
            }
            listed = match action {
                Action::SyncLinks => true,
                // Settling a stop sends nothing that changes the marketplace.
                Action::SettleStop { .. } => listed,
                _ => false,
            };
            let written = self.run_step(run, i, r, report, not_done).await?;
            let parts = if last { Parts::OUTCOME } else { written };
            r.refresh(&self.store, name, today, parts).await?;
        }
        if run.runnable.is_empty() {
            r.refresh(&self.store, name, today, Parts::OUTCOME).await?;
        }
        Ok(())
    }

    /// Runs one action of the plan. A step refused without leaving anything uncertain is
    /// noted and the pass goes on (all of the record is read again); a call that may have
    /// executed, or a marketplace that cannot be reached, ends the pass.
    async fn run_step(
        &self,
        run: &PlanRun<'_>,
        i: usize,
        r: &Recorded,
        report: &mut CampaignReport,
        not_done: &mut Vec<String>,
    ) -> Result<Parts, EngineError> {
        let (p, name) = (run.plan, run.name);
        let action = &p.actions[i];
        // A stop's settlement waits for the settle grace only when an autobuyer creation or
        // start later in the plan may need its money.
        let wait = p.actions[i..].iter().any(|a| {
            matches!(
                a,
                Action::CreateAutobuyer { .. }
                    | Action::ReplaceAutobuyer { .. }
                    | Action::SetAutobuyer { running: true, .. }
            )
        });
        let step = tracing::info_span!("step", action = action.label(), fence = run.lease.fence());
        let exec = self.run_action(run.lease, (run.c, name), r, action, wait, report);
        match exec.instrument(step).await {
            Ok(()) => {
                report.done.push(action.describe());
                Ok(written_by(action))
            }
            // Nothing can be reached: the other steps would fail the same way.
            Err(e) if super::reach::connect_error(&e).is_some() => Err(e),
            Err(e) if e.leaves_nothing_uncertain() => {
                report.transient |= e.is_transient();
                tracing::warn!(campaign = %name, action = action.label(), error = %e, "step not done; the pass goes on with the independent ones");
                not_done.push(format!("{}: {e}", action.label()));
                Ok(Parts::ALL)
            }
            // A call that may have executed ends the pass: the next one settles it first.
            Err(e) => Err(e),
        }
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
            .campaigns()
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
            // An operator's halt waits for `resume`.
            report.transient |= r.halts.iter().any(Halt::is_credentials);
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

    pub(crate) async fn load(&self, name: &str) -> Result<Recorded, EngineError> {
        Ok(Recorded::load(&self.store, name, self.clock.now().date_naive()).await?)
    }

    /// While this account's credentials are known to be rejected, a cheap read tells whether
    /// they work again; if it does, the halt is lifted, else nothing changing is attempted.
    /// A project of its own refused (403) stops the campaign until a read of it works.
    async fn check_credentials(&self, name: &str, r: &Recorded) -> Result<(), EngineError> {
        self.check_refused_project(name, r).await?;
        // An operator's halt is wide too, but no read lifts it: only `resume` does.
        let lifted = self.credentials_halts_lifted_here(r);
        if lifted.is_empty() {
            return Ok(());
        }
        // Any project of this account the journal knows, this campaign's first; never one
        // that is refused by itself (its 403 says nothing of the credentials).
        let probe = match r.ids.project.as_ref() {
            Some(p) => Some(p.project_id),
            None => self.readable_project(name, 0).await?,
        };
        let Some(project) = probe else {
            // No project exists yet, so nothing can have been bought: creating the project
            // (free) is the probe. Its 401 halts again; its success lets the next pass resume.
            return Ok(());
        };
        match self.market.list_links(project).await {
            Ok(_) => {
                for scope in lifted {
                    self.store.clear_halt(scope).await?;
                }
                self.show_credentials_rejected().await?;
                tracing::info!(account = %self.account, "credentials accepted again; this account's spending resumes");
                Ok(())
            }
            Err(e) => Err(self.read_error(e)),
        }
    }

    /// The credentials halts over this campaign that a working read of this account lifts:
    /// the account's own, and the default account's also the `*` one a linkrunner from before
    /// accounts may still write during a rolling upgrade (it was that one account's). Another
    /// account's read never lifts them.
    fn credentials_halts_lifted_here<'r>(&self, r: &'r Recorded) -> Vec<&'r HaltScope> {
        let mine = HaltScope::account(&self.account);
        let legacy = linkrunner_domain::account::is_default(&self.account);
        r.halts
            .iter()
            .filter(|h| h.is_credentials())
            .map(|h| &h.scope)
            .filter(|s| **s == mine || (legacy && **s == HaltScope::Global))
            .collect()
    }

    /// `linkrunner_credentials_rejected` after a halt lifted: 1 while any account's
    /// credentials are still rejected.
    async fn show_credentials_rejected(&self) -> Result<(), EngineError> {
        let halts = self.store.halts().await?;
        let any = halts.iter().any(Halt::is_credentials);
        self.metrics.credentials_rejected.set(i64::from(any));
        Ok(())
    }
}

impl<M: Market> Engine<M> {
    /// While the campaign is halted because the marketplace refused its project (403, while
    /// another project read), a read of the project tells whether it is readable again: then
    /// the halt is lifted; a 403 again keeps the campaign stopped (`decide::refused`).
    async fn check_refused_project(&self, name: &str, r: &Recorded) -> Result<(), EngineError> {
        let scope = HaltScope::campaign(name);
        let Some(halt) = r
            .halts
            .iter()
            .find(|h| h.scope == scope && refused::is_project_refusal(&h.reason))
        else {
            return Ok(());
        };
        let Some(project) = r.ids.project.as_ref().map(|p| p.project_id) else {
            self.store.clear_halt(&scope).await?;
            return Ok(());
        };
        match self.market.list_links(project).await {
            Ok(_) => {
                self.store.clear_halt(&scope).await?;
                tracing::info!(
                    campaign = name,
                    project,
                    "the campaign's project can be read again; its spending resumes"
                );
                Ok(())
            }
            Err(e) if e.auth_status() == Some(403) => Err(EngineError::Blocked(format!(
                "spending stopped: {}",
                halt.reason
            ))),
            Err(e) => Err(self.read_error(e)),
        }
    }

    /// A campaign whose file is not loaded: its held report when its file exists but fails
    /// validation (nothing stopped or bought), `None` when it is really removed.
    pub(crate) async fn held_if_invalid(
        &self,
        name: &str,
        invalid: &InvalidFiles,
    ) -> Result<Option<CampaignReport>, EngineError> {
        let covering = self.store.halts_covering(name).await?;
        if covering.iter().any(Halt::is_operator) {
            return Ok(None);
        }
        let known = self.store.campaigns().campaign_files().await?;
        if let Some(new) = invalid.renamed_to(name)
            && !known.iter().any(|k| k.name == new)
        {
            let mut r = CampaignReport::new(name);
            r.detail = Some(format!(
                "renamed to {new}: its pass hands over everything {name} holds"
            ));
            return Ok(Some(r));
        }
        let file = known.iter().find(|k| k.name == name);
        let held = match file {
            Some(k) if invalid.holds(&k.name, k.file.as_deref()) => Some(held_report(invalid, k)),
            None if invalid.holds(name, None) => {
                let k = CampaignFile {
                    name: name.to_string(),
                    file: None,
                    renamed_from: None,
                };
                Some(held_report(invalid, &k))
            }
            _ => None,
        };
        Ok(held)
    }
}

/// What [`Engine::pass_reporting`] says while a pass works.
#[derive(Debug, Clone)]
pub(crate) enum PassProgress {
    /// How many campaigns the pass works on (said again when removed ones are added).
    Total(usize),
    /// A campaign got a slot and started.
    Started(String),
    /// A campaign's pass ended.
    Done(CampaignReport),
}

/// The recorded campaigns none of `campaigns` is: removed (their file is gone), or held as
/// recorded with their report (their file exists but fails validation).
fn removed_or_held<C: Borrow<LoadedCampaign>>(
    campaigns: &[C],
    known: &[CampaignFile],
    invalid: &InvalidFiles,
    (halts, accounts): (&[Halt], &HaltAccounts),
) -> (Vec<String>, Vec<CampaignReport>) {
    let loaded: std::collections::HashSet<&str> = campaigns
        .iter()
        .map(|c| c.borrow().campaign.name.as_str())
        .collect();
    let recorded: std::collections::HashSet<&str> = known.iter().map(|k| k.name.as_str()).collect();
    // Renamed by a loaded file: its record is handed over by the new name's pass, never
    // removed (no autobuyer stopped, no "spending stopped: campaign file removed").
    let renamed: std::collections::HashSet<&str> = campaigns
        .iter()
        .map(|c| &c.borrow().campaign)
        .filter(|c| !recorded.contains(c.name.as_str()))
        .filter_map(|c| c.renamed_from.as_deref())
        .collect();
    let (mut removed, mut held) = (Vec::new(), Vec::new());
    for k in known.iter().filter(|k| !loaded.contains(k.name.as_str())) {
        if renamed.contains(k.name.as_str()) {
            continue;
        }
        if invalid.holds(&k.name, k.file.as_deref()) && !stops_under_halt(halts, accounts, &k.name)
        {
            held.push(held_report(invalid, k));
        } else {
            removed.push(k.name.clone());
        }
    }
    (removed, held)
}

/// Whether a held campaign (its file invalid, or its removal held) gets the pass of a
/// campaign without a file all the same: an operator's halt (the stop button, the anomaly
/// brake) stops every running autobuyer, whatever its file says or fails to say. Its plan
/// (`plan_removed`) stops them and buys nothing; after `resume` a held campaign is held again,
/// its autobuyers stopped until its file loads and wants them running.
fn stops_under_halt(halts: &[Halt], accounts: &HaltAccounts, name: &str) -> bool {
    halts
        .iter()
        .any(|h| h.is_operator() && accounts.covers(h, name))
}

/// The report of a recorded campaign whose file exists but fails validation: held as
/// recorded, its lease not even taken.
fn held_report(invalid: &InvalidFiles, k: &CampaignFile) -> CampaignReport {
    let mut r = CampaignReport::new(&k.name);
    if let Some(old) = invalid.behind_rename(&k.name) {
        r.outcome = PassOutcome::Skipped;
        r.detail = Some(format!(
            "renamed from {old} by another process, whose campaign files are newer: these files still have {old}'s and not {}'s, so nothing of it is stopped until they catch up",
            k.name
        ));
        return r;
    }
    if let Some(why) = invalid.removal_held(&k.name) {
        r.outcome = PassOutcome::RemovalHeld;
        r.detail = Some(format!("its file is gone; {why}"));
        return r;
    }
    r.outcome = PassOutcome::FileInvalid;
    let file = invalid
        .file_of(&k.name, k.file.as_deref())
        .map(|p| p.display().to_string())
        .or_else(|| k.file.clone())
        .unwrap_or_else(|| "its file".into());
    r.detail = Some(format!(
        "{file} fails validation (see the problems above): the campaign is kept as recorded, nothing stopped or bought, until the file is fixed or removed"
    ));
    r
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
/// is a scheduled round's. Not a rule: it records the file version behind each attempt.
pub(crate) fn pass_cause(
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
        Action::CreateAutobuyer { .. }
        | Action::ReplaceAutobuyer { .. }
        | Action::SetAutobuyer { .. } => Parts::SWITCHED,
        _ => Parts::ALL,
    }
}

/// How a pass under the lease went: it only looked (and released the lease with its write),
/// or it was full.
enum Looked {
    Only,
    Full,
}

/// One pass's plan as it is being run: the lease, the campaign (none when its file is
/// gone), the plan and which of its actions this pass runs.
struct PlanRun<'a> {
    lease: &'a HeldLease,
    c: Option<&'a Campaign>,
    name: &'a str,
    plan: &'a plan::CampaignPlan,
    runnable: Vec<usize>,
}
