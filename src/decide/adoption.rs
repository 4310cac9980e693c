//! Accounts already in use (issue 24) — pure decisions, no I/O:
//!
//! - [`adoption_step`]: what the journal records of what a file adopts (the project, the URL
//!   and text ids it gives, autobuyers by id with what they count at: an [`Adopting`], the
//!   value the plan's `AdoptProject` carries and `effects/adopt.rs` writes), and whether the
//!   pass then stops. The "never re-pointed" rule has its home here: [`project_clash`] (a
//!   `project_id` that differs from the project the journal holds, created or adopted, or one
//!   removed after adoption), a `url_id` or an autobuyer `id` that differs from the one
//!   recorded under that URL or name. Its words are [`project_repointed`], [`url_repointed`]
//!   and [`autobuyer_repointed`], also what the engine says when the store's own guard (two
//!   daemons racing) finds the journal changed under the decision;
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

use super::caps::{autobuyer_budget, autobuyer_fingerprint};
use super::listing::missing_known;
use super::recorded::Recorded;
use crate::campaign::{Autobuyer, Campaign};
use linkrunner_domain::market::LinkRecord;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::OperatorWord;

/// Why the campaign's project cannot be what its file says, when it cannot.
pub(crate) fn project_clash(c: &Campaign, r: &Recorded) -> Option<String> {
    let recorded = r.ids.project.as_ref().map(|p| p.project_id);
    let adopted = r.ids.account.adoption.as_ref().map(|a| a.project_id);
    match (c.project_id, recorded, adopted) {
        (Some(want), Some(have), _) if want != have => Some(project_repointed(want, have)),
        (None, Some(have), Some(_)) => Some(format!(
            "`project_id: {have}` was removed, but this campaign adopted project {have}: put it back (without it \
             the file would no longer say what it holds); to stop using the project, set `paused: true`"
        )),
        _ => None,
    }
}

/// The refusal of a `project_id` (`want`) on a campaign that already ran on project `have`.
pub(crate) fn project_repointed(want: i64, have: i64) -> String {
    format!(
        "`project_id` is {want}, but this campaign already ran on project {have}: a campaign's project is \
         never re-pointed (its journal, caps and links belong to project {have}). Put `project_id: {have}` \
         back, or give project {want} a new campaign file under a new name (docs/adoption.md)"
    )
}

/// The refusal of `url_id`s that differ from the ids the journal holds for these URLs.
pub(crate) fn url_repointed(urls: &[String]) -> String {
    format!(
        "the journal holds another url id for {}: a URL's id is never re-pointed; correct `url_id` in the file",
        urls.join(", ")
    )
}

/// The refusal of an autobuyer `id` (`id`) under a name the journal records with `recorded`.
pub(crate) fn autobuyer_repointed(name: &str, recorded: i64, id: i64) -> String {
    format!(
        "autobuyer {name} is recorded with id {recorded}, but the file adopts id {id}: an autobuyer is \
         never re-pointed; give the adopted one a new name (the recorded one is then stopped)"
    )
}

/// What a file adopts, as the journal records it: the effect of the plan's `AdoptProject`
/// (`effects/adopt.rs`). Recording it again records nothing new: ids already recorded are
/// kept, an autobuyer already recorded under its name is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Adopting {
    pub(crate) project_id: i64,
    /// (URL, its `url_id`), in the file's order.
    pub(crate) urls: Vec<(String, i64)>,
    /// ((URL, text), its `text_id`).
    pub(crate) texts: Vec<((String, String), i64)>,
    pub(crate) autobuyers: Vec<AdoptedAutobuyer>,
}

/// An autobuyer the file adopts by `id`: counted as running at `monthly_budget` from the
/// moment it is recorded (the API cannot say whether it runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdoptedAutobuyer {
    pub name: String,
    pub id: i64,
    pub spec_fingerprint: String,
    pub monthly_budget: Money,
    /// The URL ids it covers, as the file names them.
    pub covers: Vec<i64>,
}

/// What a pass records of an adoption before it reads the link list and plans, and why it
/// stops after that, if it does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AdoptionStep {
    /// `None`: nothing to record (no `project_id`, or a project that would be re-pointed).
    pub(crate) record: Option<Adopting>,
    /// The re-pointing that stops the pass, once `record` is recorded.
    pub(crate) refused: Option<String>,
}

/// What the journal records of what `c` adopts, given what it recorded (`r`). A `project_id`
/// that would re-point the project records nothing. A `url_id` that differs from the
/// recorded one stops the pass after the project and the ids are recorded (the recorded id
/// is kept), before any autobuyer; an autobuyer `id` that differs from the one recorded
/// under its name (and from the id it was adopted under, which a replacement keeps) stops it
/// after the autobuyers before it. The journal's own guard (`store::campaigns::adoption`)
/// refuses the same when another process changed it since `r` was read.
pub(crate) fn adoption_step(c: &Campaign, r: &Recorded) -> AdoptionStep {
    if let Some(why) = project_clash(c, r) {
        return AdoptionStep {
            record: None,
            refused: Some(why),
        };
    }
    let Some(project_id) = c.project_id else {
        return AdoptionStep::default();
    };
    let mut record = Adopting {
        project_id,
        urls: adopted_urls(c),
        texts: adopted_texts(c),
        autobuyers: Vec::new(),
    };
    let differ: Vec<String> = record
        .urls
        .iter()
        .filter(|(url, id)| r.ids.urls.get(url).is_some_and(|have| have != id))
        .map(|(url, _)| url.clone())
        .collect();
    let refused = match differ.is_empty() {
        true => adopt_autobuyers(c, r, &mut record.autobuyers),
        false => Some(url_repointed(&differ)),
    };
    AdoptionStep {
        record: Some(record),
        refused,
    }
}

/// The autobuyers `c` adopts by id, in the file's order, up to the first whose `id` would
/// re-point the autobuyer recorded under its name: then why.
fn adopt_autobuyers(c: &Campaign, r: &Recorded, out: &mut Vec<AdoptedAutobuyer>) -> Option<String> {
    for ab in &c.autobuyers {
        let Some(id) = ab.id else { continue };
        if let Some(rec) = r.ids.autobuyers.get(&ab.name)
            && rec.id != id
            && rec.adopted_id != Some(id)
        {
            return Some(autobuyer_repointed(&ab.name, rec.id, id));
        }
        out.push(adopted_autobuyer(c, ab, id));
    }
    None
}

fn adopted_urls(c: &Campaign) -> Vec<(String, i64)> {
    c.urls
        .iter()
        .filter_map(|u| Some((u.url.clone(), u.url_id?)))
        .collect()
}

fn adopted_texts(c: &Campaign) -> Vec<((String, String), i64)> {
    c.urls
        .iter()
        .flat_map(|u| {
            u.text_ids
                .iter()
                .map(|(t, id)| ((u.url.clone(), t.clone()), *id))
        })
        .collect()
}

fn adopted_autobuyer(c: &Campaign, ab: &Autobuyer, id: i64) -> AdoptedAutobuyer {
    let covers = ab
        .urls
        .iter()
        .filter_map(|u| c.urls.iter().find(|x| x.url == u.url)?.url_id)
        .collect();
    AdoptedAutobuyer {
        name: ab.name.clone(),
        id,
        spec_fingerprint: autobuyer_fingerprint(c, ab),
        monthly_budget: autobuyer_budget(ab),
        covers,
    }
}

/// What an adopted project holds beyond linkrunner's own links, for `plan` and `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Found {
    pub(crate) project_id: Option<i64>,
    /// The link list has been read since the adoption (false before the first pass).
    read: bool,
    /// Links held by others (hand purchases, autobuyers) that still count.
    links: u32,
    /// Their monthly rent, as far as the list shows it or estimated.
    pub(crate) rent: Money,
    /// How many of them the list shows no rent for, and what they count at together.
    estimated_links: u32,
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
    url: String,
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
    use linkrunner_domain::records::{Adoption, AutobuyerRecord, CampaignCaps, OperatorWord};

    /// A journal that recorded nothing of campaign `name` but its caps (rubles a month, links
    /// a day, links in all) on the default account.
    fn unrecorded(name: &str, (monthly, daily, total): (i64, u32, u32)) -> Recorded {
        let caps = CampaignCaps {
            account: "default".into(),
            name: name.into(),
            monthly_cap: Money::from_rubles(monthly),
            daily_links: daily,
            total_links: total,
        };
        Recorded::unrecorded_with(&caps, Vec::new())
    }

    fn recorded() -> Recorded {
        let mut r = unrecorded("c", (1000, 5, 50));
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
            listed_after_ms: None,
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

    /// The example campaign `acme-shoes` adopting project 4711: its first URL by `url_id` 11
    /// with one text by id, its autobuyer by `id` 900.
    fn adopting_campaign() -> Campaign {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
        let mut c = crate::campaign::load_dir(&dir)
            .campaigns
            .into_iter()
            .map(|lc| lc.campaign)
            .find(|c| c.name == "acme-shoes")
            .expect("campaigns/acme-shoes.yaml");
        c.project_id = Some(4711);
        let text = c.urls[0].texts[0].clone();
        c.urls[0].url_id = Some(11);
        c.urls[0].text_ids.insert(text, 21);
        c.autobuyers[0].id = Some(900);
        c
    }

    /// A journal that recorded nothing of the campaign yet.
    fn fresh() -> Recorded {
        unrecorded("acme-shoes", (3000, 9, 60))
    }

    fn recorded_autobuyer(id: i64, adopted_id: Option<i64>) -> AutobuyerRecord {
        AutobuyerRecord {
            switch_state: linkrunner_domain::records::SwitchState::Unknown,
            adopted_at: adopted_id.map(|_| chrono::Utc::now()),
            adopted_id,
            ..Recorded::running_autobuyer_for_tests(id, "", Money::from_rubles(1000))
        }
    }

    #[test]
    fn a_file_that_names_no_project_adopts_nothing_and_refuses_nothing() {
        let mut c = adopting_campaign();
        c.project_id = None;
        let step = adoption_step(&c, &fresh());
        assert_eq!(step, AdoptionStep::default());
    }

    #[test]
    fn the_step_records_the_project_the_ids_and_the_autobuyers_the_file_adopts() {
        let c = adopting_campaign();
        let step = adoption_step(&c, &fresh());
        assert_eq!(step.refused, None);
        let a = step.record.expect("a project_id is recorded");
        assert_eq!(a.project_id, 4711);
        assert_eq!(a.urls, vec![(c.urls[0].url.clone(), 11)]);
        let text = c.urls[0].texts[0].clone();
        assert_eq!(a.texts, vec![((c.urls[0].url.clone(), text), 21)]);
        let ab = &a.autobuyers[..];
        assert_eq!(ab.len(), 1);
        assert_eq!((ab[0].name.as_str(), ab[0].id), ("acme-auto", 900));
        assert_eq!(ab[0].monthly_budget, Money::from_rubles(1000));
        assert_eq!(ab[0].covers, vec![11], "the URL ids it covers, by the file");
        assert_eq!(
            ab[0].spec_fingerprint,
            autobuyer_fingerprint(&c, &c.autobuyers[0])
        );
    }

    #[test]
    fn a_project_id_other_than_the_recorded_project_records_nothing_and_is_refused() {
        let c = adopting_campaign();
        let mut r = fresh();
        r.ids.project = Some(linkrunner_domain::market::ProjectIds {
            project_id: 4700,
            url_id: 1,
            text_id: 1,
        });
        let step = adoption_step(&c, &r);
        assert_eq!(step.record, None);
        let why = step.refused.expect("refused");
        assert_eq!(why, project_repointed(4711, 4700));
        assert!(why.contains("never re-pointed"), "{why}");
        r.ids.project.as_mut().unwrap().project_id = 4711;
        assert_eq!(adoption_step(&c, &r).refused, None, "the same project");
    }

    #[test]
    fn a_url_id_other_than_the_recorded_one_is_refused_after_the_ids_and_before_any_autobuyer() {
        let c = adopting_campaign();
        let mut r = fresh();
        r.ids.urls.insert(c.urls[0].url.clone(), 12);
        let step = adoption_step(&c, &r);
        assert_eq!(
            step.refused,
            Some(url_repointed(std::slice::from_ref(&c.urls[0].url)))
        );
        let a = step
            .record
            .expect("the project and the ids are still recorded");
        assert_eq!(a.urls.len(), 1);
        assert!(a.autobuyers.is_empty(), "{:?}", a.autobuyers);
        r.ids.urls.insert(c.urls[0].url.clone(), 11);
        assert_eq!(adoption_step(&c, &r).refused, None, "the same id");
    }

    #[test]
    fn an_autobuyer_id_other_than_the_recorded_one_is_refused_unless_it_was_adopted_under_it() {
        let c = adopting_campaign();
        let mut r = fresh();
        r.ids
            .autobuyers
            .insert("acme-auto".into(), recorded_autobuyer(901, None));
        let step = adoption_step(&c, &r);
        assert_eq!(
            step.refused,
            Some(autobuyer_repointed("acme-auto", 901, 900))
        );
        assert!(step.record.is_some_and(|a| a.autobuyers.is_empty()));
        // Replaced after its adoption: the new id is recorded, the file keeps the adopted one.
        r.ids
            .autobuyers
            .insert("acme-auto".into(), recorded_autobuyer(901, Some(900)));
        let step = adoption_step(&c, &r);
        assert_eq!(step.refused, None);
        assert_eq!(step.record.map(|a| a.autobuyers.len()), Some(1));
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
