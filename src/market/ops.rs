//! The ten operations of [`Market`] over [`MarketClient`]: build the body (`wire`), the
//! path (`paths`), send once or read with retries, decode (`decode`). Every call is
//! recorded with `Metrics::observe_call`.

use std::time::Instant;

use reqwest::Method;
use serde_json::Value;

use super::body::json_of;
use super::client::{Answer, Call, MarketClient};
use super::decode::{self, DecodeError};
use super::error::MarketError;
use super::refused::change_call;
use super::{Market, op, paths, wire};
use linkrunner_domain::market::*;

/// Statuses that mean "the search is not finished" rather than failure.
const SEARCH_PENDING_STATUSES: [u16; 5] = [202, 204, 409, 423, 425];
const PENDING_OUTSIDE_2XX: &[u16] = &[409, 423, 425];

pub(crate) fn post(op: &'static str, path: String, body: Value) -> Call {
    Call {
        op,
        method: Method::POST,
        path,
        body: Some(body),
        answer_statuses: &[],
    }
}

/// The read of `job`'s result: `answer_statuses` are the non-2xx answers that are answers;
/// an error when the job handle or `metaData` cannot go into a path.
pub(crate) fn search_result(
    job: &SearchJob,
    answer_statuses: &'static [u16],
) -> Result<Call, paths::BadSegment> {
    Ok(Call {
        op: op::SEARCH_RESULT,
        method: Method::GET,
        path: paths::search_result(&job.job_handle_id, &job.meta_data)?,
        body: None,
        answer_statuses,
    })
}

fn invalid(op: &'static str, reason: impl Into<String>) -> MarketError {
    MarketError::InvalidRequest {
        op,
        reason: reason.into(),
    }
}

impl MarketClient {
    /// Maps a decoding failure to the error that carries the (redacted) evidence.
    pub(super) fn decoded<T>(
        &self,
        op: &'static str,
        answer: &Answer,
        r: Result<T, DecodeError>,
    ) -> Result<T, MarketError> {
        r.map_err(|e| match e {
            DecodeError::Missing { field } => MarketError::Undecodable {
                op,
                field,
                body: self.redactor.body(&answer.body),
            },
            DecodeError::Rejected { message } => MarketError::Rejected {
                op,
                status: None,
                body: super::redact::cap(&self.redactor.text(&message), super::redact::BODY_CAP),
            },
        })
    }

    /// A call that changes something: sent once, decoded, recorded.
    async fn change_op<T>(
        &self,
        op: &'static str,
        request: Result<(String, Value), wire::BuildError>,
        decode: impl Fn(&Value) -> Result<T, DecodeError>,
    ) -> Result<T, MarketError> {
        let started = Instant::now();
        let result = self.change_inner(op, request, decode).await;
        self.record(op, started, &result);
        result
    }

    async fn change_inner<T>(
        &self,
        op: &'static str,
        request: Result<(String, Value), wire::BuildError>,
        decode: impl Fn(&Value) -> Result<T, DecodeError>,
    ) -> Result<T, MarketError> {
        let (path, body) = request.map_err(|reason| invalid(op, reason))?;
        let answer = self.change(&change_call(op, path, body)).await?;
        self.check_refusal(op, &answer, &decode)?;
        self.decoded(op, &answer, decode(&json_of(&answer.body)))
    }

    /// One poll: pending statuses and "not found" answers are "not ready yet" in their form
    /// (see `poll::not_found`); other answers are decoded.
    pub(super) async fn poll_once(
        &self,
        job: &SearchJob,
    ) -> Result<decode::search::Poll, MarketError> {
        let call = search_result(job, PENDING_OUTSIDE_2XX).map_err(|e| {
            invalid(
                op::SEARCH_RESULT,
                format!("the job handle or metaData cannot go into a path: {}", e.0),
            )
        })?;
        let answer = match self.read(&call).await {
            Ok(answer) => answer,
            Err(e) => return super::poll::not_found(e),
        };
        if SEARCH_PENDING_STATUSES.contains(&answer.status) {
            return Ok(super::poll::pending_status(answer.status));
        }
        // An empty body is "nothing yet"; a body that is not JSON is not an empty list.
        let not_json = serde_json::from_slice::<Value>(&answer.body).is_err()
            && !answer.body.trim_ascii().is_empty();
        let decoded = match not_json {
            true => Err(DecodeError::missing("pageId")),
            false => decode::search::poll(&json_of(&answer.body), &self.field_map),
        };
        let out = self.decoded(op::SEARCH_RESULT, &answer, decoded)?;
        for s in &out.skipped {
            tracing::debug!(
                page_id = s.page_id,
                missing = s.missing,
                "donor skipped: no readable value"
            );
        }
        Ok(self.redact_poll(out))
    }
}

impl Market for MarketClient {
    async fn create_project(&self, domain: &str) -> Result<ProjectIds, MarketError> {
        let request = Ok((paths::create_project(), wire::create_project(domain)));
        self.change_op(op::CREATE_PROJECT, request, |v| {
            decode::ids::project(v, &self.field_map)
        })
        .await
    }

    async fn add_texts(
        &self,
        project_id: i64,
        urls: &[UrlTexts],
    ) -> Result<Vec<CreatedUrl>, MarketError> {
        let request = wire::add_texts(urls).map(|b| (paths::add_texts(project_id), b));
        self.change_op(op::ADD_TEXTS, request, |v| {
            decode::texts::created(v, &self.field_map, urls)
        })
        .await
    }

    async fn start_search(
        &self,
        url_id: i64,
        params: &SearchParams,
    ) -> Result<SearchJob, MarketError> {
        let request = wire::search(params).map(|b| (paths::search(url_id), b));
        self.change_op(op::SEARCH, request, decode::search::job)
            .await
    }

    async fn search_result(&self, job: &SearchJob) -> Result<SearchPoll, MarketError> {
        self.search_result_seen(job).await.map(|(poll, _)| poll)
    }

    async fn buy(&self, project_id: i64, order: &PurchaseOrder) -> Result<Vec<i64>, MarketError> {
        let request = wire::buy(order).map(|b| (paths::buy(project_id), b));
        self.change_op(op::BUY, request, |v| {
            decode::ids::purchase(v, &self.field_map)
        })
        .await
    }

    /// Every page the answers announce (see `list_pages.rs`), with what they say about
    /// links left unread.
    async fn list_links(&self, project_id: i64) -> Result<LinkList, MarketError> {
        let started = Instant::now();
        let result = self.list_all(project_id).await;
        self.record(op::LIST_LINKS, started, &result);
        result
    }

    async fn create_filter(&self, filter: &FilterSpec) -> Result<i64, MarketError> {
        let request = wire::create_filter(filter).map(|b| (paths::create_filter(), b));
        self.change_op(op::CREATE_FILTER, request, |v| {
            decode::ids::filter(v, &self.field_map)
        })
        .await
    }

    async fn create_autobuyer(
        &self,
        project_id: i64,
        spec: &AutobuyerSpec,
    ) -> Result<i64, MarketError> {
        let request =
            wire::create_autobuyer(spec).map(|b| (paths::create_autobuyer(project_id), b));
        self.change_op(op::CREATE_AUTOBUYER, request, |v| {
            decode::ids::autobuyer(v, &self.field_map)
        })
        .await
    }

    /// Any 2xx answer without `isError: true` (an empty body included) is success.
    async fn stop_autobuyers(&self, ids: &[i64]) -> Result<(), MarketError> {
        let request = wire::autobuyer_ids(ids).map(|b| (paths::stop_autobuyers(), b));
        self.change_op(op::STOP_AUTOBUYERS, request, no_rejection)
            .await
    }

    /// Any 2xx answer without `isError: true` (an empty body included) is success.
    async fn start_autobuyers(&self, ids: &[i64]) -> Result<(), MarketError> {
        let request = wire::autobuyer_ids(ids).map(|b| (paths::start_autobuyers(), b));
        self.change_op(op::START_AUTOBUYERS, request, no_rejection)
            .await
    }

    async fn maintain_credentials(&self, force: bool) {
        MarketClient::maintain_credentials(self, force).await;
    }

    fn credentials_mode(&self) -> Option<super::CredentialsMode> {
        Some(MarketClient::credentials_mode(self))
    }

    fn rate_limit(&self) -> Option<u32> {
        Some(MarketClient::rate_limit(self))
    }

    fn account_taken(&self) {
        self.throttle().assume_window_used();
    }
}

fn no_rejection(v: &Value) -> Result<(), DecodeError> {
    decode::rejection(v).map_or(Ok(()), Err)
}
