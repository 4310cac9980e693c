//! Every boundary of a changing call, for every kind of call: the binary is killed there with
//! SIGKILL, restarted until the campaign converges, and the ledger and journal are checked.

use linkrunner::store::IntentKind;
use linkrunner_sandbox::{Faults, Op};

use super::campaign::Spec;
use super::invariants::assert_safe_and_converged;
use super::proxy::Trap;
use super::support::{Backend, Rig};

/// Where in one changing call the binary dies.
#[derive(Debug, Clone, Copy)]
pub enum Boundary {
    /// The intent and its reservation are committed; nothing was sent.
    IntentRecorded,
    /// The request reached the marketplace, which never executes it.
    RequestSentNotExecuted,
    /// The request reached the marketplace and was executed; the answer never arrives.
    RequestExecutedAnswerLost,
    /// The answer arrived; its outcome is not recorded yet.
    AnswerReceived,
    /// The outcome is committed; the pass would go on.
    OutcomeRecorded,
}

/// The marketplace operation behind each kind of intent.
fn op_of(kind: IntentKind) -> Op {
    match kind {
        IntentKind::CreateProject => Op::AddProject,
        IntentKind::AddTexts => Op::AddTexts,
        IntentKind::CreateFilter => Op::AddFilter,
        IntentKind::CreateAutobuyer => Op::CreateAutobuyer,
        IntentKind::StartAutobuyer => Op::StartAutobuyers,
        IntentKind::StopAutobuyer => Op::StopAutobuyers,
        IntentKind::Purchase => Op::BuyLinks,
    }
}

/// Arrange a campaign whose first pass makes every kind of call; act: kill the first pass at
/// `boundary` of the first `kind` call, then restart until converged; assert the invariants.
pub async fn killed_at(backend: Backend, boundary: Boundary, kind: IntentKind) {
    let spec = Spec::new("kill-case", 2);
    let faults = Faults {
        latency_ms: 2,
        ..Faults::default()
    };
    let rig = Rig::start(backend, &[spec.file()], faults).await;
    let k = kind.as_str();

    match boundary {
        Boundary::IntentRecorded => {
            rig.once_killed_at_faultpoint(&format!("after_begin:{k}"))
                .await
        }
        Boundary::RequestSentNotExecuted => {
            rig.once_killed_in_call(op_of(kind), Trap::Unexecuted).await
        }
        Boundary::RequestExecutedAnswerLost => {
            rig.once_killed_in_call(op_of(kind), Trap::AnswerLost).await
        }
        Boundary::AnswerReceived => {
            rig.once_killed_at_faultpoint(&format!("after_call:{k}"))
                .await
        }
        Boundary::OutcomeRecorded => {
            rig.once_killed_at_faultpoint(&format!("after_complete:{k}"))
                .await
        }
    }
    rig.restart_until_converged().await;

    assert_safe_and_converged(&rig, &[spec]).await;
}
