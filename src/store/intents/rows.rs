//! Reading an intent row: the columns every intent query selects and their decoding. A leaf
//! that the modules writing intents (`intents`, `settle`, `purchases`) and reading their
//! history (`causes`) share, so none of them imports another for it.

use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::rows::{col, count, parsed, time};
use linkrunner_domain::intents::{IntentId, IntentKind, IntentRow, IntentState};
use linkrunner_domain::money::Money;

/// The columns `intent_from_row` reads, as a literal for `concat!` (queries stay `&'static str`).
macro_rules! intent_columns {
    () => {
        "id, campaign, kind, natural_key, state, attempts, fingerprint, request, answer, error, \
         reserved, reserved_links, reserve_day, owner, created_at, updated_at, resolution, rebuy_blocked"
    };
}
pub(crate) use intent_columns;

pub(crate) fn intent_from_row(row: &AnyRow) -> Result<IntentRow, StoreError> {
    let request: String = col(row, "request")?;
    Ok(IntentRow {
        id: IntentId(col(row, "id")?),
        campaign: col(row, "campaign")?,
        kind: parsed(row, "kind", IntentKind::parse)?,
        natural_key: col(row, "natural_key")?,
        state: parsed(row, "state", IntentState::parse)?,
        attempts: count(row, "attempts")?,
        fingerprint: col(row, "fingerprint")?,
        request: serde_json::from_str(&request)
            .map_err(|e| StoreError::corrupt(format!("request of an intent is not JSON: {e}")))?,
        answer: col(row, "answer")?,
        error: col(row, "error")?,
        reserved: Money::from_kopecks(col(row, "reserved")?),
        reserved_links: count(row, "reserved_links")?,
        owner: col(row, "owner")?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
        resolution: col(row, "resolution")?,
        rebuy_blocked: col::<i64>(row, "rebuy_blocked")? != 0,
    })
}

/// The day a row's links were counted against, to give them back on release.
pub(crate) fn reserve_day(row: &AnyRow) -> Result<Option<String>, StoreError> {
    col(row, "reserve_day")
}
