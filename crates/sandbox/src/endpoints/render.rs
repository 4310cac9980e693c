//! Answers as JSON, in the configured [`Shape`]. The only place that knows response field names.

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::listing::{ListPage, Paging};
use crate::search::{Donor, Offer};
use crate::shapes::{
    BuyAnswer, CreateIds, ErrorStyle, LinkList, Nesting, Pending, Shape, TextsAnswer,
};
use crate::state::AddedUrl;

/// Donors per group in the `grouped` nesting.
const GROUP_SIZE: usize = 4;

fn donor(shape: &Shape, d: &Donor, o: &Offer) -> Value {
    let mut item = json!({
        "pageId": d.page_id,
        "domain": d.domain,
        "url": format!("https://{}/", d.domain),
        "searchId": o.search_id,
        "forceSeoWait": o.force_seo_wait,
        "mosSites": o.mos_sites,
        "currency": "RUB",
    });
    shape.price.put(&mut item, o.price.to_json_rubles());
    item
}

pub(crate) fn search_ready(shape: &Shape, found: &[(Donor, Offer)]) -> Value {
    let items: Vec<Value> = found.iter().map(|(d, o)| donor(shape, d, o)).collect();
    match shape.results {
        Nesting::Pages => json!({"status": "done", "result": {"pages": items}}),
        Nesting::Grouped => Value::Array(
            items
                .chunks(GROUP_SIZE)
                .enumerate()
                .map(|(i, chunk)| json!({"group": format!("g{}", i + 1), "items": chunk}))
                .collect(),
        ),
    }
}

pub(crate) fn search_pending(shape: &Shape) -> (StatusCode, Value) {
    match shape.pending {
        Pending::StatusField => (StatusCode::OK, json!({"status": "processing"})),
        Pending::Http202 => (StatusCode::ACCEPTED, json!({"status": "pending"})),
        Pending::EmptyList => (StatusCode::OK, json!([])),
        Pending::Http404 => (
            StatusCode::NOT_FOUND,
            json!({"isError": true, "message": "job not found or not finished"}),
        ),
    }
}

pub(crate) fn search_queued(job: &str, meta_data: &str) -> Value {
    json!({"jobHandleId": job, "message": "Task added to queue", "metaData": meta_data})
}

pub(crate) fn project_created(id: i64, url_id: i64, text_id: i64) -> Value {
    json!({"id": id, "urlId": url_id, "textId": text_id, "isError": false})
}

pub(crate) fn texts_added(shape: &Shape, added: &[AddedUrl]) -> Value {
    match shape.texts {
        TextsAnswer::Nested => {
            let result: Vec<Value> = added
                .iter()
                .map(|a| {
                    let texts: Vec<Value> = a
                        .texts
                        .iter()
                        .map(|(id, t)| json!({"textId": id, "text": t}))
                        .collect();
                    json!({"urlId": a.url_id, "url": a.url, "texts": texts})
                })
                .collect();
            json!({"isError": false, "result": result})
        }
        TextsAnswer::Flat => {
            let urls: Vec<Value> = added
                .iter()
                .map(|a| json!({"id": a.url_id, "url": a.url}))
                .collect();
            let texts: Vec<Value> = added
                .iter()
                .flat_map(|a| {
                    a.texts
                        .iter()
                        .map(|(id, t)| json!({"id": id, "urlId": a.url_id, "text": t}))
                })
                .collect();
            json!({"urls": urls, "texts": texts})
        }
        TextsAnswer::NestedObjects => texts_as_id_value_pairs(added),
    }
}

/// `{"isError":false,"items":[{"url":{"id","value"},"text":{"id","value"}}]}`: one item
/// per URL and text, ids nested in `{id, value}` objects.
fn texts_as_id_value_pairs(added: &[AddedUrl]) -> Value {
    let items: Vec<Value> = added
        .iter()
        .flat_map(|a| {
            a.texts.iter().map(|(id, t)| {
                json!({"url": {"id": a.url_id, "value": a.url}, "text": {"id": id, "value": t}})
            })
        })
        .collect();
    json!({"isError": false, "items": items})
}

/// Filter and autobuyer create answers; `named_key` is `searchFilterId` or `autobuyerId`.
pub(crate) fn created(shape: &Shape, named_key: &str, id: i64) -> Value {
    let key = match shape.ids {
        CreateIds::Id => "id",
        CreateIds::Named => named_key,
    };
    json!({ key: id, "isError": false })
}

pub(crate) fn bought(shape: &Shape, ids: &[i64]) -> Value {
    match shape.buy {
        BuyAnswer::PlacementIds => json!({"isError": false, "placementIds": ids}),
        BuyAnswer::ResultIds => json!({"result": {"ids": ids}}),
    }
}

/// Operation 6. Paging fields, when the list is paged, sit beside the items: at the top for
/// `links`, inside `data` for `data_items`.
pub(crate) fn links(shape: &Shape, page: &ListPage) -> Value {
    let id_key = match shape.links {
        LinkList::Links => "id",
        LinkList::DataItems => "placementId",
    };
    let items: Vec<Value> = page
        .links
        .iter()
        .map(|p| {
            json!({
                id_key: p.id,
                "pageId": p.page.page_id,
                "urlId": p.page.url_id,
                "textId": p.page.text_id,
                "price": p.price.to_json_rubles(),
                "status": p.status.name(),
            })
        })
        .collect();
    let list_key = match shape.links {
        LinkList::Links => "links",
        LinkList::DataItems => "items",
    };
    let mut holder = Map::new();
    holder.insert(list_key.into(), Value::Array(items));
    if let Some(paging) = page.paging {
        add_paging(&mut holder, paging);
    }
    match shape.links {
        LinkList::Links => Value::Object(holder),
        LinkList::DataItems => json!({ "data": holder }),
    }
}

fn add_paging(holder: &mut Map<String, Value>, paging: Paging) {
    let fields = match paging {
        Paging::PageTotal {
            page,
            page_size,
            total,
        } => [
            ("page", json!(page)),
            ("pageSize", json!(page_size)),
            ("total", json!(total)),
        ],
        Paging::OffsetHasMore {
            offset,
            limit,
            has_more,
        } => [
            ("offset", json!(offset)),
            ("limit", json!(limit)),
            ("hasMore", json!(has_more)),
        ],
    };
    holder.extend(fields.map(|(k, v)| (k.to_string(), v)));
}

/// A change that was made, answered as an error all the same: the success answer with
/// `isError: true` and a message (200), or with `"error"` and HTTP 422 in the `http` style.
pub(crate) fn executed_error(shape: &Shape, success: Value) -> (StatusCode, Value) {
    let mut body = match success {
        Value::Object(o) => o,
        other => Map::from_iter([("result".to_string(), other)]),
    };
    match shape.errors {
        ErrorStyle::IsError => {
            body.insert("isError".into(), json!(true));
            body.insert("message".into(), json!("partially failed"));
            (StatusCode::OK, Value::Object(body))
        }
        ErrorStyle::Http => {
            body.remove("isError");
            body.insert("error".into(), json!("partially failed"));
            (StatusCode::UNPROCESSABLE_ENTITY, Value::Object(body))
        }
    }
}

pub(crate) fn switched(ids: &[i64]) -> Value {
    json!({"isError": false, "autobuyersIds": ids})
}

pub(crate) fn rejection(shape: &Shape, message: &str) -> (StatusCode, Value) {
    match shape.errors {
        ErrorStyle::IsError => (StatusCode::OK, json!({"isError": true, "message": message})),
        ErrorStyle::Http => (StatusCode::UNPROCESSABLE_ENTITY, json!({"error": message})),
    }
}

/// Transport-level refusals (auth, malformed input, faults): always an HTTP status.
pub(crate) fn error(message: &str) -> Value {
    json!({"error": message})
}
