//! What one pass of a campaign does first and which of its plan's actions it runs: the
//! pre-plan ([`pre_plan`]: what a file adopts is recorded before anything is read or planned),
//! whether the link list is read before planning (and whether that read settles something),
//! and which actions were run or recorded already or wait for an operator's word on an
//! adopted project. Pure: `effects/pass.rs` acts on what these say.

use linkrunner_domain::intents::IntentKind;

use super::adoption::adoption_step;
use super::plan::{Action, CampaignPlan, adopt_project};
use super::recorded::Recorded;
use crate::campaign::Campaign;

/// What a pass runs before it reads the link list and plans, and whether it stops there.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PrePlan {
    /// Run in order, then the record is read again.
    pub(crate) actions: Vec<Action>,
    /// Why the pass stops once `actions` ran: an id the file gives would re-point what the
    /// journal holds (`decide::adoption`).
    pub(crate) refused: Option<String>,
}

/// The pass's first step. A file that names a `project_id` has what it adopts recorded
/// (`Action::AdoptProject`, at every pass: a URL id or an autobuyer `id` added to the file
/// later is adopted too) before the link list is first read, so that read is matched against
/// the adoption: its links count as held by others, the autobuyers' budgets as running.
/// A removed file (`None`) adopts nothing.
pub(crate) fn pre_plan(c: Option<&Campaign>, r: &Recorded) -> PrePlan {
    let Some(c) = c else {
        return PrePlan::default();
    };
    let step = adoption_step(c, r);
    PrePlan {
        actions: step
            .record
            .map(|a| adopt_project(r, a))
            .into_iter()
            .collect(),
        refused: step.refused,
    }
}

/// Whether the list read before the plan settles something uncertain (its calls count as
/// `settle`): an uncertain or blocked purchase, a link leaving, a stop waiting to be settled.
pub(crate) fn settles_something(r: &Recorded) -> bool {
    r.uncertain.iter().any(|i| i.kind == IntentKind::Purchase)
        || !r.blocked.is_empty()
        || r.held
            .iter()
            .any(|h| h.released.is_none() && h.leaving_since.is_some())
        || r.ids
            .autobuyers
            .values()
            .any(|a| a.running && a.stopped_at.is_some())
}

/// Whether the pass reads the link list before it plans: something waits for it (an
/// uncertain or blocked purchase, a link leaving), or autobuyers may have bought pages the
/// round must not buy again (and their stops wait to be settled), or the project is adopted
/// (the team buys there by hand: every pass reads what it holds before anything is decided).
pub(crate) fn needs_list_first(r: &Recorded) -> bool {
    r.ids.project.is_some()
        && (r.ids.account.adoption.is_some()
            || r.uncertain.iter().any(|i| i.kind == IntentKind::Purchase)
            || !r.blocked.is_empty()
            || r.has_autobuyers()
            || r.held
                .iter()
                .any(|h| h.released.is_none() && h.leaving_since.is_some()))
}

/// The plan's actions this pass runs: not the ones it did already (settlements, and the
/// adoption: [`pre_plan`] ran it), and, on an adopted project the operator has not confirmed
/// yet, none that changes it (the link sync still runs).
pub(crate) fn runnable_actions(
    p: &CampaignPlan,
    r: &Recorded,
    removed: bool,
    name: &str,
    not_done: &mut Vec<String>,
) -> Vec<usize> {
    let gated = r.ids.account.adoption_pending();
    let skipped = |a: &Action| {
        matches!(a, Action::Settle { .. } | Action::AdoptProject { .. })
            || (gated && a.waits_for_adoption())
    };
    if gated && removed && p.actions.iter().any(Action::waits_for_adoption) {
        not_done.push(format!(
            "changes on adopted project wait for `linkrunner resolve adopt {name}`"
        ));
    }
    (0..p.actions.len())
        .filter(|&i| !skipped(&p.actions[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::load_dir;
    use crate::decide::caps::caps;
    use crate::decide::plan::plan_campaign;

    fn example_plan() -> (CampaignPlan, Recorded) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
        let c = load_dir(&dir).campaigns.remove(0).campaign;
        let r = Recorded::unrecorded_with(&caps(&c), Vec::new());
        (plan_campaign(&c, &r, true), r)
    }

    #[test]
    fn a_file_that_adopts_is_recorded_first_with_the_line_plan_shows() {
        let (_, r) = example_plan();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
        let mut c = load_dir(&dir).campaigns.remove(0).campaign;
        assert_eq!(pre_plan(Some(&c), &r), PrePlan::default(), "adopts nothing");
        assert_eq!(pre_plan(None, &r), PrePlan::default(), "a removed file");
        c.project_id = Some(4711);
        let first = pre_plan(Some(&c), &r);
        assert_eq!(first.refused, None);
        let [adopt @ Action::AdoptProject { adopting, .. }] = &first.actions[..] else {
            panic!("{:?}", first.actions);
        };
        assert_eq!(adopting.project_id, 4711);
        let shown = plan_campaign(&c, &r, true);
        assert_eq!(
            shown.actions.first(),
            Some(adopt),
            "plan shows what the pass records"
        );
        // Confirmed: plan no longer shows it, but an id added to the file is still recorded.
        let mut r = r;
        r.ids.project = Some(linkrunner_domain::market::ProjectIds {
            project_id: 4711,
            url_id: 0,
            text_id: 0,
        });
        let now = chrono::Utc::now();
        r.ids.account.adoption = Some(linkrunner_domain::records::Adoption {
            project_id: 4711,
            recorded_at: now,
            first_read_at: Some(now),
            confirmed: Some(linkrunner_domain::records::OperatorWord {
                by: "op".into(),
                at: now,
                reason: "read the plan".into(),
                links: None,
            }),
        });
        let plan = plan_campaign(&c, &r, true);
        assert!(
            !plan
                .actions
                .iter()
                .any(|a| matches!(a, Action::AdoptProject { .. }))
        );
        assert_eq!(pre_plan(Some(&c), &r).actions.len(), 1);
    }

    #[test]
    fn a_project_the_file_would_re_point_stops_the_pass_before_anything_is_recorded() {
        let (_, mut r) = example_plan();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
        let mut c = load_dir(&dir).campaigns.remove(0).campaign;
        c.project_id = Some(4711);
        r.ids.project = Some(linkrunner_domain::market::ProjectIds {
            project_id: 4700,
            url_id: 1,
            text_id: 1,
        });
        let first = pre_plan(Some(&c), &r);
        assert!(first.actions.is_empty(), "{:?}", first.actions);
        let why = first.refused.expect("refused");
        assert!(why.contains("already ran on project 4700"), "{why}");
    }

    #[test]
    fn a_campaign_without_a_project_reads_no_list_before_it_plans() {
        let (_, r) = example_plan();
        assert!(!needs_list_first(&r), "no project, nothing to read");
        assert!(
            !settles_something(&r),
            "nothing uncertain, nothing to settle"
        );
    }

    #[test]
    fn a_pass_runs_every_action_but_those_only_recorded() {
        let (mut p, r) = example_plan();
        let planned = p.actions.len();
        assert!(planned > 0, "an empty journal has something to create");
        p.actions.push(Action::Settle {
            intent_id: 7,
            kind: "purchase".into(),
            how: "from the link list".into(),
        });
        p.actions.push(Action::AdoptProject {
            project_id: 4711,
            found: String::new(),
            adopting: Default::default(),
        });
        let mut not_done = Vec::new();
        let runnable = runnable_actions(&p, &r, false, "acme-shoes", &mut not_done);
        assert_eq!(runnable, (0..planned).collect::<Vec<_>>());
        assert!(not_done.is_empty(), "{not_done:?}");
    }
}
