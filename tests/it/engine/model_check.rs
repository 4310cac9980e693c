//! The model test's invariants, from the sandbox's ledger (what was really sold) against the
//! campaign files (what is wanted) and the journal (what linkrunner counts). Each returns
//! `Err(why)` so the runner can print the sequence that led there.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use linkrunner::decide::recorded::Recorded;
use linkrunner::money::Money;
use linkrunner::store::{IntentKind, IntentRow, Store, SwitchState};
use linkrunner_sandbox::{AutobuyerState, Ledger, LinkStatus, Purchase};

use super::model_steps::FileModel;

pub type Check = Result<(), String>;

/// What the account in use holds that linkrunner did not buy: the links bought by hand
/// (seeded and since) and the autobuyer the team started in the UI.
#[derive(Debug, Clone)]
pub struct Outside {
    pub hand: HashSet<i64>,
    pub autobuyer: i64,
}

/// What the marketplace holds and the journal counts for each campaign, before a step.
#[derive(Debug, Clone, Default)]
pub struct Money2 {
    /// The ledger's commitment by the rule of docs/operating.md#money, over the campaign's
    /// projects, less what others hold that the journal has not seen yet (links bought by
    /// hand the list has not shown, the team's autobuyer before its adoption is recorded):
    /// nothing can count what it was never shown.
    pub ledger: Money,
    /// The journal's monthly commitment.
    pub journal: Money,
    /// What others hold that the journal has seen: hand links (id → rent) and whether it
    /// knows the team's autobuyer (with its budget while it runs). What a step first shows
    /// may lift the commitment past the cap: nothing linkrunner bought.
    pub seen_hand: BTreeMap<i64, Money>,
    pub seen_autobuyer: Option<Money>,
}

pub fn projects(ledger: &Ledger, m: &FileModel) -> HashSet<i64> {
    ledger
        .projects
        .iter()
        .filter(|p| p.domain.trim_end_matches('/') == m.domain)
        .map(|p| p.id)
        .collect()
}

pub fn ledger_commitment(ledger: &Ledger, m: &FileModel) -> Money {
    projects(ledger, m).iter().fold(Money::ZERO, |a, p| {
        a.checked_add(ledger.commitment(*p)).expect("sum")
    })
}

/// Per file (by [`FileModel::id`]): the journal's figures are summed over the names the file
/// may have, so a rename moves nothing from one side to the other (one name is recorded).
pub async fn money(
    store: &Store,
    ledger: &Ledger,
    files: &[FileModel],
    outside: &Outside,
    now: DateTime<Utc>,
) -> BTreeMap<&'static str, Money2> {
    let mut out = BTreeMap::new();
    for m in files {
        let mut journal = Money::ZERO;
        for name in names(m) {
            let committed = store
                .campaigns()
                .budget(name, now.date_naive())
                .await
                .map_or(Money::ZERO, |b| b.committed);
            journal = journal.checked_add(committed).expect("sum");
        }
        let mut money = Money2 {
            ledger: ledger_commitment(ledger, m),
            journal,
            ..Money2::default()
        };
        if m.adopts {
            unseen_outside(store, ledger, m, outside, now, &mut money).await;
        }
        out.insert(m.id(), money);
    }
    out
}

/// The names a file may have, each once.
pub fn names(m: &FileModel) -> impl Iterator<Item = &'static str> {
    let [a, b] = m.names;
    std::iter::once(a).chain((a != b).then_some(b))
}

/// Takes out of `money.ledger` what others hold that the journal has not seen, and notes
/// what it has seen.
async fn unseen_outside(
    store: &Store,
    ledger: &Ledger,
    m: &FileModel,
    outside: &Outside,
    now: DateTime<Utc>,
    money: &mut Money2,
) {
    let mut r = None;
    for name in names(m) {
        r = r.or(Recorded::load(store, name, now.date_naive()).await.ok());
    }
    let seen: HashSet<i64> = r
        .iter()
        .flat_map(|r| r.foreign.iter())
        .filter(|f| f.released.is_none())
        .filter_map(|f| f.link_id)
        .collect();
    let projects = projects(ledger, m);
    let hand = ledger.purchases.iter().filter(|p| {
        projects.contains(&p.project_id)
            && p.status == LinkStatus::Active
            && outside.hand.contains(&p.link_id)
    });
    let mut unseen = Money::ZERO;
    for p in hand {
        match seen.contains(&p.link_id) {
            true => {
                money.seen_hand.insert(p.link_id, p.price);
            }
            false => unseen = unseen.checked_add(p.price).expect("sum"),
        }
    }
    let team = ledger
        .autobuyer(outside.autobuyer)
        .expect("the team's autobuyer");
    let budget = match team.state {
        AutobuyerState::Running => team.urls.iter().fold(Money::ZERO, |a, u| {
            a.checked_add(u.monthly_budget).expect("sum")
        }),
        AutobuyerState::Stopped => Money::ZERO,
    };
    let known = r
        .as_ref()
        .is_some_and(|r| !never_adopted(team.id, r, outside));
    match known {
        true => money.seen_autobuyer = Some(budget),
        false => unseen = unseen.checked_add(budget).expect("sum"),
    }
    money.ledger = money.ledger.checked_sub(unseen).expect("within");
}

/// (1) No page bought twice for a URL by a purchase call: not after another purchase call,
/// and not after an autobuyer's purchase that a complete list read at the start of the pass
/// showed (`visible`). A purchase the list could not show (a first page only, a lag) is the
/// stated limit of docs/operating.md#how-it-works ("as the link list showed it"), not a failure.
pub fn no_page_bought_twice(
    ledger: &Ledger,
    new_from: usize,
    (lag_ms, complete): (u64, bool),
    hand: &HashSet<i64>,
) -> Check {
    for p in ledger.purchases.iter().skip(new_from) {
        if p.autobuyer_id.is_some() || hand.contains(&p.link_id) {
            continue;
        }
        let earlier = ledger.purchases.iter().filter(|q| {
            q.link_id != p.link_id
                && (q.project_id, q.page_id, q.url_id) == (p.project_id, p.page_id, p.url_id)
                && q.at <= p.at
        });
        for q in earlier {
            // A link bought by hand is known, like an autobuyer's, only from the list.
            let by_us = q.autobuyer_id.is_none() && !hand.contains(&q.link_id);
            let shown = complete
                && q.at < p.at
                && q.at + chrono::Duration::milliseconds(lag_ms as i64) <= p.at;
            if by_us || shown {
                return Err(format!(
                    "page {} bought again for URL {} (project {}): {p:?} after {q:?}",
                    p.page_id, p.url_id, p.project_id
                ));
            }
        }
    }
    Ok(())
}

/// (2) Money: the journal never counts less than the marketplace holds, and no step takes
/// what the marketplace holds past the cap in force — or, when the journal already counted
/// more than the cap before the step (a cap lowered under what is held: nothing is sold),
/// past that. A paused or removed campaign acquires nothing: its cap in force is zero; so
/// does a blocked one (renamed without the key: `files` say it as removed).
pub fn money_within_cap(
    files: &[FileModel],
    before: &BTreeMap<&'static str, Money2>,
    after: &BTreeMap<&'static str, Money2>,
) -> Check {
    for m in files {
        let (b, a) = (&before[m.id()], &after[m.id()]);
        if a.journal < a.ledger {
            return Err(format!(
                "{}: the journal counts {} but the marketplace holds {}",
                m.name, a.journal, a.ledger
            ));
        }
        let cap = if m.present && !m.paused {
            Money::from_rubles(m.monthly)
        } else {
            Money::ZERO
        };
        let allowed = cap
            .max(b.journal)
            .checked_add(first_shown(b, a))
            .expect("sum");
        if a.ledger > allowed {
            return Err(format!(
                "{}: the marketplace holds {} after the step, over the cap in force {cap} \
                 and over what the journal counted before it ({}; the marketplace held {})",
                m.name, a.ledger, b.journal, b.ledger
            ));
        }
    }
    Ok(())
}

/// Whether the journal recorded the adoption of the team's autobuyer under one of `m`'s names.
/// Until it did, the file's spec of it is the team's declaration of what the marketplace runs
/// (docs/adoption.md#4-what-is-counted: the API cannot read it back), not a change to apply.
pub async fn team_autobuyer_recorded(
    store: &Store,
    m: &FileModel,
    outside: &Outside,
    now: DateTime<Utc>,
) -> bool {
    for name in names(m) {
        if let Ok(r) = Recorded::load(store, name, now.date_naive()).await
            && !never_adopted(outside.autobuyer, &r, outside)
        {
            return true;
        }
    }
    false
}

/// The team's autobuyer, when no file ever adopted it: the journal never recorded its id.
fn never_adopted(id: i64, r: &Recorded, outside: &Outside) -> bool {
    id == outside.autobuyer
        && !r.ids.autobuyers.values().any(|a| a.id == id)
        && !r.autobuyer_generations.contains_key(&id)
}

/// What others hold that the journal saw first in this step (hand links, the team's
/// autobuyer): it lifts the commitment without anything being bought.
fn first_shown(b: &Money2, a: &Money2) -> Money {
    let hand = a
        .seen_hand
        .iter()
        .filter(|(id, _)| !b.seen_hand.contains_key(id))
        .fold(Money::ZERO, |s, (_, m)| s.checked_add(*m).expect("sum"));
    let team = match (b.seen_autobuyer, a.seen_autobuyer) {
        (None, Some(budget)) => budget,
        _ => Money::ZERO,
    };
    hand.checked_add(team).expect("sum")
}

/// (3) Every autobuyer of the campaign's projects is in the state the file wants: running
/// when the (unpaused) file wants it running, else stopped — removed, renamed, unknown
/// autobuyers and those of a removed file included; but the team's own autobuyer while no
/// file ever adopted it (linkrunner touches only what it created or a file adopted by id).
pub fn autobuyers_as_desired(
    ledger: &Ledger,
    m: &FileModel,
    r: &Recorded,
    outside: &Outside,
) -> Check {
    let projects = projects(ledger, m);
    for a in ledger
        .autobuyers
        .iter()
        .filter(|a| projects.contains(&a.project_id))
        .filter(|a| !never_adopted(a.id, r, outside))
    {
        let name = r
            .ids
            .autobuyers
            .iter()
            .find(|(_, rec)| rec.id == a.id)
            .map(|(n, _)| n.as_str());
        let wanted = m.present
            && m.autobuyers
                .iter()
                .any(|ab| Some(ab.name.as_str()) == name && m.wants_running(ab));
        let want = if wanted {
            AutobuyerState::Running
        } else {
            AutobuyerState::Stopped
        };
        if a.state != want {
            return Err(format!(
                "{}: autobuyer {} (id {}, journal name {name:?}) is {:?} in the marketplace, the file wants {want:?}",
                m.name, a.name, a.id, a.state
            ));
        }
    }
    Ok(())
}

/// (4) Journal = ledger once settled: nothing uncertain; the links our purchases hold are
/// exactly the marketplace's active links bought by purchase calls; the links counted for
/// others are exactly its active autobuyers' links; every autobuyer of the project is known
/// with the state the marketplace has; and the commitment equals the ledger's, plus the rent
/// of the links the journal could not attribute to the one autobuyer covering their URL
/// (counted on top while that autobuyer runs: the over-count of docs/operating.md#money, never an under-count).
pub fn journal_equals_ledger(
    ledger: &Ledger,
    m: &FileModel,
    r: &Recorded,
    outside: &Outside,
) -> Check {
    let hand = &outside.hand;
    if !r.uncertain.is_empty() {
        return Err(format!("{}: still uncertain: {:?}", m.name, r.uncertain));
    }
    let projects = projects(ledger, m);
    let active: Vec<&Purchase> = ledger
        .purchases
        .iter()
        .filter(|p| projects.contains(&p.project_id) && p.status == LinkStatus::Active)
        .collect();
    let others = |p: &&&Purchase| p.autobuyer_id.is_some() || hand.contains(&p.link_id);
    let sold: BTreeSet<(i64, i64)> = active
        .iter()
        .filter(|p| !others(p))
        .map(|p| (p.page_id, p.url_id))
        .collect();
    let held: BTreeSet<(i64, i64)> = r
        .held
        .iter()
        .filter(|h| h.released.is_none())
        .map(|h| (h.page_id, h.url_id))
        .collect();
    if sold != held {
        return Err(format!(
            "{}: links bought by purchase calls: marketplace {sold:?}, journal {held:?}",
            m.name
        ));
    }
    let theirs: BTreeSet<i64> = active.iter().filter(others).map(|p| p.link_id).collect();
    let foreign: BTreeSet<i64> = r
        .foreign
        .iter()
        .filter(|f| f.released.is_none())
        .filter_map(|f| f.link_id)
        .collect();
    if theirs != foreign {
        return Err(format!(
            "{}: others' links (autobuyers', by hand): marketplace {theirs:?}, journal {foreign:?}",
            m.name
        ));
    }
    autobuyers_known(ledger, m, r, (&projects, outside))?;
    let over = unattributed_running_rent(ledger, r);
    // The team's autobuyer no file adopted: its budget is nobody's to count (its links are,
    // at their rent, in `over`).
    let unadopted = ledger
        .autobuyer(outside.autobuyer)
        .filter(|a| projects.contains(&a.project_id) && a.state == AutobuyerState::Running)
        .filter(|a| never_adopted(a.id, r, outside))
        .map_or(Money::ZERO, |a| {
            a.urls.iter().fold(Money::ZERO, |s, u| {
                s.checked_add(u.monthly_budget).expect("sum")
            })
        });
    let expected = ledger_commitment(ledger, m)
        .checked_sub(unadopted)
        .and_then(|e| e.checked_add(over))
        .expect("sum");
    if r.budget.committed != expected {
        return Err(format!(
            "{}: the journal counts {}, the ledger's commitment is {} (+{over} counted on top): {:?}",
            m.name,
            r.budget.committed,
            ledger_commitment(ledger, m),
            ledger.commitment_parts(projects.iter().copied().next().unwrap_or(0))
        ));
    }
    Ok(())
}

fn autobuyers_known(
    ledger: &Ledger,
    m: &FileModel,
    r: &Recorded,
    (projects, outside): (&HashSet<i64>, &Outside),
) -> Check {
    for a in ledger
        .autobuyers
        .iter()
        .filter(|a| projects.contains(&a.project_id))
        .filter(|a| !never_adopted(a.id, r, outside))
    {
        let Some((name, rec)) = r.ids.autobuyers.iter().find(|(_, rec)| rec.id == a.id) else {
            // Replaced by a new one of the same name (a changed spec): the journal switched it
            // and it must be stopped.
            if r.autobuyer_generations.contains_key(&a.id) && a.state == AutobuyerState::Stopped {
                continue;
            }
            return Err(format!(
                "{}: autobuyer {a:?} is unknown to the journal",
                m.name
            ));
        };
        let journal = match rec.switch_state {
            SwitchState::Running => AutobuyerState::Running,
            _ => AutobuyerState::Stopped,
        };
        if journal != a.state || rec.running != (a.state == AutobuyerState::Running) {
            return Err(format!(
                "{}: autobuyer {name} is {:?} in the marketplace, the journal says {:?} (counted as running: {})",
                m.name, a.state, rec.switch_state, rec.running
            ));
        }
    }
    Ok(())
}

/// Rent the journal counts on top for links no single autobuyer covers (and for every link of
/// an adopted project, where a hand purchase cannot be told from an autobuyer's), while the
/// autobuyer that bought them runs (the ledger counts them inside its budget).
fn unattributed_running_rent(ledger: &Ledger, r: &Recorded) -> Money {
    r.foreign
        .iter()
        .filter(|f| f.released.is_none() && f.autobuyer.is_none())
        .filter(|f| {
            let buyer = ledger
                .purchases
                .iter()
                .find(|p| Some(p.link_id) == f.link_id)
                .and_then(|p| p.autobuyer_id);
            buyer
                .and_then(|id| ledger.autobuyer(id))
                .is_some_and(|a| a.state == AutobuyerState::Running)
        })
        .fold(Money::ZERO, |a, f| a.checked_add(f.counted).expect("sum"))
}

/// Uncertain intents the engine leaves to an operator: autobuyer creations, free creations
/// past their attempts, and (only when `purchases`) purchases the list has not settled.
pub fn waits_for_operator(
    kind: IntentKind,
    attempts: u32,
    max_attempts: u32,
    purchases: bool,
) -> bool {
    match kind {
        IntentKind::CreateAutobuyer => true,
        IntentKind::Purchase => purchases,
        IntentKind::StartAutobuyer | IntentKind::StopAutobuyer => false,
        _ => attempts >= max_attempts,
    }
}

/// A site or URL as the fence compares them: case, the scheme, a leading `www.`, a default
/// port and a trailing `/` folded. Written here, not taken from the product, so a folding the
/// product gets wrong is not folded the same wrong way.
pub fn fold(url: &str) -> String {
    let u = url.to_ascii_lowercase();
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .unwrap_or(&u);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host
        .strip_suffix(":443")
        .or_else(|| host.strip_suffix(":80"))
        .unwrap_or(host);
    format!("{host}/{}", path.trim_end_matches('/'))
}

/// (5) Issue 32, over every project of the ledger, whichever campaign (or name) made it: one
/// project per site that holds links or autobuyers, and no page bought by a purchase call twice for one URL, by its text
/// folded (a second project has other URL ids). A rename, a claim or a removed file that gave
/// a site a second project, or bought its pages again under another key, fails here.
pub fn one_project_per_site_and_page_per_url(ledger: &Ledger, hand: &HashSet<i64>) -> Check {
    // A project whose creation was cut after commit and created again is left empty: free,
    // and never used. A second project that holds links or autobuyers is what pays twice.
    let used = |id: i64| {
        ledger.purchases.iter().any(|p| p.project_id == id)
            || ledger.autobuyers.iter().any(|a| a.project_id == id)
    };
    let mut sites: BTreeMap<String, i64> = BTreeMap::new();
    for p in ledger.projects.iter().filter(|p| used(p.id)) {
        if let Some(first) = sites.insert(fold(&p.domain), p.id) {
            return Err(format!(
                "a second project with links or autobuyers for site {}: projects {first} and {} ({:?})",
                fold(&p.domain),
                p.id,
                ledger.projects
            ));
        }
    }
    one_url_per_spelling(ledger)?;
    let url = |id: i64| {
        ledger
            .urls
            .iter()
            .find(|u| u.id == id)
            .map(|u| fold(&u.url))
    };
    let mut pages: BTreeMap<(String, i64), &Purchase> = BTreeMap::new();
    let ours = ledger
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_none() && !hand.contains(&p.link_id));
    for p in ours {
        let Some(u) = url(p.url_id) else {
            return Err(format!(
                "a purchase for URL id {} the ledger lacks: {p:?}",
                p.url_id
            ));
        };
        if let Some(q) = pages.insert((u.clone(), p.page_id), p) {
            return Err(format!(
                "page {} bought twice for {u} (projects {} and {}): {q:?} and {p:?}",
                p.page_id, q.project_id, p.project_id
            ));
        }
    }
    Ok(())
}

/// (6) Autobuyers moved with their campaign's rename (`moved_from`), over the step that
/// handed the rename over (`moved`: name → id the old name recorded): each keeps its id
/// under the new name, and nothing was sent for it: no stop, no creation of that name, no
/// second autobuyer of that name in the marketplace, and one running before runs after.
/// (The generator moves only a file left alone since a checkpoint: the pass has nothing
/// else to do with its autobuyers, but a start the cap had left unapplied.)
pub fn moved_not_restarted(
    moved: &BTreeMap<String, i64>,
    r: &Recorded,
    sent: &[IntentRow],
    (before, after): (&Ledger, &Ledger),
) -> Check {
    for (name, &id) in moved {
        let now = r.ids.autobuyers.get(name).map(|a| a.id);
        if now != Some(id) {
            return Err(format!(
                "autobuyer {name} moved with the rename (id {id}): the new name records id {now:?}"
            ));
        }
        let key = |i: &IntentRow| i.natural_key.split(':').nth(2).map(str::to_string);
        let touched = sent.iter().find(|i| match i.kind {
            IntentKind::StopAutobuyer => key(i) == Some(id.to_string()),
            IntentKind::CreateAutobuyer => key(i).as_deref() == Some(name.as_str()),
            _ => false,
        });
        if let Some(i) = touched {
            return Err(format!(
                "autobuyer {name} (id {id}) moved with the rename, yet the pass sent {:?}: {}",
                i.kind, i.natural_key
            ));
        }
        let mut created = after.autobuyers.iter().skip(before.autobuyers.len());
        if let Some(a) = created.find(|a| &a.name == name) {
            return Err(format!(
                "autobuyer {name} (id {id}) moved with the rename, yet the marketplace has a second one: {a:?}"
            ));
        }
        let state = |l: &Ledger| l.autobuyer(id).map(|a| a.state);
        if state(before) == Some(AutobuyerState::Running) && state(after) != state(before) {
            return Err(format!(
                "autobuyer {name} (id {id}) moved with the rename: running before, {:?} after",
                state(after)
            ));
        }
    }
    Ok(())
}

/// One URL per page in a project: two URLs whose spellings fold the same (a respelling sent
/// to the marketplace as a new URL) split a page's links and purchases between two ids.
fn one_url_per_spelling(ledger: &Ledger) -> Check {
    let mut seen: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for u in &ledger.urls {
        if let Some(first) = seen.insert((u.project_id, fold(&u.url)), u.id) {
            return Err(format!(
                "project {} has two URLs for {}: ids {first} and {} ({})",
                u.project_id,
                fold(&u.url),
                u.id,
                u.url
            ));
        }
    }
    Ok(())
}
