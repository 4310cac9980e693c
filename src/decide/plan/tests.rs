//! Property tests of the plan: its money view, and the intent state machine seen through
//! `plan_campaign` / [`Recorded`] without a database — what is recorded is never planned
//! again, spending never starts while it is stopped, and applying a plan's actions converges.

use proptest::prelude::*;

use super::*;
use crate::campaign::{Autobuyer, AutobuyerUrl, Budget, BuyRounds, Filter, PromotedUrl};
use linkrunner_domain::halts::{Halt, HaltScope};
use linkrunner_domain::market::ProjectIds;
use linkrunner_domain::records::{AutobuyerRecord, BudgetSnapshot, SwitchState};

fn rub(r: i64) -> Money {
    Money::from_rubles(r)
}

fn url(i: usize) -> String {
    format!("https://acme.example/p{i}")
}

/// A campaign with `texts[i]` texts on URL i, `filters` filters and one autobuyer per entry
/// of `autobuyers` (its desired state), each on the first filter and URL.
fn campaign(
    texts: &[usize],
    filters: usize,
    autobuyers: &[bool],
    budget: Budget,
    per_run: u32,
    paused: bool,
) -> Campaign {
    let filters = filters.max(usize::from(!autobuyers.is_empty()));
    Campaign {
        account: "default".into(),
        name: "acme-shoes".into(),
        domain: "https://acme.example".into(),
        paused,
        urls: texts
            .iter()
            .enumerate()
            .map(|(i, n)| PromotedUrl {
                url: url(i),
                texts: (0..*n)
                    .map(|t| format!("text {t} #a#anchor {i}#/a#"))
                    .collect(),
                url_id: None,
                text_ids: Default::default(),
            })
            .collect(),
        budget,
        project_id: None,
        renamed_from: None,
        buy: Some(BuyRounds::daily_for_tests(per_run)),
        filters: (0..filters)
            .map(|i| Filter {
                name: format!("f{i}"),
                price_article_from: None,
                price_article_to: None,
                price_rent_from: None,
                price_rent_to: Some(rub(100)),
                extra: Default::default(),
            })
            .collect(),
        autobuyers: autobuyers
            .iter()
            .enumerate()
            .map(|(i, running)| Autobuyer {
                id: None,
                moved_from: None,
                name: format!("ab{i}"),
                filter: "f0".into(),
                auto_approve: false,
                state: if *running {
                    crate::campaign::AutobuyerState::Running
                } else {
                    crate::campaign::AutobuyerState::Stopped
                },
                urls: vec![AutobuyerUrl {
                    url: url(0),
                    monthly_budget: rub(100),
                    total_links_limit: 10,
                    daily_links_limit: 1,
                }],
            })
            .collect(),
    }
}

fn budget_snapshot(c: &Campaign, committed: Money, total: u32, today: u32) -> BudgetSnapshot {
    BudgetSnapshot {
        cap: c.budget.monthly,
        committed,
        held: committed,
        reserved_in_flight: Money::ZERO,
        uncertain: Money::ZERO,
        links_total: total,
        links_today: today,
        daily_cap: c.budget.daily_links,
        total_cap: c.budget.total_links,
        approval: None,
        day: None,
        committed_today: Money::ZERO,
    }
}

/// `linkrunner halt` by an operator.
fn operator_halt() -> Halt {
    Halt {
        kind: linkrunner_domain::halts::HaltKind::Operator,
        by: Some("night-operator".into()),
        ..Halt::automatic(HaltScope::Global, "double charges", chrono::Utc::now())
    }
}

fn recorded(budget: BudgetSnapshot) -> Recorded {
    Recorded::with_budget(budget, Vec::new())
}

/// What the journal holds after each action of the plan succeeded.
fn apply(c: &Campaign, r: &mut Recorded, actions: &[Action]) {
    for a in actions {
        match a {
            Action::AdoptProject { .. } => {}
            Action::CreateProject { .. } => {
                r.ids.project = Some(ProjectIds {
                    project_id: 1,
                    url_id: 2,
                    text_id: 3,
                });
            }
            Action::AddTexts { urls } => {
                for u in urls {
                    r.ids.urls.insert(u.url.clone(), 10);
                    for t in &u.texts {
                        r.ids.texts.insert((u.url.clone(), t.clone()), 11);
                    }
                }
            }
            Action::CreateFilter { name } => {
                r.ids.filters.insert(name.clone(), 20);
            }
            Action::CreateAutobuyer { name, running, .. } => {
                let ab = c.autobuyers.iter().find(|a| &a.name == name).unwrap();
                let id = 100 + r.ids.autobuyers.len() as i64;
                let budget = crate::decide::caps::autobuyer_budget(ab);
                // Its creation also sets the state the file wants (the engine sends the switch).
                let (switch_state, stopped_at) = match running {
                    true => (SwitchState::Running, None),
                    false => (SwitchState::Stopped, Some(chrono::Utc::now())),
                };
                r.ids.autobuyers.insert(
                    name.clone(),
                    AutobuyerRecord {
                        id,
                        running: true,
                        spec_fingerprint: crate::decide::caps::autobuyer_fingerprint(c, ab),
                        monthly_budget: budget,
                        reserved: budget,
                        switch_state,
                        stopped_at,
                        adopted_at: None,
                        covers: Vec::new(),
                        adopted_id: None,
                    },
                );
                r.budget.committed = r.budget.committed.checked_add(budget).unwrap();
            }
            Action::SetAutobuyer {
                name,
                running,
                reserve,
                ..
            } => {
                if let Some(rec) = r.ids.autobuyers.get_mut(name) {
                    if *running {
                        rec.running = true;
                        rec.reserved = rec.reserved.checked_add(*reserve).unwrap();
                        rec.switch_state = SwitchState::Running;
                        rec.stopped_at = None;
                        r.budget.committed = r.budget.committed.checked_add(*reserve).unwrap();
                    } else {
                        rec.switch_state = SwitchState::Stopped;
                        rec.stopped_at = Some(chrono::Utc::now());
                    }
                }
            }
            Action::SettleStop { name, releases, .. } => {
                if let Some(rec) = r.ids.autobuyers.get_mut(name) {
                    rec.running = false;
                    rec.reserved = rec.reserved.checked_sub(*releases).unwrap();
                    r.budget.committed = r
                        .budget
                        .committed
                        .checked_sub(*releases)
                        .unwrap()
                        .max(Money::ZERO);
                }
            }
            Action::ReplaceAutobuyer { name, adds, .. } => {
                let ab = c.autobuyers.iter().find(|a| &a.name == name).unwrap();
                let id = 100 + r.ids.autobuyers.len() as i64 + 50;
                let rec = r.ids.autobuyers.get_mut(name).unwrap();
                assert!(
                    !rec.running && rec.switch_state == SwitchState::Stopped,
                    "replaced before its stop settled"
                );
                *rec = AutobuyerRecord {
                    id,
                    running: true,
                    spec_fingerprint: crate::decide::caps::autobuyer_fingerprint(c, ab),
                    monthly_budget: *adds,
                    reserved: rec.reserved.checked_add(*adds).unwrap(),
                    switch_state: SwitchState::Running,
                    stopped_at: None,
                    adopted_at: None,
                    covers: Vec::new(),
                    adopted_id: None,
                };
                r.budget.committed = r.budget.committed.checked_add(*adds).unwrap();
            }
            Action::Settle { .. } | Action::BuyRound { .. } | Action::SyncLinks => {}
        }
    }
}

prop_compose! {
    fn arb_budget()(monthly in 0i64..5000, max_price in 1i64..300, daily in 1u32..10, total in 1u32..50)
        -> Budget {
        Budget { monthly: rub(monthly), max_link_price: rub(max_price), daily_links: daily, total_links: total, unknown_link_rent: None, pacing: Default::default(), approve_above: None }
    }
}

/// An adopted project whose list may be cut holds every URL back from buy rounds; a file
/// without buy rounds has none to hold back, so its plan is not blocked by it.
#[test]
fn an_adopted_campaign_without_buy_rounds_is_not_blocked_by_a_list_that_may_be_cut() {
    let budget = Budget {
        monthly: rub(1000),
        max_link_price: rub(100),
        daily_links: 5,
        total_links: 50,
        unknown_link_rent: Some(rub(100)),
        pacing: Default::default(),
        approve_above: None,
    };
    let mut c = campaign(&[1], 0, &[], budget, 1, false);
    c.project_id = Some(4711);
    let mut r = recorded(budget_snapshot(&c, Money::ZERO, 0, 0));
    r.ids.urls.insert(url(0), 11);
    r.ids.account.adoption = Some(linkrunner_domain::records::Adoption {
        project_id: 4711,
        recorded_at: chrono::Utc::now(),
        first_read_at: None,
        confirmed: None,
    });
    let blocked = |p: &CampaignPlan| p.unapplied.iter().any(|u| u.contains("no buy round"));
    assert!(
        blocked(&plan_campaign(&c, &r, true)),
        "with buy rounds: held back"
    );
    c.buy = None;
    let p = plan_campaign(&c, &r, true);
    assert!(!blocked(&p), "{:?}", p.unapplied);
    assert!(
        p.notices.iter().all(|n| !n.contains("buying")),
        "{:?}",
        p.notices
    );
}

prop_compose! {
    /// A campaign and what the journal recorded of it: an arbitrary point of its life.
    fn arb_state()(
        texts in proptest::collection::vec(1usize..3, 1..3),
        filters in 0usize..3,
        autobuyers in proptest::collection::vec(any::<bool>(), 0..3),
        budget in arb_budget(),
        per_run in 1u32..6,
        paused in any::<bool>(),
        committed in 0i64..6000,
        links in (0u32..60, 0u32..12),
        halt in proptest::sample::select(vec![None, Some(HaltScope::Global), Some(HaltScope::campaign("acme-shoes"))]),
        seed in any::<u64>(),
    ) -> (Campaign, Recorded) {
        let c = campaign(&texts, filters, &autobuyers, budget, per_run, paused);
        let mut r = recorded(budget_snapshot(&c, rub(committed), links.0, links.1));
        if let Some(scope) = halt {
            r.halts.push(Halt::automatic(scope, "test", chrono::Utc::now()));
        }
        // Record an arbitrary part of what the plan would create, in arbitrary states.
        let mut bits = seed;
        let mut take = || { bits = bits.rotate_right(1); bits & 1 == 1 };
        let all = plan_campaign(&c, &recorded(r.budget.clone()), false).actions;
        let some: Vec<Action> = all
            .into_iter()
            .filter_map(|a| match a {
                Action::AddTexts { urls } => Some(Action::AddTexts {
                    urls: urls.into_iter().filter(|_| take()).collect(),
                }),
                Action::CreateAutobuyer { name, monthly_budget, running } => take().then(|| {
                    Action::CreateAutobuyer { name, monthly_budget, running: running ^ take() }
                }),
                other => take().then_some(other),
            })
            .collect();
        apply(&c, &mut r, &some);
        // Any autobuyer may be in any confirmed state (a lost answer leaves it unknown), and
        // its spec may have changed in the file since it was created.
        for rec in r.ids.autobuyers.values_mut() {
            if take() && take() {
                rec.spec_fingerprint = "an earlier spec".into();
            }
            rec.switch_state = match (take(), take()) {
                (true, _) => SwitchState::Unknown,
                (false, true) => SwitchState::Running,
                (false, false) => SwitchState::Stopped,
            };
            rec.running = rec.running || rec.switch_state != SwitchState::Stopped;
        }
        (c, r)
    }
}

proptest! {
    #[test]
    fn a_planned_round_never_takes_the_commitment_past_the_cap((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, true);
        let m = &p.money;
        prop_assert!(!m.headroom.is_negative() && !m.headroom_after_round.is_negative());
        if let Some(Action::BuyRound { max_links, max_price, worst_case }) =
            p.actions.iter().find(|a| matches!(a, Action::BuyRound { .. }))
        {
            prop_assert!(m.worst_after_round <= m.cap, "{m:?}");
            // The worst case counts the pass's releases and the autobuyers it creates or starts.
            let after = m.committed.checked_add(m.acquisitions).unwrap().checked_sub(m.releases).unwrap().max(Money::ZERO);
            prop_assert_eq!(m.worst_after_round, after.checked_add(*worst_case).unwrap());
            prop_assert!(*worst_case <= max_price.checked_mul(i64::from(*max_links)).unwrap());
            prop_assert!(*max_links <= c.buy.as_ref().unwrap().per_run);
            prop_assert!(r.budget.links_today + max_links <= c.budget.daily_links);
            prop_assert!(r.budget.links_total + max_links <= c.budget.total_links);
            prop_assert!(*max_price <= c.budget.max_link_price);
        }
    }

    #[test]
    fn the_worst_case_is_over_the_cap_only_with_a_line_that_says_so((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, true);
        let m = &p.money;
        if m.worst_after_round > m.cap {
            prop_assert!(
                p.notices.iter().any(|n| n.contains("above the cap")),
                "worst {} over cap {} without a `!` line: {:?}", m.worst_after_round, m.cap, p.notices
            );
            prop_assert_eq!(m.acquisitions, Money::ZERO, "nothing is acquired over the cap");
        }
    }

    #[test]
    fn releases_come_before_acquisitions((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, true);
        // Of what is recorded: the settlement of a stop right after a creation follows it.
        let release = |a: &Action| matches!(a, Action::SetAutobuyer { running: false, .. })
            || matches!(a, Action::SettleStop { name, .. } if r.ids.autobuyers.contains_key(name));
        let last_release = p.actions.iter().rposition(release);
        let first_acquisition = p.actions.iter().position(Action::is_acquisition);
        if let (Some(rel), Some(acq)) = (last_release, first_acquisition) {
            prop_assert!(rel < acq, "{:?}", p.actions);
        }
    }

    #[test]
    fn nothing_starts_spending_while_spending_is_stopped((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, true);
        if p.spending_stopped.is_some() {
            for a in &p.actions {
                let starts = matches!(
                    a,
                    Action::BuyRound { .. }
                        | Action::CreateAutobuyer { running: true, .. }
                        | Action::SetAutobuyer { running: true, .. }
                );
                prop_assert!(!starts, "{} while {:?}", a.describe(), p.spending_stopped);
            }
        }
        prop_assert_eq!(p.spending_stopped.is_some(), !r.halts.is_empty() || c.paused);
    }

    #[test]
    fn what_the_journal_recorded_is_never_planned_again((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, true);
        for a in &p.actions {
            match a {
                Action::CreateProject { .. } => prop_assert!(r.ids.project.is_none()),
                Action::AddTexts { urls } => {
                    for u in urls {
                        for t in &u.texts {
                            prop_assert!(!r.ids.texts.contains_key(&(u.url.clone(), t.clone())));
                        }
                    }
                }
                Action::CreateFilter { name } => prop_assert!(!r.ids.filters.contains_key(name)),
                Action::CreateAutobuyer { name, .. } => {
                    prop_assert!(!r.ids.autobuyers.contains_key(name))
                }
                _ => {}
            }
        }
    }

    #[test]
    fn an_autobuyer_in_an_unconfirmed_state_is_switched_to_its_desired_state((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, false);
        for ab in &c.autobuyers {
            let Some(rec) = r.ids.autobuyers.get(&ab.name) else { continue };
            let desired = ab.state == crate::campaign::AutobuyerState::Running && !c.paused;
            let allowed = p.spending_stopped.is_none() || !desired;
            let confirmed = match desired {
                true => rec.switch_state == SwitchState::Running,
                false => rec.switch_state == SwitchState::Stopped,
            };
            if !confirmed && allowed {
                let switched = p.actions.iter().any(|a| matches!(
                    a,
                    Action::SetAutobuyer { id, running, .. } if *id == rec.id && *running == desired
                ));
                let said = p.unapplied.iter().any(|n| n.contains(&ab.name));
                let replaced = p.actions.iter().any(|a| matches!(
                    a,
                    Action::ReplaceAutobuyer { name, .. } if name == &ab.name
                ));
                prop_assert!(switched || said || replaced, "{} not brought to its desired state: {:?}", ab.name, p.actions);
            }
        }
    }

    #[test]
    fn an_autobuyer_not_wanted_running_has_its_stop_settled((c, r) in arb_state()) {
        let p = plan_campaign(&c, &r, false);
        for (name, rec) in &r.ids.autobuyers {
            let wanted = c.autobuyers.iter().any(|ab| &ab.name == name
                && ab.state == crate::campaign::AutobuyerState::Running && !c.paused);
            if !wanted && rec.running {
                let settles = p.actions.iter().any(|a| matches!(a, Action::SettleStop { id, .. } if *id == rec.id));
                prop_assert!(settles, "{name} keeps counting as running: {:?}", p.actions);
            }
        }
    }

    #[test]
    fn an_operators_halt_stops_every_autobuyer_and_resume_starts_those_the_file_wants((c, mut r) in arb_state()) {
        // Halted: stops of every autobuyer not confirmed stopped, their settlement, and
        // nothing that acquires (issue 33).
        r.halts = vec![operator_halt()];
        let p = plan_campaign(&c, &r, true);
        prop_assert!(p.spending_stopped.is_some());
        for a in &p.actions {
            let acquires = matches!(
                a,
                Action::CreateAutobuyer { .. } | Action::ReplaceAutobuyer { .. } | Action::BuyRound { .. }
                    | Action::SetAutobuyer { running: true, .. }
            );
            prop_assert!(!acquires, "{} while halted", a.describe());
        }
        for (name, rec) in &r.ids.autobuyers {
            let stopped = rec.switch_state == SwitchState::Stopped || p.actions.iter().any(|a| matches!(
                a, Action::SetAutobuyer { id, running: false, .. } if *id == rec.id));
            prop_assert!(stopped, "{name} keeps running while halted: {:?}", p.actions);
            let settled = !rec.running || p.actions.iter().any(|a| matches!(
                a, Action::SettleStop { id, .. } if *id == rec.id));
            prop_assert!(settled, "{name} keeps counting as running: {:?}", p.actions);
        }
        // Resumed: each autobuyer the file wants running is started, replaced or created,
        // or the plan says why not (the cap).
        apply(&c, &mut r, &p.actions);
        r.halts.clear();
        let resumed = plan_campaign(&c, &r, false);
        for ab in c.autobuyers.iter().filter(|ab| ab.state == crate::campaign::AutobuyerState::Running && !c.paused) {
            let acts = resumed.actions.iter().any(|a| match a {
                Action::SetAutobuyer { name, running: true, .. }
                | Action::ReplaceAutobuyer { name, .. }
                | Action::CreateAutobuyer { name, running: true, .. } => name == &ab.name,
                _ => false,
            });
            let said = resumed.unapplied.iter().chain(&resumed.notices).any(|n| n.contains(&ab.name));
            prop_assert!(acts || said, "{} not started after resume: {:?}", ab.name, resumed.actions);
        }
    }

    #[test]
    fn a_credentials_halt_leaves_running_autobuyers_running((c, mut r) in arb_state()) {
        // Unchanged by issue 33: only an operator's halt stops autobuyers.
        r.halts = vec![Halt::automatic(HaltScope::Global, "credentials rejected", chrono::Utc::now())];
        let p = plan_campaign(&c, &r, false);
        for ab in c.autobuyers.iter().filter(|ab| ab.state == crate::campaign::AutobuyerState::Running && !c.paused) {
            let stops = p.actions.iter().any(|a| matches!(
                a, Action::SetAutobuyer { name, running: false, .. } if name == &ab.name));
            let replaced = r.ids.autobuyers.get(&ab.name).is_some_and(|rec|
                rec.spec_fingerprint != crate::decide::caps::autobuyer_fingerprint(&c, ab));
            prop_assert!(!stops || replaced, "{} stopped by the credentials halt", ab.name);
        }
    }

    #[test]
    fn once_every_planned_action_succeeded_nothing_is_left_to_do((c, mut r) in arb_state()) {
        r.halts.clear();
        let p = plan_campaign(&c, &r, false);
        apply(&c, &mut r, &p.actions);
        let again = plan_campaign(&c, &r, false);
        prop_assert!(!again.has_changes(), "{:?}", again.actions);
    }
}

fn paced(budget: Budget) -> Budget {
    Budget {
        pacing: crate::campaign::Pacing::Even,
        ..budget
    }
}

fn round_worst(p: &CampaignPlan) -> Option<Money> {
    p.actions.iter().find_map(|a| match a {
        Action::BuyRound { worst_case, .. } => Some(*worst_case),
        _ => None,
    })
}

/// Even pacing: 1000 RUB left on the 21st of a 30-day month is 100 a day; a round of three
/// links at 100 may add 100, and once rounds reserved it today, nothing until tomorrow.
#[test]
fn even_pacing_bounds_the_round_by_what_is_left_of_todays_share() {
    let budget = arb_budget_of(1000, 100, 5, 50);
    let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 21);
    let asap = campaign(&[1], 0, &[], budget, 3, false);
    let even = campaign(&[1], 0, &[], paced(budget), 3, false);
    let mut r = recorded(budget_snapshot(&even, Money::ZERO, 0, 0));
    r.budget.day = day;

    assert_eq!(round_worst(&plan_campaign(&asap, &r, true)), Some(rub(300)));
    let p = plan_campaign(&even, &r, true);
    assert_eq!(round_worst(&p), Some(rub(100)));
    let share = p.money.today_share.expect("shown under even pacing");
    assert_eq!(
        (share.share, share.used, share.left),
        (rub(100), rub(0), rub(100))
    );

    let mut used = recorded(budget_snapshot(&even, rub(100), 1, 1));
    used.budget.day = day;
    used.budget.committed_today = rub(100);
    let p = plan_campaign(&even, &used, true);
    assert_eq!(round_worst(&p), None, "{:?}", p.actions);
    assert!(
        p.notices
            .iter()
            .any(|n| n.contains("can buy nothing today")),
        "{:?}",
        p.notices
    );
    assert_eq!(plan_campaign(&asap, &used, true).money.today_share, None);
}

fn arb_budget_of(monthly: i64, max_price: i64, daily: u32, total: u32) -> Budget {
    Budget {
        monthly: rub(monthly),
        max_link_price: rub(max_price),
        daily_links: daily,
        total_links: total,
        unknown_link_rent: None,
        pacing: Default::default(),
        approve_above: None,
    }
}

proptest! {
    /// Whatever the day and the money, a planned round under even pacing adds at most what
    /// is left of today's share, and that is never more than the cap's headroom.
    #[test]
    fn an_evenly_paced_round_never_adds_more_than_todays_share_left(
        budget in arb_budget(),
        committed in 0i64..5000,
        today_used in 0i64..5000,
        day_of_year in 0u64..1096,
        per_run in 1u32..5,
    ) {
        let c = campaign(&[1], 0, &[], paced(budget), per_run.min(budget.daily_links), false);
        let mut r = recorded(budget_snapshot(&c, rub(committed), 0, 0));
        let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + chrono::Days::new(day_of_year);
        r.budget.day = Some(day);
        r.budget.committed_today = rub(today_used.min(committed));
        let p = plan_campaign(&c, &r, true);
        let share = p.money.today_share.expect("shown under even pacing");
        prop_assert!(share.left <= Money::saturating_headroom(r.budget.cap, r.budget.committed));
        if let Some(worst) = round_worst(&p) {
            prop_assert!(worst <= share.left, "{worst} over {share:?}");
        }
    }
}

/// A cap raised past what is approved plus `approve_above` (issue 33): the plan waits with
/// the amount and the command, and spends only up to the approved amount plus the threshold.
#[test]
fn a_cap_raised_past_the_approval_is_spent_only_up_to_the_threshold() {
    let budget = Budget {
        monthly: rub(30_000),
        max_link_price: rub(1000),
        daily_links: 10,
        total_links: 100,
        unknown_link_rent: None,
        approve_above: Some(rub(1000)),
        pacing: Default::default(),
    };
    let c = campaign(&[1], 0, &[], budget, 10, false);
    let mut r = recorded(budget_snapshot(&c, rub(3000), 0, 0));
    // The journal recorded 3,000 before the raise: that is the baseline.
    r.budget.cap = rub(3000);
    let p = plan_campaign(&c, &r, true);
    let w = p.waiting_for_approval.as_ref().expect("waits for approval");
    assert_eq!((w.to_approve, w.ceiling), (rub(27_000), rub(4000)));
    assert!(
        p.unapplied
            .iter()
            .any(|u| u.contains("resolve approve acme-shoes")),
        "{p:?}"
    );
    assert_eq!(p.money.cap, rub(4000));
    assert!(p.money.worst_after_round <= rub(4000), "{:?}", p.money);
    assert_eq!(
        p.cap_changes,
        vec![CapChange::Monthly {
            recorded: rub(3000),
            file: rub(4000)
        }]
    );
    // Approved: the file's cap holds, nothing waits.
    r.budget.cap = rub(4000);
    r.budget.approval = Some(linkrunner_domain::records::Approval {
        approved: rub(30_000),
        above: Some(rub(1000)),
        wanted: rub(30_000),
        by: "ops".into(),
        at: chrono::DateTime::UNIX_EPOCH,
        reason: "approved".into(),
    });
    let p = plan_campaign(&c, &r, true);
    assert_eq!(p.waiting_for_approval, None);
    assert_eq!(p.money.cap, rub(30_000));
}
