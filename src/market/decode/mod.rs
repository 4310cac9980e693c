//! Tolerant decoding of answers: pure functions over [`serde_json::Value`].
//!
//! The spec leaves most answer shapes "not shown", so fields are found by content, under the
//! operator's mapped name first ([`FieldMap`]) and then plausible defaults — never by an
//! assumed nesting. What cannot be found is a [`DecodeError::Missing`] naming the field; the
//! client turns it into `MarketError::Undecodable` with the redacted body. Every name, mapped
//! or default, may be a dotted path (`prices.rent`, `url.id`): see [`field_map::resolve`].
//!
//! - [`executed`]: whether a refused answer still carries the result of a change.
//! - [`ids`]: identifiers in create answers (project, filter, autobuyer, bought links).
//! - [`texts`]: URL and text ids of `addTexts`, matched to the request.
//! - [`search`]: the search job and donor pages, pending or ready.
//! - [`links`]: the project's link list; [`paging`]: its paging fields.
//! - [`pending`]: "not found / not finished" answers to the result fetch.
//!
//! May import: nothing.

pub(crate) mod executed;
pub(crate) mod ids;
pub(crate) mod links;
pub(crate) mod paging;
pub(crate) mod pending;
pub(crate) mod search;
pub(crate) mod texts;

use serde_json::{Map, Value};

use super::field_map::{self, FieldKey, FieldMap};
use linkrunner_domain::money::Money;

/// Why an answer could not be turned into the domain value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// A needed field is absent or unreadable (the call executed all the same).
    Missing { field: String },
    /// The answer says the call failed (`isError: true`, or a failed search status).
    Rejected { message: String },
}

impl DecodeError {
    pub(crate) fn missing(field: impl Into<String>) -> DecodeError {
        DecodeError::Missing {
            field: field.into(),
        }
    }
}

/// Price names in the order they are tried after the mapped one.
pub(crate) const PRICE_NAMES: [&str; 5] = [
    "price",
    "priceRent",
    "rentPrice",
    "pricePerMonth",
    "monthPrice",
];

/// `isError: true` at the top level is a rejection, whatever the HTTP status said.
pub(crate) fn rejection(v: &Value) -> Option<DecodeError> {
    let obj = v.as_object()?;
    let flagged = match obj.get("isError") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        Some(Value::Number(n)) => n.as_i64().is_some_and(|n| n != 0),
        _ => false,
    };
    flagged.then(|| DecodeError::Rejected {
        message: message_of(obj).unwrap_or_else(|| "isError: true".to_string()),
    })
}

/// The human message of an error answer, if it has one.
pub(crate) fn message_of(obj: &Map<String, Value>) -> Option<String> {
    ["message", "error", "errorMessage", "errors", "detail"]
        .iter()
        .find_map(|k| match obj.get(*k)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
}

/// The first of `names` (or dotted paths) present in `obj` (even if null), with the name found.
pub(crate) fn first_present<'a>(
    obj: &'a Map<String, Value>,
    names: &[&'a str],
) -> Option<(&'a str, &'a Value)> {
    names
        .iter()
        .find_map(|n| field_map::resolve(obj, n).map(|v| (*n, v)))
}

/// Whether one of `names` (or dotted paths) is present in `obj`.
pub(crate) fn has_any(obj: &Map<String, Value>, names: &[&str]) -> bool {
    names.iter().any(|n| field_map::resolve(obj, n).is_some())
}

/// The first of `names` (or dotted paths) that holds a string.
pub(crate) fn string_at(obj: &Map<String, Value>, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| field_map::resolve(obj, n)?.as_str())
        .map(str::to_string)
}

/// An identifier: a JSON integer or a string of digits.
pub(crate) fn as_id(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let t = s.trim();
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
        }
        _ => None,
    }
}

/// The first of `names` (or dotted paths) present and non-null, read as an id.
pub(crate) fn id_field(obj: &Map<String, Value>, names: &[&str]) -> Option<i64> {
    names
        .iter()
        .find_map(|n| field_map::resolve(obj, n).filter(|v| !v.is_null()))
        .and_then(as_id)
}

/// A price: a JSON number or numeric string of rubles, read exactly; negative is unreadable.
pub(crate) fn as_money(v: &Value) -> Option<Money> {
    let m = match v {
        Value::Number(n) => Money::from_json_number(n).ok()?,
        Value::String(s) => Money::parse_rubles(s).ok()?,
        _ => return None,
    };
    (!m.is_negative()).then_some(m)
}

/// The price of an item: the first present price name decides; if its value is
/// unreadable there is no price (we never fall back to another field about money).
pub(crate) fn price_of(obj: &Map<String, Value>, map: &FieldMap) -> Option<Money> {
    price_field(obj, map).and_then(|(_, v)| as_money(v))
}

/// The price name (or path) that decides an item's price, and its raw value: what `probe`
/// shows and what `--field-map price=…` must name when it is unreadable.
pub(crate) fn price_field<'a>(
    obj: &'a Map<String, Value>,
    map: &'a FieldMap,
) -> Option<(&'a str, &'a Value)> {
    let names = map.names(FieldKey::Price, &PRICE_NAMES);
    first_present(obj, &names)
}

/// Every object (at any depth) that satisfies `pred`; matched objects are not searched
/// further, so an item is never counted twice.
pub(crate) fn objects_where<'a>(
    v: &'a Value,
    pred: &dyn Fn(&Map<String, Value>) -> bool,
) -> Vec<&'a Map<String, Value>> {
    let mut out = Vec::new();
    collect(v, pred, &mut out);
    out
}

fn collect<'a>(
    v: &'a Value,
    pred: &dyn Fn(&Map<String, Value>) -> bool,
    out: &mut Vec<&'a Map<String, Value>>,
) {
    match v {
        Value::Object(obj) if pred(obj) => out.push(obj),
        Value::Object(obj) => obj.values().for_each(|c| collect(c, pred, out)),
        Value::Array(items) => items.iter().for_each(|c| collect(c, pred, out)),
        _ => {}
    }
}

/// Where the first object that satisfies `pred` is (in the order of [`objects_where`]):
/// keys joined by `.`, `[]` for an array element, e.g. `result.pages[]`; the top level
/// itself is `.`.
pub(crate) fn path_to_first(
    v: &Value,
    pred: &dyn Fn(&Map<String, Value>) -> bool,
) -> Option<String> {
    fn walk(v: &Value, pred: &dyn Fn(&Map<String, Value>) -> bool) -> Option<String> {
        match v {
            Value::Object(obj) if pred(obj) => Some(String::new()),
            Value::Object(obj) => obj.iter().find_map(|(k, c)| {
                walk(c, pred).map(|p| match p.starts_with('[') || p.is_empty() {
                    true => format!("{k}{p}"),
                    false => format!("{k}.{p}"),
                })
            }),
            Value::Array(items) => items.iter().find_map(|c| {
                walk(c, pred).map(|p| match p.starts_with('[') || p.is_empty() {
                    true => format!("[]{p}"),
                    false => format!("[].{p}"),
                })
            }),
            _ => None,
        }
    }
    walk(v, pred).map(|p| if p.is_empty() { ".".to_string() } else { p })
}

/// The shallowest object (breadth first) holding one of `names` with an id value.
pub(crate) fn shallowest_id(v: &Value, names: &[&str]) -> Option<i64> {
    let mut level: Vec<&Value> = vec![v];
    while !level.is_empty() {
        let mut next = Vec::new();
        for node in level {
            match node {
                Value::Object(obj) => {
                    if let Some(id) = id_field(obj, names) {
                        return Some(id);
                    }
                    next.extend(obj.values());
                }
                Value::Array(items) => next.extend(items.iter()),
                _ => {}
            }
        }
        level = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn is_error_true_is_a_rejection_with_the_message() {
        let r = rejection(&json!({"isError": true, "message": "no money"}));
        assert_eq!(
            r,
            Some(DecodeError::Rejected {
                message: "no money".into()
            })
        );
    }

    #[test]
    fn is_error_false_is_not_a_rejection() {
        assert_eq!(rejection(&json!({"isError": false, "id": 1})), None);
    }

    #[test]
    fn ids_are_read_from_integers_and_digit_strings_only() {
        assert_eq!(as_id(&json!(42)), Some(42));
        assert_eq!(as_id(&json!("42")), Some(42));
        assert_eq!(as_id(&json!(4.2)), None);
        assert_eq!(as_id(&json!("4x")), None);
        assert_eq!(as_id(&json!(-1)), Some(-1));
    }

    #[test]
    fn prices_are_read_exactly_from_numbers_and_strings() {
        assert_eq!(as_money(&json!(149.99)), Some(Money::from_kopecks(14_999)));
        assert_eq!(as_money(&json!("120.5")), Some(Money::from_kopecks(12_050)));
        assert_eq!(as_money(&json!("1.005")), None);
        assert_eq!(as_money(&json!(-5)), None);
        assert_eq!(as_money(&json!(true)), None);
    }

    #[test]
    fn the_first_present_price_name_decides_even_when_unreadable() {
        let obj = json!({"price": "n/a", "rentPrice": 120});
        let map = FieldMap::default();
        assert_eq!(price_of(obj.as_object().unwrap(), &map), None);
    }

    #[test]
    fn a_mapped_price_name_is_tried_first() {
        let obj = json!({"price": "n/a", "rentPrice": 120});
        let map = FieldMap::default().with(FieldKey::Price, "rentPrice");
        assert_eq!(
            price_of(obj.as_object().unwrap(), &map),
            Some(Money::from_rubles(120))
        );
    }

    #[test]
    fn a_mapped_price_path_reads_a_nested_price() {
        let obj = json!({"prices": {"rent": "149.50"}});
        let map = FieldMap::default().with(FieldKey::Price, "prices.rent");
        assert_eq!(
            price_of(obj.as_object().unwrap(), &map),
            Some(Money::from_kopecks(14_950))
        );
        assert_eq!(
            price_of(obj.as_object().unwrap(), &FieldMap::default()),
            None
        );
    }

    #[test]
    fn ids_are_read_through_dotted_paths() {
        let obj = json!({"url": {"id": 7, "value": "https://a.example/"}});
        assert_eq!(
            id_field(obj.as_object().unwrap(), &["urlId", "url.id"]),
            Some(7)
        );
        assert_eq!(shallowest_id(&json!({"r": obj}), &["url.id"]), Some(7));
    }

    #[test]
    fn the_path_to_the_first_match_names_keys_and_array_elements() {
        let has_page = |o: &Map<String, Value>| o.contains_key("pageId");
        let v = json!({"status": "done", "result": {"pages": [{"pageId": 1}]}});
        assert_eq!(
            path_to_first(&v, &has_page).as_deref(),
            Some("result.pages[]")
        );
        let v = json!([{"group": "g1", "items": [{"pageId": 1}]}]);
        assert_eq!(path_to_first(&v, &has_page).as_deref(), Some("[].items[]"));
        assert_eq!(
            path_to_first(&json!({"pageId": 1}), &has_page).as_deref(),
            Some(".")
        );
        assert_eq!(path_to_first(&json!([]), &has_page), None);
    }

    #[test]
    fn shallowest_id_prefers_the_top_level() {
        let v = json!({"result": {"id": 2}, "id": 1});
        assert_eq!(shallowest_id(&v, &["id"]), Some(1));
        assert_eq!(
            shallowest_id(&json!({"result": {"id": 2}}), &["id"]),
            Some(2)
        );
    }
}
