//! Tests only: the reads of a campaign's record that grow with its history (its intents by
//! state and by kind, its blocked purchases, its budget) find their rows through an index,
//! checked on SQLite's query plans. A full scan of `intents` per campaign cost seconds before
//! the first call after a restart with a million journal rows (issue 13, `bench` target 4).
//! PostgreSQL's plans for the same texts were checked by hand with `EXPLAIN`
//! (docs/contributing.md#benchmark).

use super::campaigns::remote::IDS_SQL;
use super::intents::begin::{LIVE_AND_SWITCHES_SQL, intents_sql};
use super::intents::purchases::BLOCKED_SQL;
use super::money::budget::BUDGET_SQL;
use super::rows::col;
use super::{Backend, Store};
use linkrunner_domain::intents::{IntentFilter, IntentKind, IntentState};

/// The lines of SQLite's plan for `sql`, with `$1` a campaign and `$2` a day.
async fn plan(store: &Store, sql: &str) -> Vec<String> {
    let explain = format!("EXPLAIN QUERY PLAN {sql}");
    let mut query = sqlx::query(sqlx::AssertSqlSafe(explain)).bind("acme");
    if sql.contains("$2") {
        query = query.bind("2026-11-25");
    }
    let rows = query.fetch_all(&store.pool).await.expect("explain");
    rows.iter()
        .map(|r| col::<String>(r, "detail").expect("detail"))
        .collect()
}

/// A table read from end to end: SQLite's plan says `SCAN <table>` (with or without an index).
fn scans(plan: &[String]) -> Vec<&String> {
    plan.iter()
        .filter(|l| {
            ["intents", "ledger", "urls", "texts", "filters"]
                .iter()
                .any(|t| l.starts_with(&format!("SCAN {t}")))
        })
        .collect()
}

async fn migrated_sqlite() -> Store {
    let store = Store::connect("sqlite::memory:").await.expect("connect");
    assert_eq!(store.backend(), Backend::Sqlite);
    store.migrate().await.expect("migrate");
    store
}

fn campaign_filter(states: Vec<IntentState>, kind: Option<IntentKind>) -> IntentFilter {
    IntentFilter {
        campaign: Some("acme".into()),
        states,
        kind,
    }
}

#[tokio::test]
async fn a_campaigns_record_is_read_through_indexes() {
    let store = migrated_sqlite().await;
    let live = vec![
        IntentState::InFlight,
        IntentState::Succeeded,
        IntentState::Uncertain,
    ];
    let reads = [
        ("live intents", intents_sql(&campaign_filter(live, None))),
        (
            "autobuyer starts",
            intents_sql(&campaign_filter(vec![], Some(IntentKind::StartAutobuyer))),
        ),
        ("blocked purchases", BLOCKED_SQL.to_string()),
        (
            "live intents and switches",
            LIVE_AND_SWITCHES_SQL.to_string(),
        ),
        ("urls, texts and filters", IDS_SQL.to_string()),
        ("budget", BUDGET_SQL.to_string()),
    ];

    for (what, sql) in &reads {
        let plan = plan(&store, sql).await;

        assert!(scans(&plan).is_empty(), "{what}: {plan:?}");
        assert!(
            plan.iter().any(|l| l.contains("USING")),
            "{what} names no index: {plan:?}"
        );
    }
}

#[tokio::test]
async fn a_campaigns_switches_are_found_by_their_kind_not_by_the_whole_history() {
    let store = migrated_sqlite().await;
    let sql = intents_sql(&campaign_filter(vec![], Some(IntentKind::StopAutobuyer)));

    let plan = plan(&store, &sql).await;

    assert!(
        plan.iter()
            .any(|l| l.contains("intents_campaign_kind (campaign=? AND kind=?")),
        "{plan:?}"
    );
}

#[test]
fn the_intents_sql_has_only_the_conditions_the_filter_sets() {
    let all = intents_sql(&IntentFilter::default());
    let one = intents_sql(&campaign_filter(
        vec![IntentState::Failed, IntentState::Failed],
        Some(IntentKind::Purchase),
    ));

    assert!(
        all.ends_with(
            "WHERE state IN ('in_flight', 'succeeded', 'failed', 'uncertain') ORDER BY id"
        ),
        "{all}"
    );
    assert!(
        one.ends_with(
            "WHERE campaign = $1 AND kind = 'purchase' AND state IN ('failed') ORDER BY id"
        ),
        "{one}"
    );
}
