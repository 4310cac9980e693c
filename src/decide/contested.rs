//! URLs on which someone besides this campaign's buy rounds may buy (issue 32, item 3), and
//! what that means for a round — pure; the engine (`effects/round.rs`) acts on it:
//!
//! - [`shared_urls`]: where anyone else may buy — a URL a running autobuyer covers, and every
//!   URL of an adopted project (the team buys there by hand in the marketplace's UI);
//! - [`rereads_before_buying`]: whether a round's picks touch such a URL, so the link list is
//!   read again right before the purchase: the window in which someone else and the round can
//!   take one page (or one donor site) is that one call, not a whole search;
//! - [`still_free`]: what that fresh read leaves of the picks — no page held for its URL now,
//!   no donor site that now holds a link for its URL (the rule of `decide/choose.rs`, with the
//!   hosts the round's searches showed), no URL held back meanwhile;
//! - [`left_to_autobuyers`]: with `buy.skip_autobuyer_urls: true`, the URLs a running
//!   autobuyer covers, which buy rounds leave to it (no round buys there, so no page a lagging
//!   list did not yet show as the autobuyer's is bought again); `plan` says which;
//! - [`covered_by_autobuyers`]: the URLs buy rounds share with a running autobuyer (where
//!   `decide::lag` tells the list's lag);
//! - [`held_twice`], [`held_twice_recorded`]: a page the list (or the journal) shows held more
//!   than once for one URL, whoever bought the links — recorded once, alerted and shown so the
//!   team can withdraw one. The list shows no donor site, so a site linking twice to one URL is
//!   not told here; the round's rule above keeps linkrunner from making one.
//!
//! Tested below and, against the sandbox's hand purchases during a search, by
//! `tests/it/engine` `contested::*`.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::campaign::Campaign;
use linkrunner_domain::market::{LinkRecord, is_leaving};
use linkrunner_domain::records::HeldTwice;

use super::adoption::held_back;
use super::choose::{Pick, UrlSlot};
use super::recorded::Recorded;
use super::round::running_coverage;

/// The URL ids on which anyone besides this campaign's buy rounds may buy now: those a running
/// autobuyer covers, and every URL of a project the file (or the journal) adopted.
pub(crate) fn shared_urls(c: &Campaign, r: &Recorded) -> BTreeSet<i64> {
    let mut shared = running_coverage(r);
    if c.project_id.is_some() || r.ids.account.adoption.is_some() {
        shared.extend(r.ids.urls.values().copied());
    }
    shared
}

/// A URL a buy round leaves to an autobuyer (`buy.skip_autobuyer_urls`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct LeftToAutobuyer {
    pub(crate) url: String,
    /// The autobuyer that covers it (the first, by name, when several do).
    pub(crate) autobuyer: String,
}

impl LeftToAutobuyer {
    /// The `plan` line.
    pub(crate) fn describe(&self) -> String {
        format!(
            "buy rounds leave {} to autobuyer {} (buy.skip_autobuyer_urls)",
            self.url, self.autobuyer
        )
    }
}

/// With `buy.skip_autobuyer_urls: true`, the campaign's URLs that a running autobuyer covers —
/// as the file wants it running (so a round before its creation leaves them too), or as the
/// journal counts it running (until its stop is settled) — in the file's URL order. Empty
/// without the key.
pub(crate) fn left_to_autobuyers(c: &Campaign, r: &Recorded) -> Vec<LeftToAutobuyer> {
    if !c.buy.as_ref().is_some_and(|b| b.skip_autobuyer_urls) {
        return Vec::new();
    }
    covered_by_autobuyers(c, r)
}

/// The campaign's URLs that a running autobuyer covers (as the file wants it running, or as
/// the journal counts it running), each with its autobuyer, in the file's URL order.
pub(crate) fn covered_by_autobuyers(c: &Campaign, r: &Recorded) -> Vec<LeftToAutobuyer> {
    let mut by_url: BTreeMap<&str, &str> = BTreeMap::new();
    let wanted = c
        .autobuyers
        .iter()
        .filter(|a| a.state == crate::campaign::AutobuyerState::Running);
    for a in wanted {
        for u in &a.urls {
            by_url.entry(u.url.as_str()).or_insert(a.name.as_str());
        }
    }
    let url_of: BTreeMap<i64, &str> = r.ids.urls.iter().map(|(u, id)| (*id, u.as_str())).collect();
    let running = r.ids.autobuyers.iter().filter(|(_, a)| a.running);
    for (name, a) in running {
        let created = r.autobuyer_urls.get(name).into_iter().flatten();
        for id in created.chain(&a.covers) {
            if let Some(url) = url_of.get(id) {
                by_url.entry(url).or_insert(name.as_str());
            }
        }
    }
    c.urls
        .iter()
        .filter_map(|u| {
            Some(LeftToAutobuyer {
                url: u.url.clone(),
                autobuyer: by_url.get(u.url.as_str())?.to_string(),
            })
        })
        .collect()
}

/// Whether the link list is read again right before buying `picks`: some pick is for a URL on
/// which someone else may buy.
pub(crate) fn rereads_before_buying(c: &Campaign, r: &Recorded, picks: &[Pick]) -> bool {
    let shared = shared_urls(c, r);
    picks.iter().any(|p| shared.contains(&p.url_id))
}

/// The donor site of every page the round's searches showed one for, by page id.
pub(crate) fn hosts_shown(slots: &[UrlSlot]) -> BTreeMap<i64, String> {
    slots
        .iter()
        .flat_map(|s| &s.donors)
        .filter_map(|d| Some((d.page_id, d.host.clone()?)))
        .collect()
}

/// What a fresh read of the link list left of a round's picks, and what it dropped.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct StillFree {
    pub(crate) picks: Vec<Pick>,
    /// Picks whose page is now held (or reserved, or uncertain) for their URL.
    pub(crate) page_taken: u32,
    /// Picks whose donor site now holds a link for their URL.
    pub(crate) site_taken: u32,
    /// Picks whose URL is held back now (`decide::adoption::held_back`).
    pub(crate) held_back: u32,
}

impl StillFree {
    pub(crate) fn dropped(&self) -> u32 {
        self.page_taken + self.site_taken + self.held_back
    }
}

/// The picks a round still buys after reading the list again (`fresh`, the journal once that
/// read was recorded): a page taken for its URL meanwhile, a page on a donor site that now
/// holds a link for its URL (as far as `hosts` — the round's searches — show the sites), and a
/// URL now held back are dropped, never swapped for another donor.
pub(crate) fn still_free(
    picks: Vec<Pick>,
    fresh: &Recorded,
    campaign: &str,
    hosts: &BTreeMap<i64, String>,
) -> StillFree {
    let taken = fresh.taken_pages();
    let back: BTreeSet<i64> = held_back(fresh, campaign)
        .into_iter()
        .map(|b| b.url_id)
        .collect();
    let sites: HashSet<(&str, &str)> = taken
        .iter()
        .filter_map(|(url, page)| Some((url.as_str(), hosts.get(page)?.as_str())))
        .collect();
    let mut out = StillFree::default();
    for p in picks {
        if back.contains(&p.url_id) {
            out.held_back += 1;
        } else if taken.contains(&(p.url.clone(), p.donor.page_id)) {
            out.page_taken += 1;
        } else if p
            .donor
            .host
            .as_deref()
            .is_some_and(|h| sites.contains(&(p.url.as_str(), h)))
        {
            out.site_taken += 1;
        } else {
            out.picks.push(p);
        }
    }
    out
}

/// The pages one read of the link list shows held more than once for one URL, by URL and
/// page. Links with a leaving status are not counted; a link listed twice under one id (a
/// paged read that shifted) is one link; a link without an id counts as one of its own.
pub(crate) fn held_twice(links: &[LinkRecord]) -> Vec<HeldTwice> {
    let held = links
        .iter()
        .filter(|l| !is_leaving(l.status.as_deref()))
        .filter_map(|l| Some((l.url_id?, l.page_id?, l.link_id)));
    group(held)
}

/// The pages the journal holds more than once for one URL: our links and others' that still
/// count and are not leaving (`status` shows these).
pub(crate) fn held_twice_recorded(r: &Recorded) -> Vec<HeldTwice> {
    let ours = r
        .held
        .iter()
        .filter(|h| h.released.is_none() && h.leaving_since.is_none())
        .map(|h| (h.url_id, h.page_id, h.link_id));
    let theirs = r
        .foreign
        .iter()
        .filter(|f| f.released.is_none() && f.leaving_since.is_none())
        .filter_map(|f| Some((f.url_id?, f.page_id?, f.link_id)));
    group(ours.chain(theirs))
}

fn group(links: impl Iterator<Item = (i64, i64, Option<i64>)>) -> Vec<HeldTwice> {
    let mut by_page: BTreeMap<(i64, i64), (BTreeSet<i64>, u32)> = BTreeMap::new();
    for (url_id, page_id, link) in links {
        let (ids, unnamed) = by_page.entry((url_id, page_id)).or_default();
        match link {
            Some(id) => {
                ids.insert(id);
            }
            None => *unnamed += 1,
        }
    }
    by_page
        .into_iter()
        .filter_map(|((url_id, page_id), (ids, unnamed))| {
            let links = ids.len() as u32 + unnamed;
            (links > 1).then(|| HeldTwice {
                url_id,
                page_id,
                links,
                link_ids: ids.into_iter().collect(),
            })
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use chrono::Utc;
    use linkrunner_domain::market::{Donor, TechValues};
    use linkrunner_domain::money::Money;
    use linkrunner_domain::records::{
        Adoption, AutobuyerRecord, CampaignCaps, ForeignLink, HeldLink, SwitchState,
    };

    use super::*;

    const SHOES: &str = "https://acme.example/running-shoes";
    const TRAIL: &str = "https://acme.example/trail";

    fn campaign(adopted: bool) -> Campaign {
        let yaml = format!(
            "name: acme\ndomain: https://acme.example\nurls:\n  - url: {SHOES}\n    texts: [\"#a#a#/a#\"]\nbudget: {{monthly: 100, max_link_price: 10, daily_links: 1, total_links: 1}}\n"
        );
        let mut c =
            crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap();
        c.project_id = adopted.then_some(5000);
        c
    }

    pub(in crate::decide) fn recorded() -> Recorded {
        let caps = CampaignCaps {
            account: "default".into(),
            name: "acme".into(),
            monthly_cap: Money::from_rubles(1000),
            daily_links: 5,
            total_links: 50,
        };
        let mut r = Recorded::unrecorded_with(&caps, Vec::new());
        r.ids.urls.insert(SHOES.into(), 11);
        r.ids.urls.insert(TRAIL.into(), 12);
        r
    }

    fn tech() -> TechValues {
        TechValues {
            search_id: 1.into(),
            force_seo_wait: 0.into(),
            mos_sites: "m".into(),
        }
    }

    fn pick(url: &str, url_id: i64, page_id: i64, host: &str) -> Pick {
        Pick {
            url: url.into(),
            url_id,
            text: "#a#shoes#/a#".into(),
            text_id: 1,
            donor: Donor {
                page_id,
                price: Money::from_rubles(50),
                tech: tech(),
                host: Some(host.into()),
            },
        }
    }

    fn foreign(url_id: i64, page_id: i64) -> ForeignLink {
        ForeignLink {
            key: format!("link:{page_id}"),
            link_id: Some(page_id + 1),
            page_id: Some(page_id),
            url_id: Some(url_id),
            text_id: None,
            price: Some(Money::from_rubles(50)),
            status: None,
            autobuyer: None,
            counted: Money::from_rubles(50),
            price_estimated: false,
            first_seen_at: Utc::now(),
            last_seen_at: Utc::now(),
            leaving_since: None,
            released: None,
        }
    }

    #[test]
    fn a_created_project_without_running_autobuyers_buys_without_a_second_read() {
        let (c, r) = (campaign(false), recorded());

        assert!(shared_urls(&c, &r).is_empty());
        assert!(!rereads_before_buying(
            &c,
            &r,
            &[pick(SHOES, 11, 1, "a.example")]
        ));
    }

    #[test]
    fn every_url_of_an_adopted_project_is_read_again_before_buying() {
        let (c, r) = (campaign(true), recorded());

        assert_eq!(shared_urls(&c, &r), BTreeSet::from([11, 12]));
        assert!(rereads_before_buying(
            &c,
            &r,
            &[pick(TRAIL, 12, 1, "a.example")]
        ));
    }

    #[test]
    fn an_adoption_the_journal_recorded_counts_even_without_project_id_in_the_file() {
        let mut r = recorded();
        r.ids.account.adoption = Some(Adoption {
            project_id: 5000,
            recorded_at: Utc::now(),
            first_read_at: None,
            confirmed: None,
        });

        assert_eq!(shared_urls(&campaign(false), &r), BTreeSet::from([11, 12]));
    }

    #[test]
    fn only_the_urls_a_running_autobuyer_covers_are_shared_in_a_created_project() {
        let mut r = recorded();
        let ab = |running| AutobuyerRecord {
            running,
            adopted_at: Some(Utc::now()),
            covers: vec![12],
            ..Recorded::running_autobuyer_for_tests(77, "", Money::from_rubles(100))
        };
        r.ids.autobuyers.insert("auto".into(), ab(true));
        let c = campaign(false);

        assert_eq!(shared_urls(&c, &r), BTreeSet::from([12]));
        assert!(!rereads_before_buying(
            &c,
            &r,
            &[pick(SHOES, 11, 1, "a.example")]
        ));
        r.ids.autobuyers.insert("auto".into(), ab(false));
        assert!(shared_urls(&c, &r).is_empty(), "a stopped one buys nothing");
    }

    #[test]
    fn a_page_taken_meanwhile_is_dropped_not_replaced() {
        let mut fresh = recorded();
        fresh.foreign.push(foreign(11, 1));
        let picks = vec![
            pick(SHOES, 11, 1, "a.example"),
            pick(TRAIL, 12, 1, "a.example"),
        ];

        let out = still_free(picks, &fresh, "acme", &BTreeMap::new());

        assert_eq!(out.page_taken, 1);
        assert_eq!(
            out.picks.len(),
            1,
            "the same page stays free for another URL"
        );
        assert_eq!(out.picks[0].url_id, 12);
    }

    #[test]
    fn a_page_whose_donor_site_now_holds_a_link_for_the_url_is_dropped() {
        let mut fresh = recorded();
        fresh.foreign.push(foreign(11, 2));
        let hosts = BTreeMap::from([(2, "site.example".to_string())]);
        let picks = vec![
            pick(SHOES, 11, 1, "site.example"),
            pick(SHOES, 11, 3, "other.example"),
            pick(TRAIL, 12, 4, "site.example"),
        ];

        let out = still_free(picks, &fresh, "acme", &hosts);

        assert_eq!((out.site_taken, out.page_taken, out.dropped()), (1, 0, 1));
        let kept: Vec<i64> = out.picks.iter().map(|p| p.donor.page_id).collect();
        assert_eq!(
            kept,
            vec![3, 4],
            "another site, or the site for another URL"
        );
    }

    #[test]
    fn a_site_the_searches_did_not_show_is_judged_by_its_page_alone() {
        let mut fresh = recorded();
        fresh.foreign.push(foreign(11, 2));

        let out = still_free(
            vec![pick(SHOES, 11, 1, "site.example")],
            &fresh,
            "acme",
            &BTreeMap::new(),
        );

        assert_eq!(out.picks.len(), 1);
    }

    fn listed(link_id: Option<i64>, url_id: i64, page_id: i64, status: Option<&str>) -> LinkRecord {
        LinkRecord {
            link_id,
            page_id: Some(page_id),
            url_id: Some(url_id),
            text_id: None,
            price: None,
            status: status.map(str::to_string),
        }
    }

    #[test]
    fn a_page_listed_twice_for_one_url_is_held_twice_with_both_links() {
        let links = [
            listed(Some(2002), 11, 1, None),
            listed(Some(2001), 11, 1, Some("active")),
            listed(Some(2003), 12, 1, None),
            listed(Some(2004), 11, 2, None),
        ];

        assert_eq!(
            held_twice(&links),
            vec![HeldTwice {
                url_id: 11,
                page_id: 1,
                links: 2,
                link_ids: vec![2001, 2002],
            }]
        );
    }

    #[test]
    fn one_link_listed_twice_or_a_leaving_one_is_not_a_page_held_twice() {
        let links = [
            listed(Some(2001), 11, 1, None),
            listed(Some(2001), 11, 1, None),
            listed(Some(2002), 11, 1, Some("removed")),
        ];

        assert!(held_twice(&links).is_empty());
    }

    #[test]
    fn links_without_ids_each_count() {
        let links = [listed(None, 11, 1, None), listed(Some(7), 11, 1, None)];

        let twice = held_twice(&links);

        assert_eq!(twice.len(), 1);
        assert_eq!((twice[0].links, twice[0].link_ids.clone()), (2, vec![7]));
    }

    #[test]
    fn the_journal_shows_a_page_held_by_us_and_by_someone_else() {
        let mut r = recorded();
        r.foreign.push(foreign(11, 1));
        let mut released = foreign(11, 1);
        released.link_id = Some(99);
        released.released = Some((Utc::now(), "left the list".into()));
        r.foreign.push(released);
        r.held.push(held(5, 1, 11));

        let twice = held_twice_recorded(&r);

        assert_eq!(twice.len(), 1);
        assert_eq!(twice[0].link_ids, vec![2, 5], "the released link 99 aside");
    }

    /// Link `link_id` on page `page_id` for URL `url_id`, bought by a purchase of ours now.
    pub(in crate::decide) fn held(link_id: i64, page_id: i64, url_id: i64) -> HeldLink {
        HeldLink {
            intent_id: linkrunner_domain::intents::IntentId(link_id),
            link_id: Some(link_id),
            page_id,
            url_id,
            text_id: 1,
            price: Money::from_rubles(50),
            bought_at: Utc::now(),
            seen_in_list_at: None,
            listed_after_ms: None,
            status: None,
            leaving_since: None,
            released: None,
        }
    }

    /// acme with buy rounds on two URLs and autobuyer `auto` in `state` covering the trail.
    pub(in crate::decide) fn with_autobuyer(skip: bool, state: &str) -> Campaign {
        let yaml = format!(
            r##"name: acme
domain: https://acme.example
urls:
  - url: {SHOES}
    texts: ["#a#a#/a#"]
  - url: {TRAIL}
    texts: ["#a#b#/a#"]
budget: {{monthly: 3000, max_link_price: 100, daily_links: 5, total_links: 50}}
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: 2
  skip_autobuyer_urls: {skip}
filters:
  - {{name: cheap, price_rent_to: 80}}
autobuyers:
  - name: auto
    filter: cheap
    state: {state}
    urls:
      - {{url: {TRAIL}, monthly_budget: 500, total_links_limit: 5, daily_links_limit: 1}}
"##
        );
        crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap()
    }

    #[test]
    fn without_the_key_no_url_is_left_to_an_autobuyer() {
        assert!(left_to_autobuyers(&with_autobuyer(false, "running"), &recorded()).is_empty());
    }

    #[test]
    fn the_urls_a_running_autobuyer_covers_are_left_to_it_even_before_its_creation() {
        let left = left_to_autobuyers(&with_autobuyer(true, "running"), &recorded());

        assert_eq!(
            left,
            vec![LeftToAutobuyer {
                url: TRAIL.into(),
                autobuyer: "auto".into()
            }]
        );
        assert_eq!(
            left[0].describe(),
            format!("buy rounds leave {TRAIL} to autobuyer auto (buy.skip_autobuyer_urls)")
        );
    }

    #[test]
    fn a_stopped_autobuyer_leaves_its_urls_only_until_its_stop_is_settled() {
        let c = with_autobuyer(true, "stopped");
        let mut r = recorded();
        assert!(left_to_autobuyers(&c, &r).is_empty());
        let ab = AutobuyerRecord {
            switch_state: SwitchState::Stopped,
            stopped_at: Some(Utc::now()),
            ..Recorded::running_autobuyer_for_tests(77, "", Money::from_rubles(500))
        };
        r.ids.autobuyers.insert("auto".into(), ab);
        r.autobuyer_urls.insert("auto".into(), vec![12]);

        assert_eq!(left_to_autobuyers(&c, &r).len(), 1, "it may still buy");
        r.ids.autobuyers.get_mut("auto").unwrap().running = false;
        assert!(left_to_autobuyers(&c, &r).is_empty());
    }

    #[test]
    fn hosts_come_from_every_slot_of_the_round() {
        let donor = |page_id, host: Option<&str>| Donor {
            page_id,
            price: Money::from_rubles(1),
            tech: tech(),
            host: host.map(str::to_string),
        };
        let slot = |donors| UrlSlot {
            url: SHOES.into(),
            url_id: 11,
            texts: Vec::new(),
            donors,
        };
        let slots = [
            slot(vec![donor(1, Some("a.example")), donor(2, None)]),
            slot(vec![donor(3, Some("b.example"))]),
        ];

        let hosts = hosts_shown(&slots);

        assert_eq!(
            hosts,
            BTreeMap::from([(1, "a.example".into()), (3, "b.example".into())])
        );
    }
}
