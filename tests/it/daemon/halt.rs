//! The stop button (issue 33): `linkrunner halt` from a third process stops two replicas'
//! buying and their running autobuyer within one reconciliation, while a purchase whose
//! answer was lost is still settled; a credential recovery does not lift it; `linkrunner
//! resume` starts the autobuyer again and buying resumes. Asserted on the sandbox's ledger.

use std::path::Path;
use std::time::Duration;

use linkrunner_sandbox::{AutobuyerState, Faults, Op, SandboxHandle};

use super::support::{TOKEN, command_on, start_sandbox, with_a_small_autobuyer};
use crate::support::binary::{self, Daemon};
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::db::intent_states;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

const NAME: &str = "halted";
/// Seconds a lost purchase answer stays uncertain before the link list settles it: long
/// enough for the test to press halt while it is uncertain.
const SETTLE_GRACE: &str = "3";

/// `linkrunner` on the test's journal, campaigns and sandbox, the token read from `token`.
fn linkrunner(
    db: &str,
    dir: &Path,
    sandbox: &SandboxHandle,
    token: &Path,
) -> std::process::Command {
    let mut cmd = command_on(db, dir, sandbox);
    cmd.env_remove("LINKRUNNER_API_TOKEN")
        .env("LINKRUNNER_API_TOKEN_FILE", token)
        .env("LINKRUNNER_SETTLE_GRACE", SETTLE_GRACE)
        .env("LINKRUNNER_RECONCILE_INTERVAL", "5");
    cmd
}

/// Runs `linkrunner halt` or `resume` to completion, as an operator in another shell would.
async fn press(db: &str, dir: &Path, sandbox: &SandboxHandle, token: &Path, what: &str) {
    let out = binary::tokio(linkrunner(db, dir, sandbox, token))
        .args([
            what,
            "--by",
            "night-operator",
            "--reason",
            "test presses it",
        ])
        .output()
        .await
        .expect("linkrunner runs");
    crate::support::binary::assert_success(&out, what);
}

fn autobuyer_running(sandbox: &SandboxHandle) -> Option<bool> {
    let l = sandbox.ledger();
    let ab = l.autobuyers.iter().find(|a| a.name.starts_with("auto"))?;
    Some(ab.state == AutobuyerState::Running)
}

/// Links bought, by purchase calls and by autobuyers.
fn purchases(sandbox: &SandboxHandle) -> usize {
    sandbox.ledger().purchases.len()
}

fn count(states: &[(String, i64)], state: &str) -> i64 {
    states
        .iter()
        .find(|(s, _)| s == state)
        .map_or(0, |(_, n)| *n)
}

/// Rows of one journal table whose scope stops every campaign here: in `halts` the default
/// account's credentials halt (`@default`, the one account of this deployment), in
/// `operator_halts` the operator's halt of every account (`*`).
async fn global_rows(db: &str, table: &str) -> i64 {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(db).await.expect("connect");
    let sql = match table {
        "halts" => "SELECT COUNT(*) FROM halts WHERE scope = '@default'",
        _ => "SELECT COUNT(*) FROM operator_halts WHERE scope = '*'",
    };
    let (n,): (i64,) = sqlx::query_as(sql)
        .fetch_one(&mut conn)
        .await
        .expect("count");
    conn.close().await.ok();
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halt_from_another_process_stops_both_replicas_until_resume_and_settles_what_was_in_flight()
{
    // Arrange: two replicas buying every second, with a running autobuyer.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    campaigns::write(
        dir.path(),
        &format!("{NAME}.yaml"),
        &with_a_small_autobuyer(NAME),
    );
    let secrets = tempfile::tempdir().unwrap();
    let token = secrets.path().join("api-token");
    std::fs::write(&token, TOKEN).unwrap();
    let sandbox = start_sandbox(0).await;
    let run = |sandbox: &SandboxHandle| {
        Daemon::run(
            linkrunner(&db.url, dir.path(), sandbox, &token),
            &["--round-every", "1", "--shutdown-grace", "10"],
        )
    };
    let mut one = run(&sandbox).await;
    let mut two = run(&sandbox).await;
    one.ready().await;
    two.ready().await;
    within(PATIENCE, "buying and a running autobuyer", || async {
        (purchases(&sandbox) >= 2 && autobuyer_running(&sandbox) == Some(true)).then_some(())
    })
    .await;

    // Act 1: a purchase's answer is lost (it executed), and while it is uncertain an
    // operator halts everything from a third process.
    sandbox
        .set_faults(Faults {
            drop_after_commit_rate: 1.0,
            drop_ops: Some([Op::BuyLinks].into()),
            ..Faults::default()
        })
        .unwrap();
    within(PATIENCE, "an uncertain purchase", || async {
        let states = intent_states(&db.url, "purchase").await;
        (count(&states, "uncertain") > 0).then_some(())
    })
    .await;
    press(&db.url, dir.path(), &sandbox, &token, "halt").await;
    sandbox.set_faults(Faults::default()).unwrap();

    // Assert 1: within one reconciliation (5 s) the autobuyer is stopped, and what was
    // uncertain is settled; then nothing more is bought.
    within(Duration::from_secs(10), "the autobuyer stopped", || async {
        (autobuyer_running(&sandbox) == Some(false)).then_some(())
    })
    .await;
    within(PATIENCE, "the lost purchase settled", || async {
        let states = intent_states(&db.url, "purchase").await;
        (count(&states, "uncertain") == 0 && count(&states, "in_flight") == 0).then_some(())
    })
    .await;
    let halted_at = purchases(&sandbox);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(purchases(&sandbox), halted_at, "bought while halted");

    // Act 2: the marketplace rejects the token, then accepts it again: the credentials
    // halt comes and goes.
    std::fs::write(&token, "a-token-the-marketplace-rejects").unwrap();
    within(PATIENCE, "the credentials halt", || async {
        (global_rows(&db.url, "halts").await == 1).then_some(())
    })
    .await;
    std::fs::write(&token, TOKEN).unwrap();
    within(PATIENCE, "the credentials recovered", || async {
        (global_rows(&db.url, "halts").await == 0).then_some(())
    })
    .await;

    // Assert 2: the operator's halt is still in force and nothing is bought or started.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(global_rows(&db.url, "operator_halts").await, 1);
    assert_eq!(
        purchases(&sandbox),
        halted_at,
        "bought after a credential recovery"
    );
    assert_eq!(autobuyer_running(&sandbox), Some(false));

    // Act 3: resume.
    press(&db.url, dir.path(), &sandbox, &token, "resume").await;

    // Assert 3: the autobuyer runs again and buying resumes; nothing was bought twice and
    // the journal agrees with the ledger.
    within(
        Duration::from_secs(15),
        "the autobuyer started again",
        || async { (autobuyer_running(&sandbox) == Some(true)).then_some(()) },
    )
    .await;
    within(Duration::from_secs(15), "buying resumed", || async {
        (purchases(&sandbox) > halted_at).then_some(())
    })
    .await;
    one.signal("TERM");
    two.signal("TERM");
    assert!(one.exit_within(PATIENCE).await.is_some_and(|s| s.success()));
    assert!(two.exit_within(PATIENCE).await.is_some_and(|s| s.success()));
    let ledger = sandbox.ledger();
    assert_eq!(ledger.duplicate_purchases, 0);
    let states = intent_states(&db.url, "purchase").await;
    assert_eq!(count(&states, "uncertain"), 0, "{states:?}");
    let ours = ledger.purchases.iter().filter(|p| p.autobuyer_id.is_none());
    assert_eq!(
        ours.count() as i64,
        count(&states, "succeeded"),
        "{states:?}"
    );
    assert_eq!(global_rows(&db.url, "operator_halts").await, 0);
}
