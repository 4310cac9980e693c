//! `credentials/`: the token and ticket the client sends, kept current for a daemon that runs
//! for months. The client asks [`CredentialProvider::current`] before every request (a read
//! lock and a clock read when nothing is due) and calls [`CredentialProvider::after_rejection`]
//! once when a request answers 401/403.
//!
//! | source | refreshed |
//! |---|---|
//! | fixed values (environment) | never: a restart changes them |
//! | files (`--api-token-file`, `--auth-ticket-file`, `$CREDENTIALS_DIRECTORY`) | polled every [`FILE_POLL`] (from the request path and the daemon's tick), on SIGHUP ([`CredentialProvider::maintain`] with `force`), and once more before a 401/403 is reported |
//! | built-in login (`--login`, `--api-key-file`) | before the token's JWT `exp` (see [`refresh_margin`]), once after a 401/403, on SIGHUP |
//!
//! Where secrets come from and reading them: `source`; re-reading files: `files`; the
//! login's two requests: `login`; logging in, backoff and the refresh margin: `renew`; a
//! JWT's `exp`: `jwt`; reading one secret file, size-capped: `secret_file`.
//! Values never reach a log line, an error or a metric: only that they changed, and when.
//!
//! May import: crate::metrics.

mod files;
mod jwt;
mod login;
mod renew;
pub(super) mod secret_file;
pub(super) mod source;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;
use secrecy::{ExposeSecret as _, SecretString};

use files::read_given;
use renew::Upkeep;
pub(crate) use renew::refresh_margin;
pub(crate) use secret_file::read_secret_file;
pub use source::{CredentialSource, CredentialsMode, LoginSettings, SecretOrigin};

use super::auth::{AuthScheme, Credentials, CredentialsError};
use super::error::MarketError;
use super::redact::Redactor;
use super::settings::BaseUrl;
use crate::metrics::Metrics;
use linkrunner_domain::clock::SharedClock;

/// How often credential files are re-read at most (from requests and the daemon's tick).
pub(crate) const FILE_POLL: Duration = Duration::from_secs(2);

/// The credentials in use: the header values of every request and what they were made of.
pub(crate) struct Snapshot {
    /// Grows by one each time the values change, so a caller can tell whether a refresh
    /// happened since it sent its request.
    pub(crate) generation: u64,
    headers: HeaderMap,
    credentials: Credentials,
    expires_at: Option<DateTime<Utc>>,
    obtained_at: DateTime<Utc>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("generation", &self.generation)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Snapshot {
    /// `Authorization` and `Cookie`, marked sensitive.
    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }
}

/// The one place that knows the current token and ticket. See the module doc.
pub(crate) struct CredentialProvider {
    source: CredentialSource,
    scheme: AuthScheme,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// Files: when they were last read, in Unix milliseconds (checked without the lock).
    files_read_at: AtomicI64,
    upkeep: tokio::sync::Mutex<Upkeep>,
    redactor: Redactor,
    metrics: Arc<Metrics>,
    clock: SharedClock,
    http: reqwest::Client,
    base: BaseUrl,
}

impl std::fmt::Debug for CredentialProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialProvider")
            .field("mode", &self.mode().as_str())
            .finish_non_exhaustive()
    }
}

/// Why a refresh was asked for (the log says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// The request path or the daemon's tick found a refresh due.
    Due,
    /// SIGHUP.
    Forced,
    /// A request answered 401/403.
    Rejected,
}

impl CredentialProvider {
    /// Reads what is given (files, the API key file) now, so a missing or unusable file
    /// fails the start; the built-in login itself happens at the first request.
    pub(crate) fn new(
        source: CredentialSource,
        scheme: AuthScheme,
        http: reqwest::Client,
        base: BaseUrl,
        metrics: Arc<Metrics>,
        clock: SharedClock,
    ) -> Result<CredentialProvider, CredentialsError> {
        let p = CredentialProvider {
            source,
            scheme,
            current: RwLock::new(None),
            files_read_at: AtomicI64::new(0),
            upkeep: tokio::sync::Mutex::new(Upkeep::default()),
            redactor: Redactor::default(),
            metrics,
            clock,
            http,
            base,
        };
        match &p.source {
            CredentialSource::Given { token, ticket } => {
                let read = read_given(token, ticket)?;
                p.install(read, "start");
                p.files_read_at
                    .store(p.clock.now().timestamp_millis(), Ordering::Relaxed);
            }
            CredentialSource::Login(l) => {
                let key = l.api_key.read().map_err(|source| CredentialsError::File {
                    what: "API key",
                    source,
                })?;
                p.redactor.remember(&[&key]);
            }
        }
        let mode = p.mode();
        for m in CredentialsMode::ALL {
            p.metrics
                .credentials
                .mode
                .with_label_values(&[m.as_str()])
                .set(i64::from(m == mode));
        }
        Ok(p)
    }

    pub(crate) fn mode(&self) -> CredentialsMode {
        self.source.mode()
    }

    /// Knows every secret in use and the latest ones before them; shared with the client.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The credentials to send now: refreshed first when due (files not read for
    /// [`FILE_POLL`], a token about to expire, no token yet). `op` names the call in errors.
    pub(crate) async fn current(&self, op: &'static str) -> Result<Arc<Snapshot>, MarketError> {
        if let Some(s) = self.snapshot()
            && !self.due(&s)
        {
            return Ok(s);
        }
        self.refresh(Trigger::Due, op).await
    }

    /// A request sent with `generation` answered 401/403. Returns whether other credentials
    /// are in use now (re-read files that changed, a new login, or another request's
    /// refresh), so the caller may send its rejected request once more. A refused login is
    /// the error to report instead of the 401.
    pub(crate) async fn after_rejection(
        &self,
        generation: u64,
        op: &'static str,
    ) -> Result<bool, MarketError> {
        let before = self.snapshot().map(|s| s.generation);
        if before != Some(generation) {
            return Ok(true);
        }
        let upkeep = self.upkeep.lock().await;
        if self.snapshot().map(|s| s.generation) != Some(generation) {
            return Ok(true);
        }
        let now = self.clock.now();
        match &self.source {
            CredentialSource::Given { .. } => self.reread_files(Trigger::Rejected, now),
            CredentialSource::Login(l) => {
                let mut upkeep = upkeep;
                upkeep.retry_at = None;
                self.login(l, &mut upkeep, Trigger::Rejected, op).await?;
            }
        }
        Ok(self.snapshot().map(|s| s.generation) != Some(generation))
    }

    /// The daemon's upkeep, every second: whatever is due, or everything with `force`
    /// (SIGHUP). Failures are logged and counted here; requests keep the last good values.
    pub(crate) async fn maintain(&self, force: bool) {
        let due = self.snapshot().is_none_or(|s| self.due(&s));
        if force || due {
            let trigger = if force { Trigger::Forced } else { Trigger::Due };
            let _ = self.refresh(trigger, "credentials upkeep").await;
        }
    }

    fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn due(&self, s: &Snapshot) -> bool {
        let now = self.clock.now();
        match &self.source {
            CredentialSource::Given { token, ticket } => {
                let files = token.is_file() || ticket.is_file();
                let read_at = self.files_read_at.load(Ordering::Relaxed);
                files && now.timestamp_millis() - read_at >= FILE_POLL.as_millis() as i64
            }
            CredentialSource::Login(_) => s
                .expires_at
                .is_some_and(|exp| now >= exp - refresh_margin(s.obtained_at, exp)),
        }
    }

    async fn refresh(
        &self,
        trigger: Trigger,
        op: &'static str,
    ) -> Result<Arc<Snapshot>, MarketError> {
        let mut upkeep = self.upkeep.lock().await;
        // Another caller may have refreshed while this one waited for the lock.
        if let Some(s) = self.snapshot()
            && trigger == Trigger::Due
            && !self.due(&s)
        {
            return Ok(s);
        }
        let now = self.clock.now();
        match &self.source {
            CredentialSource::Given { .. } => self.reread_files(trigger, now),
            CredentialSource::Login(l) => {
                let usable = self
                    .snapshot()
                    .filter(|s| s.expires_at.is_none_or(|e| now < e));
                let waiting = trigger != Trigger::Forced && upkeep.waiting(now, l);
                match (waiting, usable) {
                    (true, Some(s)) => return Ok(s),
                    (true, None) => {
                        return Err(upkeep.last_error.clone().unwrap_or(MarketError::Connect {
                            op,
                            reason: "no marketplace token yet".into(),
                        }));
                    }
                    (false, usable) => {
                        if let Err(e) = self.login(l, &mut upkeep, trigger, op).await {
                            // A token that has not expired yet is still worth sending.
                            return usable.ok_or(e);
                        }
                    }
                }
            }
        }
        self.snapshot().ok_or_else(|| MarketError::Connect {
            op,
            reason: "no marketplace credentials".into(),
        })
    }

    /// Puts new values in use: a new generation, redacted from now on, in the metrics.
    fn install(&self, credentials: Credentials, how: &'static str) -> Arc<Snapshot> {
        let now = self.clock.now();
        self.redactor
            .remember(&[credentials.token(), credentials.ticket()]);
        let headers = match credentials.headers(self.scheme) {
            Ok(h) => h,
            // Checked by `Credentials::new`; an unusable value never gets here.
            Err(_) => HeaderMap::new(),
        };
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        let generation = current.as_ref().map_or(1, |s| s.generation + 1);
        let expires_at = jwt::expiry(credentials.token().expose_secret());
        let s = Arc::new(Snapshot {
            generation,
            headers,
            credentials,
            expires_at,
            obtained_at: now,
        });
        *current = Some(s.clone());
        let m = &self.metrics.credentials;
        m.expiry_timestamp_seconds
            .set(expires_at.map_or(0.0, |e| e.timestamp() as f64));
        m.last_refresh_timestamp_seconds
            .set(now.timestamp_millis() as f64 / 1000.0);
        if generation > 1 {
            m.refreshes_total.with_label_values(&["changed"]).inc();
        }
        tracing::debug!(generation, source = how, "marketplace credentials in use");
        s
    }

    fn failed(&self) {
        let m = &self.metrics.credentials;
        m.refreshes_total.with_label_values(&["failed"]).inc();
        m.refresh_failing.set(1);
    }
}

/// Test support: a secret value for [`SecretOrigin::Fixed`].
pub fn fixed(value: &str) -> SecretOrigin {
    SecretOrigin::Fixed(SecretString::from(value.to_string()))
}

#[cfg(test)]
mod tests;
