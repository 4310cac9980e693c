//! Reading an intent row: the columns every intent query selects and their decoding. A leaf
//! that the modules writing intents (`intents`, `settle`, `purchases`) and reading their
//! history (`causes`) share, so none of them imports another for it.

use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::rows::{col, read_row};
use linkrunner_domain::intents::IntentRow;

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
    Ok(read_row!(
        row,
        IntentRow {
            id,
            campaign,
            kind,
            natural_key,
            state,
            attempts,
            fingerprint,
            request: serde_json::from_str(&request).map_err(|e| StoreError::corrupt(format!(
                "request of an intent is not JSON: {e}"
            )))?,
            answer,
            error,
            reserved,
            reserved_links,
            owner,
            created_at,
            updated_at,
            resolution,
            rebuy_blocked,
        }
    ))
}

/// The day a row's links were counted against, to give them back on release.
pub(crate) fn reserve_day(row: &AnyRow) -> Result<Option<String>, StoreError> {
    col(row, "reserve_day")
}
