//! The rent search: the job answer (operation 3) and the result poll (operation 4).
//!
//! Donors are found by content — any object with a page id, at any depth — and a donor
//! whose price or technical values cannot be read is counted, never offered. "Not finished"
//! is recognised however it is said: a status field, `ready: false`, or no donors at all
//! without a terminal status. (Pending HTTP statuses are the client's part.)

use serde_json::{Map, Value};

use super::{DecodeError, as_id, first_present, price_of, rejection};
use crate::market::field_map::{FieldKey, FieldMap};
use crate::market::types::{Donor, SearchJob, SearchPoll, TechValues};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pending,
    Failed,
    /// Any other value (done, ready, complete, …): the answer is final.
    Terminal,
    Absent,
}

/// A donor item that was found but cannot be offered: its page id (if readable) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub page_id: Option<i64>,
    pub missing: &'static str,
}

/// A decoded poll and the donors that were skipped (for a debug log by page id).
#[derive(Debug, Clone, PartialEq)]
pub struct Poll {
    pub poll: SearchPoll,
    pub skipped: Vec<Skipped>,
}

/// Operation 3: `{jobHandleId, message, metaData}`; `metaData` kept byte-for-byte.
pub fn job(v: &Value) -> Result<SearchJob, DecodeError> {
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
pub fn poll(v: &Value, map: &FieldMap) -> Result<Poll, DecodeError> {
    if let Some(r) = rejection(v) {
        return Err(r);
    }
    let status = status_of(v, map);
    match status {
        Status::Failed => return Err(failed(v)),
        Status::Pending => return Ok(pending()),
        _ if says_not_ready(v) => return Ok(pending()),
        _ => {}
    }
    let page_names = map.names(FieldKey::PageId, &["pageId"]);
    let items = super::objects_where(v, &|o| page_names.iter().any(|n| o.contains_key(*n)));
    if items.is_empty() && status != Status::Terminal {
        return Ok(pending());
    }
    let mut donors = Vec::new();
    let mut skipped = Vec::new();
    for item in items {
        match donor(item, map, &page_names) {
            Ok(d) => donors.push(d),
            Err(s) => skipped.push(s),
        }
    }
    let unpriced = skipped.len();
    Ok(Poll {
        poll: SearchPoll::Ready { donors, unpriced },
        skipped,
    })
}

fn pending() -> Poll {
    Poll {
        poll: SearchPoll::Pending,
        skipped: Vec::new(),
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
    let Some((_, Value::String(raw))) = first_present(obj, &names) else {
        return Status::Absent;
    };
    let s = raw.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    if PENDING.contains(&s.as_str()) {
        Status::Pending
    } else if FAILED.contains(&s.as_str()) {
        Status::Failed
    } else {
        Status::Terminal
    }
}

fn says_not_ready(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    ["ready", "done", "finished", "complete"]
        .iter()
        .any(|k| obj.get(*k) == Some(&Value::Bool(false)))
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
    let price = price_of(item, map).ok_or(skip("price"))?;
    Ok(Donor {
        page_id,
        price,
        tech,
    })
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
