//! The engine end to end against the sandbox marketplace, in-process: every flow test runs
//! once on SQLite (a temp file) and once on PostgreSQL (a fresh database, dropped afterwards).
//! After each scenario the invariants of issue 4 are checked from the sandbox's ledger and the
//! journal: no duplicate purchase, no cap exceeded, every purchase recorded, link limits held.
//! The binary is run only where the command itself is under test (`plan`, `resolve`, two
//! concurrent `once`).

#[path = "engine/account_halts.rs"]
mod account_halts;
#[path = "engine/account_ids.rs"]
mod account_ids;
#[path = "engine/accounts.rs"]
mod accounts;
#[path = "engine/adoption.rs"]
mod adoption;
#[path = "engine/approval.rs"]
mod approval;
#[path = "engine/binary.rs"]
mod binary;
#[path = "engine/brake_month.rs"]
mod brake_month;
#[path = "engine/contested.rs"]
mod contested;
#[path = "engine/credentials.rs"]
mod credentials;
#[path = "engine/faults.rs"]
mod faults;
#[path = "engine/fixtures.rs"]
mod fixtures;
#[path = "engine/flow.rs"]
mod flow;
#[path = "engine/forms.rs"]
mod forms;
#[path = "engine/history.rs"]
mod history;
#[path = "engine/import.rs"]
mod import;
#[path = "engine/invalid_files.rs"]
mod invalid_files;
#[path = "engine/model.rs"]
mod model;
#[path = "engine/model_check.rs"]
mod model_check;
#[path = "engine/model_steps.rs"]
mod model_steps;
#[path = "engine/month.rs"]
mod month;
#[path = "engine/moves.rs"]
mod moves;
#[path = "engine/operator.rs"]
mod operator;
#[path = "engine/outcomes.rs"]
mod outcomes;
#[path = "engine/pacing.rs"]
mod pacing;
#[path = "engine/partial_truth.rs"]
mod partial_truth;
#[path = "engine/probe.rs"]
mod probe;
#[path = "engine/quiet.rs"]
mod quiet;
#[path = "engine/read_only.rs"]
mod read_only;
#[path = "engine/recorded_many.rs"]
mod recorded_many;
#[path = "engine/rename.rs"]
mod rename;
#[path = "engine/replace.rs"]
mod replace;
#[path = "engine/respell.rs"]
mod respell;
#[path = "engine/steady_state.rs"]
mod steady_state;
#[path = "engine/support.rs"]
mod support;
#[path = "engine/surfaces.rs"]
mod surfaces;
#[path = "engine/unreachable.rs"]
mod unreachable;

on_both_backends!(
    account_ids::two_accounts_with_coinciding_ids_each_buy_for_their_own_urls_only,
    account_ids::a_rename_to_another_account_is_blocked_and_sends_nothing,
    account_ids::an_account_renamed_in_the_accounts_file_holds_its_campaigns,
    accounts::two_accounts_buy_each_in_its_own_marketplace_and_a_cap_on_one_stops_only_it,
    approval::a_raised_cap_waits_for_approval_and_small_raises_add_up,
    adoption::an_adopted_account_is_counted_gated_and_never_bought_twice,
    adoption::a_changed_project_id_is_refused_and_nothing_is_re_pointed,
    adoption::an_adopted_autobuyer_whose_spec_changes_is_replaced,
    adoption::a_hand_link_on_an_adopted_autobuyers_url_counts_on_top_of_its_budget,
    adoption::an_adopted_autobuyers_spec_changed_back_is_created_again,
    adoption::no_second_link_from_one_donor_site_to_one_url,
    adoption::a_link_vanishing_from_a_complete_list_is_lost_released_and_shown,
    adoption::the_word_on_the_list_takes_the_count_seen_and_a_lagging_list_keeps_it,
    adoption::an_adopted_autobuyers_stop_waits_for_a_list_shown_complete,
    adoption::a_hand_link_on_an_autobuyers_url_counts_on_top_in_a_created_project_too,
    contested::a_page_the_team_buys_by_hand_during_a_search_is_not_bought_again,
    contested::a_donor_site_the_team_links_during_a_search_gets_no_second_link,
    contested::a_page_held_twice_is_recorded_once_counted_and_shown_with_both_links,
    contested::buy_rounds_leave_an_autobuyers_urls_to_it_when_the_file_says_so,
    contested::plan_shows_the_list_lag_learned_from_our_purchases_where_rounds_and_an_autobuyer_share_a_url,
    flow::full_flow_creates_everything_buys_within_caps_and_records_it,
    flow::a_second_once_changes_nothing_but_a_new_round_within_the_caps,
    flow::removing_a_campaign_file_stops_its_autobuyers_and_buys_nothing,
    faults::faults_at_high_rates_never_duplicate_overspend_or_lose_a_purchase,
    credentials::rejected_credentials_stop_all_spending_until_they_work_again,
    credentials::credentials_rejected_on_a_read_halt_every_campaign,
    credentials::a_403_on_one_project_halts_that_campaign_only,
    account_halts::a_401_on_one_account_halts_that_account_only,
    account_halts::halt_account_stops_that_account_only,
    operator::uncertain_autobuyer_creation_waits_for_an_operator_and_is_never_resent,
    history::history_and_explain_name_the_round_the_file_version_and_the_operators_resolve,
    history::an_accounts_own_unpaged_link_list_decides_for_its_campaigns,
    month::the_month_report_sums_to_the_sandbox_ledgers_purchases_and_autobuyers,
    binary::plan_on_a_fresh_database_exits_2_without_calling_the_marketplace,
    binary::resolve_through_the_binary_lets_the_next_pass_converge,
    invalid_files::an_invalid_file_keeps_its_campaign_as_recorded_in_once_and_plan,
    invalid_files::run_started_on_an_invalid_file_holds_its_campaign_as_recorded,
    rename::a_campaign_renamed_with_renamed_from_keeps_its_project_autobuyers_and_pages,
    rename::a_rename_waits_while_another_process_holds_the_old_names_lease,
    rename::a_campaign_renamed_without_the_key_is_blocked_and_never_gets_a_second_project,
    rename::a_second_campaign_naming_a_recorded_project_id_is_refused_naming_the_owner,
    rename::a_second_campaign_naming_a_recorded_url_id_is_refused_live_or_removed,
    respell::a_url_respelt_with_its_url_id_keeps_its_identity_and_buys_no_page_again,
    moves::an_autobuyer_moved_with_its_campaigns_rename_is_neither_stopped_nor_created_again,
    moves::an_autobuyer_moved_to_a_campaign_on_another_project_is_refused_naming_both,
    respell::a_new_spelling_without_url_id_is_a_new_url_and_an_unknown_url_id_is_refused,
    respell::a_text_added_under_a_respelt_url_goes_to_its_url_id_and_makes_no_second_url,
    read_only::read_only_commands_never_migrate_and_name_the_command_that_does,
    unreachable::an_unreachable_marketplace_is_said_once_for_the_whole_pass,
    binary::once_shows_progress_and_ends_with_totals_that_match_the_ledger,
    forms::a_marketplace_answering_404_while_a_search_runs_still_gets_links_bought,
    forms::nested_ids_and_a_nested_price_with_its_field_map_get_links_bought,
    forms::reads_truncated_in_transit_still_get_links_bought_once,
    forms::a_search_answering_not_found_past_its_deadline_is_given_up_then_restarted,
    partial_truth::a_first_page_list_and_purchases_cut_after_commit_never_buy_a_page_twice,
    partial_truth::renaming_an_autobuyer_near_the_cap_converges_in_one_pass,
    partial_truth::autobuyers_that_really_buy_never_have_their_pages_bought_again_and_count_once_stopped,
    partial_truth::an_uncertain_start_then_a_flip_back_to_stopped_is_stopped_and_counted_until_then,
    partial_truth::a_purchase_answered_as_an_error_with_ids_is_settled_from_the_list_as_bought,
    partial_truth::a_link_that_leaves_the_list_is_released_after_the_grace,
    outcomes::donors_priced_under_an_unknown_key_stall_as_no_readable_price_until_mapped,
    outcomes::a_balance_too_low_stalls_as_insufficient_balance_with_the_metric_set,
    outcomes::rounds_that_find_nothing_within_the_caps_converge_until_three_in_a_row,
    outcomes::once_exits_3_with_the_reason_and_buys_nothing_then_converges_with_the_field_named,
    probe::the_probe_command_prints_flags_that_once_then_converges_with,
    partial_truth::a_pass_dropped_mid_flow_leaves_no_lease_renewed_behind,
    model::random_sequences_keep_money_safe_and_converge,
    model::settlement_sequences_never_buy_a_cut_purchases_page_again,
    model::looks_and_full_passes_reach_the_same_journal,
    quiet::a_converged_campaign_only_looks_until_something_is_due_or_changes,
    recorded_many::load_many_reads_exactly_what_load_reads_for_every_campaign,
    surfaces::the_read_surfaces_of_one_deterministic_run_match_their_snapshot,
    replace::a_changed_spec_is_replaced_with_what_is_left_of_the_limit,
    replace::a_spec_changed_back_is_created_again,
    replace::a_replacement_the_cap_refuses_stops_nothing,
    steady_state::a_converged_campaign_costs_one_link_list_call_per_reconciliation,
    pacing::even_pacing_spreads_the_cap_over_the_days_left_in_the_month,
    brake_month::the_anomaly_brakes_figures_stay_under_half_its_threshold_through_a_month,
);

/// `plan` on an SQLite journal that does not exist yet (the backend is the point).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_on_a_journal_that_does_not_exist_creates_nothing() {
    read_only::plan_on_a_journal_that_does_not_exist_creates_nothing(
        crate::support::db::TestDb::sqlite().await,
    )
    .await;
}

/// `import` reads the marketplace only; the journal is not under test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_writes_a_file_that_adopts_the_project_at_todays_commitment() {
    import::import_writes_a_file_that_adopts_the_project_at_todays_commitment(
        crate::support::db::TestDb::sqlite().await,
    )
    .await;
}

/// Every sandbox variant, each on its own SQLite journal (the backend is not under test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_suggests_settings_that_converge_on_every_sandbox_variant() {
    probe::probe_suggests_settings_that_converge_on_every_sandbox_variant(
        crate::support::db::TestDb::sqlite().await,
    )
    .await;
}

/// Two processes on one PostgreSQL database (SQLite is one machine, one process by design).
mod postgres_only {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_once_processes_at_the_same_time_keep_the_invariants() {
        super::binary::two_once_processes_at_the_same_time_keep_the_invariants(
            crate::support::db::TestDb::postgres().await,
        )
        .await;
    }
}
