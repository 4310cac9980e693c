//! The project's link list (operation 6): any object with a page id or a link id, at any
//! depth. Every field of a record is optional; matching uses what is present.

use serde_json::{Map, Value};

use super::{DecodeError, has_any, id_field, objects_where, price_of, rejection, string_at};
use crate::market::field_map::{FieldKey, FieldMap};
use linkrunner_domain::market::LinkRecord;

const LINK_ID_NAMES: [&str; 3] = ["id", "linkId", "placementId"];
/// Names that alone mark an object as a link (a bare `id` could be anything).
const LINK_MARKERS: [&str; 3] = ["pageId", "linkId", "placementId"];

/// Decodes the list. An answer that is not JSON structure at all is `Missing("links")`;
/// a JSON answer with no link objects is an empty list.
pub(crate) fn list(v: &Value, map: &FieldMap) -> Result<Vec<LinkRecord>, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    if !(v.is_object() || v.is_array()) {
        return Err(DecodeError::missing("links"));
    }
    let mut markers: Vec<&str> = [FieldKey::PageId, FieldKey::LinkId]
        .iter()
        .filter_map(|k| map.get(*k))
        .collect();
    markers.extend(LINK_MARKERS);
    let items = objects_where(v, &|o| has_any(o, &markers));
    Ok(items.into_iter().map(|o| record(o, map)).collect())
}

fn record(o: &Map<String, Value>, map: &FieldMap) -> LinkRecord {
    LinkRecord {
        link_id: id_field(o, &map.names(FieldKey::LinkId, &LINK_ID_NAMES)),
        page_id: id_field(o, &map.names(FieldKey::PageId, &["pageId"])),
        url_id: id_field(o, &map.names(FieldKey::UrlId, &["urlId"])),
        text_id: id_field(o, &map.names(FieldKey::TextId, &["textId"])),
        price: price_of(o, map),
        status: string_at(o, &map.names(FieldKey::Status, &["status", "state"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::money::Money;
    use serde_json::json;

    #[test]
    fn default_shape_fills_every_field() {
        let v = json!({"links": [{"id": 5, "pageId": 1, "urlId": 2, "textId": 3,
                                   "price": 120, "status": "active"}]});
        let out = list(&v, &FieldMap::default()).unwrap();
        assert_eq!(
            out,
            vec![LinkRecord {
                link_id: Some(5),
                page_id: Some(1),
                url_id: Some(2),
                text_id: Some(3),
                price: Some(Money::from_rubles(120)),
                status: Some("active".into()),
            }]
        );
    }

    #[test]
    fn nested_items_with_placement_id_are_found() {
        let v = json!({"data": {"items": [{"placementId": 9, "urlId": 2}]}});
        let out = list(&v, &FieldMap::default()).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].link_id, Some(9));
        assert_eq!(out[0].page_id, None);
    }

    #[test]
    fn an_empty_list_is_empty() {
        assert_eq!(
            list(&json!({"links": []}), &FieldMap::default()),
            Ok(vec![])
        );
    }

    #[test]
    fn a_mapped_link_id_marks_and_identifies_links() {
        let map = FieldMap::default().with(FieldKey::LinkId, "rentId");
        let out = list(&json!([{"rentId": 4, "id": 1}]), &map).unwrap();
        assert_eq!(out[0].link_id, Some(4));
    }

    #[test]
    fn mapped_dotted_paths_mark_and_read_links() {
        let map = FieldMap::parse("link_id=placement.id,price=prices.rent").unwrap();
        let v = json!({"rows": [{"placement": {"id": 4}, "prices": {"rent": 12}}]});
        let out = list(&v, &map).unwrap();
        assert_eq!(out[0].link_id, Some(4));
        assert_eq!(out[0].price, Some(Money::from_rubles(12)));
    }

    #[test]
    fn an_answer_that_is_not_json_structure_is_missing_links() {
        assert_eq!(
            list(&json!("ok"), &FieldMap::default()),
            Err(DecodeError::missing("links"))
        );
    }

    #[test]
    fn is_error_true_is_a_rejection() {
        assert!(matches!(
            list(&json!({"isError": true}), &FieldMap::default()),
            Err(DecodeError::Rejected { .. })
        ));
    }
}
