//! `addTexts` answers: which URL id and text ids the marketplace created for each requested
//! URL and text. Shapes seen:
//!
//! - `{"result":[{"urlId":U,"url":"…","texts":[{"textId":T,"text":"…"}]}]}` (texts nested);
//! - `{"urls":[{"id":U,"url":"…"}],"texts":[{"id":T,"urlId":U,"text":"…"}]}` (`id` under
//!   named arrays, texts pointing at their URL).
//!
//! Entries are matched to the request by their string when the answer carries it, else by
//! order; anything that cannot be matched unambiguously is `Missing`.

use serde_json::{Map, Value};

use super::{DecodeError, id_field, rejection};
use crate::market::field_map::{FieldKey, FieldMap};
use crate::market::types::{CreatedText, CreatedUrl, UrlTexts};

#[derive(Debug, Default)]
struct UrlEntry {
    id: i64,
    url: Option<String>,
    texts: Vec<TextEntry>,
}

#[derive(Debug, Clone)]
struct TextEntry {
    id: i64,
    text: Option<String>,
    url_id: Option<i64>,
}

struct Names<'a> {
    url_id: Vec<&'a str>,
    text_id: Vec<&'a str>,
}

/// Decodes and matches an `addTexts` answer to the request it answers.
pub fn created(
    v: &Value,
    map: &FieldMap,
    request: &[UrlTexts],
) -> Result<Vec<CreatedUrl>, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    let names = Names {
        url_id: map.names(FieldKey::UrlId, &["urlId"]),
        text_id: map.names(FieldKey::TextId, &["textId"]),
    };
    let (mut urls, loose) = scan(v, &names);
    attach_loose_texts(&mut urls, loose);
    let matched = match_in_order(request, &urls, |u| u.url.as_deref(), |r| r.url.as_str())
        .ok_or_else(|| DecodeError::missing(names.url_id.join("|")))?;
    request
        .iter()
        .zip(matched)
        .map(|(req, entry)| created_url(req, entry, &names))
        .collect()
}

fn created_url(req: &UrlTexts, entry: &UrlEntry, names: &Names) -> Result<CreatedUrl, DecodeError> {
    let texts: Vec<&str> = req.texts.iter().map(String::as_str).collect();
    let matched = match_in_order(&texts, &entry.texts, |t| t.text.as_deref(), |r| r)
        .ok_or_else(|| DecodeError::missing(names.text_id.join("|")))?;
    Ok(CreatedUrl {
        url: req.url.clone(),
        url_id: entry.id,
        texts: req
            .texts
            .iter()
            .zip(matched)
            .map(|(text, t)| CreatedText {
                text: text.clone(),
                text_id: t.id,
            })
            .collect(),
    })
}

/// Pairs each requested item with one entry: by string if every entry has one (each
/// request string must match exactly one entry), else by order if the counts agree.
fn match_in_order<'a, R, E>(
    request: &[R],
    entries: &'a [E],
    entry_key: impl Fn(&E) -> Option<&str>,
    request_key: impl Fn(&R) -> &str,
) -> Option<Vec<&'a E>> {
    if entries.iter().all(|e| entry_key(e).is_some()) && !entries.is_empty() {
        return request
            .iter()
            .map(|r| {
                let mut hits = entries
                    .iter()
                    .filter(|e| entry_key(e) == Some(request_key(r)));
                match (hits.next(), hits.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            })
            .collect();
    }
    (entries.len() == request.len()).then(|| entries.iter().collect())
}

/// Walks the answer; returns URL entries (with their nested texts) and texts found outside
/// any URL object.
fn scan(v: &Value, names: &Names) -> (Vec<UrlEntry>, Vec<TextEntry>) {
    let mut urls = Vec::new();
    let mut loose = Vec::new();
    walk(v, None, names, &mut urls, &mut loose);
    (urls, loose)
}

fn walk(
    v: &Value,
    array_key: Option<&str>,
    names: &Names,
    urls: &mut Vec<UrlEntry>,
    texts: &mut Vec<TextEntry>,
) {
    match v {
        Value::Object(obj) => {
            if let Some(t) = as_text(obj, array_key, names) {
                texts.push(t);
            } else if let Some(id) = url_id_of(obj, array_key, names) {
                let mut entry = UrlEntry {
                    id,
                    url: string_field(obj, "url"),
                    texts: Vec::new(),
                };
                let mut nested_urls = Vec::new();
                for (k, c) in obj {
                    walk(c, Some(k), names, &mut nested_urls, &mut entry.texts);
                }
                urls.push(entry);
                urls.extend(nested_urls);
            } else {
                obj.iter()
                    .for_each(|(k, c)| walk(c, Some(k), names, urls, texts));
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|c| walk(c, array_key, names, urls, texts)),
        _ => {}
    }
}

fn as_text(obj: &Map<String, Value>, array_key: Option<&str>, names: &Names) -> Option<TextEntry> {
    let id = id_field(obj, &names.text_id).or_else(|| {
        (array_key == Some("texts"))
            .then(|| id_field(obj, &["id"]))
            .flatten()
    })?;
    Some(TextEntry {
        id,
        text: string_field(obj, "text"),
        url_id: id_field(obj, &names.url_id),
    })
}

fn url_id_of(obj: &Map<String, Value>, array_key: Option<&str>, names: &Names) -> Option<i64> {
    id_field(obj, &names.url_id).or_else(|| {
        (array_key == Some("urls"))
            .then(|| id_field(obj, &["id"]))
            .flatten()
    })
}

fn string_field(obj: &Map<String, Value>, name: &str) -> Option<String> {
    obj.get(name).and_then(Value::as_str).map(str::to_string)
}

/// Texts outside URL objects join the URL they name; a URL named only by texts becomes an
/// entry of its own (without a URL string).
fn attach_loose_texts(urls: &mut Vec<UrlEntry>, loose: Vec<TextEntry>) {
    for t in loose {
        let Some(url_id) = t.url_id else {
            if let [only] = urls.as_mut_slice() {
                only.texts.push(t);
            }
            continue;
        };
        match urls.iter_mut().find(|u| u.id == url_id) {
            Some(u) => u.texts.push(t),
            None => urls.push(UrlEntry {
                id: url_id,
                texts: vec![t],
                ..UrlEntry::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn nested_result_shape_is_matched_by_strings() {
        let v = json!({"isError": false, "result": [
            {"urlId": 20, "url": "https://a.example/2", "texts": [{"textId": 201, "text": "#a#two#/a#"}]},
            {"urlId": 10, "url": "https://a.example/1", "texts": [
                {"textId": 102, "text": "#a#uno#/a#"}, {"textId": 101, "text": "#a#one#/a#"}]}
        ]});
        let out = created(&v, &FieldMap::default(), &request()).unwrap();
        assert_eq!(ids(&out), vec![(10, vec![101, 102]), (20, vec![201])]);
    }

    #[test]
    fn named_arrays_with_plain_ids_are_matched() {
        let v = json!({
            "urls": [{"id": 10, "url": "https://a.example/1"}, {"id": 20, "url": "https://a.example/2"}],
            "texts": [{"id": 201, "urlId": 20, "text": "#a#two#/a#"},
                      {"id": 101, "urlId": 10, "text": "#a#one#/a#"},
                      {"id": 102, "urlId": 10, "text": "#a#uno#/a#"}]
        });
        let out = created(&v, &FieldMap::default(), &request()).unwrap();
        assert_eq!(ids(&out), vec![(10, vec![101, 102]), (20, vec![201])]);
    }

    #[test]
    fn entries_without_strings_are_matched_by_order() {
        let v = json!({"result": [
            {"urlId": 10, "texts": [{"textId": 101}, {"textId": 102}]},
            {"urlId": 20, "texts": [{"textId": 201}]}
        ]});
        let out = created(&v, &FieldMap::default(), &request()).unwrap();
        assert_eq!(ids(&out), vec![(10, vec![101, 102]), (20, vec![201])]);
    }

    #[test]
    fn a_count_mismatch_without_strings_is_missing_text_id() {
        let v = json!({"result": [
            {"urlId": 10, "texts": [{"textId": 101}]},
            {"urlId": 20, "texts": [{"textId": 201}]}
        ]});
        assert_eq!(
            created(&v, &FieldMap::default(), &request()),
            Err(DecodeError::missing("textId"))
        );
    }

    #[test]
    fn a_duplicated_url_string_is_ambiguous() {
        let v = json!({"result": [
            {"urlId": 10, "url": "https://a.example/1", "texts": []},
            {"urlId": 11, "url": "https://a.example/1", "texts": []}
        ]});
        assert_eq!(
            created(&v, &FieldMap::default(), &request()),
            Err(DecodeError::missing("urlId"))
        );
    }

    #[test]
    fn an_answer_without_ids_is_missing_url_id() {
        let v = json!({"isError": false});
        assert_eq!(
            created(&v, &FieldMap::default(), &request()),
            Err(DecodeError::missing("urlId"))
        );
    }

    #[test]
    fn is_error_true_is_rejected() {
        let v = json!({"isError": true, "message": "bad url"});
        assert!(matches!(
            created(&v, &FieldMap::default(), &request()),
            Err(DecodeError::Rejected { .. })
        ));
    }
}
