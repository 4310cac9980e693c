//! The pull-request comment, as a snapshot: the example campaigns planned on an empty
//! journal, and one of them with its cap already used up.

use super::pr::{Review, render_review};
use super::*;
use crate::campaign::{Campaign, load_dir};
use crate::decide::plan::plan_campaign;
use crate::decide::recorded::Recorded;
use crate::store::BudgetSnapshot;

fn examples() -> Vec<Campaign> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    let report = load_dir(&dir);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    report.campaigns.into_iter().map(|l| l.campaign).collect()
}

/// `comment` says each of `lines` (shown whole when it does not).
fn assert_says(comment: &str, lines: &[&str]) {
    for line in lines {
        assert!(comment.contains(line), "{line:?} in {comment}");
    }
}

fn journal(c: &Campaign, committed: Money) -> Recorded {
    let budget = BudgetSnapshot {
        cap: c.budget.monthly,
        committed,
        held: committed,
        reserved_in_flight: Money::ZERO,
        uncertain: Money::ZERO,
        links_total: 0,
        links_today: 0,
        daily_cap: c.budget.daily_links,
        total_cap: c.budget.total_links,
        day: None,
        committed_today: Money::ZERO,
        approval: None,
    };
    Recorded::with_budget(budget, Vec::new())
}

#[test]
fn the_plan_comment_of_the_example_campaigns_matches_its_snapshot() {
    let cs = examples();
    let mut plans: Vec<_> = cs
        .iter()
        .map(|c| plan_campaign(c, &journal(c, Money::ZERO), c.buy.is_some()))
        .collect();
    let full = &cs[0];
    plans.push(plan_campaign(
        full,
        &journal(full, full.budget.monthly),
        true,
    ));
    let problems = vec![
        "campaigns/bad.yaml:3:7: error: unknown key `budjet` (did you mean `budget`?)".to_string(),
    ];

    let comment = render_markdown(&plans, &problems);

    insta::assert_snapshot!(comment);
}

#[test]
fn text_from_a_file_under_review_cannot_inject_markup_mentions_or_links() {
    let hostile = "@everyone [click](https://evil.example) <img src=x> **bold** | cell\n# title";
    let shown = md(hostile);
    for raw in ["@everyone", "[click](", "<img", "**bold**", "\n#"] {
        assert!(!shown.contains(raw), "{raw} in {shown}");
    }
    assert!(
        shown.contains("&#64;everyone") && shown.contains("\\| cell"),
        "{shown}"
    );
}

#[test]
fn a_replacement_is_shown_under_replace_with_its_old_and_new_sides_in_a_diff_block() {
    use crate::decide::plan::Action;
    use crate::decide::replace::{AutobuyerSide, ReplacedUrl, SideUrl};
    let c = &examples()[0];
    let mut p = plan_campaign(c, &journal(c, Money::ZERO), false);
    let side = |id, rub| AutobuyerSide {
        id,
        monthly_budget: Money::from_rubles(rub),
        filter: "cheap".into(),
        auto_approve: false,
        urls: vec![SideUrl {
            url: "https://acme.example/`x".into(),
            monthly_budget: Money::from_rubles(rub),
            total_links_limit: 3,
            daily_links_limit: 1,
        }],
    };
    p.actions = vec![Action::ReplaceAutobuyer {
        name: "auto".into(),
        old: side(Some(7), 300),
        new: side(None, 450),
        urls: vec![ReplacedUrl {
            url: "https://acme.example/`x".into(),
            monthly_budget: Money::from_rubles(450),
            daily_links_limit: 1,
            file_limit: 5,
            bought: 2,
            left: 3,
        }],
        adds: Money::from_rubles(450),
        releases: Money::from_rubles(300),
    }];

    let comment = render_markdown(&[p], &[]);

    assert_says(
        &comment,
        &[
            "**Replace**",
            "1 replacement(s)",
            "  ```diff\n  - id 7: budget 300 RUB/month",
            "\n  + new: budget 450 RUB/month",
        ],
    );
    assert!(
        !comment.contains("/`x"),
        "a backtick cannot close the block: {comment}"
    );
}

/// `n` campaigns like the first example, each under its own name and domain.
fn many(n: usize) -> Vec<Campaign> {
    let template = examples().remove(0);
    (0..n)
        .map(|k| {
            let mut c = template.clone();
            c.name = format!("shop-{k:03}");
            c
        })
        .collect()
}

#[test]
fn a_budget_edit_is_a_field_change_with_its_money_delta() {
    let base = many(2);
    let mut head = base.clone();
    head[1].budget.monthly = Money::from_rubles(3600);

    let diffs = diff::diff_campaigns(&base, &head);

    assert_eq!(diffs.len(), 1, "{diffs:?}");
    let d = &diffs[0];
    assert_eq!(d.campaign, "shop-001");
    assert_eq!(d.change, diff::FileChange::Edited);
    assert_eq!(
        d.fields,
        vec![diff::FieldChange {
            field: "budget.monthly".into(),
            old: Some("3,000 RUB".into()),
            new: Some("3,600 RUB".into()),
            money: Some("+600 RUB, +20 %".into()),
        }]
    );
    assert_eq!(d.weight(), 60_000);
}

#[test]
fn a_money_key_named_by_the_convention_is_shown_in_rubles_with_its_delta() {
    let base = many(1);
    let mut head = base.clone();
    head[0].budget.approve_above = Some(Money::from_rubles(500));
    head[0].budget.unknown_link_rent = Some(Money::from_rubles(80));

    let d = &diff::diff_campaigns(&base, &head)[0];

    let shown: Vec<_> = d
        .fields
        .iter()
        .map(|f| (f.field.as_str(), f.new.as_deref(), f.money.as_deref()))
        .collect();
    assert_eq!(
        shown,
        vec![
            ("budget.approve_above", Some("500 RUB"), Some("+500 RUB")),
            ("budget.unknown_link_rent", Some("80 RUB"), Some("+80 RUB")),
        ]
    );
}

#[test]
fn lists_are_matched_by_name_and_url_and_texts_as_a_set() {
    let base = many(1);
    let mut head = base.clone();
    head[0].autobuyers[0].urls[0].monthly_budget = Money::from_rubles(1500);
    head[0].urls[0].texts.push("#a#new anchor#/a#".into());
    let moved = head[0].filters[0].clone();
    head[0].filters.insert(0, moved);
    head[0].filters[0].name = "added-filter".into();

    let d = &diff::diff_campaigns(&base, &head)[0];
    let fields: Vec<&str> = d.fields.iter().map(|f| f.field.as_str()).collect();

    assert!(
        fields.contains(
            &"autobuyers[acme-auto].urls[https://acme.example/running-shoes].monthly_budget"
        ),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"urls[https://acme.example/running-shoes].texts"),
        "{fields:?}"
    );
    assert!(fields.contains(&"filters[added-filter]"), "{fields:?}");
    // The filter that moved down one position is not a change.
    assert!(
        !fields.iter().any(|f| f.starts_with("filters[acme-cheap]")),
        "{fields:?}"
    );
    // The autobuyer runs: its budget is commitment (1000 → 1500 plus a 450 round).
    assert_eq!(
        d.money.worst,
        (
            Some(Money::from_rubles(1450)),
            Some(Money::from_rubles(1950))
        )
    );
}

#[test]
fn money_deltas_and_amounts_read_as_an_operator_writes_them() {
    let m = |r| Some(Money::from_rubles(r));
    assert_eq!(
        diff::money_delta(m(2500), m(3000), "RUB/month").unwrap(),
        "+500 RUB/month, +20 %"
    );
    assert_eq!(
        diff::money_delta(m(3000), m(2000), "RUB").unwrap(),
        "−1,000 RUB, −33 %"
    );
    assert_eq!(diff::money_delta(None, m(100), "RUB").unwrap(), "+100 RUB");
    assert_eq!(diff::money_delta(m(5), m(5), "RUB"), None);
    assert_eq!(diff::rubles(Money::from_kopecks(750_050)), "7,500.50");
    assert_eq!(diff::rubles(Money::from_rubles(1_234_567)), "1,234,567");
    assert_eq!(diff::rubles(Money::from_rubles(950)), "950");
}

fn review_of(base: &[Campaign], head: &[Campaign]) -> String {
    let plans: Vec<_> = head
        .iter()
        .map(|c| plan_campaign(c, &journal(c, Money::ZERO), c.buy.is_some()))
        .collect();
    let diffs = diff::diff_campaigns(base, head);
    render_review(&Review {
        base: "0123456789abcdef0123456789abcdef01234567",
        diffs: &diffs,
        plans: &plans,
        problems: &[],
        base_problems: 0,
        campaigns: head.len(),
        fail_above: None,
    })
}

#[test]
fn one_edit_among_200_campaigns_is_the_only_detail_and_the_comment_is_small() {
    let base = many(200);
    let mut head = base.clone();
    head[42].budget.monthly = Money::from_rubles(3500);

    let comment = review_of(&base, &head);

    assert!(comment.starts_with(MARKER), "{comment}");
    assert!(comment.len() < 60_000, "{} bytes", comment.len());
    assert_eq!(comment.matches("\n### ").count(), 1, "{comment}");
    assert_says(
        &comment,
        &[
            "### `shop-042`: edited — cap +500 RUB/month, +17 %",
            "| `budget.monthly` | 3,000 RUB | 3,500 RUB | +500 RUB, +17 % |",
            "worst case now 1,450 of 3,500",
            "199 other campaign(s) unchanged",
            "1 of 200 campaign(s) change (1 edited, 0 added, 0 removed)",
        ],
    );
}

#[test]
fn a_bulk_edit_is_one_line_each_largest_money_change_first_within_the_limit() {
    let base = many(2000);
    let mut head = base.clone();
    for (k, c) in head.iter_mut().enumerate() {
        // Every campaign edited; shop-1999's edit is the largest.
        c.budget.monthly = Money::from_rubles(3000 + k as i64);
        c.urls[0].texts.push(format!("#a#anchor {k}#/a#"));
    }

    let comment = review_of(&base, &head);

    assert!(
        comment.len() <= MAX_COMMENT_BYTES,
        "{} bytes",
        comment.len()
    );
    let first_line = comment
        .find("| `shop-1999` | edited |")
        .expect("a line for the largest");
    let second_line = comment
        .find("| `shop-1998` | edited |")
        .expect("then the next");
    assert!(first_line < second_line);
    assert!(
        comment.contains("### `shop-1999`: edited"),
        "the largest in detail"
    );
    assert!(
        !comment.contains("### `shop-0000`"),
        "the smallest not in detail"
    );
    assert!(
        comment.contains("more campaign(s)"),
        "the lines left out are counted"
    );
}

#[test]
fn an_added_and_a_removed_campaign_file_are_changes() {
    let base = many(2);
    let head = vec![base[0].clone(), {
        let mut c = base[1].clone();
        c.name = "shop-new".into();
        c
    }];

    let comment = review_of(&base, &head);

    assert_says(
        &comment,
        &[
            "### `shop-new`: new file — cap +3,000 RUB/month",
            "### `shop-001`: file removed — cap −3,000 RUB/month, −100 %",
        ],
    );
}

#[test]
fn a_raised_cap_the_journal_has_not_recorded_yet_is_a_change() {
    let c = &examples()[0];
    let mut recorded = journal(c, Money::ZERO);
    recorded.budget.cap = Money::from_rubles(2500);

    let mut p = plan_campaign(c, &recorded, false);
    // As when everything else is already done: only the link sync is left.
    p.actions.retain(|a| !a.is_change());

    assert!(p.has_changes(), "{p:?}");
    let comment = render_markdown(std::slice::from_ref(&p), &[]);
    p.cap_changes.clear();
    assert!(!p.has_changes(), "without the cap edit nothing is left");
    assert_says(
        &comment,
        &[
            "`acme-shoes`: changes",
            "record the monthly cap 2500 → 3000 RUB",
        ],
    );
}

#[test]
fn many_long_file_problems_leave_the_comment_within_its_limit() {
    let cs = examples();
    let plans: Vec<_> = cs
        .iter()
        .map(|c| plan_campaign(c, &journal(c, Money::ZERO), c.buy.is_some()))
        .collect();
    // 200 files that clash, each naming the others: about 9 KB a problem.
    let others: Vec<String> = (0..199)
        .map(|k| format!("campaigns/shop-{k:03}.yaml"))
        .collect();
    let problems: Vec<String> = (0..200)
        .map(|k| {
            format!(
                "campaigns/shop-{k:03}.yaml:6:9: error: domain `acme.example` is also the domain of {}",
                others.join(", ")
            )
        })
        .collect();

    let comment = render_markdown(&plans, &problems);

    assert!(comment.len() < MAX_COMMENT_BYTES, "{} bytes", comment.len());
    assert!(
        comment.contains("- campaigns/shop-000.yaml:6:9: error: domain"),
        "{comment}"
    );
    assert!(comment.contains("…\n"), "a cut problem says so: {comment}");
    let more = comment.lines().find(|l| {
        l.starts_with("- … and ") && l.ends_with("more: `linkrunner validate` lists every one")
    });
    assert!(more.is_some(), "the rest are counted: {comment}");
    for c in &cs {
        assert!(comment.contains(&format!("### `{}`", c.name)), "{comment}");
    }
}
