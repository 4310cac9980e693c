//! `market/`: the marketplace wire. The only code that knows the service's paths, JSON field
//! names and authentication.
//!
//! - the nouns the engine, the journal and metrics share (ids, link records, search jobs,
//!   operation names) live in [`linkrunner_domain`]; this module re-exports them for its callers.
//! - [`error`]: [`MarketError`] and the [`Executed`] classification of every outcome.
//! - [`Market`]: the interface the engine drives; [`client::MarketClient`] implements it over HTTP.
//! - [`client`]: [`MarketClient`], the HTTP transport: auth headers, limits, answer caps,
//!   retries of reads only; `ops`: the ten operations over it; `poll`: the search-result
//!   fetch as an observation ("not found" forms); `list_pages`: the link list read page by
//!   page; `classify`: outcome classes; `refused`: refusals that carry ids; `refusal`: what a
//!   refusal says (insufficient balance);
//!   `body`: reading answers up to the size cap.
//! - [`settings`]: [`ClientConfig`]; [`auth`]: [`Credentials`], [`AuthScheme`] and their headers;
//!   [`credentials`]: the provider that keeps them current (files re-read, built-in login).
//! - `decode`: tolerant decoding (pure functions over JSON); `wire`: request bodies;
//!   `paths`: operation paths with percent-encoded segments.
//! - [`field_map`]: operator-named field names and dotted paths; [`redact`]: redaction of
//!   bodies; `throttle`: client-side rate limit and concurrency bound, `throttle/gate`: its queue, a
//!   due round's calls first; `test_hooks`: what only
//!   tests use (`MarketClient::poll_search`), compiled with the `test-hooks` feature.
//! - [`seen`]: what an answer looked like (pending form, donor path, price field), for `probe`;
//!   `inspect`: the raw answers `linkrunner probe` reads and the shapes it finds in them (its
//!   checks are the command's own, `cli/probe/`).
//!
//! May import: crate::metrics.

pub(crate) mod auth;
pub(crate) mod body;
mod classify;
pub(crate) mod client;
pub mod credentials;
pub(crate) mod decode;
pub(crate) mod error;
pub(crate) mod field_map;
pub(crate) mod inspect;
mod list_pages;
pub(crate) mod ops;
pub(crate) mod paths;
mod poll;
pub(crate) mod redact;
mod refusal;
mod refused;
pub(crate) mod seen;
pub(crate) mod settings;
#[cfg(feature = "test-hooks")]
mod test_hooks;
mod throttle;
pub(crate) mod wire;

use std::future::Future;

pub use auth::{AuthScheme, Credentials, CredentialsError};
pub use client::{BuildError, MarketClient};
pub use credentials::{CredentialSource, CredentialsMode, LoginSettings, SecretOrigin};
pub use error::{Executed, MarketError};
pub use field_map::{FieldKey, FieldMap, FieldMapError};
pub use linkrunner_domain::market::*;
pub use linkrunner_domain::op;
pub use seen::{PendingForm, PollSeen};
pub use settings::{BaseUrl, ClientConfig, ConfigError};
pub use throttle::Pacing;

/// The ten operations of the marketplace. Calls that change something (all but
/// `search_result` and `list_links`; `start_search` queues a job but spends nothing) are
/// sent at most once per invocation: an implementation never retries them itself, except
/// a call answered 401/403 (nothing executed) that it may send once more with renewed
/// credentials.
pub trait Market: Send + Sync + 'static {
    fn create_project(
        &self,
        domain: &str,
    ) -> impl Future<Output = Result<ProjectIds, MarketError>> + Send;
    fn add_texts(
        &self,
        project_id: i64,
        urls: &[UrlTexts],
    ) -> impl Future<Output = Result<Vec<CreatedUrl>, MarketError>> + Send;
    fn start_search(
        &self,
        url_id: i64,
        params: &SearchParams,
    ) -> impl Future<Output = Result<SearchJob, MarketError>> + Send;
    fn search_result(
        &self,
        job: &SearchJob,
    ) -> impl Future<Output = Result<SearchPoll, MarketError>> + Send;
    /// Returns the ids of the bought links.
    fn buy(
        &self,
        project_id: i64,
        order: &PurchaseOrder,
    ) -> impl Future<Output = Result<Vec<i64>, MarketError>> + Send;
    /// The project's links: every page the answers announce, and whether they say links
    /// were left unread ([`ListCompleteness`]).
    fn list_links(
        &self,
        project_id: i64,
    ) -> impl Future<Output = Result<LinkList, MarketError>> + Send;
    /// Returns the filter id.
    fn create_filter(
        &self,
        filter: &FilterSpec,
    ) -> impl Future<Output = Result<i64, MarketError>> + Send;
    /// Returns the autobuyer id.
    fn create_autobuyer(
        &self,
        project_id: i64,
        spec: &AutobuyerSpec,
    ) -> impl Future<Output = Result<i64, MarketError>> + Send;
    fn stop_autobuyers(&self, ids: &[i64]) -> impl Future<Output = Result<(), MarketError>> + Send;
    fn start_autobuyers(&self, ids: &[i64])
    -> impl Future<Output = Result<(), MarketError>> + Send;
    /// Credential upkeep, called by the daemon every second (`force` on SIGHUP): re-reads
    /// credential files, replaces a token about to expire. Doubles have nothing to keep.
    fn maintain_credentials(&self, force: bool) -> impl Future<Output = ()> + Send {
        let _ = force;
        async {}
    }
    /// How credentials are obtained, for `/readyz`; `None` for doubles.
    fn credentials_mode(&self) -> Option<CredentialsMode> {
        None
    }
    /// The requests per second this client sends at most (`--rate-limit`), which the daemon
    /// plans its reconciliation from; `None` for doubles without a limit.
    fn rate_limit(&self) -> Option<u32> {
        None
    }
    /// This process has just begun to work the account (`daemon::division`): what another
    /// process sent it in the last second counts against the limit, so the client sends
    /// nothing for one limiter window. Doubles without a limit ignore it.
    fn account_taken(&self) {}
}

/// Fuzzing entry point: `data` as a marketplace answer through the decoder of operation
/// `op % 8` (plus rejection and redaction). Must never panic, whatever the bytes.
#[doc(hidden)]
pub fn fuzz_decode(op: u8, data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let map = FieldMap::default();
    let request = [UrlTexts {
        url: "https://acme.example/a".into(),
        texts: vec!["#a#a#/a#".into()],
    }];
    let _ = decode::rejection(&v);
    let _ = decode::paging::find(&v).map(|p| p.next(1, 1));
    let _ = decode::executed::carries_result(op::BUY, &v, &map, |_| Ok(()));
    match op % 8 {
        0 => drop(decode::ids::project(&v, &map)),
        1 => drop(decode::texts::created(&v, &map, &request)),
        2 => drop(decode::search::job(&v)),
        3 => drop(decode::search::poll(&v, &map)),
        4 => drop(decode::ids::purchase(&v, &map)),
        5 => drop(decode::links::list(&v, &map)),
        6 => drop(decode::ids::filter(&v, &map)),
        _ => drop(decode::ids::autobuyer(&v, &map)),
    }
    let _ = redact::cap(&String::from_utf8_lossy(data), 256);
}
