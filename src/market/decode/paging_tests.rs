use serde_json::json;

use super::*;

fn ask(v: Value) -> Next {
    Next::Ask(v.as_object().cloned().unwrap())
}

#[test]
fn an_answer_without_paging_fields_has_none() {
    assert_eq!(find(&json!({"links": [{"id": 1, "pageId": 2}]})), None);
    assert_eq!(find(&json!([{"id": 1}])), None);
    assert_eq!(find(&json!({"links": [], "size": 2, "count": 2})), None);
}

#[test]
fn page_fields_ask_for_the_next_page_with_the_same_names() {
    let p = find(&json!({"links": [1, 2], "page": 1, "pageSize": 2, "total": 5})).unwrap();
    assert_eq!(p.next(2, 2), ask(json!({"page": 2, "pageSize": 2})));
    let last = find(&json!({"page": 3, "pageSize": 2, "total": 5})).unwrap();
    assert_eq!(last.next(1, 5), Next::Done);
}

#[test]
fn offset_fields_ask_from_after_the_links_received() {
    let p = find(&json!({"data": {"items": [], "offset": 2, "limit": 2, "hasMore": true}}));
    assert_eq!(p.unwrap().next(2, 4), ask(json!({"offset": 4, "limit": 2})));
    let done = find(&json!({"offset": 4, "limit": 2, "hasMore": false})).unwrap();
    assert_eq!(done.next(1, 5), Next::Done);
}

#[test]
fn fields_one_level_down_are_found_but_not_inside_link_records() {
    let meta = json!({"links": [], "meta": {"currentPage": 1, "totalPages": 3}});
    let p = find(&meta).unwrap();
    assert_eq!(p.page.as_ref().unwrap().key, "currentPage");
    assert_eq!(p.next(5, 5), ask(json!({"currentPage": 2})));
    let record = json!({"link": {"pageId": 4, "page": 9, "total": 1}});
    assert_eq!(find(&record), None);
}

#[test]
fn more_without_a_way_to_ask_for_it_is_stuck() {
    let p = find(&json!({"links": [], "hasMore": true, "next": "opaque-cursor"})).unwrap();
    assert!(matches!(p.next(3, 3), Next::Stuck(_)));
    let empty = find(&json!({"page": 2, "hasMore": true})).unwrap();
    assert!(matches!(empty.next(0, 4), Next::Stuck(_)));
}

#[test]
fn a_total_is_compared_with_the_position_reached() {
    let p = find(&json!({"offset": 0, "total": 3})).unwrap();
    assert_eq!(p.next(2, 2), ask(json!({"offset": 2})));
    assert_eq!(p.next(3, 3), Next::Done);
}

#[test]
fn only_a_page_size_means_read_until_a_short_page() {
    let p = find(&json!({"page": 1, "perPage": 2})).unwrap();
    assert_eq!(p.next(2, 2), ask(json!({"page": 2, "perPage": 2})));
    assert_eq!(p.next(1, 1), Next::Done);
}

#[test]
fn an_answer_to_another_page_than_asked_is_recognised() {
    let asked = json!({"page": 2, "pageSize": 2})
        .as_object()
        .cloned()
        .unwrap();
    let same = find(&json!({"page": 2, "pageSize": 2})).unwrap();
    let first_again = find(&json!({"page": 1, "pageSize": 2})).unwrap();
    assert!(same.answers(&asked));
    assert!(!first_again.answers(&asked));
}
