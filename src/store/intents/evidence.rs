//! The effect an operator's evidence implies. `linkrunner resolve` gives one remote id; the
//! rest comes from the intent's stored request (top-level `name`, `spec_fingerprint`,
//! `running`, `page_id`, `url_id`, `text_id`: the keys the engine writes, never the wire's) and
//! its reservation.

use serde_json::Value;

use crate::store::StoreError;
use linkrunner_domain::intents::{Effect, IntentKind, IntentRow};
use linkrunner_domain::money::Money;

/// The effect an operator's "it was created, here is its id" implies for this intent's kind,
/// read from the intent's stored request.
pub(crate) fn effect_from_request(row: &IntentRow, remote_id: i64) -> Result<Effect, StoreError> {
    let req = &row.request;
    let name = || text_field(row, "name");
    match row.kind {
        IntentKind::CreateFilter => Ok(Effect::FilterCreated {
            name: name()?,
            id: remote_id,
        }),
        IntentKind::CreateAutobuyer => Ok(Effect::AutobuyerCreated {
            name: name()?,
            id: remote_id,
            running: req
                .get("running")
                .and_then(Value::as_bool)
                .unwrap_or(row.reserved > Money::ZERO),
            spec_fingerprint: text_field(row, "spec_fingerprint")
                .unwrap_or_else(|_| row.fingerprint.clone()),
            monthly_budget: row.reserved,
        }),
        IntentKind::StartAutobuyer | IntentKind::StopAutobuyer => Ok(Effect::AutobuyerRunning {
            name: name()?,
            running: row.kind == IntentKind::StartAutobuyer,
        }),
        IntentKind::Purchase => Ok(Effect::Purchased {
            link: Some(remote_id),
            page_id: id_field(row, "page_id")?,
            url_id: id_field(row, "url_id")?,
            text_id: id_field(row, "text_id")?,
            price: row.reserved,
        }),
        IntentKind::CreateProject | IntentKind::AddTexts => Err(StoreError::invalid(format!(
            "a {} intent creates several ids; one remote id cannot settle it — resolve it as not created \
             or let the engine settle it",
            row.kind
        ))),
    }
}

fn text_field(row: &IntentRow, key: &str) -> Result<String, StoreError> {
    row.request
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| missing(row, key))
}

fn id_field(row: &IntentRow, key: &str) -> Result<i64, StoreError> {
    row.request
        .get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| missing(row, key))
}

fn missing(row: &IntentRow, key: &str) -> StoreError {
    StoreError::invalid(format!(
        "intent {} has no `{key}` in its stored request to settle it by",
        row.id
    ))
}
