//! The marketplace as the rest of linkrunner sees it: domain types, not wire structs.
//! Wire field names and JSON shapes stay private to `market/`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::money::Money;

/// What operation 1 answers: the project and its automatically created main page URL and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectIds {
    pub project_id: i64,
    pub url_id: i64,
    pub text_id: i64,
}

/// One promoted URL and its anchor texts (each holds exactly one `#a#…#/a#`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlTexts {
    pub url: String,
    pub texts: Vec<String>,
}

/// What operation 2 created for one URL: its id and the id of each text, keyed by the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedUrl {
    pub url: String,
    pub url_id: i64,
    pub texts: Vec<CreatedText>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedText {
    pub text: String,
    pub text_id: i64,
}

/// Parameters of a rent search (operation 3). Known fields typed; `extra` passes through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchParams {
    pub price_rent_from: Option<Money>,
    pub price_rent_to: Option<Money>,
    #[serde(default)]
    pub extra: Map<String, Value>,
}

/// A queued search (operation 3's answer). `meta_data` is kept byte-for-byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchJob {
    pub job_handle_id: String,
    pub meta_data: String,
}

/// One poll of a search result (operation 4).
#[derive(Debug, Clone, PartialEq)]
pub enum SearchPoll {
    /// Not finished yet, however the server chose to say so (status code, status field, empty list).
    Pending,
    /// Finished. Donors without a readable price are counted in `unpriced` and never offered.
    Ready { donors: Vec<Donor>, unpriced: usize },
    /// The marketplace answered "not found / not finished" (HTTP 404, or an error whose
    /// message says so). Not a rejection: while the job is younger than the search deadline
    /// it means "not ready yet"; `message` is the marketplace's (redacted, cut to 200 chars).
    NotFound { message: String },
}

/// The per-item technical values that go back unchanged to the purchase call.
/// Kept as raw JSON so they are passed back exactly as received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TechValues {
    pub search_id: Value,
    pub force_seo_wait: Value,
    pub mos_sites: Value,
}

impl TechValues {
    /// A canonical key: two donors may share one purchase call only if their keys are equal.
    pub fn group_key(&self) -> String {
        serde_json::to_string(&[&self.search_id, &self.force_seo_wait, &self.mos_sites])
            .unwrap_or_default()
    }
}

/// A donor page on which a rented link can be bought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Donor {
    pub page_id: i64,
    /// Monthly rent price. A donor without a readable price is never constructed.
    pub price: Money,
    pub tech: TechValues,
    /// The donor site (host, lower case, without `www.`) when the search result shows it: the
    /// API does not document such a field, so it is read from `host`, `domain`, `site` or the
    /// host of `url`/`pageUrl` when present. One link per site and URL (`decide::choose`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// One page to buy in a purchase call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageTarget {
    pub page_id: i64,
    pub url_id: i64,
    pub text_id: i64,
}

/// A purchase call (operation 5): pages that share one set of technical values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PurchaseOrder {
    pub link_type_id: i64,
    pub filter_id: Option<i64>,
    pub tech: TechValues,
    pub pages: Vec<PageTarget>,
}

/// One link of a project as listed by operation 6. Every field is optional because the
/// record's fields are not documented; matching uses what is present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkRecord {
    pub link_id: Option<i64>,
    pub page_id: Option<i64>,
    pub url_id: Option<i64>,
    pub text_id: Option<i64>,
    pub price: Option<Money>,
    pub status: Option<String>,
}

/// Statuses that say a link left the project (any case, `-`/`_`/space ignored).
const LEAVING: [&str; 10] = [
    "removed",
    "deleted",
    "rejected",
    "declined",
    "cancelled",
    "canceled",
    "expired",
    "refunded",
    "inactive",
    "archived",
];

/// Whether a link's status says it left the project.
pub fn is_leaving(status: Option<&str>) -> bool {
    let Some(s) = status else {
        return false;
    };
    let norm: String = s
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    LEAVING.contains(&norm.as_str())
}

/// The project's links as operation 6 showed them, and whether its answers left any unread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkList {
    pub links: Vec<LinkRecord>,
    pub completeness: ListCompleteness,
}

/// What the answers of operation 6 say about the links they did not show. This is the
/// client's half of "the list is shown to be complete": it never means more than the
/// marketplace said. The other half — every link the journal holds is in the list — is the
/// engine's to check; absence from a list proves nothing unless both hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ListCompleteness {
    /// The answer carried no paging field: nothing says there is more, nor that there is
    /// not (a server may cut its list silently).
    #[default]
    NoPagingFields,
    /// The answers carried paging fields, every part they announced was read (`pages`
    /// requests), each answered the part asked for, and a stated total equals the links read.
    AllPages { pages: u32 },
    /// The paging fields say (or may say) there are links that were not read, e.g. the
    /// server ignored the page parameter, named no way to ask for more, or the list changed
    /// while being read. `reason` says which.
    Partial { reason: String },
}

impl ListCompleteness {
    /// Nothing in the answers says links were left unread (`NoPagingFields` or `AllPages`).
    pub fn nothing_left_unread(&self) -> bool {
        !matches!(self, ListCompleteness::Partial { .. })
    }
}

/// A named search filter (operation 7). Known fields typed; `extra` passes through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FilterSpec {
    pub name: String,
    pub price_article_from: Option<Money>,
    pub price_article_to: Option<Money>,
    pub price_rent_from: Option<Money>,
    pub price_rent_to: Option<Money>,
    #[serde(default)]
    pub extra: Map<String, Value>,
}

/// An autobuyer to create (operation 8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AutobuyerSpec {
    pub name: String,
    pub auto_approve: bool,
    pub search_filter_id: i64,
    pub urls: Vec<AutobuyerUrl>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AutobuyerUrl {
    pub url_id: i64,
    pub monthly_budget: Money,
    pub total_links_limit: i64,
    pub daily_links_limit: i64,
}
