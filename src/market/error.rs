//! Every outcome of a marketplace call, classified by the one question that matters for
//! money: was it executed? See [`Executed`].

use std::time::Duration;

/// Whether a call that changes something took effect on the marketplace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Executed {
    /// Definitely not executed: safe to try again later.
    No,
    /// May have executed: never resent blindly; settle from the link list or ask the operator.
    Maybe,
    /// Executed (2xx), even if the answer could not be fully read.
    Yes,
}

/// A marketplace error. Carries the operation, the HTTP status where there was one and a
/// redacted, size-capped body; never a token or ticket.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MarketError {
    /// 401/403: credentials rejected. All spending stops until they work again.
    #[error(
        "{op}: credentials rejected (HTTP {status}); check the API token, the auth ticket and --auth-scheme"
    )]
    Unauthorized { op: &'static str, status: u16 },
    /// 429: the marketplace asks us to slow down.
    #[error("{op}: rate limited by the marketplace (HTTP 429){}", retry_after.map(|d| format!(", retry after {}s", d.as_secs())).unwrap_or_default())]
    RateLimited {
        op: &'static str,
        retry_after: Option<Duration>,
    },
    /// A 4xx other than 401/403/429, or a 2xx whose body says `isError: true`.
    #[error("{op}: rejected by the marketplace{}: {body}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Rejected {
        op: &'static str,
        status: Option<u16>,
        body: String,
    },
    /// Connecting failed before any byte of the request was sent.
    #[error("{op}: could not connect to the marketplace: {reason}")]
    Connect { op: &'static str, reason: String },
    /// The request may have reached the server: timeout or reset after sending, 5xx,
    /// a redirect (never followed), an answer cut short or over the size cap.
    #[error("{op}: outcome unknown ({reason}); the call may have executed")]
    Uncertain {
        op: &'static str,
        status: Option<u16>,
        reason: String,
    },
    /// A 2xx answer that cannot be interpreted: the call executed, but a field is missing.
    #[error("{op}: answer has no usable `{field}`: {body}")]
    Undecodable {
        op: &'static str,
        field: String,
        body: String,
    },
    /// The request could not be built (bad base URL, id that would break a path, empty order).
    #[error("{op}: invalid request: {reason}")]
    InvalidRequest { op: &'static str, reason: String },
}

impl MarketError {
    pub fn executed(&self) -> Executed {
        match self {
            MarketError::Unauthorized { .. }
            | MarketError::RateLimited { .. }
            | MarketError::Rejected { .. }
            | MarketError::Connect { .. }
            | MarketError::InvalidRequest { .. } => Executed::No,
            MarketError::Uncertain { .. } => Executed::Maybe,
            MarketError::Undecodable { .. } => Executed::Yes,
        }
    }

    /// Worth trying again later without anyone changing anything: the marketplace was
    /// unreachable, overloaded or asked us to slow down. A rejection, an answer we cannot
    /// read or a request we cannot build will be the same next time.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(
            self,
            MarketError::RateLimited { .. }
                | MarketError::Connect { .. }
                | MarketError::Uncertain { .. }
        )
    }

    pub fn is_auth(&self) -> bool {
        matches!(self, MarketError::Unauthorized { .. })
    }

    /// The HTTP status of a refused credentials answer (401 or 403).
    pub(crate) fn auth_status(&self) -> Option<u16> {
        match self {
            MarketError::Unauthorized { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            MarketError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    pub(crate) fn operation(&self) -> &'static str {
        match self {
            MarketError::Unauthorized { op, .. }
            | MarketError::RateLimited { op, .. }
            | MarketError::Rejected { op, .. }
            | MarketError::Connect { op, .. }
            | MarketError::Uncertain { op, .. }
            | MarketError::Undecodable { op, .. }
            | MarketError::InvalidRequest { op, .. } => op,
        }
    }

    /// A closed label set for metrics (`outcome` label of `linkrunner_api_calls_total`).
    pub fn metric_label(&self) -> &'static str {
        match self {
            MarketError::Unauthorized { .. } => "unauthorized",
            MarketError::RateLimited { .. } => "rate_limited",
            MarketError::Rejected { .. } => "rejected",
            MarketError::Connect { .. } => "connect_failed",
            MarketError::Uncertain { .. } => "uncertain",
            MarketError::Undecodable { .. } => "undecodable",
            MarketError::InvalidRequest { .. } => "invalid_request",
        }
    }
}
