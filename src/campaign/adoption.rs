//! Adoption within one file (issue 24): `project_id`, `url_id`, `text_id`,
//! `budget.unknown_link_rent` and autobuyer `id`. Text and autobuyer ids only make sense
//! inside an adopted project, no id is given to two things, and an adopted project needs a
//! figure for links whose rent the list does not show. A `url_id` may also name a URL the
//! journal holds in a project linkrunner created (issue 32: a respelt URL keeps its identity);
//! only the pass knows the journal, so here it is checked as written. Checks across files
//! live in `fence`.

use std::collections::HashMap;

use super::checks::{MAX_MONTHLY, positive_money};
use super::diag::Problems;
use super::raw::RawCampaign;
use super::span::{At, Pos};

/// Checks the adoption keys of one file; the adopted project's id when the file names one.
pub(super) fn check(raw: &RawCampaign, p: &mut Problems) -> Option<i64> {
    let project = raw.project_id.as_ref();
    if let Some(id) = project {
        positive_id(id, "project_id", p);
    }
    rent(raw, project.map(|i| i.pos), p);
    url_and_text_ids(raw, project.is_some(), p);
    autobuyer_ids(raw, project.is_some(), p);
    project.map(|i| i.value)
}

fn positive_id(id: &At<i64>, key: &str, p: &mut Problems) -> bool {
    let ok = id.value >= 1;
    if !ok {
        p.at(
            id.pos,
            format!(
                "`{key}` must be a marketplace id (1 or more), not {}",
                id.value
            ),
        );
    }
    ok
}

/// `unknown_link_rent` is required with `project_id` and, when given, a sane amount.
fn rent(raw: &RawCampaign, project: Option<Pos>, p: &mut Problems) {
    let budget = &raw.budget.value;
    match (&budget.unknown_link_rent, project) {
        (Some(r), _) => {
            positive_money(r, "unknown_link_rent", MAX_MONTHLY, p);
        }
        (None, Some(pos)) => p.at(
            pos,
            "`project_id` adopts a project that already holds links: `budget.unknown_link_rent` is required \
             (what a held link counts against `monthly` when the link list shows no rent for it)",
        ),
        (None, None) => {}
    }
}

/// Each `url_id` and `text_id` given to one URL or text, a `text_id` only in an adopted
/// project on a URL that has its `url_id`. A `url_id` without `project_id` names a URL the
/// journal holds for this campaign under this or an earlier spelling: the pass refuses an id
/// the journal does not hold (`decide::respell`).
fn url_and_text_ids(raw: &RawCampaign, adopting: bool, p: &mut Problems) {
    let mut url_ids: HashMap<i64, &str> = HashMap::new();
    let mut text_ids: HashMap<i64, &str> = HashMap::new();
    for u in &raw.urls.value {
        if let Some(id) = &u.url_id
            && positive_id(id, "url_id", p)
            && let Some(other) = url_ids.insert(id.value, &u.url.value)
        {
            p.at(
                id.pos,
                format!("`url_id` {} is also given to `{other}`", id.value),
            );
        }
        for t in &u.texts.value {
            let Some(tid) = t.value.text_id else {
                continue;
            };
            if !adopting || u.url_id.is_none() {
                p.at(t.pos, "`text_id` names a text of an existing URL: its URL needs its `url_id` (and the campaign its `project_id`)");
            } else if tid < 1 {
                p.at(
                    t.pos,
                    format!("`text_id` must be a marketplace id (1 or more), not {tid}"),
                );
            } else if let Some(other) = text_ids.insert(tid, &t.value.text) {
                p.at(
                    t.pos,
                    format!("`text_id` {tid} is also given to the text `{other}`"),
                );
            }
        }
    }
}

/// An autobuyer `id` only in an adopted project, never twice, and every URL of an adopted
/// autobuyer has its `url_id` (an existing autobuyer covers existing URLs; without the id its
/// links could not be told apart from the project's other links).
fn autobuyer_ids(raw: &RawCampaign, adopting: bool, p: &mut Problems) {
    let mut seen: HashMap<i64, &str> = HashMap::new();
    for a in &raw.autobuyers {
        let a = &a.value;
        let Some(id) = &a.id else {
            continue;
        };
        if !adopting {
            p.at(id.pos, "an autobuyer `id` adopts an existing autobuyer of an existing project: set the campaign's `project_id` too");
            continue;
        }
        if !positive_id(id, "id", p) {
            continue;
        }
        if let Some(other) = seen.insert(id.value, &a.name.value) {
            p.at(
                id.pos,
                format!(
                    "autobuyer id {} is also adopted by autobuyer `{other}`",
                    id.value
                ),
            );
        }
        for u in &a.urls.value {
            let named = raw
                .urls
                .value
                .iter()
                .find(|x| same_url(&x.url.value, &u.value.url.value));
            if named.is_some_and(|x| x.url_id.is_none()) {
                p.at(
                    u.value.url.pos,
                    format!(
                        "autobuyer `{}` adopts id {}: its URL `{}` needs its `url_id` in `urls` (an existing autobuyer covers URLs that exist)",
                        a.name.value, id.value, u.value.url.value
                    ),
                );
            }
        }
    }
}

fn same_url(a: &str, b: &str) -> bool {
    let norm = |s: &str| url::Url::parse(s).map_or_else(|_| s.to_string(), |u| u.to_string());
    norm(a) == norm(b)
}
