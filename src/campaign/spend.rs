//! Money and counts: the budget, buy rounds, search and filter price bounds, and the rule
//! that the campaign's monthly cap covers everything that may spend under it.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::checks::{
    MAX_DAILY_LINKS, MAX_LINK_TYPE_ID, MAX_MONTHLY, MAX_PER_RUN, MAX_TOTAL_LINKS, check_name,
    count, positive_money,
};
use super::diag::Problems;
use super::extra::Split;
use super::model::{
    Autobuyer, AutobuyerState, Budget, BuyRounds, DonorOrder, Filter, Pacing, SearchSettings,
};
use super::raw::{RawBudget, RawBuy, RawFilter, RawOrder, RawPacing};
use super::rules;
use super::span::{At, Pos};
use linkrunner_domain::money::Money;

const SEARCH_KEYS: &[&str] = &["price_rent_from", "price_rent_to"];
const FILTER_KEYS: &[&str] = &[
    "name",
    "price_article_from",
    "price_article_to",
    "price_rent_from",
    "price_rent_to",
];

/// The budget as written, with which parts could be used for further checks.
pub(super) struct CheckedBudget {
    pub(crate) value: Budget,
    /// `monthly` and `max_link_price` are valid, so sums against them mean something.
    money_ok: bool,
}

pub(super) fn budget(raw: &RawBudget, p: &mut Problems) -> CheckedBudget {
    let monthly_ok = positive_money(&raw.monthly, "monthly", MAX_MONTHLY, p);
    let mut price_ok = positive_money(&raw.max_link_price, "max_link_price", MAX_MONTHLY, p);
    if monthly_ok && price_ok && raw.max_link_price.value > raw.monthly.value {
        let (price, monthly) = (raw.max_link_price.value, raw.monthly.value);
        p.at(raw.max_link_price.pos, format!("`max_link_price` {price} is above `monthly` {monthly}: no link could ever be bought"));
        price_ok = false;
    }
    let daily_links = count(&raw.daily_links, "daily_links", MAX_DAILY_LINKS, p);
    let total_links = count(&raw.total_links, "total_links", MAX_TOTAL_LINKS, p);
    if daily_links > total_links {
        p.at(
            raw.daily_links.pos,
            format!("`daily_links` {daily_links} is above `total_links` {total_links}"),
        );
    }
    if let Some(above) = &raw.approve_above {
        positive_money(above, "approve_above", MAX_MONTHLY, p);
    }
    let value = Budget {
        monthly: raw.monthly.value,
        max_link_price: raw.max_link_price.value,
        daily_links,
        total_links,
        unknown_link_rent: raw.unknown_link_rent.as_ref().map(|m| m.value),
        pacing: match raw.pacing.as_ref().map(|p| p.value) {
            None | Some(RawPacing::Asap) => Pacing::Asap,
            Some(RawPacing::Even) => Pacing::Even,
        },
        approve_above: raw.approve_above.as_ref().map(|m| m.value),
    };
    CheckedBudget {
        value,
        money_ok: monthly_ok && price_ok,
    }
}

pub(super) fn buy(raw: &RawBuy, budget: &CheckedBudget, p: &mut Problems) -> BuyRounds {
    check_schedule(&raw.schedule, rules::schedule_reference_time(), p);
    let link_type_id = i64::from(count(
        &raw.link_type_id,
        "link_type_id",
        MAX_LINK_TYPE_ID,
        p,
    ));
    let per_run = count(&raw.per_run, "per_run", MAX_PER_RUN, p);
    if per_run > budget.value.daily_links {
        p.at(
            raw.per_run.pos,
            format!(
                "`per_run` {per_run} is above `budget.daily_links` {}",
                budget.value.daily_links
            ),
        );
    }
    let order = match raw.order.as_ref().map(|o| o.value) {
        None | Some(RawOrder::Cheapest) => DonorOrder::Cheapest,
        Some(RawOrder::Expensive) => DonorOrder::Expensive,
        Some(RawOrder::Random) => DonorOrder::Random,
    };
    let search = raw
        .search
        .as_ref()
        .map(|s| search(&s.value.0.split(SEARCH_KEYS, "`search`", p), budget, p));
    BuyRounds {
        schedule: raw.schedule.value.clone(),
        link_type_id,
        per_run,
        order,
        search: search.unwrap_or_default(),
        skip_autobuyer_urls: raw.skip_autobuyer_urls.as_ref().is_some_and(|s| s.value),
    }
}

fn check_schedule(s: &At<String>, from: DateTime<Utc>, p: &mut Problems) {
    if let Err(e) = rules::check_schedule(&s.value, from) {
        p.at(s.pos, e);
    }
}

fn search(s: &Split<'_>, budget: &CheckedBudget, p: &mut Problems) -> SearchSettings {
    let (from, to) = price_range(s, "price_rent_from", "price_rent_to", p);
    if let Some(to) = &to
        && budget.money_ok
        && to.value > budget.value.max_link_price
    {
        let cap = budget.value.max_link_price;
        p.at(to.pos, format!("`price_rent_to` {} is above `budget.max_link_price` {cap}: donors above the cap are never bought", to.value));
    }
    SearchSettings {
        price_rent_from: from.map(|m| m.value),
        price_rent_to: to.map(|m| m.value),
        extra: s.extra.clone(),
    }
}

/// Both bounds of a price range, reporting a lower bound above the upper one.
fn price_range(
    s: &Split<'_>,
    from: &str,
    to: &str,
    p: &mut Problems,
) -> (Option<At<Money>>, Option<At<Money>>) {
    let (lo, hi) = (s.money(from, p), s.money(to, p));
    if let (Some(lo), Some(hi)) = (&lo, &hi)
        && lo.value > hi.value
    {
        p.at(
            lo.pos,
            format!("`{from}` {} is above `{to}` {}", lo.value, hi.value),
        );
    }
    (lo, hi)
}

pub(super) fn filters(raw: &[At<RawFilter>], p: &mut Problems) -> Vec<Filter> {
    let mut names = HashSet::new();
    let mut out = Vec::with_capacity(raw.len());
    for f in raw {
        let s = f.value.0.split(FILTER_KEYS, "a filter", p);
        let name = filter_name(&s, f.pos, p);
        if let Some(n) = &name
            && !names.insert(n.value.clone())
        {
            p.at(
                n.pos,
                format!("filter name `{}` is used twice in this campaign", n.value),
            );
        }
        let (article_from, article_to) =
            price_range(&s, "price_article_from", "price_article_to", p);
        let (rent_from, rent_to) = price_range(&s, "price_rent_from", "price_rent_to", p);
        out.push(Filter {
            name: name.map(|n| n.value).unwrap_or_default(),
            price_article_from: article_from.map(|m| m.value),
            price_article_to: article_to.map(|m| m.value),
            price_rent_from: rent_from.map(|m| m.value),
            price_rent_to: rent_to.map(|m| m.value),
            extra: s.extra,
        });
    }
    out
}

fn filter_name(s: &Split<'_>, filter_pos: Pos, p: &mut Problems) -> Option<At<String>> {
    if s.pos("name").is_none() {
        p.at(filter_pos, "filter has no `name`");
        return None;
    }
    let name = s.string("name", p)?;
    check_name(&name, p);
    Some(name)
}

/// The monthly cap covers running autobuyers' monthly budgets plus one buy round bought
/// entirely at `max_link_price`; says by how much it does not.
pub(super) fn check_commitment(
    raw: &At<RawBudget>,
    b: &CheckedBudget,
    buy: Option<&BuyRounds>,
    autobuyers: &[Autobuyer],
    p: &mut Problems,
) {
    if !b.money_ok {
        return;
    }
    let running = autobuyers
        .iter()
        .filter(|a| a.state == AutobuyerState::Running);
    let auto: i64 = running
        .flat_map(|a| &a.urls)
        .map(|u| u.monthly_budget.kopecks())
        // Saturating: an absurd amount (reported on its own) must not wrap into a small one.
        .fold(0_i64, i64::saturating_add);
    let per_run = buy.map_or(0, |r| i64::from(r.per_run));
    let round = b.value.max_link_price.kopecks().saturating_mul(per_run);
    let need = Money::from_kopecks(auto.saturating_add(round));
    let cap = b.value.monthly;
    if need > cap {
        let over = Money::from_kopecks(need.kopecks() - cap.kopecks());
        p.at(raw.value.monthly.pos, format!(
            "`monthly` {cap} does not cover running autobuyers' monthly budgets {} plus one worst-case buy round ({per_run} × {} = {}): {need} in all, {over} over",
            Money::from_kopecks(auto), b.value.max_link_price, Money::from_kopecks(round)
        ));
    }
}
