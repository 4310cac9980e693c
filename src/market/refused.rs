//! Refused answers to changes: `isError: true` in a 2xx, or a 4xx other than 401, 403 and
//! 429. Usually "not executed". But a refusal that still carries the ids of what was done
//! (`{"isError":true,"message":"partially failed","placementIds":[..]}`) says the change was
//! made, at least in part; reading it as "nothing bought" would let the engine buy the same
//! pages again. Money first: such an answer is `Uncertain` (settled from the link list, or by
//! an operator for an autobuyer creation), with the redacted body in the error. Which ids
//! count, per operation, is `decode::executed`.

use reqwest::Method;
use serde_json::Value;

use super::body::json_of;
use super::client::{Answer, Call, MarketClient};
use super::decode::{self, DecodeError};
use super::error::MarketError;

/// Every 4xx but 401, 403 and 429 (those keep their own classes): a change reads these
/// answers itself, to see whether the refusal carries ids.
static REFUSAL_STATUSES: [u16; 97] = refusal_statuses();

const fn refusal_statuses() -> [u16; 97] {
    let mut out = [0u16; 97];
    let (mut status, mut i) = (400u16, 0usize);
    while status < 500 {
        if status != 401 && status != 403 && status != 429 {
            out[i] = status;
            i += 1;
        }
        status += 1;
    }
    out
}

/// A changing call: POST, and its refusals come back as answers.
pub(super) fn change_call(op: &'static str, path: String, body: Value) -> Call {
    Call {
        op,
        method: Method::POST,
        path,
        body: Some(body),
        answer_statuses: &REFUSAL_STATUSES,
    }
}

impl MarketClient {
    /// `Ok` unless `answer` is a refusal the decoder will not report itself: `Uncertain`
    /// when it carries the result, `Rejected` for a 4xx that does not. (A 2xx with
    /// `isError: true` and no result is left to the decoder, which rejects it.)
    pub(super) fn check_refusal<T>(
        &self,
        op: &'static str,
        answer: &Answer,
        success: impl Fn(&Value) -> Result<T, DecodeError>,
    ) -> Result<(), MarketError> {
        let v = json_of(&answer.body);
        let http_refusal = (400..500).contains(&answer.status);
        if !http_refusal && decode::rejection(&v).is_none() {
            return Ok(());
        }
        if decode::executed::carries_result(op, &v, &self.field_map, success) {
            let how = match http_refusal {
                true => format!("HTTP {}", answer.status),
                false => "isError: true".to_string(),
            };
            return Err(MarketError::Uncertain {
                op,
                status: Some(answer.status),
                reason: format!(
                    "refused ({how}) yet the answer carries the ids of what was done: {}",
                    self.redactor.body(&answer.body)
                ),
            });
        }
        match http_refusal {
            true => Err(MarketError::Rejected {
                op,
                status: Some(answer.status),
                body: self.redactor.body(&answer.body),
            }),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_statuses_are_every_4xx_but_auth_and_rate_limit() {
        assert!(REFUSAL_STATUSES.iter().all(|s| (400..500).contains(s)));
        for kept in [401, 403, 429] {
            assert!(!REFUSAL_STATUSES.contains(&kept));
        }
        assert!(REFUSAL_STATUSES.contains(&422) && REFUSAL_STATUSES.contains(&499));
    }
}
