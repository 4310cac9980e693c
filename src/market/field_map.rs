//! Operator-named field names: `--field-map price=rentPrice,link_id=placementId`, or dotted
//! paths into nested objects: `url_id=url.id,text_id=text.id,price=prices.rent`.
//!
//! The marketplace does not document several answer fields, so an operator can name the
//! real field without recompiling. A mapped name is always looked up first, then the
//! documented or plausible defaults. Every name is resolved by [`resolve`]: the literal key
//! first, then the dotted path (a segment of digits indexes an array).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// Longest field name or path accepted, in bytes, and most segments in a path.
const MAX_NAME_BYTES: usize = 128;
const MAX_SEGMENTS: usize = 8;

/// A field whose wire name an operator may override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldKey {
    Price,
    PageId,
    SearchId,
    ForceSeoWait,
    MosSites,
    ProjectId,
    UrlId,
    TextId,
    FilterId,
    AutobuyerId,
    LinkId,
    Status,
}

impl FieldKey {
    pub(crate) const ALL: [FieldKey; 12] = [
        FieldKey::Price,
        FieldKey::PageId,
        FieldKey::SearchId,
        FieldKey::ForceSeoWait,
        FieldKey::MosSites,
        FieldKey::ProjectId,
        FieldKey::UrlId,
        FieldKey::TextId,
        FieldKey::FilterId,
        FieldKey::AutobuyerId,
        FieldKey::LinkId,
        FieldKey::Status,
    ];

    /// The key as written in `--field-map`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FieldKey::Price => "price",
            FieldKey::PageId => "page_id",
            FieldKey::SearchId => "search_id",
            FieldKey::ForceSeoWait => "force_seo_wait",
            FieldKey::MosSites => "mos_sites",
            FieldKey::ProjectId => "project_id",
            FieldKey::UrlId => "url_id",
            FieldKey::TextId => "text_id",
            FieldKey::FilterId => "filter_id",
            FieldKey::AutobuyerId => "autobuyer_id",
            FieldKey::LinkId => "link_id",
            FieldKey::Status => "status",
        }
    }

    fn parse(key: &str) -> Option<FieldKey> {
        FieldKey::ALL.into_iter().find(|k| k.as_str() == key)
    }
}

impl fmt::Display for FieldKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a `--field-map` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldMapError {
    #[error(
        "--field-map: `{entry}` is not KEY=NAME (e.g. price=priceRent); valid keys: {}",
        valid_keys()
    )]
    Syntax { entry: String },
    #[error("--field-map: unknown key `{key}`; valid keys: {}", valid_keys())]
    UnknownKey { key: String },
    #[error(
        "--field-map: key `{key}` has an empty field name; valid keys: {}",
        valid_keys()
    )]
    EmptyName { key: String },
    #[error("--field-map: key `{key}` is given twice")]
    Duplicate { key: String },
    #[error(
        "--field-map: `{key}={path}`: {reason}; write a field name or a dotted path such as prices.rent"
    )]
    BadPath {
        key: String,
        path: String,
        reason: &'static str,
    },
}

fn valid_keys() -> String {
    FieldKey::ALL.map(FieldKey::as_str).join(", ")
}

/// Wire names chosen by the operator, by [`FieldKey`]. Empty means "documented names only".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMap {
    names: BTreeMap<FieldKey, String>,
}

impl FieldMap {
    /// Parses `key=name,key=name`; whitespace around entries is ignored, an empty text is an
    /// empty map.
    pub fn parse(text: &str) -> Result<FieldMap, FieldMapError> {
        let mut map = FieldMap::default();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (key, name) = entry.split_once('=').ok_or_else(|| FieldMapError::Syntax {
                entry: entry.to_string(),
            })?;
            let (key, name) = (key.trim(), name.trim());
            let parsed = FieldKey::parse(key).ok_or_else(|| FieldMapError::UnknownKey {
                key: key.to_string(),
            })?;
            if name.is_empty() {
                return Err(FieldMapError::EmptyName {
                    key: key.to_string(),
                });
            }
            check_path(name).map_err(|reason| FieldMapError::BadPath {
                key: key.to_string(),
                path: name.to_string(),
                reason,
            })?;
            if map.names.insert(parsed, name.to_string()).is_some() {
                return Err(FieldMapError::Duplicate {
                    key: key.to_string(),
                });
            }
        }
        Ok(map)
    }

    /// Sets one name (for code that builds a map without text).
    pub(crate) fn with(mut self, key: FieldKey, name: impl Into<String>) -> FieldMap {
        self.names.insert(key, name.into());
        self
    }

    /// The operator's name for `key`, if any.
    pub(crate) fn get(&self, key: FieldKey) -> Option<&str> {
        self.names.get(&key).map(String::as_str)
    }

    /// The names to look up for `key`: the mapped one first, then `defaults`, without repeats.
    pub(crate) fn names<'a>(&'a self, key: FieldKey, defaults: &[&'a str]) -> Vec<&'a str> {
        let mut out: Vec<&str> = self.get(key).into_iter().collect();
        for d in defaults {
            if !out.contains(d) {
                out.push(d);
            }
        }
        out
    }
}

/// `key=name,key=name`, in key order: what `--field-map` takes back.
impl std::fmt::Display for FieldMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries: Vec<String> = self
            .names
            .iter()
            .map(|(k, v)| format!("{}={v}", k.as_str()))
            .collect();
        f.write_str(&entries.join(","))
    }
}

/// Why a name cannot be a field name or dotted path, if it cannot.
fn check_path(name: &str) -> Result<(), &'static str> {
    if name.len() > MAX_NAME_BYTES {
        return Err("the name is longer than 128 bytes");
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the name contains whitespace or a control character");
    }
    if name.split('.').any(str::is_empty) {
        return Err("the path has an empty segment (a leading, trailing or doubled `.`)");
    }
    if name.split('.').count() > MAX_SEGMENTS {
        return Err("the path has more than 8 segments");
    }
    Ok(())
}

/// The value of `name` in `obj`: the key `name` itself if present (even if null), else the
/// dotted path `a.b.c` through nested objects, where a segment of digits also indexes an
/// array. Plain names (every default) are a single lookup.
pub(crate) fn resolve<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if let Some(v) = obj.get(name) {
        return Some(v);
    }
    let (first, rest) = name.split_once('.')?;
    rest.split('.')
        .try_fold(obj.get(first)?, |at, segment| match at {
            Value::Object(m) => m.get(segment),
            Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_key_and_trims_whitespace() {
        let map = FieldMap::parse(" price = rentPrice , link_id=placementId").unwrap();
        assert_eq!(map.get(FieldKey::Price), Some("rentPrice"));
        assert_eq!(map.get(FieldKey::LinkId), Some("placementId"));
        assert_eq!(map.get(FieldKey::PageId), None);
    }

    #[test]
    fn empty_text_is_an_empty_map() {
        assert_eq!(FieldMap::parse("").unwrap(), FieldMap::default());
    }

    #[test]
    fn unknown_key_is_refused_with_the_list_of_valid_keys() {
        let err = FieldMap::parse("prise=x").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("unknown key `prise`"), "{text}");
        assert!(text.contains("price, page_id, search_id"), "{text}");
    }

    #[test]
    fn empty_name_is_refused() {
        let err = FieldMap::parse("price=").unwrap_err();
        assert_eq!(
            err,
            FieldMapError::EmptyName {
                key: "price".into()
            }
        );
    }

    #[test]
    fn entry_without_equals_sign_is_refused() {
        assert!(matches!(
            FieldMap::parse("price"),
            Err(FieldMapError::Syntax { .. })
        ));
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        assert!(matches!(
            FieldMap::parse("price=a,price=b"),
            Err(FieldMapError::Duplicate { .. })
        ));
    }

    #[test]
    fn mapped_name_is_looked_up_before_the_defaults() {
        let map = FieldMap::default().with(FieldKey::Price, "rentPrice");
        assert_eq!(
            map.names(FieldKey::Price, &["price", "rentPrice"]),
            vec!["rentPrice", "price"]
        );
    }

    #[test]
    fn dotted_paths_are_accepted_for_every_key() {
        let map = FieldMap::parse("url_id=url.id,text_id=text.id,price=prices.rent").unwrap();
        assert_eq!(map.get(FieldKey::UrlId), Some("url.id"));
        assert_eq!(map.get(FieldKey::Price), Some("prices.rent"));
    }

    #[test]
    fn a_path_with_an_empty_segment_is_refused_with_an_example() {
        for bad in ["prices..rent", ".rent", "prices."] {
            let err = FieldMap::parse(&format!("price={bad}")).unwrap_err();
            assert!(
                matches!(&err, FieldMapError::BadPath { path, .. } if path == bad),
                "{err:?}"
            );
            assert!(err.to_string().contains("prices.rent"), "{err}");
        }
    }

    #[test]
    fn a_path_with_whitespace_or_too_deep_is_refused() {
        assert!(matches!(
            FieldMap::parse("price=prices. rent"),
            Err(FieldMapError::BadPath { .. })
        ));
        assert!(matches!(
            FieldMap::parse("price=a.b.c.d.e.f.g.h.i"),
            Err(FieldMapError::BadPath { .. })
        ));
        let long = "a".repeat(129);
        assert!(matches!(
            FieldMap::parse(&format!("price={long}")),
            Err(FieldMapError::BadPath { .. })
        ));
    }

    #[test]
    fn resolve_follows_a_dotted_path_through_objects_and_arrays() {
        let v = json!({"prices": {"rent": 120, "list": [{"rent": 7}]}, "a.b": 1});
        let obj = v.as_object().unwrap();
        assert_eq!(resolve(obj, "prices.rent"), Some(&json!(120)));
        assert_eq!(resolve(obj, "prices.list.0.rent"), Some(&json!(7)));
        assert_eq!(resolve(obj, "prices.missing"), None);
        assert_eq!(resolve(obj, "prices.rent.deeper"), None);
    }

    #[test]
    fn resolve_prefers_a_literal_key_holding_a_dot() {
        let v = json!({"a.b": 1, "a": {"b": 2}});
        assert_eq!(resolve(v.as_object().unwrap(), "a.b"), Some(&json!(1)));
    }
}
