//! Identifiers in create answers, under the mapped name first, then plausible names.

use serde_json::Value;

use super::{DecodeError, as_id, id_field, rejection, shallowest_id};
use crate::market::field_map::{self, FieldKey, FieldMap};
use linkrunner_domain::market::ProjectIds;

/// Array keys that may hold the ids of bought links, in the order they are tried. Only these
/// (and a name mapped with `LINKRUNNER_FIELD_MAP`): an array under another key, such as
/// `rejectedIds`, is never taken for bought links. `placementsIds` is how the marketplace
/// spelt it in one answer (issue 25).
const PURCHASE_ARRAYS: [&str; 7] = [
    "ids",
    "placementIds",
    "placementsIds",
    "linkIds",
    "placements",
    "links",
    "result",
];
const LINK_ID_NAMES: [&str; 3] = ["id", "placementId", "linkId"];

fn required(
    v: &Value,
    map: &FieldMap,
    key: FieldKey,
    defaults: &[&str],
) -> Result<i64, DecodeError> {
    let names = map.names(key, defaults);
    shallowest_id(v, &names).ok_or_else(|| DecodeError::missing(names.join("|")))
}

/// Operation 1: `{"id":P,"urlId":U,"textId":T,"isError":false}` and relatives.
pub(crate) fn project(v: &Value, map: &FieldMap) -> Result<ProjectIds, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    Ok(ProjectIds {
        project_id: required(v, map, FieldKey::ProjectId, &["id", "projectId"])?,
        url_id: required(v, map, FieldKey::UrlId, &["urlId", "url.id"])?,
        text_id: required(v, map, FieldKey::TextId, &["textId", "text.id"])?,
    })
}

/// Operation 7: `id`, `filterId` or `searchFilterId`.
pub(crate) fn filter(v: &Value, map: &FieldMap) -> Result<i64, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    required(
        v,
        map,
        FieldKey::FilterId,
        &["id", "filterId", "searchFilterId"],
    )
}

/// Operation 8: `id` or `autobuyerId`.
pub(crate) fn autobuyer(v: &Value, map: &FieldMap) -> Result<i64, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    required(v, map, FieldKey::AutobuyerId, &["id", "autobuyerId"])
}

/// Operation 5: the first array (at any depth) under a purchase key whose items are ids or
/// objects with an id. No ids at all is `Missing`: the purchase executed, and the caller
/// must settle it from the link list rather than assume nothing was bought.
pub(crate) fn purchase(v: &Value, map: &FieldMap) -> Result<Vec<i64>, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    let item_names = map.names(FieldKey::LinkId, &LINK_ID_NAMES);
    let mut arrays: Vec<&str> = map.get(FieldKey::LinkId).into_iter().collect();
    arrays.extend(PURCHASE_ARRAYS);
    find_id_array(v, &arrays, &item_names)
        .filter(|ids| !ids.is_empty())
        .ok_or_else(|| DecodeError::missing(arrays.join("|")))
}

fn find_id_array(v: &Value, arrays: &[&str], item_names: &[&str]) -> Option<Vec<i64>> {
    match v {
        Value::Object(obj) => {
            let here = arrays
                .iter()
                .find_map(|k| match field_map::resolve(obj, k)? {
                    Value::Array(items) => ids_of(items, item_names),
                    _ => None,
                });
            here.or_else(|| {
                obj.values()
                    .find_map(|c| find_id_array(c, arrays, item_names))
            })
        }
        Value::Array(items) => items
            .iter()
            .find_map(|c| find_id_array(c, arrays, item_names)),
        _ => None,
    }
}

/// All items must be ids (or objects with one); a mixed array is not trusted.
fn ids_of(items: &[Value], item_names: &[&str]) -> Option<Vec<i64>> {
    if items.is_empty() {
        return None;
    }
    items
        .iter()
        .map(|it| match it {
            Value::Object(obj) => id_field(obj, item_names),
            other => as_id(other),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plain() -> FieldMap {
        FieldMap::default()
    }

    #[test]
    fn project_ids_are_read_from_the_default_shape() {
        let v = json!({"id": 7, "urlId": 8, "textId": 9, "isError": false});
        let ids = project(&v, &plain()).unwrap();
        assert_eq!(
            ids,
            ProjectIds {
                project_id: 7,
                url_id: 8,
                text_id: 9
            }
        );
    }

    #[test]
    fn project_id_may_be_called_project_id() {
        let v = json!({"projectId": 7, "urlId": 8, "textId": 9});
        assert_eq!(project(&v, &plain()).unwrap().project_id, 7);
    }

    #[test]
    fn project_without_text_id_names_the_missing_field() {
        let v = json!({"id": 7, "urlId": 8});
        assert_eq!(
            project(&v, &plain()),
            Err(DecodeError::missing("textId|text.id"))
        );
    }

    #[test]
    fn project_url_and_text_ids_nested_as_id_value_objects_are_found() {
        let v = json!({"id": 7, "url": {"id": 8, "value": "https://a.example/"},
                       "text": {"id": 9, "value": "a.example"}, "isError": false});
        let ids = project(&v, &plain()).unwrap();
        assert_eq!((ids.url_id, ids.text_id), (8, 9));
    }

    #[test]
    fn project_with_is_error_true_is_rejected() {
        let v = json!({"isError": true, "message": "domain taken"});
        assert!(matches!(
            project(&v, &plain()),
            Err(DecodeError::Rejected { .. })
        ));
    }

    #[test]
    fn filter_id_is_read_from_id_or_search_filter_id() {
        assert_eq!(filter(&json!({"id": 5, "isError": false}), &plain()), Ok(5));
        assert_eq!(
            filter(&json!({"searchFilterId": 6, "isError": false}), &plain()),
            Ok(6)
        );
    }

    #[test]
    fn filter_without_id_names_every_name_tried() {
        assert_eq!(
            filter(&json!({"isError": false}), &plain()),
            Err(DecodeError::missing("id|filterId|searchFilterId"))
        );
    }

    #[test]
    fn autobuyer_id_is_read_from_id_or_autobuyer_id() {
        assert_eq!(autobuyer(&json!({"id": 3}), &plain()), Ok(3));
        assert_eq!(autobuyer(&json!({"autobuyerId": 4}), &plain()), Ok(4));
    }

    #[test]
    fn mapped_autobuyer_id_name_wins() {
        let map = plain().with(FieldKey::AutobuyerId, "abId");
        assert_eq!(autobuyer(&json!({"id": 1, "abId": 2}), &map), Ok(2));
    }

    #[test]
    fn purchase_ids_are_read_from_placement_ids() {
        let v = json!({"isError": false, "placementIds": [11, 12]});
        assert_eq!(purchase(&v, &plain()), Ok(vec![11, 12]));
    }

    #[test]
    fn purchase_ids_are_read_from_placements_ids() {
        let v = json!({"isError": false, "placementsIds": [31, 32]});
        assert_eq!(purchase(&v, &plain()), Ok(vec![31, 32]));
    }

    #[test]
    fn ids_under_an_unknown_name_are_never_taken_for_bought_links() {
        let v = json!({"isError": false, "rejectedIds": [41, 42]});
        assert!(matches!(
            purchase(&v, &plain()),
            Err(DecodeError::Missing { .. })
        ));
        let both = json!({"isError": false, "rejectedIds": [41], "placementsIds": [43]});
        assert_eq!(purchase(&both, &plain()), Ok(vec![43]));
    }

    #[test]
    fn purchase_ids_are_found_nested_under_result() {
        let v = json!({"result": {"ids": [13]}});
        assert_eq!(purchase(&v, &plain()), Ok(vec![13]));
    }

    #[test]
    fn purchase_ids_may_be_objects() {
        let v = json!({"placements": [{"placementId": 21}, {"id": 22}]});
        assert_eq!(purchase(&v, &plain()), Ok(vec![21, 22]));
    }

    #[test]
    fn purchase_answer_without_ids_is_missing_not_empty() {
        let v = json!({"isError": false, "placementIds": []});
        assert!(matches!(
            purchase(&v, &plain()),
            Err(DecodeError::Missing { .. })
        ));
    }

    #[test]
    fn purchase_rejected_by_is_error() {
        let v = json!({"isError": true, "message": "balance"});
        assert_eq!(
            purchase(&v, &plain()),
            Err(DecodeError::Rejected {
                message: "balance".into()
            })
        );
    }
}
