//! Judging one read of the project's link list (operation 6) — pure, no I/O; the engine
//! (`effects/sync.rs`) reads the list and records what this says.
//!
//! A list may be paged, filtered or late, so what it shows proves a link exists, and what it
//! does not show proves nothing, unless the read is shown to be complete:
//!
//! | the answers… | absence of a link proves it is not there when |
//! |---|---|
//! | carried paging fields and every page was read ([`ListCompleteness::AllPages`]) | always |
//! | carried no paging field ([`ListCompleteness::NoPagingFields`]), with `--unpaged-link-list complete` (the default) | every link the journal holds for the project is listed, the list is shorter than any length at which it was ever seen cut, and — for an uncertain purchase — it lists a link of ours bought by a later purchase call |
//! | carried no paging field, with `--unpaged-link-list partial` | never |
//! | say links were left unread ([`ListCompleteness::Partial`]) | never |
//!
//! Why the last condition: a list cut silently after its first N links, when the journal
//! knows exactly N, looks complete, and the purchase sent then is the N+1-th, cut off. In a
//! list in the order links were bought, a link bought after the purchase, listed, puts the
//! purchase inside the part shown. (A list newest first, cut silently at exactly the links
//! the journal knows, is the case this cannot tell: run such a marketplace with
//! `--unpaged-link-list partial`.)
//! "Proves" is still only after `--settle-grace`: a list may show a purchase late.
//! Links no intent of ours bought are never attributed to an autobuyer, in a project
//! linkrunner created as in an adopted one (one rule, [`judge`]): each counts at its own rent,
//! on top of the running autobuyers' budgets (see `store/links/foreign.rs`). A link on a URL an
//! autobuyer covers may have been bought by hand — the team buys in the marketplace's UI in
//! any project — and cannot be told from the autobuyer's own; counted inside its budget, it
//! would leave room for the autobuyer to spend its whole budget on top of it (an
//! under-count). Counted on top, the commitment is never lower than what may be held (the
//! autobuyer's own links are over-counted while it runs, and counted once after its stop is
//! settled). Links an earlier version attributed keep counting as recorded.
//! Tested in this file and by `tests/it/engine` `partial_truth::*` and
//! `adoption::a_hand_link_on_an_autobuyers_url_counts_on_top_in_a_created_project_too`.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use linkrunner_domain::intents::IntentRow;
use linkrunner_domain::market::{LinkList, LinkRecord, ListCompleteness};
use linkrunner_domain::records::ListedLink;

use super::recorded::Recorded;

/// What an answer of the link list that carries no paging field is taken to show: the
/// marketplace does not say (`--unpaged-link-list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnpagedList {
    /// Every link of the project, once it shows every link the journal holds (and, for an
    /// uncertain purchase, more links than the journal knew when the purchase was sent).
    #[default]
    Complete,
    /// Possibly a first page only: absence from it proves nothing; what waits for it waits
    /// for an operator.
    Partial,
}

/// Whether a link's status says it left the project (the domain's rule; the journal
/// releases by it too).
pub(crate) use linkrunner_domain::market::is_leaving;

/// What one read of the list shows, and what it proves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judgement {
    pub(crate) listed: Vec<ListedLink>,
    /// The read shows every link of the project: absence of one of the links the journal
    /// knew of proves it is gone (after the grace); a stopped autobuyer's links are all here.
    pub(crate) proves_absence: bool,
    /// The intents of our purchases whose links it lists.
    listed_ours: BTreeSet<i64>,
    /// Why it does not, in the words `status` shows.
    pub(crate) why_not: Option<String>,
    /// A link the journal holds is missing from a read with no paging field: the list was
    /// cut at this length (or a link left it; the two cannot be told apart).
    pub(crate) cut_at: Option<u32>,
    /// The read showed paging fields and every page: absence means leaving.
    pub(crate) proven_complete: bool,
}

/// Judges one read, made at `now`, against what the journal records. A held link bought
/// less than `grace` ago and missing refutes completeness (it may be late) but does not mark
/// the list cut.
pub(crate) fn judge(
    read: &LinkList,
    r: &Recorded,
    now: DateTime<Utc>,
    grace: Duration,
    unpaged: UnpagedList,
) -> Judgement {
    // Never attributed to an autobuyer: counted on top of its budget (see the module docs).
    let listed = read
        .links
        .iter()
        .map(|l| ListedLink {
            record: l.clone(),
            leaving: is_leaving(l.status.as_deref()),
            autobuyer: None,
        })
        .collect();
    let listed_ours = listed_ours(&read.links, r);
    let (proves_absence, why_not, cut_at) = completeness(read, r, now, grace, unpaged);
    Judgement {
        listed,
        proves_absence,
        listed_ours,
        why_not,
        cut_at,
        proven_complete: matches!(read.completeness, ListCompleteness::AllPages { .. }),
    }
}

/// What one read proves about the links it does not show: whether absence proves anything
/// (`true`), why not, and the length at which a list without paging fields is known cut.
fn completeness(
    read: &LinkList,
    r: &Recorded,
    now: DateTime<Utc>,
    grace: Duration,
    unpaged: UnpagedList,
) -> (bool, Option<String>, Option<u32>) {
    let len = read.links.len() as u32;
    let missing = missing_known(&read.links, r, None);
    let missing_old = missing_known(&read.links, r, Some(now - grace));
    match &read.completeness {
        ListCompleteness::AllPages { .. } => (true, None, None),
        ListCompleteness::Partial { reason } => (
            false,
            Some(format!(
                "the link list's answers say links were left unread: {reason}"
            )),
            None,
        ),
        ListCompleteness::NoPagingFields if unpaged == UnpagedList::Partial => (
            false,
            Some(
                "the link list shows no paging fields and `--unpaged-link-list partial` says it may \
                 be a first page only"
                    .into(),
            ),
            None,
        ),
        ListCompleteness::NoPagingFields if missing > 0 => (
            false,
            Some(format!(
                "the link list shows no paging fields, and {missing} link(s) the journal holds are not in it \
                 (it is cut at {len} links, or they left, or it is late)"
            )),
            (missing_old > 0).then_some(len),
        ),
        ListCompleteness::NoPagingFields => match r.ids.list_cut_at.filter(|cut| len >= *cut) {
            Some(cut) => (
                false,
                Some(format!(
                    "the link list was seen cut at {cut} links and this read has {len}: it may be cut again"
                )),
                None,
            ),
            None => (true, None, None),
        },
    }
}

impl Judgement {
    /// Whether this read may settle a confirmed stop (the stopped autobuyer's budget leaves
    /// the commitment; only the links the list shows stay counted): it must show every link
    /// the autobuyer bought. Every page read does; a read that proves absence only by the
    /// absence of paging fields does in a project linkrunner created (the journal knows what
    /// was bought there), but in an adopted project what the journal knows came from the list
    /// itself, so such a read proves nothing unless the operator's word that the list is
    /// complete is in force (`word_in_force`: given, and not lapsed by this read). Until then
    /// the stopped autobuyer's budget stays reserved: links it bought past a cut are covered.
    pub(crate) fn settles_stops(&self, r: &Recorded, word_in_force: bool) -> bool {
        let adopted = r.ids.account.adoption.is_some();
        self.proven_complete || (self.proves_absence && (!adopted || word_in_force))
    }

    /// Whether this read proves that the uncertain purchase `u` bought nothing (it is absent
    /// from it): the read shows every link, and — if only by the absence of paging fields —
    /// lists a link of ours bought by a purchase call after `u`'s.
    /// `purchases` are the campaign's purchase intents, to tell `u`'s call apart.
    pub(crate) fn proves_not_bought(
        &self,
        u: &IntentRow,
        purchases: &[&IntentRow],
    ) -> Result<(), String> {
        if !self.proves_absence {
            return Err(self.why_not.clone().unwrap_or_default());
        }
        if self.proven_complete {
            return Ok(());
        }
        let last = call_end(u, purchases);
        if self.listed_ours.iter().any(|id| *id > last) {
            return Ok(());
        }
        Err("the link list shows no paging fields and lists no link of ours bought after this purchase: \
             it may be cut just before it (it settles once the list shows a later purchase of ours)"
            .into())
    }
}

/// The last intent id of the purchase call `u` was part of: intents whose request names the
/// same call (`call`), else `u` alone. A later call's intents have larger ids.
fn call_end(u: &IntentRow, purchases: &[&IntentRow]) -> i64 {
    let call = |i: &IntentRow| i.request.get("call").cloned();
    let mine = call(u);
    purchases
        .iter()
        .filter(|i| mine.is_some() && call(i) == mine)
        .fold(u.id.0, |hi, i| hi.max(i.id.0))
}

/// The intents of our held links that the read lists.
fn listed_ours(links: &[LinkRecord], r: &Recorded) -> BTreeSet<i64> {
    r.held
        .iter()
        .filter(|h| {
            links
                .iter()
                .any(|l| same_link(l, h.link_id, Some(h.page_id), Some(h.url_id)))
        })
        .map(|h| h.intent_id.0)
        .collect()
}

/// How many links the journal holds (held by our purchases — only those bought before
/// `settled_before` when given — or counted foreign links) that the read does not show.
pub(crate) fn missing_known(
    links: &[LinkRecord],
    r: &Recorded,
    settled_before: Option<DateTime<Utc>>,
) -> usize {
    let held = r
        .held
        .iter()
        .filter(|h| h.released.is_none() && settled_before.is_none_or(|t| h.bought_at <= t))
        .filter(|h| {
            !links
                .iter()
                .any(|l| same_link(l, h.link_id, Some(h.page_id), Some(h.url_id)))
        })
        .count();
    let foreign = r
        .foreign
        .iter()
        .filter(|f| f.released.is_none())
        .filter(|f| {
            !links
                .iter()
                .any(|l| same_link(l, f.link_id, f.page_id, f.url_id))
        })
        .count();
    held + foreign
}

/// A listed link is a known one: same link id, else same page and URL.
fn same_link(l: &LinkRecord, id: Option<i64>, page: Option<i64>, url: Option<i64>) -> bool {
    match (l.link_id, id) {
        (Some(a), Some(b)) => a == b,
        _ => page.is_some() && l.page_id == page && url.is_some() && l.url_id == url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::money::Money;

    fn recorded() -> Recorded {
        Recorded::unrecorded_for_tests("c")
    }

    /// Issue 32 (5): one rule for created and adopted projects — a link no intent of ours
    /// bought, on a URL only one autobuyer covers, is not taken for that autobuyer's (it may
    /// be a hand purchase): it counts at its own rent, on top of the autobuyer's budget.
    #[test]
    fn a_link_on_a_url_an_autobuyer_covers_is_never_counted_inside_its_budget() {
        let mut r = recorded();
        r.ids.urls.insert("https://a.example/x".into(), 11);
        r.autobuyer_urls.insert("ab".into(), vec![11]);
        let read = LinkList {
            links: vec![LinkRecord {
                link_id: Some(7),
                page_id: Some(70),
                url_id: Some(11),
                price: Some(Money::from_rubles(40)),
                ..LinkRecord::default()
            }],
            completeness: ListCompleteness::NoPagingFields,
        };
        let j = judge(
            &read,
            &r,
            Utc::now(),
            Duration::zero(),
            UnpagedList::Complete,
        );
        assert_eq!(j.listed.len(), 1);
        assert_eq!(j.listed[0].autobuyer, None, "{:?}", j.listed[0]);
    }
}
