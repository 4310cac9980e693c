//! Delivery: one task per endpoint, fed through a bounded queue ([`QUEUE`]), so a receiver
//! that hangs or fails delays only its own messages and never a pass (the watcher only
//! `try_send`s; a full queue drops the message and counts it as failed). Each message is
//! tried at most `1 + retries` times with exponential backoff (`backon`); a try that times
//! out may have been received, so a receiver may rarely see a message twice: notifications
//! are not money, and one told twice beats one never told.
//!
//! Errors are classified into [`DeliveryError`] at once: reqwest's errors carry the URL,
//! and the URL is a secret, so nothing of theirs is logged or kept.

use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable as _};
use secrecy::ExposeSecret as _;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::{ChatId, Endpoint, Format};
use super::events::Event;
use crate::metrics::Metrics;

/// Messages waiting per endpoint; more are dropped (and counted) rather than held.
pub(crate) const QUEUE: usize = 64;

/// Why one try failed; never the address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DeliveryError {
    #[error("the receiver answered HTTP {0}")]
    Status(u16),
    #[error("the receiver did not answer within the timeout")]
    Timeout,
    #[error("the receiver could not be reached")]
    Connect,
    #[error("the request failed")]
    Other,
}

impl DeliveryError {
    /// Worth another try: the receiver failed or did not answer; a 4xx other than 429 says
    /// the message or the address is wrong, and trying again changes nothing.
    fn retryable(&self) -> bool {
        match self {
            DeliveryError::Status(code) => *code == 429 || *code >= 500,
            _ => true,
        }
    }

    fn of(e: &reqwest::Error) -> DeliveryError {
        if e.is_timeout() {
            DeliveryError::Timeout
        } else if e.is_connect() {
            DeliveryError::Connect
        } else {
            DeliveryError::Other
        }
    }
}

/// The sending side of one endpoint's queue.
#[derive(Clone)]
pub(crate) struct Outbox {
    pub(crate) endpoint: Arc<Endpoint>,
    tx: mpsc::Sender<Event>,
}

impl Outbox {
    /// Queues `event` without waiting; `false` when the queue is full or closed.
    pub(crate) fn offer(&self, event: Event) -> bool {
        self.tx.try_send(event).is_ok()
    }
}

/// Starts the delivery task of `endpoint`; it ends when `stop` is cancelled.
pub(crate) fn spawn_outbox(
    endpoint: Endpoint,
    metrics: Arc<Metrics>,
    stop: CancellationToken,
) -> anyhow::Result<(Outbox, tokio::task::JoinHandle<()>)> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(endpoint.timeout)
        .connect_timeout(endpoint.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|_| {
            anyhow::anyhow!(
                "building the HTTP client of notify endpoint `{}`",
                endpoint.name
            )
        })?;
    let endpoint = Arc::new(endpoint);
    let (tx, rx) = mpsc::channel(QUEUE);
    let task = tokio::spawn(deliver_all(endpoint.clone(), http, rx, metrics, stop));
    Ok((Outbox { endpoint, tx }, task))
}

async fn deliver_all(
    endpoint: Arc<Endpoint>,
    http: reqwest::Client,
    mut rx: mpsc::Receiver<Event>,
    metrics: Arc<Metrics>,
    stop: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            _ = stop.cancelled() => return,
            e = rx.recv() => match e { Some(e) => e, None => return },
        };
        let outcome = tokio::select! {
            _ = stop.cancelled() => return,
            r = deliver(&endpoint, &http, &event) => r,
        };
        let labels = [event.kind.as_str(), endpoint.format.as_str()];
        match outcome {
            Ok(()) => {
                metrics.notify.sent_total.with_label_values(&labels).inc();
                tracing::info!(endpoint = %endpoint.name, event = event.kind.as_str(), key = %event.key, "notification sent");
            }
            Err(e) => {
                metrics.notify.failed_total.with_label_values(&labels).inc();
                tracing::warn!(endpoint = %endpoint.name, event = event.kind.as_str(), key = %event.key, error = %e, tries = endpoint.retries + 1, "notification not delivered");
            }
        }
    }
}

/// One message, tried with backoff.
async fn deliver(
    endpoint: &Endpoint,
    http: &reqwest::Client,
    event: &Event,
) -> Result<(), DeliveryError> {
    let body = body(endpoint, event);
    let backoff = ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(30))
        .with_max_times(endpoint.retries)
        .with_jitter();
    (|| post(endpoint, http, &body))
        .retry(backoff)
        .when(DeliveryError::retryable)
        .await
}

async fn post(
    endpoint: &Endpoint,
    http: &reqwest::Client,
    body: &serde_json::Value,
) -> Result<(), DeliveryError> {
    let answer = http
        .post(endpoint.address.expose_secret())
        .json(body)
        .send()
        .await
        .map_err(|e| DeliveryError::of(&e))?;
    match answer.status() {
        s if s.is_success() => Ok(()),
        s => Err(DeliveryError::Status(s.as_u16())),
    }
}

/// The body `endpoint`'s format takes.
pub(crate) fn body(endpoint: &Endpoint, event: &Event) -> serde_json::Value {
    match endpoint.format {
        Format::Generic => json!({
            "event": event.kind.as_str(),
            "campaign": event.campaign,
            "reason": event.reason,
            "command": event.command,
            "key": event.key,
            "since": event.since,
            "text": event.text(),
        }),
        Format::Slack => json!({ "text": event.text() }),
        Format::Telegram => {
            let chat = match &endpoint.chat_id {
                Some(ChatId::Id(n)) => json!(n),
                Some(ChatId::Name(s)) => json!(s),
                None => serde_json::Value::Null,
            };
            json!({ "chat_id": chat, "text": event.text() })
        }
    }
}
