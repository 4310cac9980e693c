//! Operation 6, the project's link list, shown as the current [`Behaviour`] says: whole or one
//! page at a time (with or without paging fields), lagging behind purchases, without the
//! links that left it. Also the control side: a link removed or rejected by the marketplace.
//!
//! The spec does not name the list's paging parameters; the sandbox reads `page`/`pageSize`
//! or `offset`/`limit` from the body, the same names its answers use.
//!
//! [`Behaviour`]: super::behaviour::Behaviour

use serde_json::Value;

use super::behaviour::ListPaging;
pub use super::entities::LinkStatus;
use super::entities::Placement;
use super::state::{Outcome, Params, Rejection, World};

/// Which part of the list a request asks for; `None` fields take their defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PageAsk {
    page: Option<usize>,
    page_size: Option<usize>,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl PageAsk {
    /// Reads the paging parameters of a body; other keys are ignored (they may be filters).
    pub(crate) fn from_params(params: &Params) -> Result<PageAsk, String> {
        Ok(PageAsk {
            page: count(params, "page", 1)?,
            page_size: count(params, "pageSize", 1)?,
            offset: count(params, "offset", 0)?,
            limit: count(params, "limit", 1)?,
        })
    }
}

/// An optional non-negative integer parameter of at least `min`.
fn count(params: &Params, key: &str, min: u64) -> Result<Option<usize>, String> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v >= min => Ok(Some(usize::try_from(v).unwrap_or(usize::MAX))),
            _ => Err(format!(
                "{key} must be an integer of at least {min}, got {n}"
            )),
        },
        Some(other) => Err(format!("{key} must be a number, got {other}")),
    }
}

/// The paging fields of one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paging {
    PageTotal {
        page: usize,
        page_size: usize,
        total: usize,
    },
    OffsetHasMore {
        offset: usize,
        limit: usize,
        has_more: bool,
    },
}

/// One answer of operation 6.
#[derive(Debug, Clone)]
pub(crate) struct ListPage {
    pub(crate) links: Vec<Placement>,
    pub(crate) paging: Option<Paging>,
}

impl World {
    /// Operation 6: the project's visible links, oldest first, the part `ask` names.
    pub(crate) fn links(&self, project_id: i64, ask: &PageAsk) -> Outcome<ListPage> {
        self.project(project_id)?;
        let visible = self.visible_links(project_id);
        let Some(size) = self.behaviour.list_page_size else {
            return Ok(ListPage {
                links: visible,
                paging: None,
            });
        };
        let total = visible.len();
        let (skip, take, paging) = match self.behaviour.list_paging {
            ListPaging::None => (0, size, None),
            ListPaging::PageTotal => {
                let page_size = ask.page_size.map_or(size, |s| s.min(size));
                let page = ask.page.unwrap_or(1);
                let skip = (page - 1).saturating_mul(page_size);
                let paging = Paging::PageTotal {
                    page,
                    page_size,
                    total,
                };
                (skip, page_size, Some(paging))
            }
            ListPaging::OffsetHasMore => {
                let limit = ask.limit.map_or(size, |l| l.min(size));
                let offset = ask.offset.unwrap_or(0);
                let has_more = offset.saturating_add(limit) < total;
                let paging = Paging::OffsetHasMore {
                    offset,
                    limit,
                    has_more,
                };
                (offset, limit, Some(paging))
            }
        };
        let links = visible.into_iter().skip(skip).take(take).collect();
        Ok(ListPage { links, paging })
    }

    /// Listed links whose purchase is at least the list lag old on the sandbox's clock.
    fn visible_links(&self, project_id: i64) -> Vec<Placement> {
        let now = self.now();
        let lag =
            chrono::Duration::from_std(self.behaviour.list_lag()).unwrap_or(chrono::Duration::MAX);
        self.placements
            .iter()
            .filter(|p| p.project_id == project_id && p.listed && now - p.at >= lag)
            .cloned()
            .collect()
    }

    /// A link the marketplace took back: `removed` or `rejected`, leaving operation 6's list
    /// (`listed: false`) or staying in it with its new status. It no longer counts as held,
    /// so buying its page again is not a duplicate. A link cannot become active again.
    pub(crate) fn set_link_status(
        &mut self,
        link_id: i64,
        status: LinkStatus,
        listed: bool,
    ) -> Outcome<Placement> {
        if status == LinkStatus::Active {
            return Err(Rejection::new("a link can only become removed or rejected"));
        }
        let now = self.now();
        let link = self
            .placements
            .iter_mut()
            .find(|p| p.id == link_id)
            .ok_or_else(|| Rejection::new(format!("link {link_id} does not exist")))?;
        let was_active = link.status == LinkStatus::Active;
        link.status = status;
        link.listed = listed;
        link.status_at = Some(now);
        let (key, link) = (
            (link.project_id, link.page.page_id, link.page.url_id),
            link.clone(),
        );
        if was_active && let Some(n) = self.held.get_mut(&key) {
            *n = n.saturating_sub(1);
        }
        Ok(link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Params {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn page_parameters_are_read_and_other_keys_ignored() {
        let ask = PageAsk::from_params(&params(json!({"page": 2, "pageSize": 5, "status": "x"})));
        assert_eq!(
            ask,
            Ok(PageAsk {
                page: Some(2),
                page_size: Some(5),
                ..PageAsk::default()
            })
        );
    }

    #[test]
    fn page_zero_and_text_offsets_are_malformed() {
        assert!(PageAsk::from_params(&params(json!({"page": 0}))).is_err());
        assert!(PageAsk::from_params(&params(json!({"offset": "2"}))).is_err());
        assert!(PageAsk::from_params(&params(json!({"limit": 1.5}))).is_err());
        assert_eq!(
            PageAsk::from_params(&params(json!({"offset": 0}))).map(|a| a.offset),
            Ok(Some(0))
        );
    }
}
