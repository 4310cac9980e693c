//! Choosing donors for a buy round: pure logic, property-tested.
//!
//! The rules, in order: a donor is never above the campaign's `max_link_price`; a page is
//! never bought twice for the same URL (the store's unique natural key enforces it too); the
//! round buys at most `per_run` links and never more than the daily link limit, the total link
//! limit and the monthly headroom allow; picks go round-robin across URLs, and within a URL to
//! its least-used text, so anchors vary; cheapest first (ties by page id, so it is deterministic).
//! No second link from one donor site (host) to one URL, whoever holds the first: a donor
//! whose host is that of a page already held for the URL (ours or anyone's, as `taken` says)
//! or picked for it in this round is passed over. The API documents no host field in search
//! results nor in the link list, so a host is known only where a search item shows one
//! ([`Donor::host`]), and a held page's host only when this round's searches show that page;
//! a donor without a host is judged by its page alone.

use std::collections::{BTreeMap, HashSet};

use crate::campaign::DonorOrder;
use linkrunner_domain::market::Donor;
use linkrunner_domain::money::Money;

/// A promoted URL as the round sees it: its marketplace id and its texts with their ids and
/// how many links each text already has.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UrlSlot {
    pub(crate) url: String,
    pub(crate) url_id: i64,
    pub(crate) texts: Vec<TextSlot>,
    /// Candidate donors found by this URL's search.
    pub(crate) donors: Vec<Donor>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextSlot {
    pub(crate) text: String,
    pub(crate) text_id: i64,
    pub(crate) used: u32,
}

/// What the round may spend and buy. All limits are "what is left", already net of what is
/// held, reserved and uncertain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoundLimits {
    pub(crate) order: DonorOrder,
    /// Seeds the "random" order (e.g. from the round's time), so a round is reproducible.
    pub(crate) seed: u64,
    pub(crate) per_run: u32,
    pub(crate) max_price: Money,
    pub(crate) monthly_headroom: Money,
    pub(crate) daily_left: u32,
    pub(crate) total_left: u32,
}

impl RoundLimits {
    /// How many links this round may buy at most, before looking at prices.
    pub(crate) fn max_links(&self) -> u32 {
        self.per_run.min(self.daily_left).min(self.total_left)
    }

    /// The worst case this round can add to the monthly commitment.
    pub(crate) fn worst_case(&self) -> Money {
        let by_count = self
            .max_price
            .checked_mul(i64::from(self.max_links()))
            .unwrap_or(Money::MAX);
        by_count.min(self.monthly_headroom)
    }
}

/// One link to buy.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    pub url: String,
    pub url_id: i64,
    pub text: String,
    pub text_id: i64,
    pub donor: Donor,
}

/// Picks the donors for one round. `taken` holds `(url, page_id)` pairs already bought,
/// reserved or uncertain for this campaign.
pub(crate) fn choose(
    slots: &[UrlSlot],
    taken: &HashSet<(String, i64)>,
    limits: RoundLimits,
) -> Vec<Pick> {
    let mut queues: Vec<std::vec::IntoIter<Donor>> = slots
        .iter()
        .map(|s| eligible(s, taken, limits).into_iter())
        .collect();
    let mut hosts = held_hosts(slots, taken);
    let mut usage: Vec<BTreeMap<usize, u32>> = slots
        .iter()
        .map(|s| {
            s.texts
                .iter()
                .enumerate()
                .map(|(i, t)| (i, t.used))
                .collect()
        })
        .collect();
    let mut picks = Vec::new();
    let mut spent = Money::ZERO;
    let max = limits.max_links() as usize;
    let mut progressed = true;
    while picks.len() < max && progressed {
        progressed = false;
        for (i, slot) in slots.iter().enumerate() {
            if picks.len() >= max {
                break;
            }
            let Some(text_idx) = least_used(&usage[i]) else {
                continue;
            };
            let Some(donor) =
                next_affordable(&mut queues[i], spent, limits.monthly_headroom, &hosts[i])
            else {
                continue;
            };
            hosts[i].extend(donor.host.clone());
            spent = spent.checked_add(donor.price).unwrap_or(Money::MAX);
            *usage[i].entry(text_idx).or_default() += 1;
            let t = &slot.texts[text_idx];
            picks.push(Pick {
                url: slot.url.clone(),
                url_id: slot.url_id,
                text: t.text.clone(),
                text_id: t.text_id,
                donor,
            });
            progressed = true;
        }
    }
    picks
}

/// Donors of one URL that may be bought at all, in the campaign's order, each page once.
fn eligible(slot: &UrlSlot, taken: &HashSet<(String, i64)>, limits: RoundLimits) -> Vec<Donor> {
    let mut seen = HashSet::new();
    let mut out: Vec<Donor> = slot
        .donors
        .iter()
        .filter(|d| !d.price.is_negative() && d.price <= limits.max_price)
        .filter(|d| !taken.contains(&(slot.url.clone(), d.page_id)))
        .filter(|d| seen.insert(d.page_id))
        .cloned()
        .collect();
    match limits.order {
        DonorOrder::Cheapest => out.sort_by_key(|d| (d.price, d.page_id)),
        DonorOrder::Expensive => out.sort_by_key(|d| (std::cmp::Reverse(d.price), d.page_id)),
        DonorOrder::Random => out.sort_by_key(|d| (mix(limits.seed ^ d.page_id as u64), d.page_id)),
    }
    out
}

/// The next donor of the queue that still fits the headroom and whose site holds no link for
/// the URL yet; donors that do not fit are passed over (in "cheapest" order none after them
/// would fit either).
fn next_affordable(
    queue: &mut std::vec::IntoIter<Donor>,
    spent: Money,
    headroom: Money,
    hosts: &HashSet<String>,
) -> Option<Donor> {
    queue.find(|d| {
        let site_free = d.host.as_ref().is_none_or(|h| !hosts.contains(h));
        site_free
            && spent
                .checked_add(d.price)
                .is_some_and(|after| after <= headroom)
    })
}

/// For each slot, the hosts of the pages already held for its URL, as far as the searches
/// show them (a page's host, from any slot's donors).
fn held_hosts(slots: &[UrlSlot], taken: &HashSet<(String, i64)>) -> Vec<HashSet<String>> {
    let host_of: BTreeMap<i64, &String> = slots
        .iter()
        .flat_map(|s| &s.donors)
        .filter_map(|d| Some((d.page_id, d.host.as_ref()?)))
        .collect();
    slots
        .iter()
        .map(|s| {
            taken
                .iter()
                .filter(|(url, _)| *url == s.url)
                .filter_map(|(_, page)| host_of.get(page).map(|h| (*h).clone()))
                .collect()
        })
        .collect()
}

/// SplitMix64's finaliser: a cheap, well-spread hash for the seeded random order.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn least_used(usage: &BTreeMap<usize, u32>) -> Option<usize> {
    usage
        .iter()
        .min_by_key(|(i, used)| (**used, **i))
        .map(|(i, _)| *i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::market::TechValues;
    use proptest::prelude::*;
    use serde_json::json;

    fn donor(page_id: i64, rub: i64) -> Donor {
        Donor {
            page_id,
            price: Money::from_rubles(rub),
            tech: TechValues {
                search_id: json!(1),
                force_seo_wait: json!(0),
                mos_sites: json!("m"),
            },
            host: None,
        }
    }

    fn on_site(page_id: i64, rub: i64, host: &str) -> Donor {
        Donor {
            host: Some(host.into()),
            ..donor(page_id, rub)
        }
    }

    #[test]
    fn one_link_per_donor_site_and_url_whoever_holds_the_first() {
        // Pages 1 and 2 are on one site, 3 on another; page 9 (held by someone) shares a.example.
        let donors = vec![
            on_site(1, 10, "a.example"),
            on_site(2, 11, "a.example"),
            on_site(3, 12, "b.example"),
            on_site(4, 13, "c.example"),
        ];
        let s = slot("u", 1, donors.clone());
        let pages: Vec<i64> = choose(
            std::slice::from_ref(&s),
            &HashSet::new(),
            limits(5, 100, 1000),
        )
        .iter()
        .map(|p| p.donor.page_id)
        .collect();
        assert_eq!(pages, vec![1, 3, 4], "page 2 is on page 1's site");

        // Held by someone else: page 9, which this round's search shows on c.example.
        let mut shown = donors;
        shown.push(on_site(9, 5, "c.example"));
        let s = slot("u", 1, shown);
        let taken = HashSet::from([("u".to_string(), 9)]);
        let pages: Vec<i64> = choose(&[s], &taken, limits(5, 100, 1000))
            .iter()
            .map(|p| p.donor.page_id)
            .collect();
        assert_eq!(pages, vec![1, 3], "c.example holds a link for u already");
    }

    #[test]
    fn the_same_site_may_link_to_another_url() {
        let a = slot("u", 1, vec![on_site(1, 10, "a.example")]);
        let b = slot("v", 1, vec![on_site(2, 10, "a.example")]);
        let taken = HashSet::from([("u".to_string(), 7)]);
        assert_eq!(choose(&[a, b], &taken, limits(5, 100, 1000)).len(), 2);
    }

    fn slot(url: &str, texts: usize, donors: Vec<Donor>) -> UrlSlot {
        UrlSlot {
            url: url.into(),
            url_id: url.len() as i64,
            texts: (0..texts)
                .map(|i| TextSlot {
                    text: format!("t{i}"),
                    text_id: i as i64,
                    used: 0,
                })
                .collect(),
            donors,
        }
    }

    fn limits(per_run: u32, max_price: i64, headroom: i64) -> RoundLimits {
        RoundLimits {
            order: DonorOrder::Cheapest,
            seed: 0,
            per_run,
            max_price: Money::from_rubles(max_price),
            monthly_headroom: Money::from_rubles(headroom),
            daily_left: 100,
            total_left: 100,
        }
    }

    #[test]
    fn picks_the_cheapest_donors_under_the_max_price() {
        let s = slot(
            "u",
            1,
            vec![donor(1, 90), donor(2, 200), donor(3, 10), donor(4, 50)],
        );
        let picks = choose(&[s], &HashSet::new(), limits(2, 100, 1000));
        let pages: Vec<i64> = picks.iter().map(|p| p.donor.page_id).collect();
        assert_eq!(pages, vec![3, 4]);
    }

    #[test]
    fn never_picks_a_page_already_bought_for_that_url() {
        let s = slot("u", 1, vec![donor(1, 10), donor(2, 20)]);
        let taken: HashSet<_> = [("u".to_string(), 1)].into();
        let picks = choose(&[s], &taken, limits(5, 100, 1000));
        assert_eq!(
            picks.iter().map(|p| p.donor.page_id).collect::<Vec<_>>(),
            vec![2]
        );
    }

    #[test]
    fn spreads_links_across_urls_and_texts() {
        let a = slot("a", 2, (1..=5).map(|i| donor(i, 10)).collect());
        let b = slot("b", 1, (11..=15).map(|i| donor(i, 10)).collect());
        let picks = choose(&[a, b], &HashSet::new(), limits(4, 100, 1000));
        let urls: Vec<&str> = picks.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls, vec!["a", "b", "a", "b"]);
        let a_texts: Vec<&str> = picks
            .iter()
            .filter(|p| p.url == "a")
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(a_texts, vec!["t0", "t1"]);
    }

    #[test]
    fn the_expensive_order_takes_the_dearest_donors_first() {
        let s = slot(
            "u",
            1,
            vec![donor(1, 90), donor(2, 200), donor(3, 10), donor(4, 50)],
        );
        let mut l = limits(2, 100, 1000);
        l.order = DonorOrder::Expensive;
        let pages: Vec<i64> = choose(&[s], &HashSet::new(), l)
            .iter()
            .map(|p| p.donor.page_id)
            .collect();
        assert_eq!(pages, vec![1, 4]);
    }

    #[test]
    fn the_random_order_is_reproducible_for_one_seed() {
        let s = slot("u", 1, (1..=20).map(|i| donor(i, 10)).collect());
        let mut l = limits(5, 100, 1000);
        l.order = DonorOrder::Random;
        l.seed = 42;
        let a = choose(std::slice::from_ref(&s), &HashSet::new(), l);
        let b = choose(std::slice::from_ref(&s), &HashSet::new(), l);
        assert_eq!(a, b);
        let cheapest: Vec<i64> = (1..=5).collect();
        assert_ne!(
            a.iter().map(|p| p.donor.page_id).collect::<Vec<_>>(),
            cheapest
        );
    }

    #[test]
    fn stops_at_the_monthly_headroom() {
        let s = slot("u", 1, vec![donor(1, 60), donor(2, 60), donor(3, 60)]);
        let picks = choose(&[s], &HashSet::new(), limits(5, 100, 130));
        assert_eq!(picks.len(), 2);
    }

    #[test]
    fn the_daily_and_total_limits_bound_the_round() {
        let s = slot("u", 1, (1..=9).map(|i| donor(i, 1)).collect());
        let mut l = limits(5, 100, 1000);
        l.daily_left = 3;
        assert_eq!(
            choose(std::slice::from_ref(&s), &HashSet::new(), l).len(),
            3
        );
        l.total_left = 1;
        assert_eq!(choose(&[s], &HashSet::new(), l).len(), 1);
    }

    proptest! {
        #[test]
        fn a_round_never_breaks_a_limit(
            prices in proptest::collection::vec(0i64..500, 0..40),
            per_run in 0u32..12, max_price in 0i64..400, headroom in 0i64..2000,
            daily_left in 0u32..10, total_left in 0u32..10, taken_pages in proptest::collection::hash_set(0i64..40, 0..10),
            order in proptest::sample::select(vec![DonorOrder::Cheapest, DonorOrder::Expensive, DonorOrder::Random]),
            seed in proptest::num::u64::ANY,
        ) {
            let donors: Vec<Donor> = prices.iter().enumerate().map(|(i, p)| donor(i as i64 % 30, *p)).collect();
            let s = slot("u", 3, donors);
            let taken: HashSet<(String, i64)> = taken_pages.iter().map(|p| ("u".to_string(), *p)).collect();
            let l = RoundLimits { order, seed, per_run, max_price: Money::from_rubles(max_price), monthly_headroom: Money::from_rubles(headroom), daily_left, total_left };
            let picks = choose(&[s], &taken, l);
            prop_assert!(picks.len() as u32 <= l.max_links());
            let total: i64 = picks.iter().map(|p| p.donor.price.kopecks()).sum();
            prop_assert!(total <= l.monthly_headroom.kopecks());
            prop_assert!(Money::from_kopecks(total) <= l.worst_case());
            let mut pages = HashSet::new();
            for p in &picks {
                prop_assert!(p.donor.price <= l.max_price);
                prop_assert!(!taken.contains(&(p.url.clone(), p.donor.page_id)));
                prop_assert!(pages.insert(p.donor.page_id), "page bought twice in one round");
            }
        }
    }
}
