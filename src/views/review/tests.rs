//! The pull-request comment, as a snapshot: the example campaigns planned on an empty
//! journal, and one of them with its cap already used up.

use std::collections::BTreeMap;

use super::*;
use crate::campaign::{Campaign, load_dir};
use crate::decide::plan::plan_campaign;
use crate::decide::recorded::Recorded;
use crate::store::{BudgetSnapshot, RemoteIds};

fn examples() -> Vec<Campaign> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    let report = load_dir(&dir);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    report.campaigns.into_iter().map(|l| l.campaign).collect()
}

fn journal(c: &Campaign, committed: Money) -> Recorded {
    Recorded {
        ids: RemoteIds::default(),
        budget: BudgetSnapshot {
            cap: c.budget.monthly,
            committed,
            held: committed,
            reserved_in_flight: Money::ZERO,
            uncertain: Money::ZERO,
            links_total: 0,
            links_today: 0,
            daily_cap: c.budget.daily_links,
            total_cap: c.budget.total_links,
        },
        purchases: Vec::new(),
        uncertain: Vec::new(),
        halts: Vec::new(),
        last_round: None,
        last_success: None,
        autobuyer_generations: BTreeMap::new(),
        blocked: Vec::new(),
        held: Vec::new(),
        foreign: Vec::new(),
        autobuyer_urls: BTreeMap::new(),
        stall: None,
    }
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
