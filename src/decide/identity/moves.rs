//! Autobuyers moved between files (issue 32): an autobuyer entry may say `moved_from: SOURCE`
//! for an autobuyer SOURCE's file declared before, so that it is neither stopped by SOURCE
//! nor created again here. An autobuyer belongs to its project (the marketplace creates it
//! for a project's URL ids), so a move is valid only between campaigns on the same project;
//! and as one project belongs to one campaign (the fence at `validate`, the journal's owners
//! at the pass), that is this campaign taking over SOURCE's project, with `renamed_from:
//! SOURCE`: the rename's one transaction hands the autobuyer over (its row, its budget in the
//! commitment, its money history), honoured once. Any other move is refused naming both
//! campaigns and their projects, before anything is recorded or sent. These are the rules;
//! `effects::rename` and `views::state` read the journal for them.

use serde::Serialize;

use crate::campaign::{Autobuyer, Campaign};
use linkrunner_domain::money::Money;
use linkrunner_domain::records::RemoteIds;

/// An autobuyer a pending rename carries from SOURCE to this campaign, as `plan` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Moved {
    pub(crate) name: String,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) id: i64,
    /// What it adds to the commitment now (its budget while it runs): it moves with it.
    pub(crate) reserved: Money,
}

impl Moved {
    /// `move autobuyer acme-auto from acme to acme-shoes (id 9, budget 1000 RUB/month)`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "move autobuyer {} from {} to {} (id {}, budget {} RUB/month): carried by the rename, neither stopped nor created",
            self.name, self.from, self.to, self.id, self.reserved
        )
    }
}

/// The moves a pending rename from `old` carries (`old_ids`: what the journal holds under
/// `old`): each autobuyer of `c` that says `moved_from: old` and is recorded there.
pub(crate) fn carried(c: &Campaign, old: &str, old_ids: &RemoteIds) -> Vec<Moved> {
    c.autobuyers
        .iter()
        .filter(|ab| ab.moved_from.as_deref() == Some(old))
        .filter_map(|ab| {
            let rec = old_ids.autobuyers.get(&ab.name)?;
            Some(Moved {
                name: ab.name.clone(),
                from: old.to_string(),
                to: c.name.clone(),
                id: rec.id,
                reserved: rec.reserved,
            })
        })
        .collect()
}

/// Why a `moved_from` of `c` is refused, if one is. `here`: what the journal holds under
/// `c`'s name; `source_of(SOURCE)`: what it holds under SOURCE (`None`: never recorded).
/// A move carried by `c`'s own rename, or already done (the autobuyer is recorded here),
/// is never refused: the key is honoured once and may stay in the file.
pub(crate) fn refused<'a>(
    c: &Campaign,
    here: &RemoteIds,
    source_of: impl Fn(&str) -> Option<&'a RemoteIds>,
) -> Option<String> {
    c.autobuyers.iter().find_map(|ab| {
        let from = ab.moved_from.as_deref()?;
        if c.renamed_from.as_deref() == Some(from) || here.autobuyers.contains_key(&ab.name) {
            return None;
        }
        Some(refusal(c, ab, from, here, source_of(from)))
    })
}

fn refusal(
    c: &Campaign,
    ab: &Autobuyer,
    from: &str,
    here: &RemoteIds,
    source: Option<&RemoteIds>,
) -> String {
    let name = &ab.name;
    let recorded = source.and_then(|s| match ab.id {
        Some(id) => s.autobuyers.values().find(|r| r.id == id),
        None => s.autobuyers.get(name),
    });
    let Some(rec) = recorded else {
        return format!(
            "autobuyer `{name}` says `moved_from: {from}`, but the journal records no such autobuyer under campaign {from}: \
             nothing to move; correct the campaign's name, or remove `moved_from` to create the autobuyer for campaign {}",
            c.name
        );
    };
    let project =
        |ids: Option<&RemoteIds>| ids.and_then(|i| i.project.as_ref()).map(|p| p.project_id);
    let theirs = project(source).map_or("no project".to_string(), |p| format!("project {p}"));
    let ours = match (project(Some(here)), c.project_id) {
        (Some(p), _) | (None, Some(p)) => format!("project {p}"),
        (None, None) => "a project of its own".to_string(),
    };
    format!(
        "autobuyer `{name}` (id {}) runs on {theirs} of campaign {from}, and campaign {} is on {ours}: an autobuyer belongs \
         to its project, so it moves only with it, when this campaign is {from} renamed (`renamed_from: {from}`); otherwise \
         remove `moved_from` (this campaign creates its own autobuyer, and {from} stops `{name}` once its file no longer declares it)",
        rec.id, c.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::recorded::Recorded;
    use linkrunner_domain::market::ProjectIds;

    fn campaign(extra: &str, moved: &str) -> Campaign {
        let yaml = format!(
            "name: boots\n{extra}domain: https://acme.example\nurls:\n  - url: https://acme.example/a\n    texts: [\"#a#a#/a#\"]\n\
             budget: {{monthly: 1000, max_link_price: 100, daily_links: 1, total_links: 9}}\n\
             filters: [{{name: f}}]\n\
             autobuyers:\n  - name: auto\n    filter: f\n    state: running\n{moved}    urls: [{{url: \"https://acme.example/a\", monthly_budget: 300, total_links_limit: 3, daily_links_limit: 1}}]\n"
        );
        crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap()
    }

    fn ids(project: Option<i64>, autobuyer: Option<(&str, i64)>) -> RemoteIds {
        let mut ids = RemoteIds {
            project: project.map(|project_id| ProjectIds {
                project_id,
                url_id: 1,
                text_id: 2,
            }),
            ..RemoteIds::default()
        };
        if let Some((name, id)) = autobuyer {
            ids.autobuyers.insert(
                name.into(),
                Recorded::running_autobuyer_for_tests(id, "fp", Money::from_rubles(300)),
            );
        }
        ids
    }

    const MOVED: &str = "    moved_from: shoes\n";

    #[test]
    fn a_move_between_two_projects_is_refused_naming_both_campaigns_and_projects() {
        let c = campaign("", MOVED);
        let source = ids(Some(5000), Some(("auto", 9)));
        let why = refused(&c, &ids(Some(6000), None), |n| {
            (n == "shoes").then_some(&source)
        });
        assert_eq!(
            why.as_deref(),
            Some(
                "autobuyer `auto` (id 9) runs on project 5000 of campaign shoes, and campaign boots is on project 6000: \
                 an autobuyer belongs to its project, so it moves only with it, when this campaign is shoes renamed \
                 (`renamed_from: shoes`); otherwise remove `moved_from` (this campaign creates its own autobuyer, and \
                 shoes stops `auto` once its file no longer declares it)"
            )
        );
        let unrecorded = refused(&c, &RemoteIds::default(), |n| {
            (n == "shoes").then_some(&source)
        });
        assert!(
            unrecorded
                .unwrap()
                .contains("campaign boots is on a project of its own")
        );
    }

    #[test]
    fn a_move_from_a_campaign_that_records_no_such_autobuyer_is_refused() {
        let c = campaign("", MOVED);
        let why = refused(&c, &RemoteIds::default(), |_| None).unwrap();
        assert!(
            why.contains("the journal records no such autobuyer under campaign shoes"),
            "{why}"
        );
        let other = ids(Some(5000), Some(("other", 9)));
        assert!(refused(&c, &RemoteIds::default(), |_| Some(&other)).is_some());
    }

    #[test]
    fn a_move_with_the_rename_of_its_source_or_already_done_is_never_refused() {
        let source = ids(Some(5000), Some(("auto", 9)));
        let renamed = campaign("renamed_from: shoes\n", MOVED);
        assert_eq!(
            refused(&renamed, &RemoteIds::default(), |_| Some(&source)),
            None
        );
        let done = ids(Some(6000), Some(("auto", 9)));
        assert_eq!(
            refused(&campaign("", MOVED), &done, |_| Some(&source)),
            None,
            "honoured once"
        );
        assert_eq!(
            refused(&campaign("", ""), &RemoteIds::default(), |_| Some(&source)),
            None
        );
    }

    #[test]
    fn a_pending_rename_shows_each_autobuyer_it_carries() {
        let c = campaign("renamed_from: shoes\n", MOVED);
        let moved = carried(&c, "shoes", &ids(Some(5000), Some(("auto", 9))));
        assert_eq!(moved.len(), 1);
        assert_eq!(
            moved[0].describe(),
            "move autobuyer auto from shoes to boots (id 9, budget 300 RUB/month): carried by the rename, neither stopped nor created"
        );
        assert!(
            carried(
                &campaign("renamed_from: shoes\n", ""),
                "shoes",
                &ids(None, Some(("auto", 9)))
            )
            .is_empty()
        );
    }
}
