//! Semantic checks through `parse` + `validate` on small YAML campaigns: one rule per test.

use super::diag::Problems;
use super::model::{AutobuyerState, Campaign, DonorOrder};
use super::parse::parse;
use super::span::Pos;
use super::validate::validate;
use linkrunner_domain::money::Money;

/// The name, domain, URL and budget every campaign here starts with.
macro_rules! head {
    () => {
        r##"
name: t
domain: https://t.example
urls:
  - url: https://t.example/a
    texts: ["#a#a#/a#"]
budget: {monthly: 1000, max_link_price: 100, daily_links: 5, total_links: 50}
"##
    };
}

const BASE: &str = concat!(
    head!(),
    r##"buy: {schedule: "0 9 * * *", link_type_id: 1, per_run: 5}
filters: [{name: f}]
autobuyers:
  - name: ab
    filter: f
    state: running
    urls: [{url: "https://t.example/a", monthly_budget: 500, total_links_limit: 5, daily_links_limit: 1}]
"##
);

fn check(yaml: &str) -> Result<Campaign, Vec<String>> {
    let raw = parse(yaml.as_bytes()).map_err(messages)?;
    validate(&raw).map_err(messages)
}

/// Fails unless one of `errs` mentions `needle`, showing them all.
#[track_caller]
pub(super) fn assert_mentions(errs: &[String], needle: &str) {
    assert!(errs.iter().any(|e| e.contains(needle)), "{errs:?}");
}

fn messages(p: Problems) -> Vec<String> {
    p.into_diagnostics(std::path::Path::new("t.yaml"))
        .into_iter()
        .map(|d| d.message)
        .collect()
}

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

#[test]
fn the_base_campaign_is_valid() {
    let c = check(BASE).unwrap();
    assert_eq!(
        (c.paused, c.buy.unwrap().order),
        (false, DonorOrder::Cheapest)
    );
}

#[test]
fn a_commitment_exactly_at_the_cap_fits() {
    // 500 (autobuyer) + 5 × 100 (one round) = 1000 = monthly.
    assert!(check(BASE).is_ok());
}

#[test]
fn one_kopeck_over_the_cap_is_reported_with_the_excess() {
    let errs = check(&with("monthly_budget: 500", "monthly_budget: 500.01")).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].ends_with("1000.01 in all, 0.01 over"),
        "{}",
        errs[0]
    );
}

#[test]
fn a_stopped_autobuyer_does_not_count_against_the_cap() {
    let c = check(
        &with("state: running", "state: stopped")
            .replace("monthly_budget: 500", "monthly_budget: 900"),
    );
    assert_eq!(c.unwrap().autobuyers[0].state, AutobuyerState::Stopped);
}

#[test]
fn without_buy_rounds_only_autobuyers_count() {
    let yaml = with(
        "buy: {schedule: \"0 9 * * *\", link_type_id: 1, per_run: 5}\n",
        "",
    )
    .replace("monthly_budget: 500", "monthly_budget: 1000");
    assert!(check(&yaml).is_ok());
}

#[test]
fn an_autobuyer_url_matches_its_promoted_url_after_normalising() {
    let c = check(&with(
        "url: \"https://t.example/a\"",
        "url: \"https://T.EXAMPLE/a\"",
    ))
    .unwrap();
    assert_eq!(c.autobuyers[0].urls[0].url, "https://t.example/a");
}

#[test]
fn search_extra_keys_are_passed_through_as_written() {
    let yaml = with(
        "per_run: 5}",
        "per_run: 5, search: {domainZone: [ru, su], price_rent_to: \"99.99\"}}",
    );
    let search = check(&yaml).unwrap().buy.unwrap().search;
    assert_eq!(search.price_rent_to, Some(Money::from_kopecks(9_999)));
    assert_eq!(search.extra["domainZone"], serde_json::json!(["ru", "su"]));
}

#[test]
fn a_filter_keeps_its_typed_prices_and_extra_keys() {
    let c = check(&with(
        "{name: f}",
        "{name: f, price_article_to: 500, isSsl: true}",
    ))
    .unwrap();
    assert_eq!(c.filters[0].price_article_to, Some(Money::from_rubles(500)));
    assert_eq!(c.filters[0].extra["isSsl"], true);
}

#[test]
fn a_negative_search_price_is_refused() {
    let errs = check(&with(
        "per_run: 5}",
        "per_run: 5, search: {price_rent_from: -1}}",
    ))
    .unwrap_err();
    assert_eq!(errs, vec!["`price_rent_from` must not be negative"]);
}

#[test]
fn every_independent_problem_is_reported_in_one_run() {
    let yaml = with("name: t", "name: T")
        .replace("per_run: 5}", "per_run: 0}")
        .replace("filter: f\n", "filter: g\n");
    assert_eq!(check(&yaml).unwrap_err().len(), 3);
}

#[test]
fn an_unknown_key_is_reported_where_it_is_written() {
    let yaml = with(
        "domain: https://t.example\n",
        "domain: https://t.example\npasued: true\n",
    );
    let diag = parse(yaml.as_bytes())
        .unwrap_err()
        .into_diagnostics(std::path::Path::new("t"));
    assert_eq!((diag[0].line, diag[0].column), (4, 1));
}

#[test]
fn an_unknown_position_points_at_the_whole_file() {
    assert_eq!(Pos::new(0, 0), Pos::FILE);
}

#[test]
fn every_optional_section_may_be_null_in_the_file_and_in_the_schema() {
    let minimal = concat!(
        head!(),
        r##"paused: null
buy: ~
filters: null
autobuyers:
"##
    );
    let c = check(minimal).unwrap();
    assert!(c.filters.is_empty() && c.autobuyers.is_empty() && c.buy.is_none() && !c.paused);
    let nested = with("per_run: 5}", "per_run: 5, order: null, search: null}")
        .replace("state: running", "state: running\n    auto_approve: null");
    assert!(check(&nested).is_ok(), "{:?}", check(&nested));

    let schema: serde_json::Value = serde_json::from_str(&super::schema_json()).unwrap();
    let defs = &schema["definitions"];
    for (name, object) in [
        ("campaign", &schema),
        ("BuyRounds", &defs["BuyRounds"]),
        ("Autobuyer", &defs["Autobuyer"]),
    ] {
        let required: Vec<&str> = object["required"]
            .as_array()
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        for (key, prop) in object["properties"].as_object().unwrap() {
            if required.contains(&key.as_str()) {
                continue;
            }
            let nullable = prop["type"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "null"))
                || prop["anyOf"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|s| s["type"] == "null"));
            assert!(
                nullable,
                "{name}.{key} is optional but the schema refuses null: {prop}"
            );
        }
    }
}

#[test]
fn approve_above_is_a_positive_amount_of_rubles() {
    let at = |v: &str| {
        check(&with(
            "total_links: 50}",
            &format!("total_links: 50, approve_above: {v}}}"),
        ))
    };
    assert_eq!(
        at("\"1000.50\"").unwrap().budget.approve_above,
        Some(Money::from_kopecks(100_050))
    );
    assert_eq!(
        at("1000").unwrap().budget.approve_above,
        Some(Money::from_rubles(1000))
    );
    assert_eq!(check(BASE).unwrap().budget.approve_above, None);
    for bad in ["0", "-5"] {
        let errs = at(bad).unwrap_err();
        assert!(
            errs.iter()
                .any(|e| e.contains("`approve_above` must be more than 0")),
            "{bad}: {errs:?}"
        );
    }
    assert!(
        at("1000.001").is_err(),
        "at most two decimals, like every amount"
    );
    assert!(at("lots").is_err());
}

#[test]
fn renamed_from_is_kept_and_may_not_name_the_campaign_itself() {
    let c = check(&with("name: t\n", "name: t\nrenamed_from: old-t\n")).unwrap();
    assert_eq!(c.renamed_from.as_deref(), Some("old-t"));
    let errs = check(&with("name: t\n", "name: t\nrenamed_from: t\n")).unwrap_err();
    assert_mentions(&errs, "`renamed_from` is this campaign's own name `t`");
    let errs = check(&with("name: t\n", "name: t\nrenamed_from: Old_T\n")).unwrap_err();
    assert_eq!(errs.len(), 1, "a bad name is reported once: {errs:?}");
}

/// Loads `old` as `old.yaml` and `new` as `new.yaml` from `dir`: the report, the campaigns
/// loaded by name, and the problems as text.
fn load_two(
    dir: &std::path::Path,
    old: &str,
    new: &str,
) -> (super::LoadReport, Vec<String>, Vec<String>) {
    std::fs::write(dir.join("old.yaml"), old).unwrap();
    std::fs::write(dir.join("new.yaml"), new).unwrap();
    let report = super::loading::load::load_paths(&[dir.to_path_buf()]);
    let names = report
        .campaigns
        .iter()
        .map(|c| c.campaign.name.clone())
        .collect();
    let problems = report.problems.iter().map(ToString::to_string).collect();
    (report, names, problems)
}

/// The campaign `old-t` of `old.example`: the file a rename or a move names as its source.
fn old_t() -> String {
    with("name: t\n", "name: old-t\n").replace("t.example", "old.example")
}

/// The one problem there is, which `at` (`file:line:column:`) places.
#[track_caller]
fn only_problem_at<'a>(problems: &'a [String], at: &str) -> &'a str {
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains(at), "file:line:column: {problems:?}");
    &problems[0]
}

#[test]
fn a_rename_beside_the_old_file_is_refused_where_it_says_so_and_the_old_file_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let new = with("name: t\n", "name: t\nrenamed_from: old-t\n");
    let (report, names, problems) = load_two(dir.path(), &old_t(), &new);
    assert_eq!(names, ["old-t"], "the old file keeps its campaign");
    let problem = only_problem_at(&problems, "new.yaml:3:");
    assert!(
        problem.contains("`renamed_from: old-t`, but the campaign `old-t` is still in"),
        "{problems:?}"
    );
    assert_eq!(
        report.invalid.renamed_to("old-t"),
        None,
        "no rename is pending"
    );
}

#[test]
fn a_loaded_rename_is_noted_so_the_old_campaign_is_not_taken_as_removed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("new.yaml"),
        with("name: t\n", "name: t\nrenamed_from: old-t\n"),
    )
    .unwrap();
    let report = super::loading::load::load_paths(&[dir.path().to_path_buf()]);
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.invalid.renamed_to("old-t"), Some("t"));
}

#[test]
fn moved_from_is_kept_and_may_not_name_the_campaign_itself() {
    let c = check(&with(
        "  - name: ab\n",
        "  - name: ab\n    moved_from: old-t\n",
    ))
    .unwrap();
    assert_eq!(c.autobuyers[0].moved_from.as_deref(), Some("old-t"));
    let errs = check(&with("  - name: ab\n", "  - name: ab\n    moved_from: t\n")).unwrap_err();
    assert_mentions(
        &errs,
        "autobuyer `ab`: `moved_from` is this campaign's own name `t`",
    );
}

#[test]
fn a_move_whose_source_file_still_declares_the_autobuyer_is_refused_at_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let source = old_t();
    let new = with("  - name: ab\n", "  - name: ab\n    moved_from: old-t\n");
    let (_, names, problems) = load_two(dir.path(), &source, &new);
    assert_eq!(names, ["old-t"], "the source file keeps its campaign");
    let problem = only_problem_at(&problems, "new.yaml:12:17:");
    assert!(
        problem.contains("autobuyer `ab`: `moved_from: old-t`, but")
            && problem.contains("still declares autobuyer `ab`"),
        "{problems:?}"
    );

    // Once the source file no longer declares it, both load.
    let gone = source.replace("  - name: ab\n", "  - name: other\n");
    std::fs::write(dir.path().join("old.yaml"), gone).unwrap();
    let report = super::loading::load::load_paths(&[dir.path().to_path_buf()]);
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn a_campaign_names_its_account_or_belongs_to_the_default_one() {
    assert_eq!(check(BASE).unwrap().account, "default");
    let named = check(&format!("account: client-7\n{BASE}")).unwrap();
    assert_eq!(named.account, "client-7");
    let e = check(&format!("account: Client 7\n{BASE}")).unwrap_err();
    assert_mentions(&e, "`account` `Client 7` must be");
}
