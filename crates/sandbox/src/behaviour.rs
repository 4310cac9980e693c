//! Behaviours that make the sandbox show only part of the truth, as a real marketplace may:
//! a link list answered one page at a time (with or without paging fields), a list that
//! lags behind purchases, and autobuyers that really buy. Unlike [`super::Shape`], they can
//! change while the sandbox runs (`POST {prefix}/__sandbox/behaviour`), so a test can switch
//! them between two steps. Everything is deterministic: no behaviour draws random numbers.
//! Also projects of another account (`foreign_projects`): the credentials work, but every
//! path naming such a project answers 403, as a `project_id` copied from another account does.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How operation 6 says that there is more than one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListPaging {
    /// No paging field at all: the answer is the first page and nothing says there is more.
    /// Body parameters are accepted and ignored.
    #[default]
    None,
    /// `"page":P,"pageSize":S,"total":T` beside the items; the body `{"page":P}` (1-based,
    /// optionally `"pageSize"` up to the page size) asks for page P.
    PageTotal,
    /// `"offset":O,"limit":L,"hasMore":B` beside the items; the body `{"offset":O,"limit":L}`
    /// (limit up to the page size) asks for the links from O on.
    OffsetHasMore,
}

impl std::str::FromStr for ListPaging {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(ListPaging::None),
            "page_total" => Ok(ListPaging::PageTotal),
            "offset_has_more" => Ok(ListPaging::OffsetHasMore),
            _ => Err(format!(
                "`{s}` is not one of: none, page_total, offset_has_more"
            )),
        }
    }
}

/// The switchable behaviours. The default is today's whole, current, unpaged list and
/// autobuyers that buy only when told to (`POST {prefix}/__sandbox/autobuy`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Behaviour {
    /// Operation 6 answers at most this many links per request; `None`: all of them.
    pub list_page_size: Option<usize>,
    /// How a paged answer says so (only with `list_page_size`).
    pub list_paging: ListPaging,
    /// A bought link appears in operation 6 only this long after its purchase, measured on
    /// the sandbox's clock (`SandboxConfig::clock`).
    pub list_lag_ms: u64,
    /// Every this many milliseconds each running autobuyer buys up to one link by itself.
    /// `None` (or 0): autobuyers buy only through `POST {prefix}/__sandbox/autobuy`.
    pub autobuy_every_ms: Option<u64>,
    /// Autobuyers also buy pages the project already holds for the same URL (bought by a buy
    /// round or another autobuyer), as a careless marketplace would. Off by default: a real
    /// autobuyer searches the same inventory but skips donors where the URL already has a link.
    pub autobuy_buys_held: bool,
    /// Autobuyers buy past their URLs' monthly budget and daily and total links limits, as a
    /// marketplace fault would (the anomaly brake's test). Off by default; the filter's range,
    /// a page once per URL and the balance still hold.
    pub autobuy_ignores_limits: bool,
    /// Projects that belong to another account: every operation whose path or query names
    /// one (texts, purchase, link list, autobuyer creation) answers 403, while the same
    /// credentials work everywhere else. Empty by default.
    pub foreign_projects: BTreeSet<i64>,
    /// The team buys one link by hand in the marketplace's UI while linkrunner's search runs:
    /// when a search first answers ready, before linkrunner can buy from it, on a page of that
    /// result for the search's URL (see [`TeamBuy`]). `None` (the default, left out of the
    /// JSON): nobody buys by hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_buys_during_search: Option<TeamBuy>,
}

/// Which page of a search's result the team buys by hand (`team_buys_during_search`), with the
/// URL's first text, as a link the list shows like any other and the ledger shows without an
/// autobuyer. Only pages the project does not hold for that URL; nothing when none fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TeamBuy {
    /// The cheapest page of the result: the one a buy round in `cheapest` order takes first.
    Cheapest,
    /// Another page on the donor site of the cheapest one (with `pages_per_site` above 1): the
    /// round's first pick stays free as a page, but its site now holds a link for the URL.
    SameSiteAsCheapest,
}

/// Largest page size and lag accepted, so a typo cannot freeze the list for days.
const MAX_PAGE_SIZE: usize = 100_000;
const MAX_LAG_MS: u64 = 24 * 3600 * 1000;

impl Behaviour {
    /// Whether `project_id` belongs to another account (answered 403).
    pub(crate) fn is_foreign(&self, project_id: i64) -> bool {
        self.foreign_projects.contains(&project_id)
    }

    pub(crate) fn list_lag(&self) -> Duration {
        Duration::from_millis(self.list_lag_ms)
    }

    /// The autobuy period, when periodic buying is on.
    pub(crate) fn autobuy_every(&self) -> Option<Duration> {
        self.autobuy_every_ms
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
    }

    /// Rejects a zero or absurd page size and an absurd lag.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if let Some(n) = self.list_page_size
            && !(1..=MAX_PAGE_SIZE).contains(&n)
        {
            return Err(format!(
                "list_page_size must be between 1 and {MAX_PAGE_SIZE}, got {n}"
            ));
        }
        if self.list_lag_ms > MAX_LAG_MS {
            return Err(format!(
                "list_lag_ms must be at most {MAX_LAG_MS}, got {}",
                self.list_lag_ms
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_a_whole_current_list_and_no_periodic_buying() {
        let b = Behaviour::default();
        assert_eq!(b.list_page_size, None);
        assert_eq!(b.list_lag(), Duration::ZERO);
        assert_eq!(b.autobuy_every(), None);
        assert!(!b.autobuy_buys_held);
        assert!(!b.is_foreign(1));
    }

    #[test]
    fn a_page_size_of_zero_is_refused() {
        let b = Behaviour {
            list_page_size: Some(0),
            ..Behaviour::default()
        };
        assert!(b.validate().unwrap_err().contains("list_page_size"));
    }

    #[test]
    fn behaviour_json_with_an_unknown_key_is_refused() {
        let r: Result<Behaviour, _> = serde_json::from_str(r#"{"list_page_sise": 2}"#);
        assert!(r.is_err());
        let ok: Behaviour =
            serde_json::from_str(r#"{"list_page_size": 2, "list_paging": "page_total"}"#).unwrap();
        assert_eq!(ok.list_paging, ListPaging::PageTotal);
    }
}
