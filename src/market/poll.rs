//! The search-result fetch (operation 4) as an observation: what the poll meant
//! ([`SearchPoll`]) and what it looked like ([`PollSeen`]). `ops` sends the request; this
//! turns the answers that are not a decodable body into "not ready yet" forms.
//!
//! A refused fetch is "not found yet" rather than a rejection when it is a 404, or a 4xx
//! whose message says "not found / not finished / not ready" (see `decode::pending`): one
//! marketplace answers that way while the job runs. The engine treats it as pending until
//! the search deadline.

use std::time::Instant;

use super::client::MarketClient;
use super::decode::pending;
use super::decode::search::Poll;
use super::error::MarketError;
use super::op;
use super::redact::{self, Redactor};
use super::seen::{PendingForm, PollSeen};
use linkrunner_domain::market::{SearchJob, SearchPoll};

impl MarketClient {
    /// One poll of `job`, with the form of its answer (for `linkrunner probe`). Recorded in
    /// the metrics like every call; [`Market::search_result`](super::Market::search_result)
    /// is this without the form.
    pub async fn search_result_seen(
        &self,
        job: &SearchJob,
    ) -> Result<(SearchPoll, PollSeen), MarketError> {
        let started = Instant::now();
        let result = self.poll_once(job).await.map(|p| (p.poll, p.seen));
        self.record(op::SEARCH_RESULT, started, &result);
        result
    }

    /// The marketplace's own words in a "not found" answer, redacted (a 2xx `isError` body
    /// reaches here unredacted from the decoder).
    pub(super) fn redact_poll(&self, mut out: Poll) -> Poll {
        if let SearchPoll::NotFound { message } = &mut out.poll {
            *message = clean(&self.redactor, message);
        }
        if let Some(PendingForm::NotFound { message, .. }) = &mut out.seen.pending {
            *message = clean(&self.redactor, message);
        }
        out
    }
}

fn clean(redactor: &Redactor, message: &str) -> String {
    pending::short(&redact::cap(&redactor.text(message), redact::BODY_CAP))
}

/// A pending HTTP status (202, 204, 409, 423, 425).
pub(super) fn pending_status(status: u16) -> Poll {
    Poll::pending(PendingForm::HttpStatus { status })
}

/// A failed fetch: "not found yet" if it says so, else the error itself. The body of a
/// `Rejected` is already redacted.
pub(super) fn not_found(e: MarketError) -> Result<Poll, MarketError> {
    let MarketError::Rejected {
        status: Some(status),
        body,
        ..
    } = &e
    else {
        return Err(e);
    };
    match pending::not_found(*status, body) {
        Some(message) => Ok(Poll::pending(PendingForm::NotFound {
            status: Some(*status),
            message,
        })),
        None => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(status: u16, body: &str) -> MarketError {
        MarketError::Rejected {
            op: op::SEARCH_RESULT,
            status: Some(status),
            body: body.into(),
        }
    }

    #[test]
    fn a_404_fetch_is_not_found_with_the_marketplace_message() {
        let body = r#"{"isError":true,"message":"job not found or not finished"}"#;
        let poll = not_found(rejected(404, body)).unwrap();
        assert_eq!(
            poll.poll,
            SearchPoll::NotFound {
                message: "job not found or not finished".into()
            }
        );
        assert_eq!(
            poll.seen.pending,
            Some(PendingForm::NotFound {
                status: Some(404),
                message: "job not found or not finished".into()
            })
        );
    }

    #[test]
    fn a_422_about_something_else_stays_a_rejection() {
        let e = not_found(rejected(422, r#"{"error":"bad metaData"}"#)).unwrap_err();
        assert_eq!(e.metric_label(), "rejected");
    }

    #[test]
    fn other_errors_pass_through() {
        let e = MarketError::Uncertain {
            op: op::SEARCH_RESULT,
            status: Some(503),
            reason: "HTTP 503".into(),
        };
        assert_eq!(not_found(e).unwrap_err().metric_label(), "uncertain");
    }
}
