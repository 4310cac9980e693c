//! The campaign file exactly as written: what YAML deserializes into, with a position on
//! every value, and what the JSON Schema is generated from (doc comments become its
//! descriptions). Nothing here is checked for meaning; `validate` turns it into [`super::Campaign`].

use schemars::JsonSchema;
use serde::Deserialize;

use super::extra::ExtraMap;
use super::span::At;
use linkrunner_domain::money::Money;

/// A linkrunner campaign: one per file in the campaigns directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "linkrunner campaign")]
pub(super) struct RawCampaign {
    /// Unique across all campaign files; lowercase letters, digits and `-`, at most 63. Used as a metrics label.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub(crate) name: At<String>,
    /// The promoted site: an absolute http(s) URL without a path, e.g. `https://acme.example`.
    #[schemars(regex(pattern = r"^https?://[^/?#\s]+/?$"))]
    pub(crate) domain: At<String>,
    /// A paused campaign spends nothing new; what it already holds is kept.
    #[serde(default)]
    pub(crate) paused: Option<At<bool>>,
    /// Promoted URLs on the domain, each with its anchor texts.
    #[schemars(length(min = 1, max = 1000))]
    pub(crate) urls: At<Vec<RawUrl>>,
    /// Spending limits of the campaign.
    pub(crate) budget: At<RawBudget>,
    /// Scheduled buy rounds: search for donors, then buy the cheapest within the limits.
    #[serde(default)]
    pub(crate) buy: Option<At<RawBuy>>,
    /// Named search filters, referenced by autobuyers.
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schemars(with = "Option<Vec<RawFilter>>", length(max = 100))]
    pub(crate) filters: Vec<At<RawFilter>>,
    /// Marketplace autobuyers: the marketplace buys by itself within per-URL limits.
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schemars(with = "Option<Vec<RawAutobuyer>>", length(max = 100))]
    pub(crate) autobuyers: Vec<At<RawAutobuyer>>,
    // --- adoption (issue 24) ---
    /// Adopt the marketplace project that already exists for this domain (its id, from the marketplace's web UI): no project is created, and what its link list shows is counted as held. Requires `budget.unknown_link_rent`. Changes to it wait for `linkrunner resolve adopt NAME`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) project_id: Option<At<i64>>,
    // --- renames (issue 32) ---
    /// The campaign's name before a rename: at its next pass, everything the journal holds under this name (project, URLs, texts, filters, autobuyers, links, reservations, uncertain purchases, money history) is handed to this campaign in one step, and nothing is created, stopped or bought again because of the rename. Honoured once (ignored when this name is already recorded); the file with the old name must be gone.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub(crate) renamed_from: Option<At<String>>,
    // --- accounts (issue 34) ---
    /// The marketplace account this campaign spends in: an `id` of the accounts file (`--account-file`). Not given: the default account, the one the command line's marketplace flags describe. Its project, URLs, autobuyers, links and money belong to that account; a campaign that holds a project cannot change its account.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub(crate) account: Option<At<String>>,
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
pub(super) struct RawUrl {
    /// Absolute http(s) URL on the campaign's domain.
    #[schemars(regex(pattern = r"^https?://"))]
    pub(crate) url: At<String>,
    /// Texts with exactly one anchor marked as `#a#anchor#/a#`; in an adopted project, `{text: ..., text_id: N}` for a text that already exists.
    #[schemars(length(min = 1, max = 100))]
    pub(crate) texts: At<Vec<At<RawText>>>,
    // --- adoption (issue 24) ---
    /// The id of this URL on the marketplace: in an adopted project (`project_id`), a URL that already exists there (the link list names URLs only by id); in any project, the id the journal holds for this URL under an earlier spelling, so a respelt URL keeps its links, purchases and taken pages (without it a new spelling is a new URL).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) url_id: Option<At<i64>>,
}

/// The campaign's limits. Amounts are rubles (integers or at most two decimals).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Budget")]
pub(super) struct RawBudget {
    /// Monthly commitment cap: the monthly price of every link held or in flight plus the monthly budget of every running autobuyer.
    pub(crate) monthly: At<Money>,
    /// The highest monthly rent paid for one link.
    pub(crate) max_link_price: At<Money>,
    /// At most this many links bought per day (UTC) by buy rounds.
    #[schemars(range(min = 1, max = 1000))]
    pub(crate) daily_links: At<i64>,
    /// At most this many links bought by buy rounds over the campaign's life.
    #[schemars(range(min = 1, max = 100000))]
    pub(crate) total_links: At<i64>,
    // --- adoption (issue 24) ---
    /// What a held link counts against `monthly` when the link list shows no rent for it (rubles). Required with `project_id`: links bought by hand or by an adopted autobuyer count at their own rent, or at this, never at a lower guess.
    #[serde(default)]
    pub(crate) unknown_link_rent: Option<At<Money>>,
    // --- guardrails (issue 33) ---
    /// The most that changes may add to the monthly commitment since the last approval without a person (rubles, cumulative): a raised `monthly` past it is spent only up to the approved amount plus this, until `linkrunner resolve approve NAME --reason ...`. The first time a campaign is seen with it, the cap already recorded (or, for a new campaign, `monthly`) is the approved baseline.
    #[serde(default)]
    pub(crate) approve_above: Option<At<Money>>,
    // --- pacing (issue 33) ---
    /// How buy rounds spend what is left of `monthly`: `asap` (default) as soon as rounds find links; `even`: each day at most what is left divided over the days left in the month (UTC), counting the rent of the links rounds bought that day. Autobuyers' budgets count when they start, either way.
    #[serde(default)]
    pub(crate) pacing: Option<At<RawPacing>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Pacing")]
pub(super) enum RawPacing {
    Asap,
    Even,
}

/// Buy rounds run by the daemon on a schedule.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "BuyRounds")]
pub(super) struct RawBuy {
    /// Standard five-field cron (minute hour day-of-month month day-of-week), in UTC.
    pub(crate) schedule: At<String>,
    /// The marketplace's link type for purchases.
    #[schemars(range(min = 1, max = 1000))]
    pub(crate) link_type_id: At<i64>,
    /// At most this many links bought per round.
    #[schemars(range(min = 1, max = 100))]
    pub(crate) per_run: At<i64>,
    /// Which donors a round buys first: `cheapest` (default), `expensive` or `random`.
    #[serde(default)]
    pub(crate) order: Option<At<RawOrder>>,
    /// Donor search parameters: `price_rent_from`, `price_rent_to` (rubles) and any other marketplace parameter, passed through as written.
    #[serde(default)]
    pub(crate) search: Option<At<RawSearch>>,
    /// `true`: buy rounds leave every URL a running autobuyer covers to the autobuyer and buy only for the others (no page bought by a round a moment after the autobuyer took it). Default `false`: rounds buy on every URL, reading the link list again right before each purchase where an autobuyer runs.
    #[serde(default)]
    pub(crate) skip_autobuyer_urls: Option<At<bool>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "DonorOrder")]
pub(super) enum RawOrder {
    Cheapest,
    Expensive,
    Random,
}

/// Search parameters: typed keys plus pass-through ones.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(super) struct RawSearch(pub(crate) ExtraMap);

/// A named search filter: `name`, price bounds, and any other marketplace parameter.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(super) struct RawFilter(pub(crate) ExtraMap);

/// A marketplace autobuyer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Autobuyer")]
pub(super) struct RawAutobuyer {
    /// Unique within the campaign; lowercase letters, digits and `-`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub(crate) name: At<String>,
    /// The name of one of this campaign's `filters`.
    pub(crate) filter: At<String>,
    /// Whether the marketplace approves the autobuyer's purchases by itself.
    #[serde(default)]
    pub(crate) auto_approve: Option<At<bool>>,
    /// `running` or `stopped`; a running autobuyer's monthly budgets count against `budget.monthly`.
    pub(crate) state: At<RawState>,
    /// Per-URL limits; each URL must be one of the campaign's `urls`.
    #[schemars(length(min = 1, max = 1000))]
    pub(crate) urls: At<Vec<At<RawAutobuyerUrl>>>,
    // --- adoption (issue 24) ---
    /// Adopt an autobuyer that already exists in the adopted project (its id, from the marketplace's web UI): it is stopped or started to match `state` and counted from the first pass; its spec here is taken as its declared budget (the API cannot read it back).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) id: Option<At<i64>>,
    // --- moves (issue 32) ---
    /// The campaign this autobuyer is moved from (it was declared in that campaign's file): the one the journal records there is kept, neither stopped by that campaign nor created again by this one. An autobuyer belongs to its project, so this is accepted only where this campaign holds the same project, that is together with `renamed_from` naming the same campaign; otherwise the pass refuses it naming both campaigns. Honoured once. Renaming an autobuyer within one file stays a replacement.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub(crate) moved_from: Option<At<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "AutobuyerState")]
pub(super) enum RawState {
    Running,
    Stopped,
}

/// One URL's limits in an autobuyer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "AutobuyerUrl")]
pub(super) struct RawAutobuyerUrl {
    /// One of the campaign's promoted URLs.
    pub(crate) url: At<String>,
    /// Monthly budget of this URL in rubles.
    pub(crate) monthly_budget: At<Money>,
    /// Limit on the total number of links for this URL.
    #[schemars(range(min = 1, max = 100000))]
    pub(crate) total_links_limit: At<i64>,
    /// Limit on links per day for this URL.
    #[schemars(range(min = 1, max = 1000))]
    pub(crate) daily_links_limit: At<i64>,
}

/// One anchor text: a plain string, or (in an adopted project) `{text, text_id}` for a text
/// that already exists there. Deserialized by hand so that a misspelt key gets "did you mean".
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawText {
    pub(crate) text: String,
    pub(crate) text_id: Option<i64>,
}

const TEXT_KEYS: &[&str] = &["text", "text_id"];

impl<'de> Deserialize<'de> for RawText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an anchor text, or a mapping with `text` and `text_id`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawText, E> {
                Ok(RawText {
                    text: v.to_string(),
                    text_id: None,
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<RawText, A::Error> {
                use serde::de::Error;
                let (mut text, mut text_id) = (None, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "text" if text.is_none() => text = Some(m.next_value::<String>()?),
                        "text_id" if text_id.is_none() => text_id = Some(m.next_value::<i64>()?),
                        "text" | "text_id" => {
                            return Err(A::Error::duplicate_field(
                                TEXT_KEYS[usize::from(k == "text_id")],
                            ));
                        }
                        other => return Err(A::Error::unknown_field(other, TEXT_KEYS)),
                    }
                }
                let text = text.ok_or_else(|| A::Error::missing_field("text"))?;
                Ok(RawText { text, text_id })
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for RawText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Text".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An anchor text with exactly one `#a#anchor#/a#`; or, for a text that already exists in the adopted project, `{text, text_id}`.",
            "anyOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "required": ["text"],
                    "additionalProperties": false,
                    "properties": {
                        "text": { "type": "string" },
                        "text_id": { "type": "integer", "minimum": 1 }
                    }
                }
            ]
        })
    }
}
