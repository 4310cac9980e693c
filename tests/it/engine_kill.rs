//! The SIGKILL suite: the real binary, killed at every boundary of every kind of changing
//! call and at random moments, then restarted until its campaigns converge. After each case
//! the sandbox's ledger shows no duplicate purchase and no cap exceeded, the journal records
//! every purchase, and the campaigns are where their files want them. Every case runs on
//! SQLite and PostgreSQL (admin URL from `LINKRUNNER_TEST_DATABASE_URL`, else `DATABASE_URL`,
//! else the local server).
//!
//! Run: `cargo test --test it engine_kill::` (`TEST_LOG=1` shows the binary's logs).

#[path = "engine_kill/adoption.rs"]
mod adoption;
#[path = "engine_kill/boundaries.rs"]
mod boundaries;
#[path = "engine_kill/campaign.rs"]
mod campaign;
#[path = "engine_kill/host.rs"]
mod host;
#[path = "engine_kill/invariants.rs"]
mod invariants;
#[path = "engine_kill/proxy.rs"]
mod proxy;
#[path = "engine_kill/random.rs"]
mod random;
#[path = "engine_kill/rename.rs"]
mod rename;
#[path = "engine_kill/replace.rs"]
mod replace;
#[path = "engine_kill/support.rs"]
mod support;

/// One test per row, `test_name => scenario(Backend)`: the cases below differ only in which
/// scenario runs on which backend, so each is a row of a table rather than a written-out body.
macro_rules! scenarios {
    ($($test:ident => $scenario:path, $backend:ident;)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                $scenario(crate::engine_kill::support::Backend::$backend).await;
            }
        )*
    };
}

/// A changed autobuyer spec applied by replacement, killed between the stop and the creation.
mod killed_between_a_replacements_stop_and_creation {
    use crate::engine_kill::replace::{
        killed_between_an_adopted_ones_stop_and_the_new_creation as adopted,
        killed_between_the_old_stop_and_the_new_creation as own,
    };

    scenarios! {
        sqlite => own, Sqlite;
        postgres => own, Postgres;
        adopted_sqlite => adopted, Sqlite;
        adopted_postgres => adopted, Postgres;
    }
}

/// A rename with `renamed_from`, killed inside its hand-over's transaction.
mod killed_inside_a_renames_hand_over {
    use crate::engine_kill::rename::killed_inside_the_hand_over_the_rename_happens_once_or_not_at_all as killed;

    scenarios! {
        sqlite => killed, Sqlite;
        postgres => killed, Postgres;
    }
}

/// One test per kind of call: `BACKEND::killed_when_BOUNDARY::KIND`.
macro_rules! every_kind {
    ($backend:expr, $boundary:expr) => {
        every_kind!(@ $backend, $boundary,
            create_project => CreateProject,
            add_texts => AddTexts,
            create_filter => CreateFilter,
            create_autobuyer => CreateAutobuyer,
            start_autobuyer => StartAutobuyer,
            stop_autobuyer => StopAutobuyer,
            purchase => Purchase,
        );
    };
    (@ $backend:expr, $boundary:expr, $($name:ident => $kind:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                crate::engine_kill::boundaries::killed_at(
                    $backend,
                    $boundary,
                    linkrunner::store::IntentKind::$kind,
                )
                .await;
            }
        )*
    };
}

/// Every boundary, every kind, and the random kills, on one backend.
macro_rules! on_backend {
    ($module:ident, $backend:expr, seeds: [$($seed_test:ident = $seed:literal),*]) => {
        mod $module {
            use crate::engine_kill::boundaries::Boundary;

            mod killed_when_intent_recorded {
                use super::*;
                every_kind!($backend, Boundary::IntentRecorded);
            }
            mod killed_when_request_sent_but_not_executed {
                use super::*;
                every_kind!($backend, Boundary::RequestSentNotExecuted);
            }
            mod killed_when_request_executed_but_answer_lost {
                use super::*;
                every_kind!($backend, Boundary::RequestExecutedAnswerLost);
            }
            mod killed_when_answer_received {
                use super::*;
                every_kind!($backend, Boundary::AnswerReceived);
            }
            mod killed_when_outcome_recorded {
                use super::*;
                every_kind!($backend, Boundary::OutcomeRecorded);
            }

            mod killed_at_random_moments {
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $seed_test() {
                        let kills =
                            crate::engine_kill::random::killed_at_random_moments($backend, $seed).await;
                        assert_eq!(kills, crate::engine_kill::random::KILLS, "kills delivered");
                    }
                )*
            }
        }
    };
}

on_backend!(sqlite, crate::engine_kill::support::Backend::Sqlite,
    seeds: [seed_1 = 1, seed_2 = 2, seed_3 = 3, seed_4 = 4]);
on_backend!(postgres, crate::engine_kill::support::Backend::Postgres,
    seeds: [seed_5 = 5, seed_6 = 6, seed_7 = 7, seed_8 = 8]);

/// Issue 25: signals to `once` and `run`, and holders killed with SIGKILL (`host.rs`).
mod host_faults {
    use crate::engine_kill::host;

    scenarios! {
        a_once_killed_with_sigkill_does_not_block_the_next_once_on_sqlite =>
            host::a_once_killed_with_sigkill_does_not_block_the_next_once, Sqlite;
        a_once_killed_with_sigkill_does_not_block_the_next_once_on_postgres =>
            host::a_once_killed_with_sigkill_does_not_block_the_next_once, Postgres;
        sigterm_in_once_lets_the_call_in_flight_finish_and_exits_4 =>
            host::sigterm_in_once_lets_the_call_in_flight_finish_and_exits_4, Sqlite;
        a_poll_held_by_the_marketplace_is_cut_at_the_search_deadline =>
            host::a_poll_held_by_the_marketplace_is_cut_at_the_search_deadline, Sqlite;
        a_second_signal_exits_once_at_once => host::a_second_signal_exits_once_at_once, Sqlite;
        sigterm_in_run_releases_its_leases_and_the_next_once_starts_at_once_on_sqlite =>
            host::sigterm_in_run_releases_its_leases_and_the_next_once_starts_at_once, Sqlite;
        sigterm_in_run_releases_its_leases_and_the_next_once_starts_at_once_on_postgres =>
            host::sigterm_in_run_releases_its_leases_and_the_next_once_starts_at_once, Postgres;
        once_names_a_live_holder_and_when_its_lease_expires =>
            host::once_names_a_live_holder_and_when_its_lease_expires, Sqlite;
        a_second_signal_exits_run_at_once => host::a_second_signal_exits_run_at_once, Sqlite;
    }
}

/// Issue 24: a cut list, an adopted autobuyer buying by itself, the operator's word, kills.
mod adopted_account {
    use crate::engine_kill::adoption::a_cut_list_an_adopted_autobuyer_and_kills_never_buy_a_page_twice as scenario;

    scenarios! {
        sqlite_a_cut_list_an_adopted_autobuyer_and_kills_never_buy_a_page_twice => scenario, Sqlite;
        postgres_a_cut_list_an_adopted_autobuyer_and_kills_never_buy_a_page_twice =>
            scenario, Postgres;
    }
}
