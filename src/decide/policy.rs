//! How an uncertain intent is settled, in the words `plan`, `status` and the journal use.
//! The settling itself is in `settle`; `plan` and `report` only need the words.

use linkrunner_domain::intents::IntentKind;

/// The policy for an uncertain intent of `kind`, in the words `plan` and `status` use.
pub(crate) fn policy(kind: IntentKind) -> &'static str {
    match kind {
        IntentKind::Purchase => {
            "match it against the project's link list; its page is never bought again automatically"
        }
        IntentKind::CreateProject | IntentKind::AddTexts | IntentKind::CreateFilter => {
            "free creation: send it again (a duplicate costs nothing)"
        }
        IntentKind::StartAutobuyer | IntentKind::StopAutobuyer => {
            "its state is unknown: it counts as running until a stop is confirmed, and the switch the file wants is sent"
        }
        IntentKind::CreateAutobuyer => {
            "cannot be checked: spending stops until an operator runs `linkrunner resolve`"
        }
    }
}
