//! A reconciliation of a converged campaign only looks (issue 34, item 3): it reads the link
//! list and plans nothing when the file, the journal and the list are as the last full pass
//! saw them and nothing time-driven is due; within the settle grace of a purchase, after a
//! new month began, once a round's slot came, and when a link was removed by hand, the pass
//! is full, and it still makes one list call. On an injected clock shared with the sandbox.

use chrono::{DateTime, Utc};
use linkrunner::clock::{ManualClock, SharedClock};
use linkrunner::effects::pass::CampaignReport;
use linkrunner::store::HeldLink;
use linkrunner_sandbox::{LinkStatus, Op};

use super::fixtures::DUNE;
use super::support::{self, TestDb, World};
use crate::support::ledger;

fn at(s: &str) -> DateTime<Utc> {
    s.parse().expect("time")
}

/// dune-maps (rounds on weekdays at 06:30, no autobuyer) on a clock at `start`, with a
/// settle grace of two minutes.
async fn world(db: TestDb, start: DateTime<Utc>) -> (World, std::sync::Arc<ManualClock>) {
    let clock = ManualClock::new(start);
    let shared: SharedClock = clock.clone();
    let cfg = support::sandbox_config();
    let w = World::on_clock(db, cfg, shared, |s| {
        s.engine.settle_grace = chrono::Duration::seconds(120);
    })
    .await;
    w.write_campaign("dune-maps", DUNE);
    (w, clock)
}

/// dune-maps' held links as the journal holds them.
async fn held_links(w: &World) -> Vec<HeldLink> {
    let held = w.store().links().held_links("dune-maps").await;
    held.expect("held")
}

/// One reconciliation at `t`: whether it only looked, and the link-list calls it made.
async fn reconcile(
    w: &World,
    clock: &ManualClock,
    t: DateTime<Utc>,
) -> (bool, u64, CampaignReport) {
    clock.set(t);
    let looked = || w.engine.metrics().load.reconciliations_looked_total.get();
    let lists = || ledger::requests(&w.ledger(), Op::ListLinks);
    let (looked0, lists0) = (looked(), lists());
    let mut reports = w.pass(false).await;
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let report = reports.remove(0);
    assert!(report.converged(), "at {t}: {report:#?}");
    (looked() > looked0, lists() - lists0, report)
}

pub async fn a_converged_campaign_only_looks_until_something_is_due_or_changes(db: TestDb) {
    // Arrange: a round bought two links at 07:00 on Monday 30 November.
    let (w, clock) = world(db, at("2026-11-30T07:00:00Z")).await;
    let bought = w.pass(true).await;
    assert!(bought.iter().all(|r| r.bought > 0), "{bought:#?}");

    // Act and assert, step by step: (when, whether the pass only looked, why).
    let steps = [
        (
            "2026-11-30T07:00:30Z",
            false,
            "within the settle grace of the purchases",
        ),
        (
            "2026-11-30T07:05:00Z",
            false,
            "the first full pass after the grace: remembered",
        ),
        ("2026-11-30T07:10:00Z", true, "nothing changed, nothing due"),
        ("2026-11-30T12:00:00Z", true, "still nothing"),
        ("2026-12-01T00:05:00Z", false, "a new month (and day) began"),
        (
            "2026-12-01T00:10:00Z",
            true,
            "the new month's first full pass was remembered",
        ),
        (
            "2026-12-01T06:30:30Z",
            false,
            "the round's slot at 06:30 came",
        ),
        ("2026-12-01T06:35:00Z", true, "after the slot"),
    ];
    for (t, looked, why) in steps {
        let (only_looked, lists, report) = reconcile(&w, &clock, at(t)).await;
        assert_eq!(only_looked, looked, "{t}: {why}: {report:#?}");
        assert_eq!(lists, 1, "{t}: one link-list call whether it looks or not");
    }

    // A link removed by hand (the list shows it `removed`): the next pass sees the list
    // changed, runs in full on the read it made (one call), and records the link leaving.
    let r = w.recorded("dune-maps").await;
    let link = r.held[0].link_id.expect("the list showed the link's id");
    w.sandbox
        .set_link_status(link, LinkStatus::Removed, true)
        .expect("removed by hand");
    let (only_looked, lists, report) = reconcile(&w, &clock, at("2026-12-01T06:40:00Z")).await;
    assert!(!only_looked, "the list changed: {report:#?}");
    assert_eq!(lists, 1, "the full pass reuses the look's read");
    let held = held_links(&w).await;
    let gone = held
        .iter()
        .find(|h| h.link_id == Some(link))
        .expect("held link");
    assert!(
        gone.leaving_since.is_some(),
        "the link removed by hand is seen leaving: {gone:#?}"
    );
    // Once the link is released (after the grace) the campaign is quiet again, and a look
    // moves the other link's "last seen" to its read.
    for t in [
        "2026-12-01T06:50:00Z",
        "2026-12-01T06:55:00Z",
        "2026-12-01T07:00:00Z",
    ] {
        reconcile(&w, &clock, at(t)).await;
    }
    let last = at("2026-12-01T07:05:00Z");
    let (only_looked, _, report) = reconcile(&w, &clock, last).await;
    assert!(only_looked, "quiet again: {report:#?}");
    let held = held_links(&w).await;
    let gone = held
        .iter()
        .find(|h| h.link_id == Some(link))
        .expect("held link");
    let kept = held
        .iter()
        .find(|h| h.link_id != Some(link))
        .expect("the other link");
    assert!(
        gone.released.is_some(),
        "released after the grace: {gone:#?}"
    );
    assert_eq!(kept.seen_in_list_at, Some(last), "the look saw it");
    w.assert_invariants().await;
}
