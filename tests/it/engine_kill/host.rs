//! Issue 25, points 1 and 2: the host around the money logic. Real signals to the real
//! binary, a holder killed with SIGKILL whose lease would otherwise block its campaign
//! for the whole TTL, a daemon stopped by SIGTERM that must leave no lease behind, and a live
//! holder that `once` must name with its lease's expiry. Every case ends with the ledger checked: no duplicate purchase, no cap
//! exceeded, every purchase recorded, the campaign converged.

use std::time::{Duration, Instant};

use linkrunner::store::{IntentKind, IntentState, LeaseHolder};
use linkrunner_sandbox::{Faults, Op};
use serde_json::Value;

use super::campaign::Spec;
use super::invariants::assert_safe_and_converged;
use super::proxy::Trap;
use super::support::{Backend, Rig};

/// Long enough that a test which waited it out would time out first: a lease the next
/// process got within seconds was taken over, not expired.
const LONG_TTL: Duration = Duration::from_secs(300);

/// `once`'s documented exit code after a clean stop on a signal (`cli::once::INTERRUPTED`).
const INTERRUPTED: i32 = linkrunner::cli::once::INTERRUPTED as i32;

async fn rig(backend: Backend, faults: Faults) -> (Rig, Spec) {
    let spec = Spec::new("host-shop", 4);
    let mut rig = Rig::start(backend, &[spec.file()], faults).await;
    rig.lease_ttl = LONG_TTL;
    (rig, spec)
}

fn signal(pid: u32, name: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "SIG{name} delivered to {pid}");
}

async fn purchases_in(rig: &Rig, state: IntentState) -> usize {
    rig.intents()
        .await
        .iter()
        .filter(|i| i.kind == IntentKind::Purchase && i.state == state)
        .count()
}

async fn until_a_purchase_is_in_flight(rig: &Rig) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while purchases_in(rig, IntentState::InFlight).await == 0 {
        assert!(Instant::now() < deadline, "no purchase went in flight");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn outcomes(out: &std::process::Output) -> Vec<String> {
    let reports: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
    reports
        .iter()
        .map(|r| format!("{}: {} {}", r["campaign"], r["outcome"], r["detail"]))
        .collect()
}

/// The next `once` finishes well within a minute (it waited for no lease) and worked every
/// campaign: none skipped.
async fn next_once_works_at_once(rig: &Rig) {
    let started = Instant::now();
    let next = rig.run(&["once", "--format", "json"]).await;
    let said = outcomes(&next);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
    assert!(!said.is_empty(), "{said:?}");
    assert!(said.iter().all(|r| !r.contains("skipped")), "{said:?}");
}

pub async fn a_once_killed_with_sigkill_does_not_block_the_next_once(backend: Backend) {
    // Arrange: `once` killed while its purchase is held at the marketplace, holding a lease
    // that would last five minutes.
    let (rig, spec) = rig(backend, Faults::default()).await;
    rig.once_killed_in_call(Op::BuyLinks, Trap::Unexecuted)
        .await;

    // Act and assert: the next `once` took the dead holder's lease at once and worked the
    // campaign.
    next_once_works_at_once(&rig).await;
    assert_eq!(purchases_in(&rig, IntentState::InFlight).await, 0);
    rig.restart_until_converged().await;
    assert_safe_and_converged(&rig, &[spec]).await;
}

pub async fn sigterm_in_once_lets_the_call_in_flight_finish_and_exits_4(backend: Backend) {
    // Arrange: every call takes 1.5 s, so a purchase is in flight long enough to be caught.
    let faults = Faults {
        latency_ms: 1500,
        ..Faults::default()
    };
    let (rig, spec) = rig(backend, faults).await;
    let (mut child, _) = rig.spawn_once(&[]);
    until_a_purchase_is_in_flight(&rig).await;

    // Act
    signal(child.id().expect("pid"), "TERM");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;

    // Assert: the documented code; the purchase finished and is recorded; the lease is free.
    let status = status.expect("once exits after SIGTERM").expect("status");
    assert_eq!(status.code(), Some(INTERRUPTED), "{status}");
    assert_eq!(purchases_in(&rig, IntentState::InFlight).await, 0);
    assert!(purchases_in(&rig, IntentState::Succeeded).await > 0);
    let lease = rig.journal.store.leases().lease_holder(&spec.name).await;
    let lease = lease.expect("journal").expect("a lease row");
    assert!(
        lease.expires_at <= chrono::Utc::now(),
        "released: {lease:?}"
    );
    let next = rig.run(&["once", "--format", "json"]).await;
    let said = outcomes(&next);
    assert!(said.iter().all(|r| !r.contains("skipped")), "{said:?}");
    rig.restart_until_converged().await;
    assert_safe_and_converged(&rig, &[spec]).await;
}

pub async fn a_second_signal_exits_once_at_once(backend: Backend) {
    // Arrange: the purchase is held at the marketplace and never answered.
    let (rig, spec) = rig(backend, Faults::default()).await;
    let tripped = rig.proxy.arm(Op::BuyLinks, Trap::Unexecuted);
    let (child, _) = rig.spawn_once(&[]);
    // Act and assert: SIGINT, then SIGTERM while the first waits for the call: 128 + SIGTERM.
    second_signal_exits_at_once(&rig, &spec, child, tripped, ["INT", "TERM"], 143).await;
}

pub async fn a_second_signal_exits_run_at_once(backend: Backend) {
    // Arrange: the daemon buying every second, its first purchase held at the marketplace and
    // never answered, with a minute's grace to let it finish.
    let (rig, spec) = rig(backend, Faults::default()).await;
    let tripped = rig.proxy.arm(Op::BuyLinks, Trap::Unexecuted);
    let child = rig.spawn_run(&["--round-every", "1", "--shutdown-grace", "60"]);
    // Act and assert: SIGTERM (the daemon waits for the call within its grace), then SIGINT:
    // 128 + SIGINT.
    second_signal_exits_at_once(&rig, &spec, child, tripped, ["TERM", "INT"], 130).await;
}

/// Once the held purchase was sent, `signals[0]` (the process waits for the call), then
/// `signals[1]`: the process exits at once with `code`, and what it left is settled by the
/// next runs.
async fn second_signal_exits_at_once(
    rig: &Rig,
    spec: &Spec,
    mut child: tokio::process::Child,
    tripped: tokio::sync::oneshot::Receiver<()>,
    signals: [&str; 2],
    code: i32,
) {
    let pid = child.id().expect("pid");
    tokio::time::timeout(Duration::from_secs(60), tripped)
        .await
        .expect("a purchase was sent")
        .expect("trap");
    signal(pid, signals[0]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(child.try_wait().expect("status").is_none(), "still waiting");
    let sent = Instant::now();
    signal(pid, signals[1]);
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    let status = status.expect("exits at once").expect("status");
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(code), "{status}");
    rig.restart_until_converged().await;
    assert_safe_and_converged(rig, std::slice::from_ref(spec)).await;
}

pub async fn a_poll_held_by_the_marketplace_is_cut_at_the_search_deadline(backend: Backend) {
    // Arrange: the marketplace holds the first search poll and never answers it; searches
    // have 3 s, requests 10 s each (retried: a poll could take 40 s).
    let (rig, _spec) = rig(backend, Faults::default()).await;
    let tripped = rig.proxy.arm(Op::SearchResult, Trap::Unexecuted);
    let (mut child, _) = rig.spawn_once(&[("LINKRUNNER_SEARCH_DEADLINE", "3")]);

    // Act
    tokio::time::timeout(Duration::from_secs(60), tripped)
        .await
        .expect("a poll was sent")
        .expect("trap");
    let held = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;

    // Assert: the pass ended soon after the deadline, not a request timeout later.
    status.expect("once ends").expect("status");
    assert!(
        held.elapsed() < Duration::from_secs(8),
        "once went on {:?} after its poll was held",
        held.elapsed()
    );
    assert!(rig.sandbox.ledger().purchases.is_empty());
}

/// The lease row of `campaign` if `pid` holds it and it has not expired.
async fn live_lease_of(rig: &Rig, campaign: &str, pid: u32) -> Option<LeaseHolder> {
    let held = rig.journal.store.leases().lease_holder(campaign).await;
    let held = held.expect("journal")?;
    (held.identity.pid == Some(i64::from(pid)) && held.expires_at > chrono::Utc::now())
        .then_some(held)
}

/// `run` buying every second with its first purchase held at the marketplace and never
/// answered, so the round's pass holds the campaign's lease; `grace` is `--shutdown-grace`.
/// Returns the daemon once its lease is live.
async fn run_holding_the_lease(rig: &Rig, spec: &Spec, grace: &str) -> tokio::process::Child {
    let tripped = rig.proxy.arm(Op::BuyLinks, Trap::Unexecuted);
    let child = rig.spawn_run(&["--round-every", "1", "--shutdown-grace", grace]);
    tokio::time::timeout(Duration::from_secs(60), tripped)
        .await
        .expect("a purchase was sent")
        .expect("trap");
    let pid = child.id().expect("pid");
    assert!(
        live_lease_of(rig, &spec.name, pid).await.is_some(),
        "the daemon holds the lease while its purchase is held"
    );
    child
}

pub async fn sigterm_in_run_releases_its_leases_and_the_next_once_starts_at_once(backend: Backend) {
    // Arrange: the daemon's purchase is held unanswered, and no grace is given, so SIGTERM
    // cuts the pass off while it holds a lease meant to last five minutes.
    let (rig, spec) = rig(backend, Faults::default()).await;
    let mut child = run_holding_the_lease(&rig, &spec, "0").await;
    let pid = child.id().expect("pid");

    // Act
    signal(pid, "TERM");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;

    // Assert: exit 0 (docs/faults.md, exit codes); no live lease of the daemon's is left; the
    // next `once` works the campaign at once; the ledger holds.
    let status = status.expect("run exits after SIGTERM").expect("status");
    assert_eq!(status.code(), Some(0), "{status}");
    let left = live_lease_of(&rig, &spec.name, pid).await;
    assert!(left.is_none(), "the daemon left a live lease: {left:?}");
    next_once_works_at_once(&rig).await;
    rig.restart_until_converged().await;
    assert_safe_and_converged(&rig, &[spec]).await;
}

pub async fn once_names_a_live_holder_and_when_its_lease_expires(backend: Backend) {
    // Arrange: a live `run` holds the campaign's lease (its purchase held unanswered).
    let (rig, spec) = rig(backend, Faults::default()).await;
    let mut daemon = run_holding_the_lease(&rig, &spec, "0").await;
    let pid = daemon.id().expect("pid");
    let before = live_lease_of(&rig, &spec.name, pid).await.expect("held");

    // Act
    let started = Instant::now();
    let out = rig.run(&["once"]).await;

    // Assert: `once` does not wait out the TTL; it says whose lease it met, that the holder
    // runs here, and until when the lease lasts (the documented `%Y-%m-%d %H:%M:%S UTC`).
    let after = live_lease_of(&rig, &spec.name, pid).await.expect("held");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{}: skipped", spec.name)))
        .unwrap_or_else(|| panic!("no skipped line: {text}"));
    let holder = &before.identity.holder;
    let whose = format!(
        "another process holds this campaign's lease: {holder}, pid {pid}, running on this host; the lease expires at "
    );
    assert!(line.contains(&whose), "{line}");
    let until = |h: &LeaseHolder| {
        let t = h.expires_at.format("%Y-%m-%d %H:%M:%S UTC");
        format!("expires at {t} unless renewed")
    };
    assert!(
        line.contains(&until(&before)) || line.contains(&until(&after)),
        "{line}\nlease: {before:?} / {after:?}"
    );
    signal(pid, "TERM");
    let status = tokio::time::timeout(Duration::from_secs(10), daemon.wait()).await;
    assert!(status.expect("run exits").expect("status").success());
    rig.restart_until_converged().await;
    assert_safe_and_converged(&rig, &[spec]).await;
}
