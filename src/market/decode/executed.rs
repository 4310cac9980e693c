//! Whether a refused answer to a change — `isError: true`, or a 4xx — still carries what the
//! operation answers on success. Such an answer says the change was (at least partly) done,
//! so it may not be read as "not executed": the client reports it as uncertain.
//!
//! | operation | carries its result when, with the error flag removed, ... |
//! |---|---|
//! | purchase | the purchase decoder reads link ids, one of them positive |
//! | project, filter, autobuyer | the create decoder reads the id, positive |
//! | add texts | the texts decoder reads the URL and text ids |
//! | start / stop autobuyers | a non-empty `autobuyersIds`/`ids` array of positive ids is present |
//! | search start | never (it spends nothing; a refused search is simply started again) |
//!
//! Ids of 0 or below are not evidence: a server may echo `"id": 0` in every error.

use serde_json::{Map, Value};

use super::{DecodeError, as_id, ids, objects_where};
use crate::market::field_map::FieldMap;
use crate::market::op;

/// Array names that carry the ids a start or stop acted on.
const SWITCHED: [&str; 2] = ["autobuyersIds", "ids"];

/// See the module doc; `success` is the operation's own decoder (used for texts).
pub(crate) fn carries_result<T>(
    operation: &str,
    v: &Value,
    map: &FieldMap,
    success: impl Fn(&Value) -> Result<T, DecodeError>,
) -> bool {
    let v = without_error_flag(v);
    match operation {
        op::BUY => ids::purchase(&v, map).is_ok_and(|ids| ids.iter().any(|id| *id > 0)),
        op::CREATE_PROJECT => ids::project(&v, map).is_ok_and(|p| p.project_id > 0),
        op::CREATE_FILTER => ids::filter(&v, map).is_ok_and(|id| id > 0),
        op::CREATE_AUTOBUYER => ids::autobuyer(&v, map).is_ok_and(|id| id > 0),
        op::ADD_TEXTS => success(&v).is_ok(),
        op::START_AUTOBUYERS | op::STOP_AUTOBUYERS => switched_ids(&v),
        _ => false,
    }
}

/// The answer without its top-level `isError`, so the success decoders read it.
fn without_error_flag(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut o: Map<String, Value> = o.clone();
            o.remove("isError");
            Value::Object(o)
        }
        other => other.clone(),
    }
}

fn switched_ids(v: &Value) -> bool {
    let holders = objects_where(v, &|o| SWITCHED.iter().any(|k| o.contains_key(*k)));
    holders.iter().any(|o| {
        SWITCHED.iter().any(|k| match o.get(*k) {
            Some(Value::Array(items)) => {
                !items.is_empty() && items.iter().all(|i| as_id(i).is_some_and(|id| id > 0))
            }
            _ => false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn carries(operation: &str, v: Value) -> bool {
        carries_result(operation, &v, &FieldMap::default(), |_| {
            Err::<(), _>(DecodeError::missing("x"))
        })
    }

    #[test]
    fn a_refused_purchase_with_link_ids_carries_its_result() {
        let v = json!({"isError": true, "message": "partially failed", "placementIds": [11, 12]});
        assert!(carries(op::BUY, v));
        assert!(carries(
            op::BUY,
            json!({"error": "x", "result": {"ids": [3]}})
        ));
    }

    #[test]
    fn a_refused_purchase_without_ids_or_with_zero_ids_does_not() {
        assert!(!carries(
            op::BUY,
            json!({"isError": true, "message": "balance"})
        ));
        assert!(!carries(
            op::BUY,
            json!({"isError": true, "placementIds": []})
        ));
        assert!(!carries(
            op::BUY,
            json!({"isError": true, "placementIds": [0]})
        ));
    }

    #[test]
    fn refused_creations_carry_their_result_only_with_a_positive_id() {
        let project = json!({"isError": true, "id": 7, "urlId": 8, "textId": 9});
        assert!(carries(op::CREATE_PROJECT, project));
        assert!(carries(
            op::CREATE_AUTOBUYER,
            json!({"isError": true, "autobuyerId": 5})
        ));
        assert!(carries(
            op::CREATE_FILTER,
            json!({"error": "dup", "id": "12"})
        ));
        assert!(!carries(
            op::CREATE_FILTER,
            json!({"isError": true, "id": 0})
        ));
        assert!(!carries(
            op::CREATE_AUTOBUYER,
            json!({"isError": true, "id": null})
        ));
    }

    #[test]
    fn a_refused_switch_carries_its_result_with_the_autobuyer_ids() {
        let v = json!({"isError": true, "autobuyersIds": [4, 5]});
        assert!(carries(op::START_AUTOBUYERS, v.clone()));
        assert!(carries(op::STOP_AUTOBUYERS, v));
        assert!(!carries(
            op::START_AUTOBUYERS,
            json!({"isError": true, "autobuyersIds": []})
        ));
        assert!(!carries(op::STOP_AUTOBUYERS, json!({"isError": true})));
    }

    #[test]
    fn a_refused_search_never_counts_as_executed() {
        let v = json!({"isError": true, "jobHandleId": "j", "metaData": "{}"});
        assert!(!carries(op::SEARCH, v));
    }
}
