//! The committed examples, the committed schema, and the `validate` / `schema` commands.

use std::path::{Path, PathBuf};

use linkrunner::campaign::{AutobuyerState, DonorOrder, load_dir, load_paths, schema_json};
use linkrunner::money::Money;

use super::{assert_snapshot_named, rendered};

#[test]
fn the_example_campaigns_load_without_problems() {
    let report = load_dir(Path::new("campaigns"));
    assert_eq!(rendered(&report, ""), "");
    assert_eq!(report.campaigns.len(), 3);
}

#[test]
fn the_acme_example_reads_into_the_model_the_engine_consumes() {
    let report = load_paths(&[PathBuf::from("campaigns/acme-shoes.yaml")]);
    let c = &report.campaigns[0].campaign;
    let buy = c.buy.as_ref().unwrap();
    assert_eq!(
        (c.name.as_str(), c.domain.as_str()),
        ("acme-shoes", "https://acme.example")
    );
    assert_eq!(
        (c.budget.monthly, c.budget.max_link_price),
        (Money::from_rubles(3000), Money::from_rubles(150))
    );
    assert_eq!(
        (buy.per_run, buy.order, buy.search.price_rent_to),
        (3, DonorOrder::Cheapest, Some(Money::from_rubles(150)))
    );
    assert_eq!(buy.search.extra["cgeoip_country_iso_code"], "RU");
    assert_eq!(c.autobuyers[0].state, AutobuyerState::Running);
}

#[test]
fn kopecks_written_as_a_string_or_a_decimal_are_exact() {
    let report = load_paths(&[PathBuf::from("campaigns/bolt-bikes.yaml")]);
    let c = &report.campaigns[0].campaign;
    assert_eq!(c.budget.monthly, Money::from_kopecks(750_050));
    assert_eq!(
        c.autobuyers[0].urls[1].monthly_budget,
        Money::from_kopecks(200_050)
    );
}

#[test]
fn the_fingerprint_is_the_sha256_of_the_file_bytes() {
    let report = load_paths(&[PathBuf::from("campaigns/calm-tea.yaml")]);
    let fp = &report.campaigns[0].fingerprint;
    assert_eq!(fp.len(), 64);
    assert!(
        fp.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
}

#[test]
fn the_committed_schema_equals_the_schema_command_output() {
    let committed = std::fs::read_to_string("schema/campaign.schema.json").unwrap();
    assert_eq!(
        committed,
        schema_json(),
        "run `linkrunner schema > schema/campaign.schema.json`"
    );
}

#[test]
fn every_example_points_editors_at_the_schema() {
    for entry in std::fs::read_dir("campaigns").unwrap() {
        let path = entry.unwrap().path();
        // campaigns/Kustomization (the Kubernetes ConfigMap of these files) is no campaign.
        if !path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.starts_with("# yaml-language-server: $schema=../schema/campaign.schema.json\n")
        );
    }
}

#[test]
fn validate_reports_every_problem_of_a_file_with_line_and_column() {
    let report = load_paths(&[PathBuf::from("tests/campaigns/many-problems.yaml")]);
    assert_snapshot_named("many-problems", &rendered(&report, ""));
}

/// Issue 33, item 7: after `monthly: lots` the misspelt `per_rnu` is still reported, and no
/// stand-in's type ("invalid type: sequence") is named: the file has no sequence there.
#[test]
fn validate_after_a_type_error_reports_the_misspelt_key_and_no_invented_type() {
    let report = load_paths(&[PathBuf::from("tests/campaigns/type-error-and-typo.yaml")]);
    let text = rendered(&report, "");
    assert!(!text.contains("invalid type"), "{text}");
    assert_snapshot_named("type-error-and-typo", &text);
}

fn linkrunner(args: &[&str]) -> std::process::Output {
    crate::support::binary::command()
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn validate_command_exits_one_and_prints_path_line_column() {
    let out = linkrunner(&[
        "validate",
        "campaigns",
        "tests/campaigns/invalid/19-unknown-key-typo-top-level.yaml",
    ]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout,
        "tests/campaigns/invalid/19-unknown-key-typo-top-level.yaml:8:1: error: unknown key `budjet`: did you mean `budget`?\n"
    );
}

#[test]
fn validate_command_exits_zero_for_the_default_campaigns_directory() {
    let out = linkrunner(&["validate"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn validate_command_prints_json_objects_with_path_line_column_message() {
    let out = linkrunner(&[
        "validate",
        "--format",
        "json",
        "tests/campaigns/invalid/64-per-run-zero.yaml",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{ "path": "tests/campaigns/invalid/64-per-run-zero.yaml", "line": 16, "column": 12,
            "message": "`per_run` must be between 1 and 100, not 0" }])
    );
}

#[test]
fn schema_command_prints_the_committed_schema() {
    let out = linkrunner(&["schema"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string("schema/campaign.schema.json").unwrap()
    );
}
