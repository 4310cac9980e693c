//! The ledger: a serializable snapshot of everything one account saw and did — purchases,
//! duplicates, money, created entities, autobuyer states and request counts by operation and
//! outcome. Tests assert on it; `GET {prefix}/__sandbox/ledger[?account=ID]` serves it as
//! JSON (the default account's without `account`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::autobuy::AutobuyerUrl;
use super::buy::Placement;
use super::listing::LinkStatus;
use super::ops::Op;
use super::state::{AccountIx, World};
use crate::money::Money;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    /// The account this is the ledger of (`"default"`: the one the config was built with).
    pub account: String,
    pub purchases: Vec<Purchase>,
    /// Purchases of a page already held for the same project and URL (of this account).
    pub duplicate_purchases: u64,
    pub spend: Money,
    pub balance: Money,
    /// Operation name → outcome (`ok`, `rejected`, `fault`, `malformed`, `unauthorized`,
    /// `forbidden`, `rate_limited`, `not_found`, and `abandoned` for a request the client gave
    /// up on before it got past the injected latency) → count. A request is its token's
    /// account's; one whose token is no account's is the default account's.
    pub requests: BTreeMap<String, BTreeMap<String, u64>>,
    pub projects: Vec<ProjectRecord>,
    pub urls: Vec<UrlRecord>,
    pub texts: Vec<TextRecord>,
    pub filters: Vec<FilterRecord>,
    pub autobuyers: Vec<AutobuyerRecord>,
    pub searches_started: u64,
    pub polls_served: u64,
    /// 429 answers sent to this account.
    pub rate_limited: u64,
}

/// One bought link, by a purchase call or by an autobuyer, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purchase {
    /// The account that paid: the project's.
    pub account: String,
    pub link_id: i64,
    pub project_id: i64,
    pub page_id: i64,
    pub url_id: i64,
    pub text_id: i64,
    /// Monthly rent.
    pub price: Money,
    pub at: DateTime<Utc>,
    /// The autobuyer that bought it; `null` for a purchase call (operation 5).
    pub autobuyer_id: Option<i64>,
    /// The project already held this page for this URL when it was bought.
    pub duplicate: bool,
    /// `active`, `removed` or `rejected`.
    pub status: LinkStatus,
    /// Whether operation 6 lists it (a removed or rejected link may stay listed).
    pub listed: bool,
    /// When it was removed or rejected.
    pub status_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectRecord {
    pub id: i64,
    pub domain: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlRecord {
    pub id: i64,
    pub project_id: i64,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextRecord {
    pub id: i64,
    pub url_id: i64,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterRecord {
    pub id: i64,
    pub name: String,
    /// The filter's parameters as sent.
    pub params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutobuyerState {
    Running,
    Stopped,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutobuyerRecord {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub is_auto_approve: bool,
    pub search_filter_id: i64,
    pub urls: Vec<AutobuyerUrl>,
    pub state: AutobuyerState,
}

impl Ledger {
    /// How many requests of `op` ended with `outcome`.
    pub fn requests_of(&self, op: Op, outcome: &str) -> u64 {
        self.requests
            .get(op.name())
            .and_then(|m| m.get(outcome))
            .copied()
            .unwrap_or(0)
    }

    pub fn purchases_of(&self, project_id: i64) -> Vec<&Purchase> {
        self.purchases
            .iter()
            .filter(|p| p.project_id == project_id)
            .collect()
    }

    /// Purchases made by purchase calls (not autobuyers) of a page the project already held
    /// for that URL, whoever held it: what "a buy round never buys a page the project already
    /// holds" forbids. Careless autobuyers' duplicates are not in it.
    pub fn duplicates_by_purchase_calls(&self, project_id: i64) -> Vec<&Purchase> {
        self.purchases
            .iter()
            .filter(|p| p.project_id == project_id && p.duplicate && p.autobuyer_id.is_none())
            .collect()
    }

    pub fn autobuyer(&self, id: i64) -> Option<&AutobuyerRecord> {
        self.autobuyers.iter().find(|a| a.id == id)
    }
}

impl World {
    /// The ledger of account `ix` (the default account's for an index that names none).
    pub(crate) fn ledger_of(&self, ix: AccountIx) -> Ledger {
        let ix = if ix < self.books.len() { ix } else { 0 };
        let book = &self.books[ix];
        let mut requests: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for ((op, outcome), n) in &book.requests {
            requests
                .entry(op.name().to_string())
                .or_default()
                .insert(outcome.to_string(), *n);
        }
        Ledger {
            account: book.id.clone(),
            purchases: self.purchases(ix),
            duplicate_purchases: book.duplicate_purchases,
            spend: book.spend,
            balance: book.balance,
            requests,
            projects: self
                .projects
                .values()
                .filter(|p| p.owner == ix)
                .map(|p| ProjectRecord {
                    id: p.id,
                    domain: p.domain.clone(),
                })
                .collect(),
            urls: self
                .urls
                .values()
                .filter(|u| u.owner == ix)
                .map(|u| UrlRecord {
                    id: u.id,
                    project_id: u.project_id,
                    url: u.url.clone(),
                })
                .collect(),
            texts: self
                .texts
                .values()
                .filter(|t| t.owner == ix)
                .map(|t| TextRecord {
                    id: t.id,
                    url_id: t.url_id,
                    text: t.text.clone(),
                })
                .collect(),
            filters: self
                .filters
                .values()
                .filter(|f| f.owner == ix)
                .map(|f| FilterRecord {
                    id: f.id,
                    name: f.name.clone(),
                    params: f.params.clone(),
                })
                .collect(),
            autobuyers: self
                .autobuyers
                .values()
                .filter(|a| a.owner == ix)
                .map(autobuyer_record)
                .collect(),
            searches_started: book.searches_started,
            polls_served: book.polls_served,
            rate_limited: book.rate_limited,
        }
    }

    fn purchases(&self, ix: AccountIx) -> Vec<Purchase> {
        self.placements
            .iter()
            .filter(|p| p.owner == ix)
            .map(|p| self.purchase_of(p))
            .collect()
    }

    /// The ledger entries of the links with these ids, oldest first.
    pub(crate) fn purchases_by_id(&self, ids: &[i64]) -> Vec<Purchase> {
        let wanted: std::collections::HashSet<i64> = ids.iter().copied().collect();
        self.placements
            .iter()
            .filter(|p| wanted.contains(&p.id))
            .map(|p| self.purchase_of(p))
            .collect()
    }

    /// A bought link as the ledger shows it.
    pub(crate) fn purchase_of(&self, p: &Placement) -> Purchase {
        Purchase {
            account: self
                .books
                .get(p.owner)
                .map_or_else(String::new, |b| b.id.clone()),
            link_id: p.id,
            project_id: p.project_id,
            page_id: p.page.page_id,
            url_id: p.page.url_id,
            text_id: p.page.text_id,
            price: p.price,
            at: p.at,
            autobuyer_id: p.autobuyer_id,
            duplicate: p.duplicate,
            status: p.status,
            listed: p.listed,
            status_at: p.status_at,
        }
    }
}

fn autobuyer_record(a: &super::autobuy::Autobuyer) -> AutobuyerRecord {
    AutobuyerRecord {
        id: a.id,
        project_id: a.project_id,
        name: a.spec.name.clone(),
        is_auto_approve: a.spec.is_auto_approve,
        search_filter_id: a.spec.filter_id,
        urls: a.spec.urls.clone(),
        state: if a.running {
            AutobuyerState::Running
        } else {
            AutobuyerState::Stopped
        },
    }
}
