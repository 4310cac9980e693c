//! What a 401/403 stops — pure, no I/O; the engine (`effects/protocol.rs`) reads what this
//! asks for and sets the halt it names.
//!
//! | the marketplace answered… | what stops |
//! |---|---|
//! | 401, on any path | all spending (the global credentials halt) |
//! | 403 on a path that names no project (creating a project, searching, filters, switching autobuyers) | all spending |
//! | 403 on a path naming the campaign's project, and a read of another known project works with the same credentials | that campaign only: a campaign halt naming the project (it belongs to another account, or access to it was taken away) |
//! | 403 on a project's path, and no other project is known or readable | all spending |
//!
//! Why: a `project_id` copied from another account answers 403 while the credentials are
//! fine. Taken for rejected credentials, it stopped every campaign, and the next campaign's
//! successful read lifted the halt again: spending flapped for everyone and a false
//! credentials alert fired. A 403 everywhere still stops everything: absent a working read,
//! the credentials themselves may be what is refused. Tested below and by
//! `tests/it/engine` `credentials::a_403_on_one_project_halts_that_campaign_only`.

use linkrunner_domain::op;

/// Which halt a refused call sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefusalScope {
    /// The credentials are refused: every campaign stops spending.
    Everything,
    /// Only the campaign's project is refused: that campaign stops.
    Campaign,
}

/// How a campaign halt for a refused project begins: [`is_project_refusal`] tells it from a
/// halt that waits for an operator (only a read of the project that works lifts it).
const PROJECT_REFUSED: &str = "the marketplace refuses project";

/// Whether the operation's path names the campaign's project (texts, purchase, link list,
/// autobuyer creation): only there can a 403 be the project's rather than the credentials'.
pub(crate) fn names_project(operation: &str) -> bool {
    [op::ADD_TEXTS, op::BUY, op::LIST_LINKS, op::CREATE_AUTOBUYER].contains(&operation)
}

/// Whether a refusal with `status` during `operation` may be one project's, so that a read of
/// another project is worth making before everything stops.
pub(crate) fn may_be_one_project(status: u16, operation: &str) -> bool {
    status == 403 && names_project(operation)
}

/// What stops: `other_read` is whether a read of another known project, with the same
/// credentials, worked (`None`: no other project is known, or none was read).
pub(crate) fn scope(status: u16, operation: &str, other_read: Option<bool>) -> RefusalScope {
    match (may_be_one_project(status, operation), other_read) {
        (true, Some(true)) => RefusalScope::Campaign,
        _ => RefusalScope::Everything,
    }
}

/// The campaign halt's reason: the project, the answer, and what lifts it.
pub(crate) fn project_reason(project: i64, operation: &str, other: i64) -> String {
    format!(
        "{PROJECT_REFUSED} {project} (HTTP 403 during {operation}) while the same credentials read project \
         {other}: the project belongs to another account, or access to it was taken away. This campaign's \
         spending is stopped (the others' goes on); it resumes by itself once the project can be read. Check \
         the file's `project_id`"
    )
}

/// Whether a halt's reason is a refused project's (see [`project_reason`]).
pub(crate) fn is_project_refusal(reason: &str) -> bool {
    reason.starts_with(PROJECT_REFUSED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_403_on_a_project_path_stops_one_campaign_only_when_another_project_reads() {
        assert_eq!(
            scope(403, op::LIST_LINKS, Some(true)),
            RefusalScope::Campaign
        );
        assert_eq!(scope(403, op::BUY, Some(true)), RefusalScope::Campaign);
        assert_eq!(
            scope(403, op::LIST_LINKS, Some(false)),
            RefusalScope::Everything,
            "a 403 everywhere"
        );
        assert_eq!(
            scope(403, op::LIST_LINKS, None),
            RefusalScope::Everything,
            "no other project to read"
        );
    }

    #[test]
    fn a_401_or_a_403_on_an_account_path_stops_everything() {
        assert_eq!(
            scope(401, op::LIST_LINKS, Some(true)),
            RefusalScope::Everything
        );
        for account_level in [
            op::CREATE_PROJECT,
            op::SEARCH,
            op::SEARCH_RESULT,
            op::CREATE_FILTER,
            op::STOP_AUTOBUYERS,
            op::START_AUTOBUYERS,
            op::LOGIN,
        ] {
            assert_eq!(
                scope(403, account_level, Some(true)),
                RefusalScope::Everything,
                "{account_level}"
            );
        }
    }

    #[test]
    fn the_campaign_halt_names_the_project_and_is_told_apart() {
        let why = project_reason(4711, op::LIST_LINKS, 5000);
        assert!(why.contains("4711") && why.contains("403"), "{why}");
        assert!(is_project_refusal(&why));
        assert!(!is_project_refusal(
            "create autobuyer (intent #3) is uncertain"
        ));
    }
}
