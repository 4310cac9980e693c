//! Outcome classification: every failed call becomes a [`MarketError`] that answers "was
//! it executed?", plus whether a *read* may be retried.
//!
//! | what happened | error | executed | read retried |
//! |---|---|---|---|
//! | connect failed before sending | `Connect` | no | yes |
//! | 401 / 403 | `Unauthorized` | no | no |
//! | 429 | `RateLimited` (+ `Retry-After`) | no | yes |
//! | other 4xx; 2xx with `isError: true` | `Rejected` | no | no |
//! | a change so refused whose answer carries the ids of what was done (`refused.rs`) | `Uncertain` | maybe | — |
//! | timeout or reset after sending; 5xx | `Uncertain` | maybe | yes |
//! | 3xx (never followed); answer cut short or over the cap | `Uncertain` | maybe | no |
//! | 2xx whose needed field is missing | `Undecodable` | yes | no |

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::error::MarketError;
use super::redact::Redactor;

/// A failed attempt: the error, and whether repeating a read could help.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) error: MarketError,
    pub(crate) retryable: bool,
}

impl Failure {
    pub(super) fn fatal(error: MarketError) -> Failure {
        Failure {
            error,
            retryable: false,
        }
    }

    pub(super) fn transient(error: MarketError) -> Failure {
        Failure {
            error,
            retryable: true,
        }
    }
}

/// A non-2xx status (other than the operation's own "pending" statuses) as a failure.
pub(crate) fn by_status(
    op: &'static str,
    status: u16,
    body: &[u8],
    retry_after: Option<Duration>,
    redactor: &Redactor,
) -> Failure {
    match status {
        401 | 403 => Failure::fatal(MarketError::Unauthorized { op, status }),
        429 => Failure::transient(MarketError::RateLimited { op, retry_after }),
        400..=499 => Failure::fatal(MarketError::Rejected {
            op,
            status: Some(status),
            body: redactor.body(body),
        }),
        300..=399 => Failure::fatal(MarketError::Uncertain {
            op,
            status: Some(status),
            reason: format!("HTTP {status} redirect, not followed"),
        }),
        _ => Failure::transient(MarketError::Uncertain {
            op,
            status: Some(status),
            reason: format!("HTTP {status}: {}", redactor.body(body)),
        }),
    }
}

/// A transport error from sending the request or waiting for its answer's head.
pub(crate) fn by_transport(op: &'static str, err: reqwest::Error, redactor: &Redactor) -> Failure {
    let (connect, builder, timeout) = (err.is_connect(), err.is_builder(), err.is_timeout());
    let reason = redactor.text(&chain(&err.without_url()));
    if connect {
        return Failure::transient(MarketError::Connect { op, reason });
    }
    if builder {
        return Failure::fatal(MarketError::InvalidRequest { op, reason });
    }
    let what = if timeout {
        "timed out after the request was sent"
    } else {
        "connection failed after the request was sent"
    };
    Failure::transient(MarketError::Uncertain {
        op,
        status: None,
        reason: format!("{what}: {reason}"),
    })
}

/// A 2xx answer whose body could not be read whole.
pub(crate) fn incomplete(op: &'static str, status: u16, why: &str, retryable: bool) -> Failure {
    Failure {
        error: MarketError::Uncertain {
            op,
            status: Some(status),
            reason: why.to_string(),
        },
        retryable,
    }
}

/// An error and its sources on one line, e.g. `error sending request: connection refused`.
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// `Retry-After`: delay-seconds or an HTTP date (relative to `now`); a past date is zero.
pub(crate) fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(v).ok()?.with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::Executed;

    fn classify(status: u16) -> Failure {
        by_status("op", status, b"{}", None, &Redactor::default())
    }

    #[test]
    fn statuses_map_to_their_execution_class() {
        let cases = [
            (401, Executed::No, false),
            (403, Executed::No, false),
            (429, Executed::No, true),
            (400, Executed::No, false),
            (404, Executed::No, false),
            (302, Executed::Maybe, false),
            (500, Executed::Maybe, true),
            (503, Executed::Maybe, true),
        ];
        for (status, executed, retryable) in cases {
            let f = classify(status);
            assert_eq!(f.error.executed(), executed, "{status}");
            assert_eq!(f.retryable, retryable, "{status}");
        }
    }

    #[test]
    fn unauthorized_is_recognised_for_401_and_403() {
        assert!(classify(401).error.is_auth() && classify(403).error.is_auth());
    }

    #[test]
    fn retry_after_seconds_are_parsed() {
        assert_eq!(
            parse_retry_after(" 3 ", Utc::now()),
            Some(Duration::from_secs(3))
        );
    }

    #[test]
    fn retry_after_date_is_relative_to_now() {
        let now = DateTime::parse_from_rfc2822("Sun, 06 Nov 1994 08:49:30 GMT")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
    }

    #[test]
    fn unreadable_retry_after_is_none() {
        assert_eq!(parse_retry_after("soon", Utc::now()), None);
    }
}
