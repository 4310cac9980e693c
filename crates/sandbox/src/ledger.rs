//! The ledger: a serializable snapshot of everything the sandbox saw and did — purchases,
//! duplicates, money, created entities, autobuyer states and request counts by operation and
//! outcome. Tests assert on it; `GET {prefix}/__sandbox/ledger` serves it as JSON.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::autobuy::AutobuyerUrl;
use super::buy::Placement;
use super::listing::LinkStatus;
use super::ops::Op;
use super::state::World;
use crate::money::Money;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    pub purchases: Vec<Purchase>,
    /// Purchases of a page already held for the same project and URL.
    pub duplicate_purchases: u64,
    pub spend: Money,
    pub balance: Money,
    /// Operation name → outcome (`ok`, `rejected`, `fault`, `malformed`, `unauthorized`,
    /// `forbidden`, `rate_limited`, `not_found`, and `abandoned` for a request the client gave
    /// up on before it got past the injected latency) → count.
    pub requests: BTreeMap<String, BTreeMap<String, u64>>,
    pub projects: Vec<ProjectRecord>,
    pub urls: Vec<UrlRecord>,
    pub texts: Vec<TextRecord>,
    pub filters: Vec<FilterRecord>,
    pub autobuyers: Vec<AutobuyerRecord>,
    pub searches_started: u64,
    pub polls_served: u64,
    /// 429 answers sent.
    pub rate_limited: u64,
}

/// One bought link, by a purchase call or by an autobuyer, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purchase {
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
    pub(crate) fn ledger(&self) -> Ledger {
        let mut requests: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for ((op, outcome), n) in &self.requests {
            requests
                .entry(op.name().to_string())
                .or_default()
                .insert(outcome.to_string(), *n);
        }
        Ledger {
            purchases: self.purchases(),
            duplicate_purchases: self.duplicate_purchases,
            spend: self.spend,
            balance: self.balance,
            requests,
            projects: self
                .projects
                .values()
                .map(|p| ProjectRecord {
                    id: p.id,
                    domain: p.domain.clone(),
                })
                .collect(),
            urls: self
                .urls
                .values()
                .map(|u| UrlRecord {
                    id: u.id,
                    project_id: u.project_id,
                    url: u.url.clone(),
                })
                .collect(),
            texts: self
                .texts
                .values()
                .map(|t| TextRecord {
                    id: t.id,
                    url_id: t.url_id,
                    text: t.text.clone(),
                })
                .collect(),
            filters: self
                .filters
                .values()
                .map(|f| FilterRecord {
                    id: f.id,
                    name: f.name.clone(),
                    params: f.params.clone(),
                })
                .collect(),
            autobuyers: self.autobuyers.values().map(autobuyer_record).collect(),
            searches_started: self.searches_started,
            polls_served: self.polls_served,
            rate_limited: self.rate_limited,
        }
    }

    fn purchases(&self) -> Vec<Purchase> {
        self.placements.iter().map(Ledger::purchase_of).collect()
    }

    /// The ledger entries of the links with these ids, oldest first.
    pub(crate) fn purchases_by_id(&self, ids: &[i64]) -> Vec<Purchase> {
        let wanted: std::collections::HashSet<i64> = ids.iter().copied().collect();
        self.placements
            .iter()
            .filter(|p| wanted.contains(&p.id))
            .map(Ledger::purchase_of)
            .collect()
    }
}

impl Ledger {
    pub(crate) fn purchase_of(p: &Placement) -> Purchase {
        Purchase {
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
