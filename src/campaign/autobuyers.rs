//! Autobuyers: names, filter references, URL references and per-URL limits.

use std::collections::HashSet;

use super::checks::{
    MAX_DAILY_LINKS, MAX_MONTHLY, MAX_TOTAL_LINKS, check_name, count, positive_money,
};
use super::diag::Problems;
use super::keys;
use super::model::{Autobuyer, AutobuyerState, AutobuyerUrl, Filter, PromotedUrl};
use super::raw::{RawAutobuyer, RawAutobuyerUrl, RawState};
use super::span::At;

/// `urls` is `None` when the promoted URLs have problems of their own: references are then not checked.
pub(super) fn autobuyers(
    raw: &[At<RawAutobuyer>],
    urls: Option<&[PromotedUrl]>,
    filters: &[Filter],
    p: &mut Problems,
) -> Vec<Autobuyer> {
    let mut names = HashSet::new();
    raw.iter()
        .map(|a| {
            let a = &a.value;
            check_name(&a.name, p);
            if !names.insert(a.name.value.as_str()) {
                p.at(
                    a.name.pos,
                    format!(
                        "autobuyer name `{}` is used twice in this campaign",
                        a.name.value
                    ),
                );
            }
            check_filter_ref(&a.filter, filters, p);
            autobuyer(a, urls, p)
        })
        .collect()
}

fn autobuyer(a: &RawAutobuyer, urls: Option<&[PromotedUrl]>, p: &mut Problems) -> Autobuyer {
    if a.urls.value.is_empty() {
        p.at(
            a.urls.pos,
            "`urls` is empty; an autobuyer needs at least one URL",
        );
    }
    let mut seen = HashSet::new();
    let urls = a
        .urls
        .value
        .iter()
        .map(|u| {
            let url = resolve_url(&u.value.url, urls, p);
            if !seen.insert(url.clone()) {
                p.at(
                    u.value.url.pos,
                    format!(
                        "URL `{}` is listed twice in this autobuyer",
                        u.value.url.value
                    ),
                );
            }
            limits(&u.value, url, p)
        })
        .collect();
    Autobuyer {
        name: a.name.value.clone(),
        filter: a.filter.value.clone(),
        auto_approve: a.auto_approve.as_ref().is_some_and(|b| b.value),
        state: match a.state.value {
            RawState::Running => AutobuyerState::Running,
            RawState::Stopped => AutobuyerState::Stopped,
        },
        urls,
        id: a.id.as_ref().map(|i| i.value),
        moved_from: a.moved_from.as_ref().map(|m| m.value.clone()),
    }
}

fn check_filter_ref(f: &At<String>, filters: &[Filter], p: &mut Problems) {
    if filters.iter().any(|x| x.name == f.value) {
        return;
    }
    let names: Vec<&str> = filters
        .iter()
        .map(|x| x.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let hint = match near(&f.value, &names) {
        Some(n) => format!("; did you mean `{n}`?"),
        None if names.is_empty() => "; this campaign defines no `filters`".to_string(),
        None => format!("; defined: {}", names.join(", ")),
    };
    p.at(
        f.pos,
        format!(
            "filter `{}` is not defined in this campaign's `filters`{hint}",
            f.value
        ),
    );
}

fn near<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| {
        strsim::damerau_levenshtein(name, n) <= 2 || keys::normalized(n) == keys::normalized(name)
    })
}

/// The promoted URL an autobuyer URL refers to (compared after normalising).
fn resolve_url(u: &At<String>, urls: Option<&[PromotedUrl]>, p: &mut Problems) -> String {
    let normalized = url::Url::parse(&u.value)
        .map(|x| x.to_string())
        .unwrap_or_else(|_| u.value.clone());
    if let Some(urls) = urls
        && !urls.iter().any(|x| x.url == normalized)
    {
        p.at(
            u.pos,
            format!("URL `{}` is not one of this campaign's `urls`", u.value),
        );
    }
    normalized
}

fn limits(u: &RawAutobuyerUrl, url: String, p: &mut Problems) -> AutobuyerUrl {
    positive_money(&u.monthly_budget, "monthly_budget", MAX_MONTHLY, p);
    let total = count(
        &u.total_links_limit,
        "total_links_limit",
        MAX_TOTAL_LINKS,
        p,
    );
    let daily = count(
        &u.daily_links_limit,
        "daily_links_limit",
        MAX_DAILY_LINKS,
        p,
    );
    if daily > total {
        p.at(
            u.daily_links_limit.pos,
            format!("`daily_links_limit` {daily} is above `total_links_limit` {total}"),
        );
    }
    AutobuyerUrl {
        url,
        monthly_budget: u.monthly_budget.value,
        total_links_limit: total,
        daily_links_limit: daily,
    }
}
