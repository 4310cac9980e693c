//! Accounts already in use (issue 24) — pure decisions, no I/O:
//!
//! - [`project_clash`]: a campaign's project is never re-pointed: a `project_id` that differs
//!   from the project the journal holds (created or adopted), or one removed after adoption,
//!   is refused with what to do;
//! - [`found`]: what an adopted project holds, as `plan` and `status` show it (links held by
//!   others and their rent, estimated where the list shows none; URL ids no file names;
//!   drift: links added by hand since the adoption, links lost);
//! - [`held_back`]: the URLs a buy round must not buy for while the link list may be cut:
//!   those on which anything else buys or has bought. A page someone else holds is only known
//!   from the list, so while it may be incomplete, buying there could take a page twice.
//!   A list is shown complete by paging, an operator's word, or (a project linkrunner
//!   created, `--unpaged-link-list complete`) a read that proves absence (`effects::sync`).
//! - [`word_lapses`]: whether a read of the list lapses the operator's word that it is
//!   complete (`resolve list-complete --links N`): it shows fewer than N plus the links
//!   linkrunner bought since that the list could already show.
//!   Tested in this file and by `tests/it` `engine::adoption::*`.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::listing::missing_known;
use super::recorded::Recorded;
use crate::campaign::Campaign;
use linkrunner_domain::market::LinkRecord;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::OperatorWord;

/// Why the campaign's project cannot be what its file says, when it cannot.
pub(crate) fn project_clash(c: &Campaign, r: &Recorded) -> Option<String> {
    let recorded = r.ids.project.as_ref().map(|p| p.project_id);
    let adopted = r.ids.account.adoption.as_ref().map(|a| a.project_id);
    match (c.project_id, recorded, adopted) {
        (Some(want), Some(have), _) if want != have => Some(format!(
            "`project_id` is {want}, but this campaign already ran on project {have}: a campaign's project is \
             never re-pointed (its journal, caps and links belong to project {have}). Put `project_id: {have}` \
             back, or give project {want} a new campaign file under a new name (docs/adoption.md)"
        )),
        (None, Some(have), Some(_)) => Some(format!(
            "`project_id: {have}` was removed, but this campaign adopted project {have}: put it back (without it \
             the file would no longer say what it holds); to stop using the project, set `paused: true`"
        )),
        _ => None,
    }
}

/// What an adopted project holds beyond linkrunner's own links, for `plan` and `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Found {
    pub(crate) project_id: Option<i64>,
    /// The link list has been read since the adoption (false before the first pass).
    pub(crate) read: bool,
    /// Links held by others (hand purchases, autobuyers) that still count.
    pub(crate) links: u32,
    /// Their monthly rent, as far as the list shows it or estimated.
    pub(crate) rent: Money,
    /// How many of them the list shows no rent for, and what they count at together.
    pub(crate) estimated_links: u32,
    pub(crate) estimated_rent: Money,
    /// URL ids the list shows links on that no URL of the file names (they count anyway).
    pub(crate) unnamed_url_ids: Vec<i64>,
    /// Drift: links first seen after the adoption's first read not attributed to an
    /// autobuyer (bought by hand meanwhile, or by an autobuyer: in an adopted project none is
    /// attributed), and links released because they left the list.
    pub(crate) added_by_hand: u32,
    pub(crate) lost: u32,
}

/// What the journal knows the account holds beyond our own purchases.
pub(crate) fn found(r: &Recorded) -> Found {
    let adoption = r.ids.account.adoption.as_ref();
    let named: BTreeSet<i64> = r.ids.urls.values().copied().collect();
    let mut f = Found {
        project_id: adoption.map(|a| a.project_id),
        read: adoption.is_some_and(|a| a.first_read_at.is_some()),
        ..Found::default()
    };
    let mut unnamed = BTreeSet::new();
    for l in &r.foreign {
        if let Some((_, why)) = &l.released {
            f.lost += u32::from(why.contains("left") || why.contains("absent"));
            continue;
        }
        f.links += 1;
        let rent = l.price.unwrap_or_default();
        f.rent = f.rent.checked_add(rent).unwrap_or(Money::MAX);
        if l.price_estimated {
            f.estimated_links += 1;
            f.estimated_rent = f.estimated_rent.checked_add(rent).unwrap_or(Money::MAX);
        }
        if let Some(u) = l.url_id.filter(|u| !named.contains(u)) {
            unnamed.insert(u);
        }
        let after_first_read = adoption
            .and_then(|a| a.first_read_at)
            .is_some_and(|t| l.first_seen_at > t);
        f.added_by_hand += u32::from(after_first_read && l.autobuyer.is_none());
    }
    f.lost += r
        .held
        .iter()
        .filter_map(|h| h.released.as_ref())
        .filter(|(_, why)| why.contains("left") || why.contains("absent"))
        .count() as u32;
    f.unnamed_url_ids = unnamed.into_iter().collect();
    f
}

/// Drift, one line for `plan` (issue 24 (6)): where the marketplace disagrees with the
/// journal. Links leaving (absent from a complete read, or listed as removed) still count
/// until the settle grace has passed; links that left were released; links added outside
/// linkrunner since the adoption count at their rent. `None` when there is none.
pub(crate) fn drift(r: &Recorded) -> Option<String> {
    let f = found(r);
    let held = r
        .held
        .iter()
        .filter(|h| h.released.is_none())
        .map(|h| h.leaving_since);
    let foreign = r
        .foreign
        .iter()
        .filter(|l| l.released.is_none())
        .map(|l| l.leaving_since);
    let missing = held.chain(foreign).filter(Option::is_some).count();
    if missing == 0 && f.lost == 0 && f.added_by_hand == 0 {
        return None;
    }
    Some(format!(
        "drift: {missing} link(s) leaving (absent from a complete read of the link list, or listed as removed: \
         their rent stays counted until the settle grace has passed), {} link(s) left the list (rent \
         released), {} link(s) added outside linkrunner since the adoption (counted at their rent)",
        f.lost, f.added_by_hand
    ))
}

impl Found {
    /// One line for `plan`: "adopt project N: …".
    pub(crate) fn describe(&self, project_id: i64) -> String {
        if !self.read {
            return format!(
                "adopt project {project_id} (no project is created): its link list is read first; nothing \
                 is changed on it until `linkrunner resolve adopt` after you read the plan that shows what it holds"
            );
        }
        let mut s = format!(
            "adopt project {project_id} (no project is created): {} link(s) held by others, {} RUB/month",
            self.links, self.rent
        );
        if self.estimated_links > 0 {
            s.push_str(&format!(
                " ({} of it estimated: {} link(s) the list shows no rent for, at `unknown_link_rent`)",
                self.estimated_rent, self.estimated_links
            ));
        }
        if !self.unnamed_url_ids.is_empty() {
            let ids: Vec<String> = self
                .unnamed_url_ids
                .iter()
                .take(20)
                .map(i64::to_string)
                .collect();
            s.push_str(&format!(
                "; links on URL ids no file names (counted anyway): {}",
                ids.join(", ")
            ));
        }
        s
    }
}

/// A URL on which a buy round does not buy now, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldBack {
    pub(crate) url: String,
    pub(crate) url_id: i64,
    pub(crate) why: String,
}

/// The URLs a buy round must not buy for now: while the link list is not shown complete
/// (every page read, or an operator's word that has not lapsed), every URL on which anything
/// else buys or has bought — any URL of an adopted project (the team buys there by hand), a
/// URL an autobuyer covers, a URL the list showed a link of someone else's on.
pub(crate) fn held_back(r: &Recorded, campaign: &str) -> Vec<HeldBack> {
    let adopted = r.ids.account.adoption.is_some();
    // A project linkrunner created whose list was never read holds only what linkrunner's
    // own autobuyers may have bought: the round reads the list right before buying on their
    // URLs and judges that read (`effects::round`).
    let never_read = r.ids.account.last_read_links.is_none() && !adopted;
    if r.ids.account.list_shown_complete() || never_read {
        return Vec::new();
    }
    let mut others: BTreeMap<i64, &'static str> = BTreeMap::new();
    for l in r.foreign.iter().filter(|l| l.released.is_none()) {
        if let Some(u) = l.url_id {
            others.insert(
                u,
                "the list shows links bought outside this campaign's buy rounds",
            );
        }
    }
    let covers = r.autobuyer_urls.values().flatten();
    let adopted_covers = r.ids.autobuyers.values().flat_map(|a| &a.covers);
    for u in covers.chain(adopted_covers) {
        others.insert(*u, "an autobuyer buys on it");
    }
    r.ids
        .urls
        .iter()
        .filter_map(|(url, &url_id)| {
            let who = others
                .get(&url_id)
                .copied()
                .or(adopted.then_some("it is in an adopted project, where the team buys by hand"))?;
            Some(HeldBack {
                url: url.clone(),
                url_id,
                why: format!(
                    "buying stopped for {url}: {who}, and the link list is not shown complete (no paging fields, \
                     and it was seen cut or the project is adopted), so a page held there may not be shown; it \
                     resumes once the list is shown complete (paging configured, or `linkrunner resolve \
                     list-complete {campaign}`)"
                ),
            })
        })
        .collect()
}

/// Whether a read that lists `links` lapses `word`, the operator's `resolve list-complete
/// --links N` (N: the links they counted in the marketplace's UI). The read must show at
/// least N, plus every link linkrunner bought since the word that the list could already
/// show (bought more than `grace` before `now`, not released); and every link the journal
/// holds that the list could already show must be in it (one missing: the list is cut, or
/// the link left — either way the word no longer describes the list). A link bought within
/// the grace may not be listed yet (a list that lags behind purchases), so it counts against
/// neither: a lagging list does not lapse the word, a cut one does.
pub(crate) fn word_lapses(
    word: &OperatorWord,
    links: &[LinkRecord],
    r: &Recorded,
    now: DateTime<Utc>,
    grace: Duration,
) -> bool {
    let Some(seen) = word.links else {
        return false;
    };
    let since = r
        .held
        .iter()
        .filter(|h| h.released.is_none() && h.bought_at > word.at && h.bought_at <= now - grace)
        .count();
    let fewer = (links.len() as u64) < u64::from(seen) + since as u64;
    fewer || missing_known(links, r, Some(now - grace)) > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::records::{Adoption, CampaignCaps, OperatorWord};

    fn recorded() -> Recorded {
        let caps = CampaignCaps {
            name: "c".into(),
            monthly_cap: Money::from_rubles(1000),
            daily_links: 5,
            total_links: 50,
        };
        let mut r = Recorded::unrecorded_with(&caps, Vec::new());
        r.ids.urls.insert("https://a.example/x".into(), 11);
        r.ids.urls.insert("https://a.example/y".into(), 12);
        r
    }

    fn adopt(r: &mut Recorded) {
        r.ids.account.adoption = Some(Adoption {
            project_id: 4711,
            recorded_at: chrono::Utc::now(),
            first_read_at: None,
            confirmed: None,
        });
    }

    #[test]
    fn every_url_of_an_adopted_project_is_held_back_while_the_list_may_be_cut() {
        let mut r = recorded();
        adopt(&mut r);
        let back = held_back(&r, "c");
        assert_eq!(back.len(), 2);
        assert!(
            back[0].why.contains("resolve list-complete c"),
            "{}",
            back[0].why
        );
    }

    #[test]
    fn a_url_an_autobuyer_covers_is_held_back_and_the_others_are_not() {
        let mut r = recorded();
        r.ids.account.last_read_links = Some(5);
        r.autobuyer_urls.insert("ab".into(), vec![12]);
        let back = held_back(&r, "c");
        assert_eq!(back.iter().map(|b| b.url_id).collect::<Vec<_>>(), vec![12]);
    }

    #[test]
    fn before_the_first_read_the_plan_promises_a_read_not_a_count() {
        let mut r = recorded();
        assert!(
            found(&r)
                .describe(4711)
                .contains("its link list is read first")
        );
        adopt(&mut r);
        r.ids.account.adoption.as_mut().unwrap().first_read_at = Some(chrono::Utc::now());
        let text = found(&r).describe(4711);
        assert!(text.contains("0 link(s) held by others"), "{text}");
    }

    fn held_at(r: &mut Recorded, intent: i64, at: chrono::DateTime<chrono::Utc>) {
        r.held.push(linkrunner_domain::records::HeldLink {
            intent_id: linkrunner_domain::intents::IntentId(intent),
            link_id: None,
            page_id: intent,
            url_id: 11,
            text_id: 1,
            price: Money::from_rubles(50),
            bought_at: at,
            seen_in_list_at: None,
            status: None,
            leaving_since: None,
            released: None,
        });
    }

    /// `n` listed links: ours by page id (`ours`), the rest someone else's.
    fn listed(n: i64, ours: &[i64]) -> Vec<LinkRecord> {
        let mut out: Vec<LinkRecord> = ours
            .iter()
            .map(|p| LinkRecord {
                page_id: Some(*p),
                url_id: Some(11),
                ..LinkRecord::default()
            })
            .collect();
        for i in 0..n - ours.len() as i64 {
            out.push(LinkRecord {
                link_id: Some(900 + i),
                page_id: Some(500 + i),
                url_id: Some(12),
                ..LinkRecord::default()
            });
        }
        out
    }

    #[test]
    fn the_word_lapses_on_fewer_than_it_saw_plus_what_could_already_be_shown() {
        let t0 = chrono::Utc::now();
        let grace = chrono::Duration::seconds(60);
        let word = OperatorWord {
            by: "op".into(),
            at: t0,
            reason: "the UI shows 3".into(),
            links: Some(3),
        };
        let mut r = recorded();
        assert!(!word_lapses(&word, &listed(3, &[]), &r, t0, grace));
        assert!(
            word_lapses(&word, &listed(2, &[]), &r, t0, grace),
            "fewer than it saw"
        );
        // Two of ours bought since, 10 s ago: a lagging list may not show them yet.
        let now = t0 + chrono::Duration::seconds(30);
        held_at(&mut r, 1, now - chrono::Duration::seconds(10));
        held_at(&mut r, 2, now - chrono::Duration::seconds(10));
        assert!(
            !word_lapses(&word, &listed(3, &[]), &r, now, grace),
            "a lagging list"
        );
        // Past the grace the list could show them: a read without them is cut.
        let later = now + chrono::Duration::seconds(120);
        assert!(word_lapses(&word, &listed(4, &[1]), &r, later, grace));
        assert!(
            word_lapses(&word, &listed(5, &[1]), &r, later, grace),
            "as many as expected, but a link of ours it could show is missing"
        );
        assert!(!word_lapses(&word, &listed(5, &[1, 2]), &r, later, grace));
    }

    #[test]
    fn nothing_is_held_back_once_the_list_is_shown_complete() {
        let mut r = recorded();
        adopt(&mut r);
        r.ids.account.last_read_complete = true;
        assert!(held_back(&r, "c").is_empty());
        r.ids.account.last_read_complete = false;
        r.ids.account.vouch = Some(OperatorWord {
            by: "op".into(),
            at: chrono::Utc::now(),
            reason: "checked in the UI".into(),
            links: Some(3),
        });
        assert!(held_back(&r, "c").is_empty());
    }
}
