//! The journal against real databases: every test runs once on SQLite (a temp file) and once
//! on PostgreSQL (a fresh database, dropped afterwards). PostgreSQL's admin URL comes from
//! `LINKRUNNER_TEST_DATABASE_URL`, else `DATABASE_URL`, else the local server.

#[path = "store/account.rs"]
mod account;
#[path = "store/adoption.rs"]
mod adoption;
#[path = "store/approvals.rs"]
mod approvals;
#[path = "store/budget.rs"]
mod budget;
#[path = "store/halts.rs"]
mod halts;
#[path = "store/held_twice.rs"]
mod held_twice;
#[path = "store/history.rs"]
mod history;
#[path = "store/identity.rs"]
mod identity;
#[path = "store/intents.rs"]
mod intents;
#[path = "store/invariants.rs"]
mod invariants;
#[path = "store/leases.rs"]
mod leases;
#[path = "store/month_days.rs"]
mod month_days;
#[path = "store/notices.rs"]
mod notices;
#[path = "store/observe.rs"]
mod observe;
#[path = "store/partial_truth.rs"]
mod partial_truth;
#[path = "store/progress.rs"]
mod progress;
#[path = "store/quiet.rs"]
mod quiet;
#[path = "store/race.rs"]
mod race;
#[path = "store/removals.rs"]
mod removals;
#[path = "store/rename.rs"]
mod rename;
#[path = "store/respell.rs"]
mod respell;
#[path = "store/support.rs"]
mod support;

on_both_backends!(
    held_twice::a_page_held_twice_is_recorded_once_until_a_complete_read_clears_it,
    quiet::the_stamp_moves_only_with_what_a_plan_reads_and_a_look_moves_what_the_last_read_saw,
    approvals::an_approval_is_recorded_with_who_and_when_and_raises_the_recorded_cap,
    approvals::small_raises_add_up_against_the_same_approval,
    adoption::an_adopted_project_is_recorded_once_and_never_re_pointed,
    adoption::an_adopted_autobuyer_counts_its_budget_from_the_start_with_a_ledger_row,
    adoption::the_word_on_the_list_lapses_when_a_read_shows_fewer_links,
    intents::migrations_are_idempotent,
    history::each_attempt_records_its_cause_and_a_resolve_adds_the_operators,
    history::intents_begun_without_a_cause_have_none_and_history_still_lists_them,
    intents::store_reports_the_backend_its_url_names,
    intents::purchase_that_succeeds_becomes_a_held_link_and_keeps_its_commitment,
    intents::failed_purchase_releases_its_reservation,
    intents::uncertain_purchase_stays_counted_as_spent,
    intents::duplicate_natural_key_is_not_started_again,
    intents::failed_intent_is_rearmed_with_a_fresh_reservation,
    intents::batch_is_all_or_nothing,
    intents::completing_a_finished_intent_is_refused,
    intents::intents_are_filtered_by_campaign_state_and_kind,
    budget::reservation_past_the_monthly_cap_records_nothing,
    budget::daily_and_total_link_caps_refuse_a_reservation,
    budget::autobuyer_budget_is_held_until_its_confirmed_stop_is_settled,
    budget::price_that_differs_from_the_reservation_adjusts_the_commitment,
    budget::lowering_a_cap_keeps_the_commitment,
    budget::committed_today_counts_the_days_purchases_that_kept_their_reservation,
    leases::fenced_lease_writes_nothing,
    leases::an_account_is_held_by_one_daemon_until_it_expires_or_is_given_back,
    leases::takeover_bumps_the_fence_and_marks_in_flight_intents_uncertain,
    leases::lease_is_renewed_by_its_holder_only,
    leases::released_lease_never_hands_out_an_old_fence,
    leases::resolve_created_records_the_autobuyer_and_keeps_its_budget,
    leases::resolve_not_created_releases_the_reservation,
    month_days::the_month_is_summed_per_utc_day_from_its_first_millisecond_to_its_last,
    notices::a_notice_is_claimed_once_across_stores_until_it_is_cleared,
    observe::journal_writes_and_database_errors_are_measured,
    observe::ping_answers_while_the_database_is_up,
    progress::round_is_claimed_once_only,
    progress::last_rounds_report_latest_and_latest_success,
    progress::a_deferred_round_is_claimed_again_by_one_caller_and_keeps_what_it_bought,
    progress::search_is_resumed_by_a_new_store,
    progress::the_latest_ready_searches_say_how_long_searches_take,
    progress::halts_are_set_listed_and_cleared,
    progress::a_campaign_named_global_does_not_share_the_credentials_halt,
    halts::an_operators_halt_is_lifted_only_by_resume_and_every_press_is_kept,
    halts::the_operators_halt_is_listed_before_the_credentials_halt,
    halts::the_anomaly_brake_halts_a_scope_once_and_a_campaigns_resume_lifts_it_alone,
    halts::the_brake_observes_what_was_committed_and_bought_by_time,
    progress::link_list_is_matched_by_link_id_then_page_and_url,
    progress::remote_ids_are_recorded_with_their_intents,
    race::monthly_cap_holds_with_two_stores_racing,
    race::link_caps_hold_with_two_stores_racing,
    race::racing_completions_settle_each_intent_once,
    partial_truth::an_outcome_is_recorded_only_by_the_attempt_that_sent_the_call,
    partial_truth::a_page_whose_purchase_was_uncertain_is_never_bought_again_without_an_operator,
    partial_truth::an_in_flight_purchase_taken_over_is_blocked_from_being_bought_again,
    partial_truth::a_listed_link_of_a_purchase_settled_as_not_bought_is_adopted_and_counted,
    partial_truth::foreign_links_count_once_whoever_bought_them,
    partial_truth::a_stopped_autobuyer_keeps_the_rent_of_its_links_and_releases_the_rest,
    partial_truth::an_uncertain_switch_counts_the_autobuyer_as_running_until_a_stop_is_settled,
    partial_truth::held_links_that_leave_the_list_are_released_after_the_grace,
    partial_truth::an_operator_releases_a_held_or_foreign_link,
    partial_truth::links_that_leave_the_list_are_lost_and_an_operators_release_is_not,
    partial_truth::a_cut_list_is_noted_at_its_smallest_length,
    account::account_cap_refuses_a_reservation_that_two_campaigns_together_would_pass,
    account::removing_the_account_cap_lets_the_campaign_caps_alone_decide,
    account::account_cap_holds_with_two_stores_racing_for_two_campaigns,
    account::a_raised_account_cap_waits_for_approval_and_small_raises_add_up,
    account::each_account_cap_counts_only_its_own_campaigns,
    removals::a_removal_is_judged_once_shared_by_replicas_and_ends_when_its_file_returns,
    rename::a_rename_hands_everything_to_the_new_name_once_and_a_bought_page_stays_bought,
    respell::a_respelt_url_keeps_its_id_texts_and_bought_pages_once,
    identity::a_page_bought_for_a_url_id_is_refused_under_a_new_name_without_a_rekey,
    identity::a_page_bought_before_a_respelling_is_refused_under_the_new_spelling_without_a_rekey,
    identity::the_migration_keys_existing_purchases_by_url_id_and_page,
    identity::the_same_url_id_and_page_in_two_accounts_are_two_purchases_and_in_one_account_one,
);
