//! The commands themselves, through the real binary: `plan`, `resolve`, and two `once`
//! processes racing on one PostgreSQL database.

use std::process::Output;

use linkrunner_sandbox::AutobuyerState;
use tokio::process::Command;

use super::fixtures::ACME;
use super::operator::{Waiting, autobuyer_creation_left_uncertain};
use super::support::{TICKET, TOKEN, TestDb, World, sandbox_config};
use crate::support::binary::{self, Target};
use crate::support::ledger;

/// `linkrunner ARGS` against the world's journal, campaign directory and sandbox.
fn linkrunner(w: &World, args: &[&str]) -> Command {
    let mut cmd = binary::command_on(&Target {
        db_url: &w.db.url,
        campaigns: w.dir.path(),
        market: &w.sandbox.base_url(),
        token: TOKEN,
        ticket: TICKET,
    });
    cmd.args(args);
    binary::tokio(cmd)
}

/// Runs `linkrunner ARGS` to the end (shared by the suites that drive the binary).
pub(super) async fn run(w: &World, args: &[&str]) -> Output {
    linkrunner(w, args).output().await.expect("the binary runs")
}

/// Runs `linkrunner ARGS` to the end and fails the test unless it exits 0.
pub(super) async fn run_ok(w: &World, args: &[&str]) -> Output {
    let out = run(w, args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    out
}

/// The exit status and both outputs, for an assertion message.
pub(super) fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub async fn plan_on_a_fresh_database_exits_2_without_calling_the_marketplace(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);

    let out = run(&w, &["plan"]).await;

    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("create the project for https://acme.example"),
        "{stdout}"
    );
    assert!(stdout.contains("create autobuyer acme-auto"), "{stdout}");
    assert_eq!(
        ledger::all_requests(&w.ledger()),
        0,
        "plan never calls the marketplace"
    );
}

pub async fn resolve_through_the_binary_lets_the_next_pass_converge(db: TestDb) {
    let Waiting {
        world: w,
        intent,
        autobuyer_id,
    } = autobuyer_creation_left_uncertain(db).await;
    let status = run(&w, &["status"]).await;
    assert!(
        String::from_utf8_lossy(&status.stdout)
            .contains(&format!("UNCERTAIN create_autobuyer #{intent}")),
        "{}",
        text(&status)
    );

    let out = run(
        &w,
        &[
            "resolve",
            &intent.to_string(),
            "--created",
            &autobuyer_id.to_string(),
            "--reason",
            "seen in the marketplace's web UI",
        ],
    )
    .await;
    let resumed = w.pass(true).await;

    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(resumed[0].converged(), "{resumed:#?}");
    let ledger = w.ledger();
    assert_eq!(ledger.autobuyers.len(), 1, "created once");
    assert_eq!(
        ledger.autobuyer(autobuyer_id).unwrap().state,
        AutobuyerState::Running
    );
    assert_eq!(ledger.purchases.len(), 3, "spending resumed");
    w.assert_invariants().await;
}

pub async fn two_once_processes_at_the_same_time_keep_the_invariants(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    w.write_fixture_campaigns();

    let a = linkrunner(&w, &["once"]).output();
    let b = linkrunner(&w, &["once"]).output();
    let (a, b) = tokio::join!(a, b);
    let (a, b) = (a.expect("first once runs"), b.expect("second once runs"));

    for o in [&a, &b] {
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(o));
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains(": failed"),
            "{}",
            text(o)
        );
    }
    for _ in 0..3 {
        let again = run(&w, &["once"]).await;
        if again.status.success() {
            break;
        }
    }
    w.converge(3).await;
    let ledger = w.ledger();
    assert_eq!(
        ledger.projects.len(),
        3,
        "one project per campaign, whoever created it"
    );
    assert_eq!(ledger.autobuyers.len(), 3, "each autobuyer created once");
    w.assert_invariants().await;
}

/// `once` piped (as in CI): a progress line per campaign on stderr while it works, then one
/// line per campaign and a totals table whose links bought are the sandbox's purchase calls.
pub async fn once_shows_progress_and_ends_with_totals_that_match_the_ledger(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    w.write_fixture_campaigns();

    let out = run(&w, &["once"]).await;

    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    for k in 1..=3 {
        assert!(stderr.contains(&format!("[{k}/3] ")), "{}", text(&out));
    }
    assert!(
        !stderr.contains('\r'),
        "no bar redrawn when piped: {stderr:?}"
    );
    let bought_by_calls = w
        .ledger()
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_none())
        .count();
    assert!(
        bought_by_calls > 0,
        "the pass bought something: {}",
        text(&out)
    );
    assert!(stdout.contains("\ntotals\n"), "{}", text(&out));
    assert!(
        stdout.contains("  campaigns           3   "),
        "{}",
        text(&out)
    );
    assert!(
        stdout.contains(&format!("  bought     {bought_by_calls:>10}   link(s)")),
        "{}",
        text(&out)
    );
    assert!(
        stdout.contains("RUB/month committed, of "),
        "{}",
        text(&out)
    );
    assert!(
        stdout.contains("\n  waiting    ") && stdout.contains("\n  failed     "),
        "{}",
        text(&out)
    );
}
