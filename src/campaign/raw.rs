//! The campaign file exactly as written: what YAML deserializes into, with a position on
//! every value, and what the JSON Schema is generated from (doc comments become its
//! descriptions). Nothing here is checked for meaning; `validate` turns it into [`super::Campaign`].

use schemars::JsonSchema;
use serde::Deserialize;

use super::extra::ExtraMap;
use super::span::At;
use crate::money::Money;

/// A linkrunner campaign: one per file in the campaigns directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "linkrunner campaign")]
pub struct RawCampaign {
    /// Unique across all campaign files; lowercase letters, digits and `-`, at most 63. Used as a metrics label.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub name: At<String>,
    /// The promoted site: an absolute http(s) URL without a path, e.g. `https://acme.example`.
    #[schemars(regex(pattern = r"^https?://[^/?#\s]+/?$"))]
    pub domain: At<String>,
    /// A paused campaign spends nothing new; what it already holds is kept.
    #[serde(default)]
    pub paused: Option<At<bool>>,
    /// Promoted URLs on the domain, each with its anchor texts.
    #[schemars(length(min = 1, max = 1000))]
    pub urls: At<Vec<RawUrl>>,
    /// Spending limits of the campaign.
    pub budget: At<RawBudget>,
    /// Scheduled buy rounds: search for donors, then buy the cheapest within the limits.
    #[serde(default)]
    pub buy: Option<At<RawBuy>>,
    /// Named search filters, referenced by autobuyers.
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schemars(with = "Option<Vec<RawFilter>>", length(max = 100))]
    pub filters: Vec<At<RawFilter>>,
    /// Marketplace autobuyers: the marketplace buys by itself within per-URL limits.
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schemars(with = "Option<Vec<RawAutobuyer>>", length(max = 100))]
    pub autobuyers: Vec<At<RawAutobuyer>>,
}

/// An optional list written as `key: null` (or `key:` alone) reads as an empty list: every
/// optional section accepts `null`, in the parser as in the schema.
fn null_as_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// A promoted URL and its anchor texts.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PromotedUrl")]
pub struct RawUrl {
    /// Absolute http(s) URL on the campaign's domain.
    #[schemars(regex(pattern = r"^https?://"))]
    pub url: At<String>,
    /// Texts with exactly one anchor marked as `#a#anchor#/a#`.
    #[schemars(length(min = 1, max = 100))]
    pub texts: At<Vec<At<String>>>,
}

/// The campaign's limits. Amounts are rubles (integers or at most two decimals).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Budget")]
pub struct RawBudget {
    /// Monthly commitment cap: the monthly price of every link held or in flight plus the monthly budget of every running autobuyer.
    pub monthly: At<Money>,
    /// The highest monthly rent paid for one link.
    pub max_link_price: At<Money>,
    /// At most this many links bought per day (UTC) by buy rounds.
    #[schemars(range(min = 1, max = 1000))]
    pub daily_links: At<i64>,
    /// At most this many links bought by buy rounds over the campaign's life.
    #[schemars(range(min = 1, max = 100000))]
    pub total_links: At<i64>,
}

/// Buy rounds run by the daemon on a schedule.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "BuyRounds")]
pub struct RawBuy {
    /// Standard five-field cron (minute hour day-of-month month day-of-week), in UTC.
    pub schedule: At<String>,
    /// The marketplace's link type for purchases.
    #[schemars(range(min = 1, max = 1000))]
    pub link_type_id: At<i64>,
    /// At most this many links bought per round.
    #[schemars(range(min = 1, max = 100))]
    pub per_run: At<i64>,
    /// Which donors a round buys first: `cheapest` (default), `expensive` or `random`.
    #[serde(default)]
    pub order: Option<At<RawOrder>>,
    /// Donor search parameters: `price_rent_from`, `price_rent_to` (rubles) and any other marketplace parameter, passed through as written.
    #[serde(default)]
    pub search: Option<At<RawSearch>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "DonorOrder")]
pub enum RawOrder {
    Cheapest,
    Expensive,
    Random,
}

/// Search parameters: typed keys plus pass-through ones.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct RawSearch(pub ExtraMap);

/// A named search filter: `name`, price bounds, and any other marketplace parameter.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct RawFilter(pub ExtraMap);

/// A marketplace autobuyer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Autobuyer")]
pub struct RawAutobuyer {
    /// Unique within the campaign; lowercase letters, digits and `-`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub name: At<String>,
    /// The name of one of this campaign's `filters`.
    pub filter: At<String>,
    /// Whether the marketplace approves the autobuyer's purchases by itself.
    #[serde(default)]
    pub auto_approve: Option<At<bool>>,
    /// `running` or `stopped`; a running autobuyer's monthly budgets count against `budget.monthly`.
    pub state: At<RawState>,
    /// Per-URL limits; each URL must be one of the campaign's `urls`.
    #[schemars(length(min = 1, max = 1000))]
    pub urls: At<Vec<At<RawAutobuyerUrl>>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "AutobuyerState")]
pub enum RawState {
    Running,
    Stopped,
}

/// One URL's limits in an autobuyer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "AutobuyerUrl")]
pub struct RawAutobuyerUrl {
    /// One of the campaign's promoted URLs.
    pub url: At<String>,
    /// Monthly budget of this URL in rubles.
    pub monthly_budget: At<Money>,
    /// Limit on the total number of links for this URL.
    #[schemars(range(min = 1, max = 100000))]
    pub total_links_limit: At<i64>,
    /// Limit on links per day for this URL.
    #[schemars(range(min = 1, max = 1000))]
    pub daily_links_limit: At<i64>,
}
