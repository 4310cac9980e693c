//! What one pass of a campaign reads first and which of its plan's actions it runs: whether
//! the link list is read before planning (and whether that read settles something), and
//! which actions are only recorded or wait for an operator's word on an adopted project.
//! Pure: `effects/pass.rs` acts on what these say.

use linkrunner_domain::intents::IntentKind;

use super::plan::{Action, CampaignPlan};
use super::recorded::Recorded;

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

/// The plan's actions this pass runs: not the ones only recorded (settlements the pass did
/// already, an adoption), and, on an adopted project the operator has not confirmed yet,
/// none that changes it (the link sync still runs).
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
        });
        let mut not_done = Vec::new();
        let runnable = runnable_actions(&p, &r, false, "acme-shoes", &mut not_done);
        assert_eq!(runnable, (0..planned).collect::<Vec<_>>());
        assert!(not_done.is_empty(), "{not_done:?}");
    }
}
