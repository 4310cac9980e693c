//! What an answer looked like, as opposed to what it meant: which form said "pending",
//! where the donors were, which field held their price. The engine needs only the meaning
//! ([`SearchPoll`](super::SearchPoll)); `linkrunner probe` shows an operator the forms so
//! they can choose `--field-map` and know what the marketplace does. Names here are wire
//! names on purpose: they are what the operator must type.

use std::collections::BTreeMap;

use serde::Serialize;

/// How a poll of a search result said "not ready yet".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "form")]
pub enum PendingForm {
    /// An HTTP status that says so: 202, 204, 409, 423 or 425.
    HttpStatus { status: u16 },
    /// A status field (`status`, `state` or the mapped name) with a pending value.
    StatusField { name: String, value: String },
    /// `ready: false`, `done: false`, `finished: false` or `complete: false`.
    NotReadyFlag { name: String },
    /// An answer without donor objects and without a final status (an empty body included).
    NoDonors,
    /// HTTP 404, or an error whose message says "not found / not finished / not ready".
    NotFound {
        status: Option<u16>,
        message: String,
    },
}

/// The form of one search-result answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PollSeen {
    /// Set when the answer said "not ready yet".
    pub pending: Option<PendingForm>,
    /// Where the first donor object was, e.g. `result.pages[]` or `[].items[]`.
    pub(crate) donors_at: Option<String>,
    /// The names or paths that held the donors' prices, each once, in the order met.
    pub(crate) price_fields: Vec<String>,
    /// Donors that could not be offered, by the first field that could not be read
    /// (`price`, `searchId`, …).
    pub skipped: BTreeMap<String, usize>,
}
