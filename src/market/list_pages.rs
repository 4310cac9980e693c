//! Operation 6 read whole: the first answer, then — when it carries paging fields — every
//! part they announce, asked for with the names the answer used (`decode::paging`). Each
//! part is a read (retried like any read). Bounded: past [`MAX_LIST_PAGES`] requests or
//! [`MAX_LIST_LINKS`] links the call fails rather than read forever.
//!
//! The result says what the answers said about links left unread ([`ListCompleteness`]); a
//! link seen on two parts (the list moved between reads) is kept once.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::body::json_of;
use super::client::MarketClient;
use super::decode::paging::{self, Next, Paging};
use super::decode::{self};
use super::error::MarketError;
use super::ops::post;
use super::{op, paths, wire};
use linkrunner_domain::market::{LinkList, LinkRecord, ListCompleteness};

/// Most requests one link list may take.
pub(super) const MAX_LIST_PAGES: u32 = 1000;
/// Most links one link list may hold.
pub(super) const MAX_LIST_LINKS: usize = 100_000;

/// One answer: its link records and its paging fields.
struct Part {
    links: Vec<LinkRecord>,
    paging: Option<Paging>,
}

impl MarketClient {
    pub(super) async fn list_all(&self, project_id: i64) -> Result<LinkList, MarketError> {
        let first = self.list_part(project_id, Map::new()).await?;
        let mut links = Collected::default();
        let got = links.keep_new(first.links);
        let Some(paging) = first.paging else {
            return Ok(list(links.links, ListCompleteness::NoPagingFields));
        };
        self.follow(project_id, links, paging, got).await
    }

    /// Reads the parts after the first until the paging fields say there are no more.
    async fn follow(
        &self,
        project_id: i64,
        mut links: Collected,
        mut paging: Paging,
        mut got: usize,
    ) -> Result<LinkList, MarketError> {
        let mut pages: u32 = 1;
        loop {
            let ask = match paging.next(got, links.links.len()) {
                Next::Done => return Ok(finish(links.links, &paging, pages)),
                Next::Stuck(reason) => return Ok(partial(links.links, reason)),
                Next::Ask(ask) => ask,
            };
            if pages >= MAX_LIST_PAGES {
                return Err(too_long(format!("more than {MAX_LIST_PAGES} pages")));
            }
            let part = self.list_part(project_id, ask.clone()).await?;
            pages += 1;
            got = links.keep_new(part.links);
            if links.links.len() > MAX_LIST_LINKS {
                return Err(too_long(format!("more than {MAX_LIST_LINKS} links")));
            }
            match part.paging.filter(|p| p.answers(&ask)) {
                Some(p) => paging = p,
                None => {
                    let reason = format!(
                        "asked for {}, the answer was another part or had no paging fields: \
                         the marketplace may ignore the paging parameter",
                        Value::Object(ask)
                    );
                    return Ok(partial(links.links, reason));
                }
            }
        }
    }

    /// One request of operation 6 with `ask` as its body (`{}` for the first).
    async fn list_part(
        &self,
        project_id: i64,
        ask: Map<String, Value>,
    ) -> Result<Part, MarketError> {
        let call = post(
            op::LIST_LINKS,
            paths::list_links(project_id),
            wire::list_links(ask),
        );
        let answer = self.read(&call).await?;
        let v = json_of(&answer.body);
        let links = self.decoded(
            op::LIST_LINKS,
            &answer,
            decode::links::list(&v, &self.field_map),
        )?;
        Ok(Part {
            links,
            paging: paging::find(&v),
        })
    }
}

fn too_long(what: String) -> MarketError {
    MarketError::Undecodable {
        op: op::LIST_LINKS,
        field: "paging".into(),
        body: format!("the link list has {what}; stopped reading it"),
    }
}

/// The links read so far, each kept once: by link id, or whole for a record without one.
#[derive(Default)]
struct Collected {
    links: Vec<LinkRecord>,
    ids: HashSet<i64>,
}

impl Collected {
    /// Appends the records not already kept; answers how many records `part` had.
    fn keep_new(&mut self, part: Vec<LinkRecord>) -> usize {
        let n = part.len();
        for l in part {
            let new = match l.link_id {
                Some(id) => self.ids.insert(id),
                None => !self.links.contains(&l),
            };
            if new {
                self.links.push(l);
            }
        }
        n
    }
}

fn list(links: Vec<LinkRecord>, completeness: ListCompleteness) -> LinkList {
    LinkList {
        links,
        completeness,
    }
}

fn partial(links: Vec<LinkRecord>, reason: String) -> LinkList {
    list(links, ListCompleteness::Partial { reason })
}

/// The last part said "no more": complete, unless a stated total disagrees with what was read.
fn finish(links: Vec<LinkRecord>, last: &Paging, pages: u32) -> LinkList {
    match last.total {
        Some(total) if total != links.len() as u64 => {
            let reason = format!(
                "the list announced {total} links and {} were read: it changed while being read",
                links.len()
            );
            partial(links, reason)
        }
        _ => list(links, ListCompleteness::AllPages { pages }),
    }
}
