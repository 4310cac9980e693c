//! Login mode: obtaining a ticket and token, backing off after a failure, and when a token
//! is replaced before it expires.

use std::time::Duration;

use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret as _, SecretString};

use super::super::auth::Credentials;
use super::super::error::MarketError;
use super::login::{self, LoginError};
use super::{CredentialProvider, LoginSettings, Trigger};

/// After a failed login, the next attempt waits this long, doubled up to a minute.
const LOGIN_BACKOFF: Duration = Duration::from_secs(1);
const LOGIN_BACKOFF_MAX: Duration = Duration::from_secs(60);

/// What refreshing remembers between attempts (held under the refresh lock).
#[derive(Default)]
pub(super) struct Upkeep {
    /// Login: no new attempt before this, after a failure.
    pub(super) retry_at: Option<DateTime<Utc>>,
    backoff: Option<Duration>,
    /// Login: the last failure, answered again while waiting for `retry_at`.
    pub(super) last_error: Option<MarketError>,
    /// Login: the API key that failed; a different one in the file is tried at once.
    failed_key: Option<SecretString>,
}

impl Upkeep {
    /// Whether a login should wait: a failure is recent and the API key is still the one
    /// that failed (a fixed key resumes spending at the next pass, not after the backoff).
    pub(super) fn waiting(&self, now: DateTime<Utc>, l: &LoginSettings) -> bool {
        let recent = self.retry_at.is_some_and(|at| now < at);
        let same_key = match (&self.failed_key, l.api_key.read()) {
            (Some(failed), Ok(key)) => failed.expose_secret() == key.expose_secret(),
            _ => true,
        };
        recent && same_key
    }
}

impl CredentialProvider {
    /// The built-in login; on success the new token and ticket are in use.
    pub(super) async fn login(
        &self,
        l: &LoginSettings,
        upkeep: &mut Upkeep,
        trigger: Trigger,
        op: &'static str,
    ) -> Result<(), MarketError> {
        let key = l.api_key.read();
        let result = match &key {
            Ok(key) => {
                self.redactor.remember(&[key]);
                login::obtain(&self.http, &self.base, l, key)
                    .await
                    .map_err(|e| login_failure(e, op))
            }
            Err(e) => Err(MarketError::InvalidRequest {
                op,
                reason: format!("the API key file: {e}"),
            }),
        };
        let usable = result.and_then(|o| {
            // Redacted before anything could show them, even when they cannot be used.
            self.redactor.remember(&[&o.token, &o.ticket]);
            Credentials::new(o.token, o.ticket).map_err(|e| MarketError::InvalidRequest {
                op,
                reason: format!("the login answered unusable credentials: {e}"),
            })
        });
        let credentials = match usable {
            Ok(c) => c,
            Err(e) => {
                self.failed();
                let backoff = upkeep
                    .backoff
                    .map_or(LOGIN_BACKOFF, |b| (b * 2).min(LOGIN_BACKOFF_MAX));
                upkeep.backoff = Some(backoff);
                upkeep.retry_at = Some(self.clock.now() + chrono_of(backoff));
                upkeep.last_error = Some(e.clone());
                upkeep.failed_key = key.ok();
                tracing::error!(error = %e, trigger = ?trigger, retry_in_ms = backoff.as_millis() as u64, "could not obtain a marketplace token");
                return Err(e);
            }
        };
        *upkeep = Upkeep::default();
        self.metrics.credentials.refresh_failing.set(0);
        let s = self.install(credentials, "login");
        tracing::info!(trigger = ?trigger, expires_at = ?s.expires_at, "obtained a new marketplace token");
        Ok(())
    }
}

/// How long before its expiry a token is replaced: a quarter of its lifetime, at least a
/// second, at most half its lifetime and never more than five minutes. Early enough that
/// a request never waits for an expired token; late enough not to log in all the time.
pub(crate) fn refresh_margin(obtained: DateTime<Utc>, expires: DateTime<Utc>) -> chrono::Duration {
    let lifetime = (expires - obtained).max(chrono::Duration::zero());
    (lifetime / 4)
        .max(chrono::Duration::seconds(1))
        .min(lifetime / 2)
        .min(chrono::Duration::minutes(5))
}

fn chrono_of(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::seconds(60))
}

/// A failed login as the error of the call that needed it: refused → credentials rejected
/// (spending halts, the reason names the login); otherwise nothing was sent.
fn login_failure(e: LoginError, op: &'static str) -> MarketError {
    match e {
        LoginError::Refused { status, .. } => MarketError::Unauthorized {
            op: super::super::op::LOGIN,
            status,
        },
        LoginError::Transient { .. } => MarketError::Connect {
            op,
            reason: format!("no token: {e}"),
        },
        LoginError::Unusable { .. } => MarketError::InvalidRequest {
            op,
            reason: format!("no token: {e}"),
        },
    }
}
