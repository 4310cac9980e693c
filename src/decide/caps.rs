//! What a campaign's file asks in money terms: its caps as the journal keeps them, an
//! autobuyer's monthly budget and the fingerprint of its spec (pure).

use crate::campaign::{Autobuyer, Campaign};
use linkrunner_domain::money::Money;
use linkrunner_domain::records::CampaignCaps;

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
