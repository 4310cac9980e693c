//! What `linkrunner probe` asks of the wire: the raw answers it inspects and the shapes it
//! finds in them. The probe's checks (`cli/probe/`) decide what to report; the JSON keys of
//! donors and link records, the search-result path and the technical values' names are this
//! room's knowledge, so they live here.
//!
//! - [`search_result`]: a search's result body again, as JSON (a read).
//! - [`price_field`]: which field of the donors holds their price, proved by decoding with it.
//! - [`link_records_at`]: where the link list's records sit in its answer.
//! - [`technical_values`]: a donor's technical values as the wire names them, shortened.

use serde_json::{Map, Value};

use crate::market::body::json_of;
use crate::market::client::MarketClient;
use crate::market::decode;
use crate::market::error::MarketError;
use crate::market::field_map::{FieldKey, FieldMap};
use crate::market::{op, paths};
use linkrunner_domain::market::{Donor, SearchJob, SearchPoll};

/// The keys that mark a donor or a link record in an answer of unknown shape.
const DONOR_KEYS: &[&str] = &["pageId"];
const LINK_RECORD_KEYS: &[&str] = &["pageId", "linkId", "placementId"];

/// The search result's body again, as JSON (a read).
pub(crate) async fn search_result(
    client: &MarketClient,
    job: &SearchJob,
) -> Result<Value, MarketError> {
    let call =
        crate::market::ops::search_result(job, &[]).map_err(|e| MarketError::InvalidRequest {
            op: op::SEARCH_RESULT,
            reason: e.0.to_string(),
        })?;
    Ok(json_of(&client.read(&call).await?.body))
}

/// The link list's first page as JSON, exactly as the marketplace answered it (a read).
pub(crate) async fn link_list(client: &MarketClient, project: i64) -> Result<Value, MarketError> {
    let call = crate::market::ops::post(
        op::LIST_LINKS,
        paths::list_links(project),
        crate::market::wire::list_links(Map::new()),
    );
    Ok(json_of(&client.read(&call).await?.body))
}

/// The field of the donors that holds their price: among the first donor's fields (to three
/// levels) whose name speaks of a price, the first with which decoding the whole answer
/// reads every donor's price.
pub(crate) fn price_field(raw: &Value, map: &FieldMap) -> Option<String> {
    let donor = first_with(raw, DONOR_KEYS, String::new())?.1;
    let mut candidates = Vec::new();
    leaf_paths(donor, String::new(), 0, &mut candidates);
    candidates.into_iter().find(|path| {
        let lower = path.to_lowercase();
        let named = ["price", "cost", "rent", "amount", "sum"]
            .iter()
            .any(|w| lower.contains(w));
        let fixed = map.clone().with(FieldKey::Price, path.clone());
        named
            && matches!(
                decode::search::poll(raw, &fixed).map(|p| p.poll),
                Ok(SearchPoll::Ready { unpriced: 0, ref donors }) if !donors.is_empty()
            )
    })
}

/// Where the link list's records are in its answer (`data.items[]`, or `(top level)`); `None`
/// when no object in it looks like a link record.
pub(crate) fn link_records_at(raw: &Value) -> Option<String> {
    first_with(raw, LINK_RECORD_KEYS, String::new()).map(|(path, _)| {
        if path.is_empty() {
            "(top level)".into()
        } else {
            path
        }
    })
}

/// A donor's technical values under their wire names; `mosSites` cut to 40 characters.
pub(crate) fn technical_values(d: &Donor) -> Value {
    let mos: String = match &d.tech.mos_sites {
        Value::String(s) => s.chars().take(40).collect(),
        other => other.to_string().chars().take(40).collect(),
    };
    serde_json::json!({"searchId": d.tech.search_id, "forceSeoWait": d.tech.force_seo_wait, "mosSites": mos})
}

/// Dotted paths to the number-like leaves of `v`, at most three levels down.
fn leaf_paths(v: &Map<String, Value>, prefix: String, depth: usize, out: &mut Vec<String>) {
    for (k, val) in v {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match val {
            Value::Number(_) | Value::String(_) => out.push(path),
            Value::Object(m) if depth < 2 => leaf_paths(m, path, depth + 1, out),
            _ => {}
        }
    }
}

/// The first object holding one of `keys`, depth first, with its path (`result.pages[]`).
fn first_with<'a>(
    v: &'a Value,
    keys: &[&str],
    at: String,
) -> Option<(String, &'a Map<String, Value>)> {
    match v {
        Value::Object(m) if keys.iter().any(|k| m.contains_key(*k)) => Some((at, m)),
        Value::Object(m) => m.iter().find_map(|(k, x)| {
            let next = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            first_with(x, keys, next)
        }),
        Value::Array(items) => items
            .iter()
            .find_map(|x| first_with(x, keys, format!("{at}[]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn donor(extra: Value) -> Value {
        let mut d = json!({"pageId": 7, "searchId": 1, "forceSeoWait": 0, "mosSites": "m"});
        d.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        d
    }

    #[test]
    fn a_price_under_an_unknown_key_or_nested_is_found_and_proved() {
        let flat =
            json!({"status": "done", "result": {"pages": [donor(json!({"costPerMonth": 120}))]}});
        let nested =
            json!([{"group": "g", "items": [donor(json!({"prices": {"rent": "99.50"}}))]}]);
        assert_eq!(
            price_field(&flat, &FieldMap::default()).as_deref(),
            Some("costPerMonth")
        );
        assert_eq!(
            price_field(&nested, &FieldMap::default()).as_deref(),
            Some("prices.rent")
        );
    }

    #[test]
    fn a_field_that_does_not_read_as_a_price_is_never_suggested() {
        let v =
            json!({"status": "done", "result": {"pages": [donor(json!({"priceNote": "ask us"}))]}});
        assert_eq!(price_field(&v, &FieldMap::default()), None);
    }

    #[test]
    fn the_link_records_path_names_their_nesting() {
        let v = json!({"data": {"items": [{"placementId": 1}], "page": 1}});
        assert_eq!(link_records_at(&v).as_deref(), Some("data.items[]"));
        assert_eq!(
            link_records_at(&json!([{"linkId": 1}])).as_deref(),
            Some("[]")
        );
    }
}
