//! The brake's rule: a schedule's and its autobuyers' own buying never trips it, whatever the
//! trigger; a little over the multiple does; the floors keep a link or two from tripping it.

use proptest::prelude::*;

use super::*;
use crate::campaign::{Autobuyer, AutobuyerState, AutobuyerUrl, Budget, BuyRounds, PromotedUrl};

fn rub(r: i64) -> Money {
    Money::from_rubles(r)
}

/// A campaign buying `per_run` links a round, at most `daily` a day at `price` each, with
/// one running autobuyer per entry of `autobuyers` (budget, daily links).
fn campaign(per_run: u32, daily: u32, price: i64, autobuyers: &[(i64, u32)]) -> Campaign {
    Campaign {
        account: "default".into(),
        name: "acme-shoes".into(),
        domain: "https://acme.example".into(),
        paused: false,
        urls: vec![PromotedUrl {
            url: "https://acme.example/p".into(),
            texts: vec!["t #a#a#/a#".into()],
            url_id: None,
            text_ids: Default::default(),
        }],
        budget: Budget {
            monthly: rub(1_000_000),
            max_link_price: rub(price),
            daily_links: daily,
            total_links: 10_000,
            unknown_link_rent: None,
            pacing: Default::default(),
            approve_above: None,
        },
        project_id: None,
        renamed_from: None,
        buy: Some(BuyRounds::daily_for_tests(per_run)),
        filters: Vec::new(),
        autobuyers: autobuyers
            .iter()
            .enumerate()
            .map(|(i, (budget, daily))| Autobuyer {
                id: None,
                moved_from: None,
                name: format!("ab{i}"),
                filter: "f0".into(),
                auto_approve: false,
                state: AutobuyerState::Running,
                urls: vec![AutobuyerUrl {
                    url: "https://acme.example/p".into(),
                    monthly_budget: rub(*budget),
                    total_links_limit: 1000,
                    daily_links_limit: *daily,
                }],
            })
            .collect(),
    }
}

#[test]
fn a_daily_schedule_explains_its_per_run_links_at_the_max_price_plus_the_autobuyers() {
    let c = campaign(3, 5, 200, &[(1_000, 2)]);
    let day = expected(&c, 1, Window::Day);
    assert_eq!(day.links, 3 + 2);
    assert_eq!(day.committed, rub(3 * 200 + 1_000));
    // An hour with no slot of the schedule still tolerates one whole round.
    let hour = expected(&c, 0, Window::Hour);
    assert_eq!(hour, day);
    // --round-every: many slots, at most daily_links.
    assert_eq!(expected(&c, 86_400, Window::Day).links, 5 + 2);
}

#[test]
fn a_campaign_paused_or_an_autobuyer_stopped_now_still_explains_what_it_did_before() {
    let running = expected(&campaign(3, 5, 200, &[(1_000, 2)]), 1, Window::Day);
    let mut c = campaign(3, 5, 200, &[(1_000, 2)]);
    c.autobuyers[0].state = AutobuyerState::Stopped;
    c.paused = true;
    assert_eq!(expected(&c, 1, Window::Day), running);
}

#[test]
fn a_little_over_the_multiple_trips_with_the_figures_and_at_it_does_not() {
    let explained = Figures {
        committed: rub(600),
        links: 3,
    };
    let at = Figures {
        committed: rub(1_800),
        links: 9,
    };
    assert_eq!(judge(at, explained, 3.0, Window::Day), None);
    let over = Figures {
        committed: rub(1_860),
        links: 9,
    };
    let trip = judge(over, explained, 3.0, Window::Day).expect("3.1× trips");
    assert_eq!(trip.what, "committed");
    assert_eq!(
        trip.reason(3.0),
        "anomaly: committed 1860 RUB in the last 24 h; schedules and budgets explain 600 RUB; \
         multiple 3.1 > 3"
    );
    let links = Figures {
        committed: rub(600),
        links: 10,
    };
    let trip = judge(links, explained, 3.0, Window::Hour).expect("10 links > 3 × 3 trips");
    assert_eq!(trip.what, "links appearing");
    assert!(trip.reason(3.0).contains("10 links in the last hour"));
}

#[test]
fn below_the_floors_nothing_trips_and_a_multiple_of_0_is_off() {
    let nothing = Figures::default();
    let a_few = Figures {
        committed: MONEY_FLOOR,
        links: LINKS_FLOOR,
    };
    assert_eq!(judge(a_few, nothing, 3.0, Window::Day), None);
    let many = Figures {
        committed: rub(100_000),
        links: 100,
    };
    assert!(judge(many, nothing, 3.0, Window::Day).is_some());
    assert_eq!(judge(many, nothing, 0.0, Window::Day), None);
}

proptest! {
    /// Whatever the trigger's slots, a campaign that buys exactly what its schedule and its
    /// autobuyers allow in a window — even two days' worth, in a window straddling midnight —
    /// never trips the default multiple.
    #[test]
    fn a_schedules_own_buying_never_trips(
        per_run in 1u32..=100,
        daily_extra in 0u32..=900,
        price in 1i64..=100_000,
        slots in 0u64..=100_000,
        autobuyers in proptest::collection::vec((1i64..=1_000_000, 1u32..=1000), 0..4),
        days in 1u64..=2,
        hour in any::<bool>(),
    ) {
        let c = campaign(per_run, per_run + daily_extra, price, &autobuyers);
        let window = if hour { Window::Hour } else { Window::Day };
        let explained = expected(&c, slots, window);
        // What it may really do: its rounds, within daily_links on each of `days` days, and
        // each autobuyer's reservation and its daily links.
        let rounds = slots.max(u64::from(hour)).saturating_mul(u64::from(per_run));
        let round_links = rounds.min(days * u64::from(c.budget.daily_links));
        let ab_links: u64 = autobuyers.iter().map(|(_, d)| days * u64::from(*d)).sum();
        let ab_money = autobuyers.iter().map(|(b, _)| *b).sum::<i64>();
        let observed = Figures {
            committed: rub(price * i64::try_from(round_links).unwrap() + ab_money),
            links: round_links + ab_links,
        };
        prop_assert_eq!(judge(observed, explained, 3.0, window), None);
    }
}

#[test]
fn a_schedules_slots_in_a_window_are_counted_up_to_enough() {
    use chrono::TimeZone;
    let t = |d: u32, h: u32, m: u32| Utc.with_ymd_and_hms(2026, 11, d, h, m, 0).unwrap();
    let daily = crate::campaign::parse_schedule("0 9 * * *").unwrap();
    assert_eq!(count_slots(&daily, t(21, 12, 0), t(22, 12, 0), 10), 1);
    // A slot at the window's start counts: the window is closed at both ends.
    assert_eq!(count_slots(&daily, t(21, 9, 0), t(22, 9, 0), 10), 2);
    assert_eq!(count_slots(&daily, t(22, 11, 0), t(22, 12, 0), 10), 0);
    let often = crate::campaign::parse_schedule("*/10 * * * *").unwrap();
    assert_eq!(count_slots(&often, t(22, 11, 0), t(22, 12, 0), 100), 7);
    assert_eq!(count_slots(&often, t(21, 12, 0), t(22, 12, 0), 3), 3);
}
