//! What a campaign's file asks in money terms: its caps as the journal keeps them, an
//! autobuyer's monthly budget and the fingerprint of its spec; and what a campaign uses of
//! its caps ([`MoneyUse`], [`LinkUse`]) as `plan`, `status`, the API and the page show it
//! (pure).

use serde::Serialize;

use crate::campaign::{Autobuyer, Campaign};
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{BudgetSnapshot, CampaignCaps};

use super::keys;

/// A campaign's caps as the journal keeps them.
pub(crate) fn caps(c: &Campaign) -> CampaignCaps {
    CampaignCaps {
        name: c.name.clone(),
        account: c.account.clone(),
        monthly_cap: c.budget.monthly,
        daily_links: c.budget.daily_links,
        total_links: c.budget.total_links,
    }
}

/// A campaign's money against its monthly cap, or the sum of several campaigns'. One type
/// for every view that shows it (the campaign list, `status`, the summary and its accounts):
/// a view adds these three together or not at all. Flattened into the views' JSON, so its
/// keys are theirs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MoneyUse {
    /// Held links, counted foreign links and running autobuyers' budgets.
    pub(crate) monthly_commitment: Money,
    pub monthly_cap: Money,
    /// Reserved by calls whose outcome is not known yet.
    pub(crate) uncertain_money: Money,
}

impl MoneyUse {
    /// What the journal's budget row says.
    pub(crate) fn of(b: &BudgetSnapshot) -> MoneyUse {
        MoneyUse {
            monthly_commitment: b.committed,
            monthly_cap: b.cap,
            uncertain_money: b.uncertain,
        }
    }

    /// Adds `other`'s money to this sum. Saturating, though a sum of journal amounts (each
    /// at most `Money::MAX`) never nears i64's limit.
    pub(crate) fn add(&mut self, other: &MoneyUse) {
        let add = |a: Money, b: Money| Money::from_kopecks(a.kopecks().saturating_add(b.kopecks()));
        self.monthly_commitment = add(self.monthly_commitment, other.monthly_commitment);
        self.monthly_cap = add(self.monthly_cap, other.monthly_cap);
        self.uncertain_money = add(self.uncertain_money, other.uncertain_money);
    }
}

/// A campaign's links bought against its daily and total limits, as `plan`, `status`, the
/// API and the page show them (flattened into their JSON).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct LinkUse {
    /// Bought by buy rounds today (UTC), and the file's `daily_links`.
    pub(crate) links_today: u32,
    pub(crate) daily_links_cap: u32,
    /// Bought over the campaign's life, and the file's `total_links`.
    pub(crate) links_total: u32,
    pub(crate) total_links_cap: u32,
}

impl LinkUse {
    /// What the journal's budget row says.
    pub(crate) fn of(b: &BudgetSnapshot) -> LinkUse {
        LinkUse {
            links_today: b.links_today,
            daily_links_cap: b.daily_cap,
            links_total: b.links_total,
            total_links_cap: b.total_cap,
        }
    }

    /// `today 1/5, total 3/100`: how every text view says it.
    pub(crate) fn describe(&self) -> String {
        format!(
            "today {}/{}, total {}/{}",
            self.links_today, self.daily_links_cap, self.links_total, self.total_links_cap
        )
    }
}

/// The monthly budget an autobuyer may commit: the sum over its URLs.
pub(crate) fn autobuyer_budget(ab: &Autobuyer) -> Money {
    ab.urls.iter().fold(Money::ZERO, |acc, u| {
        acc.checked_add(u.monthly_budget).unwrap_or(Money::MAX)
    })
}

/// Fingerprint of everything that defines an autobuyer on the marketplace (not its desired state).
pub(crate) fn autobuyer_fingerprint(c: &Campaign, ab: &Autobuyer) -> String {
    let urls: Vec<_> = ab
        .urls
        .iter()
        .map(|u| {
            (
                &u.url,
                u.monthly_budget,
                u.total_links_limit,
                u.daily_links_limit,
            )
        })
        .collect();
    let filter = c.filters.iter().find(|f| f.name == ab.filter).map(|f| {
        keys::fingerprint(&serde_json::json!({
            "name": f.name, "paf": f.price_article_from, "pat": f.price_article_to,
            "prf": f.price_rent_from, "prt": f.price_rent_to, "extra": f.extra,
        }))
    });
    keys::fingerprint(
        &serde_json::json!({ "name": ab.name, "auto_approve": ab.auto_approve, "urls": urls, "filter": filter }),
    )
}
