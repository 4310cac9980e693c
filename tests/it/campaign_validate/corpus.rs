//! The committed invalid corpus: `tests/campaigns/invalid/*.yaml` (`NN-what.yaml`). Each file is a
//! valid campaign with one thing wrong; its test asserts that the file yields no campaign
//! and exactly one problem, and snapshots that problem's text.

use std::path::{Path, PathBuf};

use linkrunner::campaign::load_paths;

use super::{assert_snapshot_named, rendered};

const DIR: &str = "tests/campaigns/invalid";

fn assert_refused_for_one_reason(stem: &str) {
    let path = Path::new(DIR).join(format!("{stem}.yaml"));
    let report = load_paths(&[path]);
    assert!(report.campaigns.is_empty(), "{stem} loaded a campaign");
    assert_eq!(
        report.problems.len(),
        1,
        "{stem} should fail for one reason:\n{}",
        rendered(&report, "")
    );
    assert_snapshot_named(stem, &rendered(&report, ""));
}

macro_rules! invalid_cases {
    ($($test:ident => $stem:literal,)*) => {
        $(
            #[test]
            fn $test() {
                assert_refused_for_one_reason($stem);
            }
        )*
        const CASES: &[&str] = &[$($stem),*];
    };
}

invalid_cases! {
    invalid_01_syntax_unclosed_quote_is_refused => "01-syntax-unclosed-quote",
    invalid_02_syntax_bad_indentation_is_refused => "02-syntax-bad-indentation",
    invalid_03_syntax_tab_indentation_is_refused => "03-syntax-tab-indentation",
    invalid_04_syntax_unclosed_flow_sequence_is_refused => "04-syntax-unclosed-flow-sequence",
    invalid_05_empty_file_is_refused => "05-empty-file",
    invalid_06_only_comments_is_refused => "06-only-comments",
    invalid_07_two_documents_is_refused => "07-two-documents",
    invalid_08_top_level_is_a_list_is_refused => "08-top-level-is-a-list",
    invalid_09_type_name_is_a_list_is_refused => "09-type-name-is-a-list",
    invalid_10_type_paused_yes_is_refused => "10-type-paused-yes",
    invalid_11_type_daily_links_text_is_refused => "11-type-daily-links-text",
    invalid_12_type_urls_is_a_mapping_is_refused => "12-type-urls-is-a-mapping",
    invalid_13_type_texts_is_a_string_is_refused => "13-type-texts-is-a-string",
    invalid_14_money_too_precise_is_refused => "14-money-too-precise",
    invalid_15_money_not_a_number_is_refused => "15-money-not-a-number",
    invalid_16_type_per_run_fraction_is_refused => "16-type-per-run-fraction",
    invalid_17_state_misspelt_is_refused => "17-state-misspelt",
    invalid_18_order_unknown_is_refused => "18-order-unknown",
    invalid_19_unknown_key_typo_top_level_is_refused => "19-unknown-key-typo-top-level",
    invalid_20_unknown_key_typo_in_budget_is_refused => "20-unknown-key-typo-in-budget",
    invalid_21_unknown_key_camel_case_is_refused => "21-unknown-key-camel-case",
    invalid_22_unknown_key_no_near_miss_is_refused => "22-unknown-key-no-near-miss",
    invalid_23_duplicate_top_level_key_is_refused => "23-duplicate-top-level-key",
    invalid_24_duplicate_key_in_budget_is_refused => "24-duplicate-key-in-budget",
    invalid_25_duplicate_key_in_search_is_refused => "25-duplicate-key-in-search",
    invalid_26_missing_budget_is_refused => "26-missing-budget",
    invalid_27_missing_autobuyer_state_is_refused => "27-missing-autobuyer-state",
    invalid_28_secret_token_is_refused => "28-secret-token",
    invalid_29_secret_auth_ticket_in_search_is_refused => "29-secret-auth-ticket-in-search",
    invalid_30_api_base_url_is_refused => "30-api-base-url",
    invalid_31_deep_nesting_is_refused => "31-deep-nesting",
    invalid_32_alias_bomb_is_refused => "32-alias-bomb",
    invalid_33_too_many_aliases_is_refused => "33-too-many-aliases",
    invalid_34_invalid_utf8_is_refused => "34-invalid-utf8",
    invalid_35_name_uppercase_is_refused => "35-name-uppercase",
    invalid_36_name_starts_with_dash_is_refused => "36-name-starts-with-dash",
    invalid_37_name_too_long_is_refused => "37-name-too-long",
    invalid_38_domain_has_path_is_refused => "38-domain-has-path",
    invalid_39_domain_ftp_is_refused => "39-domain-ftp",
    invalid_40_domain_not_absolute_is_refused => "40-domain-not-absolute",
    invalid_41_url_other_domain_is_refused => "41-url-other-domain",
    invalid_42_url_relative_is_refused => "42-url-relative",
    invalid_43_url_ftp_is_refused => "43-url-ftp",
    invalid_44_url_with_password_is_refused => "44-url-with-password",
    invalid_45_url_listed_twice_is_refused => "45-url-listed-twice",
    invalid_46_urls_empty_is_refused => "46-urls-empty",
    invalid_47_text_without_anchor_is_refused => "47-text-without-anchor",
    invalid_48_text_two_anchors_is_refused => "48-text-two-anchors",
    invalid_49_text_blank_anchor_is_refused => "49-text-blank-anchor",
    invalid_50_text_anchor_reversed_is_refused => "50-text-anchor-reversed",
    invalid_51_text_anchor_unclosed_is_refused => "51-text-anchor-unclosed",
    invalid_52_texts_empty_is_refused => "52-texts-empty",
    invalid_53_text_listed_twice_is_refused => "53-text-listed-twice",
    invalid_54_cron_six_fields_is_refused => "54-cron-six-fields",
    invalid_55_cron_minute_out_of_range_is_refused => "55-cron-minute-out-of-range",
    invalid_56_cron_never_fires_is_refused => "56-cron-never-fires",
    invalid_57_cron_leap_day_is_refused => "57-cron-leap-day",
    invalid_58_cron_nickname_is_refused => "58-cron-nickname",
    invalid_59_filter_reference_dangling_is_refused => "59-filter-reference-dangling",
    invalid_60_autobuyer_url_not_promoted_is_refused => "60-autobuyer-url-not-promoted",
    invalid_61_filter_without_name_is_refused => "61-filter-without-name",
    invalid_62_filter_name_twice_is_refused => "62-filter-name-twice",
    invalid_63_autobuyer_name_twice_is_refused => "63-autobuyer-name-twice",
    invalid_64_per_run_zero_is_refused => "64-per-run-zero",
    invalid_65_per_run_above_daily_links_is_refused => "65-per-run-above-daily-links",
    invalid_66_daily_links_above_total_is_refused => "66-daily-links-above-total",
    invalid_67_link_type_id_out_of_range_is_refused => "67-link-type-id-out-of-range",
    invalid_68_max_link_price_above_monthly_is_refused => "68-max-link-price-above-monthly",
    invalid_69_monthly_zero_is_refused => "69-monthly-zero",
    invalid_70_monthly_negative_is_refused => "70-monthly-negative",
    invalid_71_monthly_absurd_is_refused => "71-monthly-absurd",
    invalid_72_autobuyer_daily_above_total_is_refused => "72-autobuyer-daily-above-total",
    invalid_73_autobuyer_monthly_budget_zero_is_refused => "73-autobuyer-monthly-budget-zero",
    invalid_74_autobuyer_limit_zero_is_refused => "74-autobuyer-limit-zero",
    invalid_75_search_price_from_above_to_is_refused => "75-search-price-from-above-to",
    invalid_76_search_price_above_max_link_price_is_refused => "76-search-price-above-max-link-price",
    invalid_77_filter_article_from_above_to_is_refused => "77-filter-article-from-above-to",
    invalid_78_search_camel_case_duplicate_is_refused => "78-search-camel-case-duplicate",
    invalid_79_search_near_miss_is_refused => "79-search-near-miss",
    invalid_80_search_nested_mapping_is_refused => "80-search-nested-mapping",
    invalid_81_search_null_value_is_refused => "81-search-null-value",
    invalid_82_filter_value_too_long_is_refused => "82-filter-value-too-long",
    invalid_83_search_price_not_money_is_refused => "83-search-price-not-money",
    invalid_84_overcommit_autobuyers_plus_round_is_refused => "84-overcommit-autobuyers-plus-round",
    invalid_85_overcommit_autobuyers_alone_is_refused => "85-overcommit-autobuyers-alone",
    invalid_86_budget_pacing_misspelt_is_refused => "86-budget-pacing-misspelt",
    invalid_87_budget_pacing_key_misspelt_is_refused => "87-budget-pacing-key-misspelt",
}

#[test]
fn every_corpus_file_has_its_own_test_case() {
    let mut on_disk: Vec<String> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| PathBuf::from(e.unwrap().file_name()))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, CASES);
}

#[test]
fn the_corpus_holds_at_least_sixty_cases() {
    assert!(CASES.len() >= 60, "{}", CASES.len());
}
