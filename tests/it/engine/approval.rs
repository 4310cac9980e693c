//! Approval above a threshold (issue 33) end to end against the sandbox: a raised cap is
//! spent only up to the approved amount plus `approve_above`, small raises add up, the
//! campaign waits for an operator with the amount and the command, and after
//! `linkrunner resolve approve` (the real binary) the rest is bought.

use linkrunner::money::Money;
use linkrunner::views::overview::CampaignState;
use linkrunner::views::report::{CampaignStatus, campaign_status};

use super::binary::{run, run_ok, text};
use super::fixtures::IVY_HEAD;
use super::support::{TestDb, World, sandbox_config};
use crate::support::ledger;

const NAME: &str = "ivy-garden";

/// Every link rents at 100 RUB, so the commitment moves in steps of 100.
fn ivy(monthly: u32) -> String {
    format!(
        r##"{IVY_HEAD}budget:
  monthly: {monthly}
  max_link_price: 100
  daily_links: 30
  total_links: 30
  approve_above: 150
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: 3
"##
    )
}

/// Passes with buy rounds, enough for a search to become ready and its round to buy.
async fn buy(w: &World) {
    for _ in 0..3 {
        w.pass(true).await;
    }
}

fn rub(r: i64) -> Money {
    Money::from_rubles(r)
}

/// Buy rounds, after which the campaign's commitment is `rubles`, for `why`.
async fn buys_up_to(w: &World, rubles: i64, why: &str) {
    buy(w).await;
    assert_eq!(bought(w).await, rub(rubles), "{why}");
}

async fn status_now(w: &World) -> CampaignStatus {
    campaign_status(w.store(), NAME, chrono::Utc::now())
        .await
        .unwrap()
}

async fn bought(w: &World) -> Money {
    let ledger = w.ledger();
    let c = crate::support::campaigns::load_one(&ivy(300));
    ledger::commitment(&ledger, &w.projects_of(&ledger, &c))
}

pub async fn a_raised_cap_waits_for_approval_and_small_raises_add_up(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.price_min = rub(100);
    cfg.price_max = rub(100);
    let w = World::new(db, cfg).await;
    // A new campaign: its cap is the approved baseline.
    w.write_campaign(NAME, &ivy(300));
    buys_up_to(&w, 300, "the baseline needs no approval").await;

    // +100: within the threshold of 150, bought without a person.
    w.write_campaign(NAME, &ivy(400));
    buys_up_to(&w, 400, "within the threshold").await;

    // +100 more: 200 past the approved 300, more than 150 — nothing past 450 is bought.
    w.write_campaign(NAME, &ivy(500));
    buys_up_to(&w, 400, "a link at 100 would pass the approved 300 + 150").await;
    let status = status_now(&w).await;
    assert_eq!(
        status.state,
        CampaignState::WaitingForOperator,
        "{status:#?}"
    );
    let why = status.state_reason.clone().unwrap_or_default();
    assert!(
        why.contains("waiting for approval of 200")
            && why.contains("linkrunner resolve approve ivy-garden --reason"),
        "{why}"
    );
    assert_eq!(status.money.monthly_cap, rub(450));
    let plan = run(&w, &["plan", NAME]).await;
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("waiting for approval of 200"),
        "{}",
        text(&plan)
    );

    run_ok(
        &w,
        &[
            "resolve",
            "approve",
            NAME,
            "--reason",
            "spring sale",
            "--by",
            "alice",
        ],
    )
    .await;
    buys_up_to(&w, 500, "approved: bought up to the file's cap").await;
    let status = status_now(&w).await;
    assert_ne!(
        status.state,
        CampaignState::WaitingForOperator,
        "{status:#?}"
    );
    let a = status.approval.expect("the approval is recorded");
    assert_eq!(
        (a.approved, a.by.as_str(), a.reason.as_str()),
        (rub(500), "alice", "spring sale")
    );
    w.assert_invariants().await;
}
