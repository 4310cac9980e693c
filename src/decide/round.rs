//! A buy round's rules: which donors may share one purchase call, what a search asks for,
//! how long to wait before polling a pending search again, how much of a slot a retry may
//! still buy, which URLs running autobuyers cover, the slots a round chooses among and the
//! intent (natural key and reservation) of each purchase. Pure: the engine
//! (`effects/round.rs`) and the daemon's round timer (`daemon/rounds.rs`) act on what these
//! say.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::campaign::Campaign;
use linkrunner_domain::intents::{IntentKind, NewIntent, Reservation};
use linkrunner_domain::market::{Donor, SearchParams};
use linkrunner_domain::records::RoundRetry;

use super::choose::{Pick, TextSlot, UrlSlot};
use super::keys;
use super::recorded::Recorded;

/// Picks grouped by their technical values: one purchase call may only carry donors whose
/// `searchId`, `forceSeoWait` and `mosSites` are all equal.
pub fn group_by_tech(picks: Vec<Pick>) -> Vec<Vec<Pick>> {
    let mut groups: BTreeMap<String, Vec<Pick>> = BTreeMap::new();
    for p in picks {
        groups.entry(p.donor.tech.group_key()).or_default().push(p);
    }
    groups.into_values().collect()
}

/// The search parameters: the campaign's, with the rent price capped at `max_link_price`
/// when the file does not say otherwise (no point finding donors we will never buy).
pub(crate) fn search_params(c: &Campaign) -> SearchParams {
    let s = c.buy.as_ref().map(|b| b.search.clone()).unwrap_or_default();
    SearchParams {
        price_rent_from: s.price_rent_from,
        price_rent_to: Some(
            s.price_rent_to
                .unwrap_or(c.budget.max_link_price)
                .min(c.budget.max_link_price),
        ),
        extra: s.extra,
    }
}

/// The wait after a "pending" answer: twice the last wait, but no longer than the job has
/// existed, within `[poll_initial, poll_max]`. A job found pending at 2 s is polled again at
/// 4 s rather than 6 s (the first reconciliation's last campaigns idled for those seconds,
/// issue 13), while a job first polled late (its campaign queued behind the rate limit) waits
/// no longer than it did: never later than doubling, never sooner than twice the job's age.
pub fn next_poll_wait(
    last: Duration,
    age: Duration,
    (initial, max): (Duration, Duration),
) -> Duration {
    (last * 2).min(age.max(initial)).min(max)
}

/// How long after its `attempt`-th try a deferred round is tried again: 30 s, doubling, at
/// most 15 min. The slot ends at the schedule's next occurrence; a round still deferred then
/// is superseded by that slot's round (which buys `per_run` once, not twice).
pub(crate) fn retry_delay(attempt: u32) -> chrono::Duration {
    let secs = 30i64.saturating_mul(1 << attempt.saturating_sub(1).min(5));
    chrono::Duration::seconds(secs.min(15 * 60))
}

/// The campaign as this try of the slot should buy it: earlier tries of the same slot bought
/// `retry.bought` links (an uncertain purchase counted as bought), so only the rest of
/// `per_run` is left. The whole slot never buys more than one round's worth.
pub(crate) fn left_of_slot(c: &Campaign, retry: Option<RoundRetry>) -> Campaign {
    let mut c = c.clone();
    if let (Some(buy), Some(r)) = (c.buy.as_mut(), retry) {
        buy.per_run = buy.per_run.saturating_sub(r.bought);
    }
    c
}

/// The URL ids an autobuyer that counts as running covers (created ones, from their
/// creation; adopted ones, from their file).
pub(crate) fn running_coverage(r: &Recorded) -> std::collections::BTreeSet<i64> {
    let running = |name: &str| r.ids.autobuyers.get(name).is_some_and(|a| a.running);
    let created = r
        .autobuyer_urls
        .iter()
        .filter(|(n, _)| running(n))
        .flat_map(|(_, u)| u.iter().copied());
    let adopted = r
        .ids
        .autobuyers
        .values()
        .filter(|a| a.running)
        .flat_map(|a| a.covers.iter().copied());
    created.chain(adopted).collect()
}

/// One purchase of a call to buy `p`: `call` names the call (the natural key of its first
/// purchase), so that the link list can tell purchases of one call from later ones.
pub(crate) fn purchase_intent(
    c: &Campaign,
    (project, call): (i64, &str),
    link_type_id: i64,
    p: &Pick,
    day: chrono::NaiveDate,
) -> NewIntent {
    let request = json!({
        "project_id": project, "url": p.url, "url_id": p.url_id, "text": p.text, "text_id": p.text_id,
        "page_id": p.donor.page_id, "price": p.donor.price, "tech": p.donor.tech, "link_type_id": link_type_id,
        "call": call,
    });
    NewIntent {
        campaign: c.name.clone(),
        kind: IntentKind::Purchase,
        natural_key: keys::purchase(&c.account, p.url_id, p.donor.page_id),
        fingerprint: keys::fingerprint(&request),
        request,
        reserve: Some(Reservation {
            amount: p.donor.price,
            links: 1,
            day,
        }),
    }
}

pub(crate) fn url_slot(
    r: &Recorded,
    url: &str,
    url_id: i64,
    texts: &[String],
    donors: Vec<Donor>,
) -> UrlSlot {
    let usage = r.text_usage();
    let texts = texts
        .iter()
        .filter_map(|t| {
            let text_id = *r.ids.texts.get(&(url.to_string(), t.clone()))?;
            Some(TextSlot {
                text: t.clone(),
                text_id,
                used: usage
                    .get(&(url.to_string(), t.clone()))
                    .copied()
                    .unwrap_or(0),
            })
        })
        .collect();
    UrlSlot {
        url: url.to_string(),
        url_id,
        texts,
        donors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::market::{Donor, TechValues};
    use linkrunner_domain::money::Money;

    fn pick(page: i64, search_id: i64) -> Pick {
        Pick {
            url: "u".into(),
            url_id: 1,
            text: "t".into(),
            text_id: 1,
            donor: Donor {
                page_id: page,
                price: Money::from_rubles(10),
                tech: TechValues {
                    search_id: json!(search_id),
                    force_seo_wait: json!(0),
                    mos_sites: json!("m"),
                },
                host: None,
            },
        }
    }

    #[test]
    fn donors_with_different_technical_values_never_share_a_purchase_call() {
        let groups = group_by_tech(vec![pick(1, 7), pick(2, 8), pick(3, 7)]);
        assert_eq!(groups.len(), 2);
        for g in &groups {
            assert!(g.iter().all(|p| p.donor.tech == g[0].donor.tech));
        }
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 3);
    }

    #[test]
    fn a_young_job_is_polled_again_at_twice_its_age_and_an_old_one_as_before() {
        // The engine's default bounds (`EngineSettings`): 2 s first, 30 s at most.
        let secs = Duration::from_secs;
        let b = (secs(2), secs(30));
        // Pending at 2 s: again at 4 s, then 8 s, 16 s.
        assert_eq!(next_poll_wait(secs(2), secs(2), b), secs(2));
        assert_eq!(next_poll_wait(secs(2), secs(4), b), secs(4));
        assert_eq!(next_poll_wait(secs(4), secs(8), b), secs(8));
        // First polled at 9 s (queued behind the limit): the doubled wait, not 9 s.
        assert_eq!(next_poll_wait(secs(2), secs(9), b), secs(4));
        // Never sooner than the first wait (a job resumed at once after a restart) …
        assert_eq!(next_poll_wait(secs(2), Duration::ZERO, b), secs(2));
        // … never later than the longest.
        assert_eq!(next_poll_wait(secs(20), secs(60), b), secs(30));
    }

    #[test]
    fn retries_back_off_from_30_seconds_to_at_most_15_minutes() {
        let secs: Vec<i64> = (1..=8).map(|a| retry_delay(a).num_seconds()).collect();
        assert_eq!(secs, vec![30, 60, 120, 240, 480, 900, 900, 900]);
        assert_eq!(retry_delay(u32::MAX).num_seconds(), 900);
    }

    #[test]
    fn a_retry_buys_only_what_is_left_of_the_slots_per_run() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/campaigns/acme-shoes.yaml");
        let loaded = crate::campaign::load_paths(&[path.into()]);
        let c: Campaign = loaded.campaigns[0].campaign.clone();
        let per_run = c.buy.as_ref().expect("it buys").per_run;
        assert!(per_run >= 2, "the example must buy at least two per run");
        let first = left_of_slot(&c, None);
        let second = left_of_slot(
            &c,
            Some(RoundRetry {
                attempt: 2,
                bought: 1,
            }),
        );
        let spent = left_of_slot(
            &c,
            Some(RoundRetry {
                attempt: 3,
                bought: per_run + 4,
            }),
        );
        assert_eq!(first.buy.unwrap().per_run, per_run);
        assert_eq!(second.buy.unwrap().per_run, per_run - 1);
        assert_eq!(spent.buy.unwrap().per_run, 0);
    }

    #[test]
    fn a_purchase_intent_is_keyed_by_the_url_id_and_page_whatever_the_campaign_and_spelling() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/campaigns/acme-shoes.yaml");
        let c = crate::campaign::load_paths(&[path.into()]).campaigns[0]
            .campaign
            .clone();
        let mut renamed = c.clone();
        renamed.name = "acme-boots".into();
        let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 28).unwrap();
        let before = purchase_intent(&c, (5000, "call"), 1, &pick(7, 1), day);
        let mut respelt = pick(7, 1);
        respelt.url = "u-respelt".into();
        let after = purchase_intent(&renamed, (5000, "call"), 1, &respelt, day);
        assert_eq!(before.natural_key, "purchase:url:1:page:7");
        assert_eq!(after.natural_key, before.natural_key);
        let mut other_url = pick(7, 1);
        other_url.url_id = 2;
        let other = purchase_intent(&c, (5000, "call"), 1, &other_url, day);
        assert_ne!(other.natural_key, before.natural_key, "one page per URL id");
        let mut elsewhere = c.clone();
        elsewhere.account = "client-b".into();
        let theirs = purchase_intent(&elsewhere, (5000, "call"), 1, &pick(7, 1), day);
        assert_eq!(
            theirs.natural_key, "purchase:account:client-b:url:1:page:7",
            "the same ids in another account are another purchase"
        );
    }
}
