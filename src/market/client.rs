//! [`MarketClient`]: the HTTP transport. One attempt of one call is `attempt`:
//! admit (concurrency, rate limit) → send with auth headers → read the answer up to the cap
//! → classify. Reads go through `read`, which retries transient failures — a body that
//! arrived whole but is not JSON (cut by a proxy) included; calls that change something go
//! through `change`, which never retries.
//! The operations themselves live in `ops`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use backon::{ExponentialBuilder, Retryable as _};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Method, Response, redirect};
use serde_json::Value;

use super::body::{Problem, read_capped};
use super::classify::{self, Failure};
use super::credentials::{CredentialProvider, CredentialsMode, Snapshot};
use super::error::MarketError;
use super::field_map::FieldMap;
use super::redact::Redactor;
use super::settings::{BaseUrl, ClientConfig, ConfigError};
use super::throttle::Throttle;
use crate::metrics::Metrics;
use linkrunner_domain::clock::SharedClock;

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("marketplace credentials: {0}")]
    Credentials(#[from] super::auth::CredentialsError),
    #[error("cannot build the HTTP client: {0}")]
    Http(String),
}

/// One request of one operation.
pub(crate) struct Call {
    pub(crate) op: &'static str,
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
    /// Non-2xx statuses this operation reads as an answer (search result: "pending").
    pub(crate) answer_statuses: &'static [u16],
}

/// An answer with a status the operation accepts, read whole.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

/// The marketplace over HTTP. Contacts only the configured origin, never follows a
/// redirect, never retries a call that changes something (proved by the `expect(1)` tests
/// in `tests/it/market_client.rs`) — except once after a 401/403, which executes nothing, when
/// other credentials are in use since (`client_sandbox::expiry`) — and never shows the
/// token or ticket.
pub struct MarketClient {
    http: reqwest::Client,
    base: BaseUrl,
    /// `Content-Type` and `Accept`; the auth headers come from `credentials` per request.
    headers: HeaderMap,
    credentials: CredentialProvider,
    pub(crate) field_map: FieldMap,
    pub(crate) redactor: Redactor,
    throttle: Throttle,
    metrics: Arc<Metrics>,
    /// The account it calls for: the `account` label of its calls.
    account: String,
    clock: SharedClock,
    max_answer_bytes: usize,
    max_request_bytes: usize,
    read_retries: usize,
    max_retry_after: Duration,
}

impl std::fmt::Debug for MarketClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarketClient")
            .field("base", &self.base.as_str())
            .field("field_map", &self.field_map)
            .finish_non_exhaustive()
    }
}

impl MarketClient {
    pub fn new(config: ClientConfig, metrics: Arc<Metrics>) -> Result<MarketClient, BuildError> {
        config.validate()?;
        metrics.init_account_series(&config.account);
        // reqwest is built without a crypto provider; a second install is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .redirect(redirect::Policy::none())
            .no_proxy()
            .timeout(config.request_timeout)
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| BuildError::Http(classify::chain(&e)))?;
        let credentials = CredentialProvider::new(
            config.credentials,
            config.auth_scheme,
            http.clone(),
            config.base_url.clone(),
            Arc::clone(&metrics),
            linkrunner_domain::clock::system(),
        )?;
        let mut headers = HeaderMap::new();
        let json = HeaderValue::from_static("application/json");
        headers.insert(CONTENT_TYPE, json.clone());
        headers.insert(ACCEPT, json);
        Ok(MarketClient {
            http,
            headers,
            field_map: config.field_map,
            redactor: credentials.redactor().clone(),
            credentials,
            throttle: Throttle::new(
                config.rate_limit,
                config.pacing,
                config.max_concurrency,
                Arc::clone(&metrics),
            ),
            account: config.account,
            metrics,
            clock: linkrunner_domain::clock::system(),
            max_answer_bytes: config.max_answer_bytes,
            max_request_bytes: config.max_request_bytes,
            read_retries: config.read_retries,
            max_retry_after: config.max_retry_after,
            base: config.base_url,
        })
    }

    /// The redactor for this client's secrets, for callers that store or log marketplace
    /// text of their own (e.g. a journal of answers).
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A call that changes something: exactly one attempt, whatever happens — but for a
    /// 401/403 answered with other credentials in use since (see [`Self::attempt`]).
    pub(crate) async fn change(&self, call: &Call) -> Result<Answer, MarketError> {
        self.attempt(call).await.map_err(|f| f.error)
    }

    /// A read: retried with exponential backoff and jitter on transient failures (429, 5xx,
    /// timeouts, connect errors, answers cut short, bodies that are not JSON), waiting at
    /// least `Retry-After`, at most `read_retries` times.
    pub(crate) async fn read(&self, call: &Call) -> Result<Answer, MarketError> {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(10))
            .with_max_times(self.read_retries)
            .with_jitter();
        let max_retry_after = self.max_retry_after;
        (|| self.attempt_read(call))
            .retry(backoff)
            .when(|f: &Failure| f.retryable)
            .adjust(
                move |f: &Failure, next| match (next, f.error.retry_after()) {
                    (Some(_), Some(ra)) if ra > max_retry_after => None,
                    (Some(d), Some(ra)) => Some(ra.max(d)),
                    (next, _) => next,
                },
            )
            .notify(|f: &Failure, wait| {
                tracing::debug!(
                    operation = call.op,
                    outcome = f.error.metric_label(),
                    wait_ms = wait.as_millis() as u64,
                    "retrying marketplace read"
                );
            })
            .await
            .map_err(|f| f.error)
    }

    /// Records one call in the metrics and the debug log.
    pub(crate) fn record<T>(
        &self,
        op: &'static str,
        started: Instant,
        result: &Result<T, MarketError>,
    ) {
        let outcome = match result {
            Ok(_) => "ok",
            Err(e) => e.metric_label(),
        };
        let seconds = started.elapsed().as_secs_f64();
        self.metrics
            .observe_call(&self.account, op, outcome, seconds);
        match result {
            Ok(_) => tracing::debug!(operation = op, outcome, seconds, "marketplace call"),
            // Errors carry only redacted bodies, so they may be logged whole.
            Err(e) => {
                tracing::debug!(operation = op, outcome, seconds, error = %e, "marketplace call failed")
            }
        }
    }

    /// One attempt of a read. Reads answer JSON, so a 2xx body that is not JSON (a proxy or
    /// an overloaded server cut it, or answered a page) is transient like a cut connection.
    /// Exempt: an empty body, 202/204 and the operation's own answer statuses ("pending").
    async fn attempt_read(&self, call: &Call) -> Result<Answer, Failure> {
        let answer = self.attempt(call).await?;
        let exempt = answer.body.trim_ascii().is_empty()
            || matches!(answer.status, 202 | 204)
            || call.answer_statuses.contains(&answer.status);
        if exempt || serde_json::from_slice::<serde::de::IgnoredAny>(&answer.body).is_ok() {
            return Ok(answer);
        }
        Err(Failure::transient(MarketError::Undecodable {
            op: call.op,
            field: "JSON body (cut short or not JSON)".into(),
            body: self.redactor.body(&answer.body),
        }))
    }

    /// The client's limiter (see [`Throttle`]).
    pub(super) fn throttle(&self) -> &Throttle {
        &self.throttle
    }

    /// The client's rate limit (`--rate-limit`), in requests per second.
    pub(crate) fn rate_limit(&self) -> u32 {
        u32::try_from(self.throttle.per_second()).unwrap_or(u32::MAX)
    }

    /// How credentials are obtained (for `/readyz` and `status`).
    pub(crate) fn credentials_mode(&self) -> CredentialsMode {
        self.credentials.mode()
    }

    /// See [`CredentialProvider::maintain`].
    pub(crate) async fn maintain_credentials(&self, force: bool) {
        self.credentials.maintain(force).await;
    }

    /// One attempt, sent a second time only when it answered 401/403 — which executes
    /// nothing — and other credentials are in use since (files re-read, a new login, another
    /// call's refresh). Never more than twice: a second 401/403 is the answer.
    async fn attempt(&self, call: &Call) -> Result<Answer, Failure> {
        let creds = self.current_credentials(call.op).await?;
        match self.attempt_with(call, &creds).await {
            Err(f) if f.error.is_auth() => {
                match self
                    .credentials
                    .after_rejection(creds.generation, call.op)
                    .await
                {
                    Ok(true) => {
                        tracing::info!(
                            operation = call.op,
                            "sending the call again with the refreshed credentials"
                        );
                        let creds = self.current_credentials(call.op).await?;
                        self.attempt_with(call, &creds).await
                    }
                    Ok(false) => Err(f),
                    Err(login) => Err(Failure::fatal(login)),
                }
            }
            other => other,
        }
    }

    /// The credentials to send; failing to obtain them sent nothing (a read may retry a
    /// login that failed transiently).
    async fn current_credentials(&self, op: &'static str) -> Result<Arc<Snapshot>, Failure> {
        self.credentials.current(op).await.map_err(|e| match e {
            MarketError::Connect { .. } => Failure::transient(e),
            _ => Failure::fatal(e),
        })
    }

    async fn attempt_with(&self, call: &Call, creds: &Snapshot) -> Result<Answer, Failure> {
        let request = self.build(call, creds)?;
        let admitted = self.throttle.admit().await;
        let response = self.http.execute(request).await;
        // On the answer's head, not its body: a long link list is not a late request.
        admitted.answered(call.op);
        let response = response.map_err(|e| classify::by_transport(call.op, e, &self.redactor))?;
        self.answer(call, response).await
    }

    fn build(&self, call: &Call, creds: &Snapshot) -> Result<reqwest::Request, Failure> {
        let invalid = |reason: String| {
            Failure::fatal(MarketError::InvalidRequest {
                op: call.op,
                reason,
            })
        };
        let url = self
            .base
            .join(&call.path)
            .map_err(|e| invalid(format!("cannot form the URL: {e}")))?;
        if url.origin() != self.base.origin() {
            return Err(invalid(
                "the URL would leave the marketplace's origin".into(),
            ));
        }
        let mut request = reqwest::Request::new(call.method.clone(), url);
        let mut headers = self.headers.clone();
        headers.extend(creds.headers().clone());
        *request.headers_mut() = headers;
        if let Some(body) = &call.body {
            let bytes = serde_json::to_vec(body).map_err(|e| invalid(e.to_string()))?;
            if bytes.len() > self.max_request_bytes {
                return Err(invalid(format!(
                    "the request body has {} bytes, more than the limit of {}",
                    bytes.len(),
                    self.max_request_bytes
                )));
            }
            *request.body_mut() = Some(bytes.into());
        }
        Ok(request)
    }

    async fn answer(&self, call: &Call, mut response: Response) -> Result<Answer, Failure> {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| classify::parse_retry_after(v, self.clock.now()));
        let body = read_capped(&mut response, self.max_answer_bytes).await;
        tracing::trace!(
            operation = call.op,
            status,
            body = %self.redactor.body(&body.bytes),
            "marketplace answer"
        );
        let accepted = (200..300).contains(&status) || call.answer_statuses.contains(&status);
        if !accepted {
            return Err(classify::by_status(
                call.op,
                status,
                &body.bytes,
                retry_after,
                &self.redactor,
            ));
        }
        match body.problem {
            None => Ok(Answer {
                status,
                body: body.bytes,
            }),
            Some(Problem::TooLarge) => Err(classify::incomplete(
                call.op,
                status,
                &format!(
                    "answer larger than {} bytes, not read",
                    self.max_answer_bytes
                ),
                false,
            )),
            Some(Problem::Cut(why)) => Err(classify::incomplete(
                call.op,
                status,
                &format!("answer cut short: {}", self.redactor.text(&why)),
                true,
            )),
        }
    }
}
