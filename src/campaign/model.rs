//! The validated campaign: what the engine consumes. Every value here has passed
//! `validate`, so the engine can rely on the invariants documented on each type.

use std::path::PathBuf;

use serde::Serialize;

use super::diag::Diagnostic;
use linkrunner_domain::money::Money;

/// One campaign, checked for meaning. Invariants: `name` is `[a-z0-9][a-z0-9-]{0,62}`;
/// every URL is on `domain`; every text holds exactly one non-blank `#a#…#/a#`; every
/// autobuyer's filter and URLs resolve; running autobuyers' monthly budgets plus one
/// worst-case buy round fit `budget.monthly`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Campaign {
    pub name: String,
    /// `scheme://host[:port]`, lowercase, no trailing slash.
    pub domain: String,
    pub(crate) paused: bool,
    pub urls: Vec<PromotedUrl>,
    pub budget: Budget,
    pub buy: Option<BuyRounds>,
    pub(crate) filters: Vec<Filter>,
    pub autobuyers: Vec<Autobuyer>,
    // --- adoption (issue 24) ---
    /// The existing marketplace project this campaign adopts (`project_id`): linkrunner
    /// never creates a project for it. Invariant: `budget.unknown_link_rent` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<i64>,
    // --- renames (issue 32) ---
    /// The name this campaign had before (`renamed_from`): what the journal holds under it is
    /// handed to this name at the next pass, once. Invariant: a valid name, not `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) renamed_from: Option<String>,
    // --- accounts (issue 34) ---
    /// The marketplace account it spends in (`account`; `default` when the file names none).
    /// Invariant: a valid account id. Everything the journal holds for this campaign belongs to
    /// this account; the engine sends its calls through this account's client.
    #[serde(skip_serializing_if = "is_default_account")]
    pub account: String,
}

fn is_default_account(a: &str) -> bool {
    linkrunner_domain::account::is_default(a)
}

impl Campaign {
    /// What a held link counts when the link list shows no rent for it: the file's
    /// `unknown_link_rent` when it gives one, else `max_link_price` (a campaign that adopts
    /// nothing sees only autobuyers' links, all bought within that price).
    pub(crate) fn unknown_link_rent(&self) -> Money {
        self.budget
            .unknown_link_rent
            .unwrap_or(self.budget.max_link_price)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromotedUrl {
    /// Normalised by the `url` crate (lowercase host, `/` path when empty).
    pub url: String,
    pub texts: Vec<String>,
    // --- adoption (issue 24) ---
    /// Its id in the adopted project, when it exists there already (`url_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_id: Option<i64>,
    /// text → its id in the adopted project, for texts that exist there already (`text_id`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub text_ids: std::collections::BTreeMap<String, i64>,
}

/// Invariants: `0 < max_link_price <= monthly`, `1 <= daily_links <= total_links`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub monthly: Money,
    pub max_link_price: Money,
    pub daily_links: u32,
    pub total_links: u32,
    // --- adoption (issue 24) ---
    /// What a held link the list shows without a rent counts (required with `project_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_link_rent: Option<Money>,
    // --- guardrails (issue 33) ---
    /// The most that changes may add to the monthly commitment since the last approval
    /// without a person (`decide::approval`). Invariant: positive when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) approve_above: Option<Money>,
    // --- pacing (issue 33) ---
    /// How buy rounds spend what is left of `monthly` (`asap` is left out of the serialized
    /// campaign, so files without the key serialize as before).
    #[serde(skip_serializing_if = "Pacing::is_asap")]
    pub(crate) pacing: Pacing,
}

/// How buy rounds spend what is left of the cap over a month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// As soon as rounds find links within the caps.
    #[default]
    Asap,
    /// Each day at most its share: what is left over the days left in the month
    /// (`decide::spread`).
    Even,
}

impl Pacing {
    fn is_asap(&self) -> bool {
        *self == Pacing::Asap
    }
}

/// Invariants: `1 <= per_run <= budget.daily_links`, `schedule` parses with [`super::parse_schedule`]
/// and fires within a year.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuyRounds {
    /// Five-field cron, UTC, day-of-month OR day-of-week (standard cron semantics).
    pub schedule: String,
    pub(crate) link_type_id: i64,
    pub per_run: u32,
    pub order: DonorOrder,
    pub search: SearchSettings,
    /// Buy rounds leave the URLs a running autobuyer covers to it (`decide::contested::left_to_autobuyers`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) skip_autobuyer_urls: bool,
}

#[cfg(test)]
impl BuyRounds {
    /// Rounds at 09:00 UTC every day, of `per_run` links of type 1, cheapest first: the unit
    /// tests' schedule.
    pub(crate) fn daily_for_tests(per_run: u32) -> BuyRounds {
        BuyRounds {
            schedule: "0 9 * * *".into(),
            link_type_id: 1,
            per_run,
            order: DonorOrder::Cheapest,
            search: SearchSettings::default(),
            skip_autobuyer_urls: false,
        }
    }
}

/// Which donors a buy round takes first among those within `max_link_price`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DonorOrder {
    #[default]
    Cheapest,
    Expensive,
    Random,
}

/// Invariant: `price_rent_from <= price_rent_to <= budget.max_link_price` where given.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SearchSettings {
    pub(crate) price_rent_from: Option<Money>,
    pub price_rent_to: Option<Money>,
    /// Other search parameters, keys as written in the file, scalar or list-of-scalar values.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Filter {
    pub(crate) name: String,
    pub(crate) price_article_from: Option<Money>,
    pub(crate) price_article_to: Option<Money>,
    pub(crate) price_rent_from: Option<Money>,
    pub(crate) price_rent_to: Option<Money>,
    /// Other filter parameters, keys as written in the file.
    pub(crate) extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Autobuyer {
    pub(crate) name: String,
    /// The name of one of the campaign's [`Filter`]s.
    pub(crate) filter: String,
    pub(crate) auto_approve: bool,
    pub state: AutobuyerState,
    pub urls: Vec<AutobuyerUrl>,
    // --- adoption (issue 24) ---
    /// The id of an existing autobuyer this entry adopts (`id`); `None`: linkrunner creates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<i64>,
    // --- moves (issue 32) ---
    /// The campaign whose file declared it before (`moved_from`): judged at the pass
    /// (`decide::moves`). Invariant: a valid name, not the campaign's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) moved_from: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AutobuyerState {
    Running,
    Stopped,
}

/// Invariant: `url` is one of the campaign's promoted URLs (same normalised text);
/// `1 <= daily_links_limit <= total_links_limit`, `monthly_budget > 0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AutobuyerUrl {
    pub(crate) url: String,
    pub monthly_budget: Money,
    pub total_links_limit: u32,
    pub daily_links_limit: u32,
}

/// A campaign that loaded with no problem, where it came from and what its bytes were.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedCampaign {
    pub campaign: Campaign,
    pub path: PathBuf,
    /// SHA-256 of the file's bytes, lowercase hex: tells a changed file from a touched one.
    pub fingerprint: String,
    /// The commit checked out in the campaigns directory when it is a git work tree (read once
    /// per directory load, from `.git` directly).
    pub(crate) git_commit: Option<String>,
    /// Where the file names its `account` (the file itself when it names none): a campaign
    /// of an account the deployment does not serve is refused there.
    pub(crate) account_pos: super::span::Pos,
}

/// The outcome of loading: the good campaigns and every problem. A file with any problem
/// contributes no campaign; the others are unaffected.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    pub campaigns: Vec<LoadedCampaign>,
    pub problems: Vec<Diagnostic>,
    /// The files that exist but contributed no campaign: their campaigns are held as
    /// recorded, never taken as removed (see `invalid.rs`).
    pub(crate) invalid: super::loading::invalid::InvalidFiles,
}

impl LoadReport {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    /// Files that contributed no campaign because of a problem: a reloading daemon keeps
    /// what it had for these instead of treating their campaigns as removed.
    pub fn paths_with_problems(&self) -> std::collections::BTreeSet<&std::path::Path> {
        self.problems.iter().map(|d| d.path.as_path()).collect()
    }
}
