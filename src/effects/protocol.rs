//! The money protocol, in one place.
//!
//! 1. The intent — with its budget reservation — is committed **before** the call
//!    (`Store::begin_intents`, one transaction; the database refuses a reservation past a cap).
//! 2. The call is sent once. The client never retries a call that changes something; only a
//!    429 — which says it was not executed — is sent again here, after `Retry-After`, as a new
//!    attempt of the same intent.
//! 3. Its outcome — and what it implies (ids, held links, released money) — is committed in one
//!    transaction: executed → succeeded; definitely not executed → failed, money released; may
//!    have executed → uncertain, money kept until settled (`settle`).
//!
//! A crash between 1 and 3 leaves the intent `in_flight`; the next holder of the campaign's
//! lease turns it `uncertain` and settles it. Proved by `tests/it/engine_kill.rs`.

use std::future::Future;
use std::time::Duration;

use crate::market::{Executed, Market, MarketError};
use crate::store::{
    AttemptRef, BeginOutcome, Effect, HaltScope, IntentRow, NewIntent, Outcome, StoreError,
};

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use crate::decide::refused::{self, RefusalScope};

/// How often a change answered with 429 (definitely not executed) is sent again in one step.
const RATE_LIMIT_RETRIES: u32 = 3;
/// The longest `Retry-After` a step waits for; beyond it the step fails and the next pass retries.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl<T> Journaled<T> {
    /// Turns everything but success into an error or a "blocked" explanation for the step `what`.
    pub(crate) fn into_done(self, what: &str) -> Result<Option<T>, EngineError> {
        use crate::store::IntentState as S;
        match self {
            Journaled::Done(v) => Ok(Some(v)),
            Journaled::Unreadable(_) => Ok(None),
            Journaled::Exists(row) if row.state == S::Succeeded => Ok(None),
            Journaled::Exists(row) => Err(EngineError::Blocked(format!(
                "{what}: intent #{} is already {} (another process, or waiting to be settled)",
                row.id,
                row.state.as_str()
            ))),
            Journaled::CapExceeded(why) => Err(EngineError::Blocked(format!("{what}: {why}"))),
            Journaled::NotExecuted(e) | Journaled::Uncertain(e) => Err(EngineError::Market(e)),
        }
    }
}

/// What happened to a journaled call.
#[derive(Debug)]
pub(crate) enum Journaled<T> {
    /// Sent, executed, outcome recorded.
    Done(T),
    /// The natural key is already recorded (and did not fail): nothing was sent.
    Exists(IntentRow),
    /// The reservation does not fit a cap: nothing was recorded or sent.
    CapExceeded(String),
    /// Definitely not executed: recorded as failed, money released.
    NotExecuted(MarketError),
    /// May have executed: recorded as uncertain, money kept until settled.
    Uncertain(MarketError),
    /// Executed (2xx) but the answer could not be read: recorded with the fallback effects.
    Unreadable(MarketError),
}

/// Turns a call's answer into the effect to record for each intent of the batch.
pub(crate) type OnSuccess<T> = Box<dyn FnOnce(&T) -> Vec<Effect> + Send>;

/// How to record a call's success: one outcome per intent of the batch.
pub(crate) struct Effects<T> {
    pub(crate) on_success: OnSuccess<T>,
    /// For a 2xx whose answer could not be read: what to record, or `None` to keep it uncertain.
    pub(crate) on_unreadable: Option<Vec<Effect>>,
}

impl<M: Market> Engine<M> {
    /// Records `intents`, sends `call` once, records the outcome. See the module docs.
    pub(crate) async fn journaled<T, F>(
        &self,
        lease: &HeldLease,
        intents: Vec<NewIntent>,
        call: impl Fn() -> F,
        effects: Effects<T>,
    ) -> Result<Journaled<T>, EngineError>
    where
        T: serde::Serialize,
        F: Future<Output = Result<T, MarketError>>,
    {
        if self.cancel.is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        let Some(kind) = intents.first().map(|i| i.kind) else {
            return Err(EngineError::Blocked(
                "a call with no intent is never sent".into(),
            ));
        };
        if intents.iter().any(|i| i.reserve.is_some()) {
            self.ensure_not_halted(&intents[0].campaign, false).await?;
        } else if intents.iter().any(|i| starts_spending(i.kind)) {
            // A start that reserves nothing (its budget still counts) lets an autobuyer buy
            // again all the same: an operator's halt refuses it too.
            self.ensure_not_halted(&intents[0].campaign, true).await?;
        }
        let mut retries = 0;
        loop {
            let ids = match self.begin(lease, &intents).await? {
                Ok(ids) => ids,
                Err(refused) => return Ok(refused),
            };
            crate::store::faultpoint::reach("after_begin", kind.as_str()).await;
            if let Err(lost) = lease.check(self.clock.now()) {
                self.abandon(&ids, "not sent: the campaign lease could not be kept")
                    .await;
                return Err(lost);
            }
            let result = call().await;
            crate::store::faultpoint::reach("after_call", kind.as_str()).await;
            if let Err(e @ MarketError::RateLimited { .. }) = &result
                && retries < RATE_LIMIT_RETRIES
            {
                self.release_rate_limited(&ids, kind, e).await?;
                retries += 1;
                continue;
            }
            let campaign = intents[0].campaign.as_str();
            let recorded = self.record_outcome(&ids, campaign, result, effects).await;
            crate::store::faultpoint::reach("after_complete", kind.as_str()).await;
            log_outcome(kind, &ids, &recorded);
            return recorded;
        }
    }

    /// A 429 was definitely not executed: its intents fail (their money is released), and
    /// the caller sends again after `Retry-After` under the same natural key (the store
    /// re-arms the failed intent).
    async fn release_rate_limited(
        &self,
        ids: &[AttemptRef],
        kind: crate::store::IntentKind,
        e: &MarketError,
    ) -> Result<(), EngineError> {
        let wait = e
            .retry_after()
            .unwrap_or(Duration::from_secs(1))
            .min(MAX_RETRY_AFTER);
        let error = e.to_string();
        let now = self.clock.now();
        self.complete_all(
            ids,
            |_| Outcome::Failed {
                error: error.clone(),
            },
            None,
            now,
        )
        .await?;
        tracing::info!(
            kind = kind.as_str(),
            wait_ms = wait.as_millis() as u64,
            "rate limited by the marketplace; sending again after Retry-After"
        );
        self.pause(wait).await
    }

    /// Records the intents and their reservations, or says why nothing was recorded.
    async fn begin<T>(
        &self,
        lease: &HeldLease,
        intents: &[NewIntent],
    ) -> Result<Result<Vec<AttemptRef>, Journaled<T>>, EngineError> {
        match self
            .store
            .intents()
            .begin_intents_because(
                lease.token(),
                intents,
                Some(lease.cause()),
                self.clock.now(),
            )
            .await?
        {
            BeginOutcome::Started(ids) => Ok(Ok(ids)),
            BeginOutcome::Exists(row) => Ok(Err(Journaled::Exists(*row))),
            BeginOutcome::CapExceeded {
                cap,
                needed,
                headroom,
                ..
            } => Ok(Err(Journaled::CapExceeded(cap_message(
                cap, needed, headroom,
            )))),
            BeginOutcome::Fenced => Err(EngineError::Fenced),
        }
    }

    async fn record_outcome<T: serde::Serialize>(
        &self,
        ids: &[AttemptRef],
        campaign: &str,
        result: Result<T, MarketError>,
        effects: Effects<T>,
    ) -> Result<Journaled<T>, EngineError> {
        let now = self.clock.now();
        match result {
            Ok(v) => {
                let answer = short_json(&serde_json::to_value(&v).unwrap_or_default());
                let list = (effects.on_success)(&v);
                self.complete_all(
                    ids,
                    |i| Outcome::Succeeded(pick(&list, i)),
                    Some(&answer),
                    now,
                )
                .await?;
                Ok(Journaled::Done(v))
            }
            Err(e) => {
                self.record_failure(ids, campaign, e, effects.on_unreadable)
                    .await
            }
        }
    }

    async fn record_failure<T>(
        &self,
        ids: &[AttemptRef],
        campaign: &str,
        e: MarketError,
        on_unreadable: Option<Vec<Effect>>,
    ) -> Result<Journaled<T>, EngineError> {
        let now = self.clock.now();
        let msg = e.to_string();
        match (e.executed(), on_unreadable) {
            (Executed::No, _) => {
                self.complete_all(ids, |_| Outcome::Failed { error: msg.clone() }, None, now)
                    .await?;
                if e.is_auth() {
                    return Err(match self.halt_for_credentials(&e, campaign).await? {
                        Some(reason) => EngineError::Blocked(reason),
                        None => EngineError::Auth(e),
                    });
                }
                Ok(Journaled::NotExecuted(e))
            }
            (Executed::Yes, Some(list)) => {
                self.complete_all(ids, |i| Outcome::Succeeded(pick(&list, i)), Some(&msg), now)
                    .await?;
                Ok(Journaled::Unreadable(e))
            }
            _ => {
                self.complete_all(
                    ids,
                    |_| Outcome::Uncertain { error: msg.clone() },
                    None,
                    now,
                )
                .await?;
                Ok(Journaled::Uncertain(e))
            }
        }
    }

    /// Records the outcome of each attempt. An attempt another holder re-armed meanwhile is
    /// not ours to complete: the pass stops (`Fenced`).
    async fn complete_all(
        &self,
        ids: &[AttemptRef],
        outcome: impl Fn(usize) -> Outcome,
        answer: Option<&str>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), EngineError> {
        for (i, id) in ids.iter().enumerate() {
            match self
                .store
                .intents()
                .complete_intent(*id, outcome(i), answer, now)
                .await
            {
                Ok(()) => {}
                Err(StoreError::Fenced { .. }) => return Err(EngineError::Fenced),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Nothing was sent for these attempts (the lease was lost first): they fail, best
    /// effort — if another holder already took them over, its settlement stands.
    async fn abandon(&self, ids: &[AttemptRef], why: &str) {
        let failed = |_| Outcome::Failed { error: why.into() };
        if let Err(e) = self.complete_all(ids, failed, None, self.clock.now()).await {
            tracing::warn!(error = %e, "could not record that a call was not sent; the next holder settles it");
        }
    }

    /// Money is never committed while spending is stopped — checked right before every
    /// spending call, not only at the start of a pass, so a 401 seen by one campaign stops the
    /// others at their next call, and an operator's halt every process at its next call.
    /// `operator_only`: only an operator's halt counts (a start that reserves nothing).
    async fn ensure_not_halted(
        &self,
        campaign: &str,
        operator_only: bool,
    ) -> Result<(), EngineError> {
        let halts = self.store.halts().await?;
        // This engine is the campaign's account's (`campaign_pass` routes it): its account's
        // halts apply, another account's do not.
        let applies = |h: &&crate::store::Halt| {
            h.scope.covers(campaign, &self.account) && (!operator_only || h.is_operator())
        };
        match halts.iter().find(applies) {
            Some(h) => Err(EngineError::Blocked(match &h.scope {
                HaltScope::Global | HaltScope::Account(_) => {
                    format!("{}: {}", h.scope.stopped(), h.describe())
                }
                HaltScope::Campaign(_) if refused::is_project_refusal(&h.reason) => {
                    format!("spending stopped: {}", h.reason)
                }
                HaltScope::Campaign(_) => format!("waiting for an operator: {}", h.reason),
            })),
            None => Ok(()),
        }
    }

    /// A 401/403 seen by `campaign` stops all spending of this engine's account (every
    /// campaign of it, no other account's) until its credentials work again — unless it is a
    /// 403 on the campaign's own project while the same credentials read another project: then
    /// only that campaign stops (`decide::refused`), and the campaign halt's reason is returned.
    pub(crate) async fn halt_for_credentials(
        &self,
        e: &MarketError,
        campaign: &str,
    ) -> Result<Option<String>, StoreError> {
        if let Some(reason) = self.halt_one_project(e, campaign).await? {
            return Ok(Some(reason));
        }
        // 1 while any account's credentials are rejected: set here, recomputed when one lifts.
        self.metrics.credentials_rejected.set(1);
        tracing::error!(
            account = %self.account,
            operation = e.operation(),
            "credentials rejected by the marketplace; all spending of this account stopped"
        );
        self.store
            .set_halt(
                &HaltScope::account(&self.account),
                &format!("credentials rejected during {}", e.operation()),
                self.clock.now(),
            )
            .await?;
        Ok(None)
    }

    /// For a 403 on a path naming the campaign's project: reads another known project, and
    /// when that works, halts this campaign only. Its halt's reason when it did.
    async fn halt_one_project(
        &self,
        e: &MarketError,
        campaign: &str,
    ) -> Result<Option<String>, StoreError> {
        let (status, operation) = (e.auth_status().unwrap_or(401), e.operation());
        if !refused::may_be_one_project(status, operation) {
            return Ok(None);
        }
        let Some(project) = self.store.campaigns().remote_ids(campaign).await?.project else {
            return Ok(None);
        };
        let project = project.project_id;
        let other = self.readable_project(campaign, project).await?;
        let read = match other {
            Some(p) => Some(self.market.list_links(p).await.is_ok()),
            None => None,
        };
        if refused::scope(status, operation, read) != RefusalScope::Campaign {
            return Ok(None);
        }
        let reason = refused::project_reason(project, operation, other.unwrap_or_default());
        tracing::error!(
            campaign,
            project,
            operation,
            "the marketplace refuses this campaign's project (403) while the credentials read another: this campaign's spending stopped"
        );
        self.store
            .set_halt(&HaltScope::campaign(campaign), &reason, self.clock.now())
            .await?;
        Ok(Some(reason))
    }

    /// Another campaign's project to read with the same credentials: of a campaign of this
    /// engine's account (another account's project says nothing of these credentials), not
    /// `project`, and not one of a campaign already halted because its own project is refused.
    pub(crate) async fn readable_project(
        &self,
        campaign: &str,
        project: i64,
    ) -> Result<Option<i64>, StoreError> {
        let halts = self.store.halts().await?;
        let refused = |name: &str| {
            halts.iter().any(|h| {
                h.scope == HaltScope::campaign(name) && refused::is_project_refusal(&h.reason)
            })
        };
        // Every campaign's account in one read, not one read per campaign.
        for (name, account) in self.store.campaigns().campaign_accounts().await? {
            if name == campaign || refused(&name) || account != *self.account {
                continue;
            }
            if let Some(p) = self.store.campaigns().remote_ids(&name).await?.project
                && p.project_id != project
            {
                return Ok(Some(p.project_id));
            }
        }
        Ok(None)
    }
}

/// Whether a call of this kind lets money flow: an autobuyer buys once created or started.
fn starts_spending(kind: crate::store::IntentKind) -> bool {
    use crate::store::IntentKind;
    matches!(
        kind,
        IntentKind::StartAutobuyer | IntentKind::CreateAutobuyer
    )
}

fn pick(list: &[Effect], i: usize) -> Effect {
    list.get(i).cloned().unwrap_or(Effect::None)
}

/// Says which cap refused a reservation, in the cap's own unit.
fn cap_message(cap: crate::store::CapKind, needed: i64, headroom: i64) -> String {
    use linkrunner_domain::money::Money;
    match cap {
        crate::store::CapKind::Monthly => format!(
            "the monthly cap: it needs {} RUB, {} RUB are left",
            Money::from_kopecks(needed),
            Money::from_kopecks(headroom)
        ),
        crate::store::CapKind::Account => format!(
            "the account's monthly cap (every campaign together): it needs {} RUB, {} RUB are left",
            Money::from_kopecks(needed),
            Money::from_kopecks(headroom)
        ),
        other => format!(
            "the {} link cap: it needs {needed}, {headroom} left",
            other.as_str()
        ),
    }
}

/// One line per changing call: what it was, which intents, and how it ended.
fn log_outcome<T>(
    kind: crate::store::IntentKind,
    ids: &[AttemptRef],
    r: &Result<Journaled<T>, EngineError>,
) {
    let first = ids.first().map(|i| i.intent.0).unwrap_or_default();
    match r {
        Ok(Journaled::Done(_)) => tracing::info!(
            kind = kind.as_str(),
            intent = first,
            intents = ids.len(),
            "call executed and recorded"
        ),
        Ok(Journaled::Unreadable(e)) => {
            tracing::warn!(kind = kind.as_str(), intent = first, error = %e, "call executed, answer unreadable; recorded without its ids")
        }
        Ok(Journaled::NotExecuted(e)) => {
            tracing::warn!(kind = kind.as_str(), intent = first, error = %e, "call not executed; its money released")
        }
        Ok(Journaled::Uncertain(e)) => {
            tracing::warn!(kind = kind.as_str(), intent = first, error = %e, "call may have executed; intent uncertain, its money kept until settled")
        }
        Ok(_) => {}
        Err(e) => {
            tracing::error!(kind = kind.as_str(), intent = first, error = %e, "recording the outcome failed; the intent stays in flight and is settled at the next pass")
        }
    }
}

/// JSON text capped at 4 KiB, for answers kept in the journal.
fn short_json(v: &serde_json::Value) -> String {
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
