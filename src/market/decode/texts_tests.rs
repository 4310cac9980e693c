use super::*;
use serde_json::json;

fn request() -> Vec<UrlTexts> {
    vec![
        UrlTexts {
            url: "https://a.example/1".into(),
            texts: vec!["#a#one#/a#".into(), "#a#uno#/a#".into()],
        },
        UrlTexts {
            url: "https://a.example/2".into(),
            texts: vec!["#a#two#/a#".into()],
        },
    ]
}

fn ids(created: &[CreatedUrl]) -> Vec<(i64, Vec<i64>)> {
    created
        .iter()
        .map(|u| (u.url_id, u.texts.iter().map(|t| t.text_id).collect()))
        .collect()
}

/// `v` read with the documented field names as the answer to adding [`request`].
fn decoded(v: &serde_json::Value) -> Result<Vec<CreatedUrl>, DecodeError> {
    created(v, &FieldMap::default(), &request())
}

/// `v`, read with `map` as the answer to adding [`request`], gives each URL and text of the
/// request its id: URL 10 texts 101 and 102, URL 20 text 201.
fn assert_every_text_matched(v: &serde_json::Value, map: &FieldMap) {
    let out = created(v, map, &request()).unwrap();
    assert_eq!(ids(&out), vec![(10, vec![101, 102]), (20, vec![201])]);
}

#[test]
fn nested_result_shape_is_matched_by_strings() {
    let v = json!({"isError": false, "result": [
        {"urlId": 20, "url": "https://a.example/2", "texts": [{"textId": 201, "text": "#a#two#/a#"}]},
        {"urlId": 10, "url": "https://a.example/1", "texts": [
            {"textId": 102, "text": "#a#uno#/a#"}, {"textId": 101, "text": "#a#one#/a#"}]}
    ]});
    assert_every_text_matched(&v, &FieldMap::default());
}

#[test]
fn named_arrays_with_plain_ids_are_matched() {
    let v = json!({
        "urls": [{"id": 10, "url": "https://a.example/1"}, {"id": 20, "url": "https://a.example/2"}],
        "texts": [{"id": 201, "urlId": 20, "text": "#a#two#/a#"},
                  {"id": 101, "urlId": 10, "text": "#a#one#/a#"},
                  {"id": 102, "urlId": 10, "text": "#a#uno#/a#"}]
    });
    assert_every_text_matched(&v, &FieldMap::default());
}

#[test]
fn entries_without_strings_are_matched_by_order() {
    let v = json!({"result": [
        {"urlId": 10, "texts": [{"textId": 101}, {"textId": 102}]},
        {"urlId": 20, "texts": [{"textId": 201}]}
    ]});
    assert_every_text_matched(&v, &FieldMap::default());
}

#[test]
fn a_count_mismatch_without_strings_is_missing_text_id() {
    let v = json!({"result": [
        {"urlId": 10, "texts": [{"textId": 101}]},
        {"urlId": 20, "texts": [{"textId": 201}]}
    ]});
    assert_eq!(decoded(&v), Err(DecodeError::missing("textId|text.id")));
}

#[test]
fn a_duplicated_url_string_is_ambiguous() {
    let v = json!({"result": [
        {"urlId": 10, "url": "https://a.example/1", "texts": []},
        {"urlId": 11, "url": "https://a.example/1", "texts": []}
    ]});
    assert_eq!(decoded(&v), Err(DecodeError::missing("urlId|url.id")));
}

#[test]
fn an_answer_without_ids_is_missing_url_id() {
    let v = json!({"isError": false});
    assert_eq!(decoded(&v), Err(DecodeError::missing("urlId|url.id")));
}

#[test]
fn is_error_true_is_rejected() {
    let v = json!({"isError": true, "message": "bad url"});
    assert!(matches!(decoded(&v), Err(DecodeError::Rejected { .. })));
}

fn pair(url_id: i64, url: &str, text_id: i64, text: &str) -> Value {
    json!({"url": {"id": url_id, "value": url}, "text": {"id": text_id, "value": text}})
}

#[test]
fn ids_nested_in_id_value_objects_are_matched_by_value_without_a_field_map() {
    let v = json!({"isError": false, "items": [
        pair(20, "https://a.example/2", 201, "#a#two#/a#"),
        pair(10, "https://a.example/1", 102, "#a#uno#/a#"),
        pair(10, "https://a.example/1", 101, "#a#one#/a#"),
    ]});
    assert_every_text_matched(&v, &FieldMap::default());
}

#[test]
fn nested_id_value_objects_under_urls_and_texts_are_matched() {
    let v = json!({"items": [
        {"url": {"id": 10, "value": "https://a.example/1"},
         "texts": [{"id": 102, "value": "#a#uno#/a#"}, {"id": 101, "value": "#a#one#/a#"}]},
        {"url": {"id": 20, "value": "https://a.example/2"},
         "texts": [{"id": 201, "value": "#a#two#/a#"}]}
    ]});
    assert_every_text_matched(&v, &FieldMap::default());
}

#[test]
fn the_same_text_value_with_two_ids_is_ambiguous() {
    let v = json!({"items": [
        pair(10, "https://a.example/1", 101, "#a#one#/a#"),
        pair(10, "https://a.example/1", 109, "#a#one#/a#"),
        pair(10, "https://a.example/1", 102, "#a#uno#/a#"),
        pair(20, "https://a.example/2", 201, "#a#two#/a#"),
    ]});
    assert_eq!(decoded(&v), Err(DecodeError::missing("textId|text.id")));
}

#[test]
fn one_url_id_given_for_two_urls_keeps_them_apart() {
    let v = json!({"items": [
        pair(10, "https://a.example/1", 101, "#a#one#/a#"),
        pair(10, "https://a.example/1", 102, "#a#uno#/a#"),
        pair(10, "https://a.example/2", 201, "#a#two#/a#"),
    ]});
    let out = decoded(&v).unwrap();
    // Both URLs are matched by their string; the marketplace gave them one id, which is
    // what it said — the id is not invented.
    assert_eq!(ids(&out), vec![(10, vec![101, 102]), (10, vec![201])]);
}

#[test]
fn mapped_dotted_paths_find_ids_under_other_names_and_match_by_value() {
    let v = json!({"rows": [
        {"u": {"key": 20, "value": "https://a.example/2"}, "t": {"key": 201, "value": "#a#two#/a#"}},
        {"u": {"key": 10, "value": "https://a.example/1"}, "t": {"key": 102, "value": "#a#uno#/a#"}},
        {"u": {"key": 10, "value": "https://a.example/1"}, "t": {"key": 101, "value": "#a#one#/a#"}}
    ]});
    let map = FieldMap::parse("url_id=u.key,text_id=t.key").unwrap();
    assert_every_text_matched(&v, &map);
}
