//! The engine end to end against the sandbox marketplace, in-process: every flow test runs
//! once on SQLite (a temp file) and once on PostgreSQL (a fresh database, dropped afterwards).
//! After each scenario the invariants of issue 4 are checked from the sandbox's ledger and the
//! journal: no duplicate purchase, no cap exceeded, every purchase recorded, link limits held.
//! The binary is run only where the command itself is under test (`plan`, `resolve`, two
//! concurrent `once`).

#[path = "engine/binary.rs"]
mod binary;
#[path = "engine/credentials.rs"]
mod credentials;
#[path = "store/support.rs"]
#[allow(dead_code)]
mod db;
#[path = "engine/faults.rs"]
mod faults;
#[path = "engine/fixtures.rs"]
mod fixtures;
#[path = "engine/flow.rs"]
mod flow;
#[path = "engine/operator.rs"]
mod operator;
#[path = "engine/support.rs"]
#[allow(dead_code)]
mod support;

use support::TestDb;

/// Generates one `#[tokio::test]` per backend for each `async fn name(db: TestDb)`.
macro_rules! on_both_backends {
    ($($module:ident :: $name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$module::$name(super::TestDb::sqlite().await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$module::$name(super::TestDb::postgres().await).await;
                }
            )*
        }
    };
}

on_both_backends!(
    flow::full_flow_creates_everything_buys_within_caps_and_records_it,
    flow::a_second_once_changes_nothing_but_a_new_round_within_the_caps,
    flow::removing_a_campaign_file_stops_its_autobuyers_and_buys_nothing,
    faults::faults_at_high_rates_never_duplicate_overspend_or_lose_a_purchase,
    credentials::rejected_credentials_stop_all_spending_until_they_work_again,
    credentials::credentials_rejected_on_a_read_halt_every_campaign,
    operator::uncertain_autobuyer_creation_waits_for_an_operator_and_is_never_resent,
    binary::plan_on_a_fresh_database_exits_2_without_calling_the_marketplace,
    binary::resolve_through_the_binary_lets_the_next_pass_converge,
);

/// Two processes on one PostgreSQL database (SQLite is one machine, one process by design).
mod postgres_only {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_once_processes_at_the_same_time_keep_the_invariants() {
        super::binary::two_once_processes_at_the_same_time_keep_the_invariants(
            super::TestDb::postgres().await,
        )
        .await;
    }
}
