//! Each thing that is due or open, and each change since the last full pass, makes the
//! reconciliation full; a converged campaign with none of them only looks.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::campaign::load_dir;
use crate::decide::caps::caps;
use linkrunner_domain::halts::{Halt, HaltScope};
use linkrunner_domain::intents::{IntentId, IntentRow};
use linkrunner_domain::market::{LinkRecord, ProjectIds};
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{HeldLink, RoundRow, RoundState};

fn at(s: &str) -> DateTime<Utc> {
    s.parse().expect("time")
}

/// 2026-11-24, a Tuesday, 12:00 UTC: acme-shoes's round (daily at 09:00) ran today.
fn noon() -> DateTime<Utc> {
    at("2026-11-24T12:00:00Z")
}

fn grace() -> Duration {
    Duration::seconds(120)
}

/// The example campaign with a daily round at 09:00, and its record after a round today
/// and a purchase an hour before: converged, nothing open.
fn converged() -> (Campaign, Recorded) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    let c = load_dir(&dir)
        .campaigns
        .into_iter()
        .map(|lc| lc.campaign)
        .find(|c| c.name == "acme-shoes")
        .expect("acme-shoes");
    let mut r = Recorded::unrecorded_with(&caps(&c), Vec::new());
    r.ids.project = Some(ProjectIds {
        project_id: 7,
        url_id: 1,
        text_id: 1,
    });
    r.purchases.push(purchase(
        IntentState::Succeeded,
        noon() - Duration::hours(1),
    ));
    r.held.push(HeldLink {
        intent_id: IntentId(1),
        link_id: Some(11),
        page_id: 5,
        url_id: 1,
        text_id: 1,
        price: Money::from_rubles(100),
        bought_at: noon() - Duration::hours(1),
        seen_in_list_at: Some(noon() - Duration::minutes(5)),
        listed_after_ms: None,
        status: None,
        leaving_since: None,
        released: None,
    });
    r.last_round = Some(round(
        at("2026-11-24T09:00:00Z"),
        Some(at("2026-11-24T09:01:00Z")),
    ));
    (c, r)
}

fn purchase(state: IntentState, updated: DateTime<Utc>) -> IntentRow {
    IntentRow {
        id: IntentId(1),
        campaign: "acme-shoes".into(),
        kind: IntentKind::Purchase,
        natural_key: "k".into(),
        state,
        attempts: 1,
        fingerprint: String::new(),
        request: serde_json::json!({"url": "https://acme.example/", "page_id": 5}),
        answer: None,
        error: None,
        reserved: Money::from_rubles(100),
        reserved_links: 1,
        owner: "me".into(),
        created_at: updated,
        updated_at: updated,
        resolution: None,
        rebuy_blocked: false,
    }
}

fn round(slot: DateTime<Utc>, finished_at: Option<DateTime<Utc>>) -> RoundRow {
    RoundRow {
        campaign: "acme-shoes".into(),
        slot,
        holder: "me".into(),
        state: RoundState::Succeeded,
        detail: String::new(),
        claimed_at: slot,
        finished_at,
        attempts: 1,
        bought: 1,
    }
}

fn seen(until: DateTime<Utc>) -> Seen {
    Seen {
        file: "f1".into(),
        fence: 3,
        project: 7,
        journal: vec![1, 2, 3],
        list: 42,
        listed_at: noon(),
        until,
    }
}

fn now_at(t: DateTime<Utc>) -> Now<'static> {
    Now {
        file: "f1",
        fence: 3,
        journal: &[1, 2, 3],
        at: t,
    }
}

#[test]
fn a_converged_campaign_is_quiet_until_its_next_slot_or_midnight() {
    let (c, r) = converged();
    assert_eq!(
        quiet_until(&c, &r, noon(), grace()),
        Ok(at("2026-11-25T00:00:00Z")),
        "the next slot (09:00 tomorrow) is after midnight"
    );
    let before_the_slot = at("2026-11-24T08:00:00Z");
    let (c, mut r) = converged();
    r.last_round = Some(round(
        at("2026-11-23T09:00:00Z"),
        Some(at("2026-11-23T09:01:00Z")),
    ));
    r.purchases.clear();
    r.held.clear();
    assert_eq!(
        quiet_until(&c, &r, before_the_slot, grace()),
        Ok(at("2026-11-24T09:00:00Z")),
        "quiet only until today's slot"
    );
}

#[test]
fn each_open_or_due_thing_makes_the_next_pass_full() {
    type Change = fn(&mut Recorded);
    let cases: [(&str, Change, Full); 10] = [
        (
            "an uncertain intent",
            |r| {
                r.uncertain.push(purchase(
                    IntentState::Uncertain,
                    noon() - Duration::hours(2),
                ))
            },
            Full::Open,
        ),
        (
            "a purchase in flight",
            |r| {
                r.purchases
                    .push(purchase(IntentState::InFlight, noon() - Duration::hours(2)))
            },
            Full::Open,
        ),
        (
            "a reservation",
            |r| r.budget.reserved_in_flight = Money::from_rubles(1),
            Full::Open,
        ),
        (
            "a round under way",
            |r| r.last_round = Some(round(at("2026-11-24T09:00:00Z"), None)),
            Full::Open,
        ),
        (
            "a halt",
            |r| {
                r.halts.push(Halt::automatic(
                    HaltScope::campaign("acme-shoes"),
                    "x",
                    noon(),
                ))
            },
            Full::Halted,
        ),
        (
            "a link leaving",
            |r| r.held[0].leaving_since = Some(noon() - Duration::hours(3)),
            Full::Settling,
        ),
        (
            "a blocked purchase",
            |r| {
                r.blocked
                    .push(purchase(IntentState::Failed, noon() - Duration::hours(3)))
            },
            Full::Settling,
        ),
        (
            "a purchase within the settle grace",
            |r| r.purchases[0].updated_at = noon() - Duration::seconds(60),
            Full::WithinGrace,
        ),
        (
            "a link bought within the settle grace",
            |r| r.held[0].bought_at = noon() - Duration::seconds(60),
            Full::WithinGrace,
        ),
        (
            "yesterday's round, today's slot passed",
            |r| {
                r.last_round = Some(round(
                    at("2026-11-23T09:00:00Z"),
                    Some(at("2026-11-23T09:01:00Z")),
                ))
            },
            Full::RoundDue,
        ),
    ];
    for (what, change, why) in cases {
        let (c, mut r) = converged();
        assert!(
            quiet_until(&c, &r, noon(), grace()).is_ok(),
            "{what}: the base is quiet"
        );
        change(&mut r);
        assert_eq!(quiet_until(&c, &r, noon(), grace()), Err(why), "{what}");
    }
}

#[test]
fn an_adopted_project_is_never_quiet() {
    let (c, mut r) = converged();
    r.ids.account.adoption = Some(linkrunner_domain::records::Adoption {
        project_id: 7,
        recorded_at: noon() - Duration::days(3),
        first_read_at: None,
        confirmed: None,
    });
    assert_eq!(quiet_until(&c, &r, noon(), grace()), Err(Full::Adopted));
}

#[test]
fn a_look_needs_the_same_file_fence_and_journal_before_anything_is_due() {
    let s = seen(at("2026-11-25T00:00:00Z"));
    let later = noon() + Duration::minutes(5);
    assert_eq!(may_look_only(&s, &now_at(later)), Ok(()));
    let changes: [(&str, Now<'static>, Full); 6] = [
        (
            "another file",
            Now {
                file: "f2",
                ..now_at(later)
            },
            Full::FileChanged,
        ),
        (
            "another holder since",
            Now {
                fence: 4,
                ..now_at(later)
            },
            Full::FenceMoved,
        ),
        (
            "a halt, an approval, a release",
            Now {
                journal: &[1, 2, 4],
                ..now_at(later)
            },
            Full::JournalChanged,
        ),
        (
            "the clock went back",
            now_at(noon() - Duration::seconds(1)),
            Full::ClockBack,
        ),
        (
            "a new day",
            now_at(at("2026-11-25T00:00:00Z")),
            Full::DayTurned,
        ),
        (
            "a new month",
            now_at(at("2026-12-01T00:05:00Z")),
            Full::DayTurned,
        ),
    ];
    for (what, now, why) in changes {
        assert_eq!(may_look_only(&s, &now), Err(why), "{what}");
    }
    let before_the_slot = seen(at("2026-11-24T15:00:00Z"));
    assert_eq!(
        may_look_only(&before_the_slot, &now_at(at("2026-11-24T15:00:00Z"))),
        Err(Full::SlotCame)
    );
}

#[test]
fn a_link_removed_by_hand_changes_the_list_digest() {
    let link = |id| LinkRecord {
        link_id: Some(id),
        page_id: Some(id * 10),
        url_id: Some(1),
        text_id: Some(1),
        price: Some(Money::from_rubles(100)),
        status: None,
    };
    let two = LinkList {
        links: vec![link(1), link(2)],
        completeness: ListCompleteness::NoPagingFields,
    };
    let one = LinkList {
        links: vec![link(1)],
        ..two.clone()
    };
    let mut leaving = two.clone();
    leaving.links[1].status = Some("removed".into());
    let paged = LinkList {
        completeness: ListCompleteness::AllPages { pages: 1 },
        ..two.clone()
    };
    let s = Seen {
        list: list_digest(&two),
        ..seen(noon())
    };
    assert_eq!(list_unchanged(&s, list_digest(&two.clone())), Ok(()));
    for (what, other) in [
        ("a link removed", one),
        ("a link leaving", leaving),
        ("paged", paged),
    ] {
        assert_eq!(
            list_unchanged(&s, list_digest(&other)),
            Err(Full::ListChanged),
            "{what}"
        );
    }
}
