//! A campaign lease while this process holds it for a pass: renewed in the background, and
//! checked right before every changing call is sent.
//!
//! The store's fence already refuses to record anything under a lost lease; this closes the
//! gap around the call itself. A holder that froze past its lease must not wake up and send:
//! [`HeldLease::check`] refuses once renewal has failed for good or the lease has less than a
//! quarter of its lifetime left (a call may take that long), and the pass stops there
//! ([`EngineError::Fenced`]). A renewal that fails for a passing database error is retried
//! until the lease expires. Tested by `tests/it` `engine::partial_truth::a_lost_lease_ends_the_pass_before_the_next_change`.

use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};

use crate::store::{CauseKind, IntentCause, LeaseToken, Store};
use linkrunner_domain::clock::SharedClock;

use super::error::EngineError;

#[derive(Debug)]
struct State {
    expires_at: DateTime<Utc>,
    lost: bool,
}

/// A lease held for one pass. Cheap to clone; clones share the renewal's view.
#[derive(Debug, Clone)]
pub(crate) struct HeldLease {
    token: LeaseToken,
    ttl: Duration,
    state: Arc<Mutex<State>>,
    /// Why the pass holding it runs: recorded with every intent it begins.
    cause: Arc<IntentCause>,
}

impl HeldLease {
    pub(crate) fn new(token: LeaseToken, ttl: Duration) -> Self {
        let state = State {
            expires_at: token.expires_at,
            lost: false,
        };
        HeldLease {
            token,
            ttl,
            state: Arc::new(Mutex::new(state)),
            cause: Arc::new(IntentCause::bare(CauseKind::Reconcile)),
        }
    }

    /// The same lease, recording `cause` with the intents begun under it.
    pub(crate) fn with_cause(mut self, cause: IntentCause) -> Self {
        self.cause = Arc::new(cause);
        self
    }

    pub(crate) fn cause(&self) -> &IntentCause {
        &self.cause
    }

    /// The token the store checks (its fence never changes while we hold it).
    pub(crate) fn token(&self) -> &LeaseToken {
        &self.token
    }

    pub(crate) fn fence(&self) -> i64 {
        self.token.fence
    }

    /// Whether a changing call may be sent now: the lease is not known lost and has at least a
    /// quarter of its lifetime left.
    pub(crate) fn check(&self, now: DateTime<Utc>) -> Result<(), EngineError> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.lost || s.expires_at - now < self.ttl / 4 {
            return Err(EngineError::Fenced);
        }
        Ok(())
    }

    fn renewed(&self, expires_at: DateTime<Utc>) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .expires_at = expires_at;
    }

    fn lose(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).lost = true;
    }

    fn expired(&self, now: DateTime<Utc>) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .expires_at
            <= now
    }

    /// Renews the lease every third of its lifetime until aborted. A database error is
    /// retried every second until the lease expires; a refused renewal (another holder took
    /// the campaign) or an expiry marks it lost for good.
    pub(crate) fn keep_renewed(
        &self,
        store: Store,
        clock: SharedClock,
    ) -> tokio::task::JoinHandle<()> {
        let lease = self.clone();
        let every = (self.ttl / 3)
            .to_std()
            .unwrap_or(StdDuration::from_secs(10));
        tokio::spawn(async move {
            let mut wait = every;
            loop {
                tokio::time::sleep(wait).await;
                let now = clock.now();
                match store
                    .leases()
                    .renew_lease(&lease.token, lease.ttl, now)
                    .await
                {
                    Ok(Some(t)) => {
                        lease.renewed(t.expires_at);
                        wait = every;
                    }
                    Ok(None) => return lease.lose(),
                    Err(e) if !lease.expired(now) => {
                        tracing::warn!(campaign = %lease.token.campaign, error = %e, "lease renewal failed; retrying");
                        wait = every.min(StdDuration::from_secs(1));
                    }
                    Err(_) => return lease.lose(),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(ttl_s: i64, now: DateTime<Utc>) -> HeldLease {
        let token = LeaseToken {
            campaign: "c".into(),
            holder: "h".into(),
            fence: 1,
            expires_at: now + Duration::seconds(ttl_s),
        };
        HeldLease::new(token, Duration::seconds(ttl_s))
    }

    #[test]
    fn a_fresh_lease_lets_a_call_go_and_a_lost_one_does_not() {
        let now = Utc::now();
        let l = lease(120, now);
        assert!(l.check(now).is_ok());
        l.lose();
        assert!(matches!(l.check(now), Err(EngineError::Fenced)));
    }

    #[test]
    fn a_lease_with_less_than_a_quarter_of_its_life_left_sends_nothing() {
        let now = Utc::now();
        let l = lease(120, now);
        assert!(l.check(now + Duration::seconds(89)).is_ok());
        assert!(l.check(now + Duration::seconds(91)).is_err());
        l.renewed(now + Duration::seconds(211));
        assert!(l.check(now + Duration::seconds(91)).is_ok());
    }
}
