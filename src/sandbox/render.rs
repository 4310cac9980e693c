//! Answers as JSON, in the configured [`Shape`]. The only place that knows response field names.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::buy::Placement;
use super::search::{Donor, Offer};
use super::shapes::{
    BuyAnswer, CreateIds, ErrorStyle, LinkList, Nesting, Pending, Shape, TextsAnswer,
};
use super::state::AddedUrl;

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
    item[shape.price.name()] = o.price.to_json_rubles();
    item
}

pub fn search_ready(shape: &Shape, found: &[(Donor, Offer)]) -> Value {
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

pub fn search_pending(shape: &Shape) -> (StatusCode, Value) {
    match shape.pending {
        Pending::StatusField => (StatusCode::OK, json!({"status": "processing"})),
        Pending::Http202 => (StatusCode::ACCEPTED, json!({"status": "pending"})),
        Pending::EmptyList => (StatusCode::OK, json!([])),
    }
}

pub fn search_queued(job: &str, meta_data: &str) -> Value {
    json!({"jobHandleId": job, "message": "Task added to queue", "metaData": meta_data})
}

pub fn project_created(id: i64, url_id: i64, text_id: i64) -> Value {
    json!({"id": id, "urlId": url_id, "textId": text_id, "isError": false})
}

pub fn texts_added(shape: &Shape, added: &[AddedUrl]) -> Value {
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
    }
}

/// Filter and autobuyer create answers; `named_key` is `searchFilterId` or `autobuyerId`.
pub fn created(shape: &Shape, named_key: &str, id: i64) -> Value {
    let key = match shape.ids {
        CreateIds::Id => "id",
        CreateIds::Named => named_key,
    };
    json!({ key: id, "isError": false })
}

pub fn bought(shape: &Shape, ids: &[i64]) -> Value {
    match shape.buy {
        BuyAnswer::PlacementIds => json!({"isError": false, "placementIds": ids}),
        BuyAnswer::ResultIds => json!({"result": {"ids": ids}}),
    }
}

pub fn links(shape: &Shape, placements: &[Placement]) -> Value {
    let id_key = match shape.links {
        LinkList::Links => "id",
        LinkList::DataItems => "placementId",
    };
    let items: Vec<Value> = placements
        .iter()
        .map(|p| {
            json!({
                id_key: p.id,
                "pageId": p.page.page_id,
                "urlId": p.page.url_id,
                "textId": p.page.text_id,
                "price": p.price.to_json_rubles(),
                "status": p.status,
            })
        })
        .collect();
    match shape.links {
        LinkList::Links => json!({"links": items}),
        LinkList::DataItems => json!({"data": {"items": items}}),
    }
}

pub fn switched(ids: &[i64]) -> Value {
    json!({"isError": false, "autobuyersIds": ids})
}

pub fn rejection(shape: &Shape, message: &str) -> (StatusCode, Value) {
    match shape.errors {
        ErrorStyle::IsError => (StatusCode::OK, json!({"isError": true, "message": message})),
        ErrorStyle::Http => (StatusCode::UNPROCESSABLE_ENTITY, json!({"error": message})),
    }
}

/// Transport-level refusals (auth, malformed input, faults): always an HTTP status.
pub fn error(message: &str) -> Value {
    json!({"error": message})
}
