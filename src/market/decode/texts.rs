//! `addTexts` answers: which URL id and text ids the marketplace created for each requested
//! URL and text. Shapes seen:
//!
//! - `{"result":[{"urlId":U,"url":"…","texts":[{"textId":T,"text":"…"}]}]}` (texts nested);
//! - `{"urls":[{"id":U,"url":"…"}],"texts":[{"id":T,"urlId":U,"text":"…"}]}` (`id` under
//!   named arrays, texts pointing at their URL);
//! - `{"items":[{"url":{"id":U,"value":"…"},"text":{"id":T,"value":"…"}}]}` (ids nested in
//!   `{id, value}` objects, one item per URL and text; found by the default paths `url.id`
//!   and `text.id`, no field map needed).
//!
//! Entries are matched to the request by their string when the answer carries it, else by
//! order; anything that cannot be matched unambiguously is `Missing`.

use serde_json::{Map, Value};

use super::{DecodeError, id_field, rejection, string_at};
use crate::market::field_map::{FieldKey, FieldMap};
use linkrunner_domain::market::{CreatedText, CreatedUrl, UrlTexts};

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
    /// The URL string beside the text, when the answer pairs them in one object.
    url: Option<String>,
}

/// Where the strings are: the plain field, the `value` of an `{id, value}` object, or
/// `value` itself in an object under `urls`/`texts`. (`value` alone is not looked up for
/// the URL beside a text: there it is the text's own.)
const URL_STRINGS: [&str; 3] = ["url", "url.value", "value"];
const TEXT_STRINGS: [&str; 3] = ["text", "text.value", "value"];

struct Names<'a> {
    url_id: Vec<&'a str>,
    text_id: Vec<&'a str>,
    /// String names: the defaults, then `P.value` for each id path `P.id` (so a mapped
    /// `url_id=u.key` also finds the URL at `u.value`).
    url: Vec<String>,
    text: Vec<String>,
    /// The URL string beside a text: as `url`, without a bare `value`.
    paired_url: Vec<String>,
}

impl<'a> Names<'a> {
    fn new(map: &'a FieldMap) -> Names<'a> {
        let url_id = map.names(FieldKey::UrlId, &["urlId", "url.id"]);
        let text_id = map.names(FieldKey::TextId, &["textId", "text.id"]);
        Names {
            url: string_names(&URL_STRINGS, &url_id),
            text: string_names(&TEXT_STRINGS, &text_id),
            paired_url: string_names(&URL_STRINGS[..2], &url_id),
            url_id,
            text_id,
        }
    }
}

fn string_names(defaults: &[&str], id_names: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = defaults.iter().map(|d| d.to_string()).collect();
    for (parent, _) in id_names.iter().filter_map(|n| n.rsplit_once('.')) {
        let name = format!("{parent}.value");
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn string_of(obj: &Map<String, Value>, names: &[String]) -> Option<String> {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    string_at(obj, &names)
}

/// Decodes and matches an `addTexts` answer to the request it answers.
pub(crate) fn created(
    v: &Value,
    map: &FieldMap,
    request: &[UrlTexts],
) -> Result<Vec<CreatedUrl>, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    let names = Names::new(map);
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
                    url: string_of(obj, &names.url),
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
    let url_id = id_field(obj, &names.url_id);
    Some(TextEntry {
        id,
        text: string_of(obj, &names.text),
        url: url_id.and(string_of(obj, &names.paired_url)),
        url_id,
    })
}

fn url_id_of(obj: &Map<String, Value>, array_key: Option<&str>, names: &Names) -> Option<i64> {
    id_field(obj, &names.url_id).or_else(|| {
        (array_key == Some("urls"))
            .then(|| id_field(obj, &["id"]))
            .flatten()
    })
}

/// Texts outside URL objects join the URL they name; a URL named only by texts becomes an
/// entry of its own (with the URL string paired with the text, if any). A URL id given with
/// two different strings stays two entries, so matching by string finds the ambiguity.
fn attach_loose_texts(urls: &mut Vec<UrlEntry>, loose: Vec<TextEntry>) {
    for t in loose {
        let Some(url_id) = t.url_id else {
            if let [only] = urls.as_mut_slice() {
                only.texts.push(t);
            }
            continue;
        };
        let same =
            |u: &UrlEntry| u.id == url_id && (u.url.is_none() || t.url.is_none() || u.url == t.url);
        match urls.iter_mut().find(|u| same(u)) {
            Some(u) => {
                if u.url.is_none() {
                    u.url = t.url.clone();
                }
                u.texts.push(t);
            }
            None => urls.push(UrlEntry {
                id: url_id,
                url: t.url.clone(),
                texts: vec![t],
            }),
        }
    }
}

#[cfg(test)]
#[path = "texts_tests.rs"]
mod tests;
