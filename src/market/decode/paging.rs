//! Paging of the link list (operation 6). The spec says the list "can be filtered by body
//! parameters whose names are not shown", so an answer may be one page of several. Paging
//! fields are recognised by plausible names at the top of the answer or one object down
//! (`data`, `meta`, `pagination`, ...), and the next page is asked for with the names the
//! answer itself used: `page` (+1, with its page size) or `offset` (+ the links received,
//! with its limit). Pure functions; the client runs the loop (`ops.rs`).

use serde_json::{Map, Value};

const PAGE: [&str; 4] = ["page", "currentPage", "pageNumber", "pageNo"];
// Not `size`, `count` or `start`: too often the size of this answer or something else.
const PAGE_SIZE: [&str; 4] = ["pageSize", "perPage", "per_page", "page_size"];
const OFFSET: [&str; 2] = ["offset", "skip"];
const LIMIT: [&str; 2] = ["limit", "take"];
const TOTAL: [&str; 6] = [
    "total",
    "totalCount",
    "totalItems",
    "total_count",
    "totalElements",
    "totalRecords",
];
const PAGES: [&str; 5] = [
    "pages",
    "totalPages",
    "pageCount",
    "total_pages",
    "lastPage",
];
const HAS_MORE: [&str; 5] = ["hasMore", "has_more", "hasNext", "hasNextPage", "more"];
const NEXT: [&str; 5] = ["next", "nextPage", "next_page", "nextCursor", "cursor"];
/// An object with one of these is a link record, not a holder of paging fields.
const LINK_MARKERS: [&str; 3] = ["pageId", "linkId", "placementId"];

/// A count field and the name it was found under (the name the next request uses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    key: String,
    value: u64,
}

/// The paging fields of one answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Paging {
    page: Option<Named>,
    page_size: Option<Named>,
    offset: Option<Named>,
    limit: Option<Named>,
    pub(crate) total: Option<u64>,
    pages: Option<u64>,
    has_more: Option<bool>,
    /// A `next` page/cursor/link, when present and not null, false or empty.
    next: Option<String>,
}

/// What to do after one answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// The paging fields say this was the last part.
    Done,
    /// Ask for the next part with this body.
    Ask(Map<String, Value>),
    /// There is (or may be) more, but the answer does not say how to ask for it.
    Stuck(String),
}

/// The paging fields of `v`, or `None` when it carries none at all.
pub(crate) fn find(v: &Value) -> Option<Paging> {
    let top = v.as_object()?;
    let mut holders = vec![top];
    holders.extend(
        top.values()
            .filter_map(Value::as_object)
            .filter(|o| !LINK_MARKERS.iter().any(|m| o.contains_key(*m))),
    );
    let named = |names: &[&str]| holders.iter().find_map(|o| named_count(o, names));
    let p = Paging {
        page: named(&PAGE),
        page_size: named(&PAGE_SIZE),
        offset: named(&OFFSET),
        limit: named(&LIMIT),
        total: named(&TOTAL).map(|n| n.value),
        pages: named(&PAGES).map(|n| n.value),
        has_more: holders.iter().find_map(|o| flag(o, &HAS_MORE)),
        next: holders.iter().find_map(|o| next_of(o)),
    };
    (p != Paging::default()).then_some(p)
}

fn named_count(o: &Map<String, Value>, names: &[&str]) -> Option<Named> {
    names.iter().find_map(|n| {
        let value = o.get(*n)?.as_u64()?;
        Some(Named {
            key: (*n).to_string(),
            value,
        })
    })
}

fn flag(o: &Map<String, Value>, names: &[&str]) -> Option<bool> {
    names.iter().find_map(|n| o.get(*n)?.as_bool())
}

fn next_of(o: &Map<String, Value>) -> Option<String> {
    NEXT.iter().find_map(|n| match o.get(*n)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(x) => Some(x.to_string()),
        Value::Bool(true) => Some("true".into()),
        _ => None,
    })
}

impl Paging {
    /// Whether the fields say more links follow this answer, which held `got` links;
    /// `read` counts the distinct links read so far, this answer included.
    fn more(&self, got: usize, read: usize) -> bool {
        if let Some(more) = self.has_more {
            return more;
        }
        if let (Some(page), Some(pages)) = (&self.page, self.pages) {
            return page.value < pages;
        }
        if let Some(total) = self.total {
            return (self.end(got).unwrap_or(read as u64)) < total;
        }
        if self.next.is_some() {
            return true;
        }
        // Only positions and sizes: a full part may be followed by another.
        let size = self.page_size.as_ref().or(self.limit.as_ref());
        got > 0 && size.is_none_or(|s| got as u64 >= s.value)
    }

    /// Position just after this answer's links, when the answer says where it started.
    fn end(&self, got: usize) -> Option<u64> {
        let got = got as u64;
        if let Some(o) = &self.offset {
            return Some(o.value.saturating_add(got));
        }
        let (page, size) = (self.page.as_ref()?, self.page_size.as_ref()?);
        Some(
            page.value
                .saturating_sub(1)
                .saturating_mul(size.value)
                .saturating_add(got),
        )
    }

    /// What to do after an answer with these fields and `got` links (`read` so far).
    pub(crate) fn next(&self, got: usize, read: usize) -> Next {
        if !self.more(got, read) {
            return Next::Done;
        }
        if got == 0 {
            return Next::Stuck("an empty part, yet the paging fields announce more".into());
        }
        let mut ask = Map::new();
        if let Some(o) = &self.offset {
            ask.insert(
                o.key.clone(),
                Value::from(o.value.saturating_add(got as u64)),
            );
            if let Some(l) = &self.limit {
                ask.insert(l.key.clone(), Value::from(l.value));
            }
            return Next::Ask(ask);
        }
        if let Some(p) = &self.page {
            ask.insert(p.key.clone(), Value::from(p.value.saturating_add(1)));
            if let Some(s) = &self.page_size {
                ask.insert(s.key.clone(), Value::from(s.value));
            }
            return Next::Ask(ask);
        }
        Next::Stuck(
            "the answer says there are more links but names no page or offset to ask for".into(),
        )
    }

    /// Whether this answer is the part `asked` for (a server that ignores the parameter
    /// answers the first part again).
    pub(crate) fn answers(&self, asked: &Map<String, Value>) -> bool {
        [&self.offset, &self.page]
            .into_iter()
            .flatten()
            .filter(|n| asked.contains_key(&n.key))
            .any(|n| asked[&n.key].as_u64() == Some(n.value))
    }
}

#[cfg(test)]
#[path = "paging_tests.rs"]
mod tests;
