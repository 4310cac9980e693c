//! Applying a changed autobuyer spec by replacement (issue 24). The API has no update for
//! autobuyers, so a changed spec is applied as: stop the old one, settle its stop (its budget
//! leaves the commitment, the rent of its links stays), create a new one of the same name, start
//! it. Pure: `plan` and the pass compute the same replacement from the same record.
//!
//! - The new autobuyer's `total_links_limit` per URL is the file's limit less the links the
//!   old one(s) of that name may have bought there. The link list does not say who bought a
//!   link, so every link of another buyer on that URL counts unless it is attributed to a
//!   different autobuyer ([`bought_before`]): the new limit may be too low, never too high. A
//!   URL with nothing left is left out (the API does not say what a limit of 0 means).
//! - The creation key carries a replacement generation ([`creation_generation`]: the
//!   creations of that name the journal holds), so a spec changed back to an earlier one is
//!   created again, not taken for the creation already done.

use serde::Serialize;

use crate::campaign::Autobuyer;
use linkrunner_domain::market::AutobuyerSpec;
use linkrunner_domain::money::Money;

use super::recorded::Recorded;

/// One URL of a replacement: the file's limit and what the new autobuyer gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplacedUrl {
    pub(crate) url: String,
    pub(crate) monthly_budget: Money,
    pub(crate) daily_links_limit: u32,
    /// The file's `total_links_limit`.
    pub file_limit: u32,
    /// Links on this URL its predecessors may have bought (conservatively attributed).
    pub bought: u32,
    /// What the new autobuyer gets: `file_limit - bought` (0: the URL is left out).
    pub left: u32,
}

/// One side of a replacement as `plan` shows it (`-` old, `+` new).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AutobuyerSide {
    /// The marketplace's id (the new one has none yet).
    pub(crate) id: Option<i64>,
    pub(crate) monthly_budget: Money,
    /// The filter's name (or `#id` when the journal knows only its id).
    pub(crate) filter: String,
    pub(crate) auto_approve: bool,
    pub(crate) urls: Vec<SideUrl>,
}

/// One URL of an [`AutobuyerSide`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SideUrl {
    pub(crate) url: String,
    pub(crate) monthly_budget: Money,
    pub(crate) total_links_limit: u32,
    pub(crate) daily_links_limit: u32,
}

/// The autobuyer the replacement creates (the file's, with what is left of its limits) and
/// how each URL's limit was found.
pub(crate) fn replacement_spec(ab: &Autobuyer, r: &Recorded) -> (Autobuyer, Vec<ReplacedUrl>) {
    let urls: Vec<ReplacedUrl> = ab
        .urls
        .iter()
        .map(|u| {
            let bought = r
                .ids
                .urls
                .get(&u.url)
                .map_or(0, |id| bought_before(r, &ab.name, *id));
            ReplacedUrl {
                url: u.url.clone(),
                monthly_budget: u.monthly_budget,
                daily_links_limit: u.daily_links_limit,
                file_limit: u.total_links_limit,
                bought,
                left: u.total_links_limit.saturating_sub(bought),
            }
        })
        .collect();
    let mut sent = ab.clone();
    sent.urls = ab
        .urls
        .iter()
        .zip(&urls)
        .filter(|(_, r)| r.left > 0)
        .map(|(u, r)| {
            let mut u = u.clone();
            u.total_links_limit = r.left;
            u.daily_links_limit = u.daily_links_limit.min(r.left);
            u
        })
        .collect();
    (sent, urls)
}

/// Links on URL `url_id` that an earlier autobuyer named `name` may have bought: every link
/// no purchase of ours bought there (released ones too: they were bought), unless the list
/// sync attributed it to another autobuyer.
pub(crate) fn bought_before(r: &Recorded, name: &str, url_id: i64) -> u32 {
    let n = r
        .foreign
        .iter()
        .filter(|f| f.url_id == Some(url_id))
        .filter(|f| f.autobuyer.as_deref().is_none_or(|a| a == name))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The generation of the next creation of autobuyer `name`: how many creations of it the
/// journal holds (failed ones aside). 0 for the first, whose key has no generation.
pub(crate) fn creation_generation(r: &Recorded, name: &str) -> usize {
    r.autobuyer_creations.get(name).copied().unwrap_or(0)
}

/// The old side, from the spec its creation sent (as far as the journal kept it).
pub(crate) fn old_side(r: &Recorded, name: &str, id: i64, budget: Money) -> AutobuyerSide {
    let spec: Option<&AutobuyerSpec> = r.autobuyer_specs.get(name);
    let url_of = |url_id: i64| {
        r.ids
            .urls
            .iter()
            .find(|(_, id)| **id == url_id)
            .map_or_else(|| format!("url_id {url_id}"), |(u, _)| u.clone())
    };
    let filter = spec.map_or_else(String::new, |s| {
        r.ids
            .filters
            .iter()
            .find(|(_, id)| **id == s.search_filter_id)
            .map_or_else(|| format!("#{}", s.search_filter_id), |(n, _)| n.clone())
    });
    AutobuyerSide {
        id: Some(id),
        monthly_budget: budget,
        filter,
        auto_approve: spec.is_some_and(|s| s.auto_approve),
        urls: spec
            .map(|s| {
                s.urls
                    .iter()
                    .map(|u| {
                        let n = |v: i64| u32::try_from(v).unwrap_or(0);
                        SideUrl {
                            url: url_of(u.url_id),
                            monthly_budget: u.monthly_budget,
                            total_links_limit: n(u.total_links_limit),
                            daily_links_limit: n(u.daily_links_limit),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The new side: what the replacement creates.
pub(crate) fn new_side(sent: &Autobuyer, budget: Money) -> AutobuyerSide {
    AutobuyerSide {
        id: None,
        monthly_budget: budget,
        filter: sent.filter.clone(),
        auto_approve: sent.auto_approve,
        urls: sent
            .urls
            .iter()
            .map(|u| SideUrl {
                url: u.url.clone(),
                monthly_budget: u.monthly_budget,
                total_links_limit: u.total_links_limit,
                daily_links_limit: u.daily_links_limit,
            })
            .collect(),
    }
}

/// `- old` / `+ new` lines of a replacement, for the text and markdown plans.
pub(crate) fn diff_lines(
    old: &AutobuyerSide,
    new: &AutobuyerSide,
    urls: &[ReplacedUrl],
) -> Vec<String> {
    let mut out = vec![
        format!("- {}", side_head(old)),
        format!("+ {}", side_head(new)),
    ];
    for u in &old.urls {
        out.push(format!(
            "-   {}: {} RUB/month, total_links_limit {}, daily_links_limit {}",
            u.url, u.monthly_budget, u.total_links_limit, u.daily_links_limit
        ));
    }
    for u in urls {
        let head = format!("{}: {} RUB/month", u.url, u.monthly_budget);
        out.push(if u.left == 0 {
            format!(
                "+   {head}: left out, its total_links_limit {} is used up by {} link(s) bought before",
                u.file_limit, u.bought
            )
        } else {
            format!(
                "+   {head}, total_links_limit {} ({} in the file less {} bought before), daily_links_limit {}",
                u.left,
                u.file_limit,
                u.bought,
                u.daily_links_limit.min(u.left)
            )
        });
    }
    out
}

fn side_head(s: &AutobuyerSide) -> String {
    let id =
        s.id.map_or_else(|| "new".to_string(), |i| format!("id {i}"));
    let filter = if s.filter.is_empty() {
        String::new()
    } else {
        format!(", filter {}", s.filter)
    };
    format!(
        "{id}: budget {} RUB/month{filter}, auto_approve {}",
        s.monthly_budget, s.auto_approve
    )
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::campaign::{AutobuyerState, AutobuyerUrl};
    use linkrunner_domain::records::ForeignLink;

    const URL: &str = "https://acme.example/shoes";

    fn record(foreign: &[(i64, Option<&str>)]) -> Recorded {
        let mut r = Recorded::unrecorded_for_tests("acme");
        r.ids.urls.insert(URL.into(), 11);
        let t = Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap();
        r.foreign = foreign
            .iter()
            .enumerate()
            .map(|(i, (url_id, ab))| ForeignLink {
                key: format!("k{i}"),
                link_id: Some(i as i64),
                page_id: Some(100 + i as i64),
                url_id: Some(*url_id),
                text_id: None,
                price: Some(Money::from_rubles(10)),
                status: None,
                autobuyer: ab.map(str::to_string),
                counted: Money::ZERO,
                first_seen_at: t,
                last_seen_at: t,
                leaving_since: None,
                released: None,
                price_estimated: false,
            })
            .collect();
        r
    }

    fn autobuyer(total: u32, daily: u32) -> Autobuyer {
        Autobuyer {
            name: "auto".into(),
            filter: "cheap".into(),
            auto_approve: false,
            state: AutobuyerState::Running,
            urls: vec![AutobuyerUrl {
                url: URL.into(),
                monthly_budget: Money::from_rubles(300),
                total_links_limit: total,
                daily_links_limit: daily,
            }],
            id: None,
            moved_from: None,
        }
    }

    #[test]
    fn the_new_limit_is_the_files_less_every_link_the_old_one_may_have_bought() {
        // Two attributed to it, one unattributed (counted), one another autobuyer's (not),
        // one on another URL (not).
        let r = record(&[
            (11, Some("auto")),
            (11, Some("auto")),
            (11, None),
            (11, Some("other")),
            (12, Some("auto")),
        ]);

        let (sent, urls) = replacement_spec(&autobuyer(5, 4), &r);

        assert_eq!(urls[0].bought, 3);
        assert_eq!(
            (
                sent.urls[0].total_links_limit,
                sent.urls[0].daily_links_limit
            ),
            (2, 2)
        );
    }

    #[test]
    fn a_url_whose_limit_is_used_up_is_left_out() {
        let r = record(&[(11, Some("auto")), (11, Some("auto"))]);

        let (sent, urls) = replacement_spec(&autobuyer(2, 1), &r);

        assert!(sent.urls.is_empty());
        assert_eq!(urls[0].left, 0);
    }

    #[test]
    fn the_diff_shows_the_old_and_the_new_side() {
        let r = record(&[(11, Some("auto"))]);
        let (sent, urls) = replacement_spec(&autobuyer(5, 1), &r);
        let old = old_side(&r, "auto", 7, Money::from_rubles(200));
        let new = new_side(&sent, Money::from_rubles(300));

        let lines = diff_lines(&old, &new, &urls);

        assert!(
            lines[0].starts_with("- id 7: budget 200 RUB/month"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("+ new: budget 300 RUB/month"),
            "{lines:?}"
        );
        assert!(
            lines[2].contains("total_links_limit 4 (5 in the file less 1 bought before)"),
            "{lines:?}"
        );
    }
}
