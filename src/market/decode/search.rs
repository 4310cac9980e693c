//! The rent search: the job answer (operation 3) and the result poll (operation 4).
//!
//! Donors are found by content — any object with a page id, at any depth — and a donor
//! whose price or technical values cannot be read, or whose price is not above zero, is
//! counted, never offered; so is one whose price fields disagree (`AMBIGUOUS_PRICE`). "Not finished" is recognised however it is said: a status field,
//! `ready: false`, no donors at all without a terminal status, or `isError: true` with a
//! "not found / not finished" message (see [`super::pending`]). (Pending HTTP statuses are the
//! client's part.) Each poll also says what it saw ([`PollSeen`]): the pending form, where the
//! donors were, which field held their price.

use serde_json::{Map, Value};

use super::{
    DecodeError, as_id, first_present, has_any, path_to_first, price_field, price_of, rejection,
};
use crate::market::field_map::{FieldKey, FieldMap};
use crate::market::seen::{PendingForm, PollSeen};
use linkrunner_domain::market::{Donor, SearchJob, SearchPoll, TechValues};
use linkrunner_domain::money::Money;

const PENDING: [&str; 12] = [
    "pending",
    "processing",
    "queued",
    "in_queue",
    "in_progress",
    "inprogress",
    "running",
    "wait",
    "waiting",
    "not_ready",
    "started",
    "new",
];
const FAILED: [&str; 7] = [
    "failed",
    "failure",
    "error",
    "errored",
    "cancelled",
    "canceled",
    "aborted",
];

/// What the status field of a result answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    /// The field's name and its value.
    Pending(String, String),
    Failed,
    /// Any other value (done, ready, complete, …): the answer is final.
    Terminal,
    Absent,
}

/// A donor item that was found but cannot be offered: its page id (if readable) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub(crate) page_id: Option<i64>,
    pub(crate) missing: &'static str,
}

/// A decoded poll, the donors that were skipped (for a debug log by page id) and the form
/// of the answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Poll {
    pub(crate) poll: SearchPoll,
    pub(crate) skipped: Vec<Skipped>,
    pub(crate) seen: PollSeen,
}

impl Poll {
    /// "Not ready yet", said in `form`.
    pub(crate) fn pending(form: PendingForm) -> Poll {
        let poll = match &form {
            PendingForm::NotFound { message, .. } => SearchPoll::NotFound {
                message: message.clone(),
            },
            _ => SearchPoll::Pending,
        };
        Poll {
            poll,
            skipped: Vec::new(),
            seen: PollSeen {
                pending: Some(form),
                ..PollSeen::default()
            },
        }
    }
}

/// Operation 3: `{jobHandleId, message, metaData}`; `metaData` kept byte-for-byte.
pub(crate) fn job(v: &Value) -> Result<SearchJob, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    let obj = v
        .as_object()
        .ok_or_else(|| DecodeError::missing("jobHandleId"))?;
    let job_handle_id = match obj.get("jobHandleId") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(DecodeError::missing("jobHandleId")),
    };
    let meta_data = match obj.get("metaData") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(DecodeError::missing("metaData")),
    };
    Ok(SearchJob {
        job_handle_id,
        meta_data,
    })
}

/// Operation 4 with a 2xx answer whose status code did not already say "pending".
pub(crate) fn poll(v: &Value, map: &FieldMap) -> Result<Poll, DecodeError> {
    match rejection(v) {
        Some(DecodeError::Rejected { message }) if super::pending::says_not_ready(&message) => {
            return Ok(Poll::pending(PendingForm::NotFound {
                status: None,
                message,
            }));
        }
        Some(r) => return Err(r),
        None => {}
    }
    let status = status_of(v, map);
    match &status {
        Status::Failed => return Err(failed(v)),
        Status::Pending(name, value) => {
            return Ok(Poll::pending(PendingForm::StatusField {
                name: name.clone(),
                value: value.clone(),
            }));
        }
        _ => {}
    }
    if let Some(name) = not_ready_flag(v) {
        return Ok(Poll::pending(PendingForm::NotReadyFlag { name }));
    }
    let page_names = map.names(FieldKey::PageId, &["pageId"]);
    let is_item = |o: &Map<String, Value>| has_any(o, &page_names);
    let items = super::objects_where(v, &is_item);
    if items.is_empty() && status != Status::Terminal {
        return Ok(Poll::pending(PendingForm::NoDonors));
    }
    let mut out = Poll {
        poll: SearchPoll::Pending,
        skipped: Vec::new(),
        seen: PollSeen {
            donors_at: path_to_first(v, &is_item),
            ..PollSeen::default()
        },
    };
    let mut donors = Vec::new();
    for item in items {
        note_price_field(&mut out.seen, item, map);
        match donor(item, map, &page_names) {
            Ok(d) => donors.push(d),
            Err(s) => {
                *out.seen.skipped.entry(s.missing.to_string()).or_default() += 1;
                out.skipped.push(s);
            }
        }
    }
    let unpriced = out.skipped.len();
    out.poll = SearchPoll::Ready { donors, unpriced };
    Ok(out)
}

fn note_price_field(seen: &mut PollSeen, item: &Map<String, Value>, map: &FieldMap) {
    if let Some((name, _)) = price_field(item, map)
        && !seen.price_fields.iter().any(|n| n == name)
    {
        seen.price_fields.push(name.to_string());
    }
}

fn failed(v: &Value) -> DecodeError {
    let message = v
        .as_object()
        .and_then(super::message_of)
        .unwrap_or_else(|| "the search reports failure".to_string());
    DecodeError::Rejected { message }
}

fn status_of(v: &Value, map: &FieldMap) -> Status {
    let Some(obj) = v.as_object() else {
        return Status::Absent;
    };
    let names = map.names(FieldKey::Status, &["status", "state"]);
    let Some((name, Value::String(raw))) = first_present(obj, &names) else {
        return Status::Absent;
    };
    let s = raw.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    if PENDING.contains(&s.as_str()) {
        Status::Pending(name.to_string(), raw.clone())
    } else if FAILED.contains(&s.as_str()) {
        Status::Failed
    } else {
        Status::Terminal
    }
}

/// The name of a `ready`/`done`/`finished`/`complete` flag that is `false`, if any.
fn not_ready_flag(v: &Value) -> Option<String> {
    let obj = v.as_object()?;
    ["ready", "done", "finished", "complete"]
        .iter()
        .find(|k| obj.get(**k) == Some(&Value::Bool(false)))
        .map(|k| k.to_string())
}

fn donor(item: &Map<String, Value>, map: &FieldMap, page_names: &[&str]) -> Result<Donor, Skipped> {
    let page_id = first_present(item, page_names).and_then(|(_, v)| as_id(v));
    let skip = |missing| Skipped { page_id, missing };
    let page_id = page_id.ok_or(skip("pageId"))?;
    let tech = |key, default: &'static str| {
        let names = map.names(key, &[default]);
        first_present(item, &names)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_null())
            .ok_or(skip(default))
    };
    let tech = TechValues {
        search_id: tech(FieldKey::SearchId, "searchId")?,
        force_seo_wait: tech(FieldKey::ForceSeoWait, "forceSeoWait")?,
        mos_sites: tech(FieldKey::MosSites, "mosSites")?,
    };
    // Two price fields that disagree (`price: 100, priceRent: 80`): which one is the rent is
    // a guess about money, so the donor is skipped, counted under `ambiguous price` (the
    // round stalls as `no_readable_price` if that leaves nothing), until `--field-map
    // price=…` names the field. A mapped price name decides alone.
    if map.get(FieldKey::Price).is_none() && ambiguous_price(item) {
        return Err(skip(AMBIGUOUS_PRICE));
    }
    // A donor at 0 or less is never offered: no marketplace rents for free, so such a
    // price is a misread field, and a free link would escape every budget check.
    let price = price_of(item, map)
        .filter(|p| *p > Money::ZERO)
        .ok_or(skip("price"))?;
    Ok(Donor {
        page_id,
        price,
        tech,
        host: host_of(item),
    })
}

/// The donor site, when the item shows it: not a documented field, so a field named `host`,
/// `domain` or `site`, else the host of `url` or `pageUrl`; lower case, without `www.`.
fn host_of(item: &Map<String, Value>) -> Option<String> {
    let named = ["host", "domain", "site"]
        .iter()
        .find_map(|k| item.get(*k)?.as_str().map(str::to_string));
    let from_url = || {
        ["url", "pageUrl"].iter().find_map(|k| {
            let u = url::Url::parse(item.get(*k)?.as_str()?).ok()?;
            u.host_str().map(str::to_string)
        })
    };
    let host = named
        .or_else(from_url)?
        .trim()
        .trim_end_matches('.')
        .to_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    (!host.is_empty()).then_some(host)
}

/// Why a donor whose price fields disagree is skipped (the poll's `skipped` counts).
pub(crate) const AMBIGUOUS_PRICE: &str = "ambiguous price";

/// Whether `item` carries two known price fields with different readable values.
fn ambiguous_price(item: &Map<String, Value>) -> bool {
    let mut values = super::PRICE_NAMES
        .iter()
        .filter_map(|n| crate::market::field_map::resolve(item, n))
        .filter_map(super::as_money);
    let Some(first) = values.next() else {
        return false;
    };
    values.any(|v| v != first)
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "search_price_tests.rs"]
mod price_tests;
