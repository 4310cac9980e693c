//! Adoption keys in one file and the ownership fence across files (issue 24).

use super::loading::load::load_paths;
use super::parse::parse;
use super::tests::assert_mentions;
use super::validate::validate;

const ADOPTING: &str = r##"
name: t
domain: https://t.example
project_id: 4711
urls:
  - url: https://t.example/a
    url_id: 11
    texts:
      - { text: "#a#a#/a#", text_id: 21 }
      - "#a#new#/a#"
budget: {monthly: 1000, max_link_price: 100, unknown_link_rent: 120, daily_links: 5, total_links: 50}
filters: [{name: f}]
autobuyers:
  - name: ab
    id: 9876
    filter: f
    state: stopped
    urls: [{url: "https://t.example/a", monthly_budget: 500, total_links_limit: 5, daily_links_limit: 1}]
"##;

fn check(yaml: &str) -> Result<super::Campaign, Vec<String>> {
    let path = std::path::Path::new("t.yaml");
    let raw = parse(yaml.as_bytes())
        .map_err(|p| p.into_diagnostics(path))
        .map_err(|d| d.into_iter().map(|d| d.message).collect::<Vec<_>>())?;
    validate(&raw).map_err(|p| {
        p.into_diagnostics(path)
            .into_iter()
            .map(|d| d.message)
            .collect()
    })
}

#[test]
fn an_adopting_file_carries_its_ids_into_the_campaign() {
    let c = check(ADOPTING).unwrap();
    assert_eq!(c.project_id, Some(4711));
    assert_eq!(c.urls[0].url_id, Some(11));
    assert_eq!(c.urls[0].text_ids.get("#a#a#/a#"), Some(&21));
    assert_eq!(c.urls[0].texts.len(), 2);
    assert_eq!(c.autobuyers[0].id, Some(9876));
    assert_eq!(
        c.unknown_link_rent(),
        linkrunner_domain::money::Money::from_rubles(120)
    );
}

#[test]
fn adopting_without_unknown_link_rent_is_refused() {
    let errs = check(&ADOPTING.replace("unknown_link_rent: 120, ", "")).unwrap_err();
    assert_mentions(&errs, "`budget.unknown_link_rent` is required");
}

#[test]
fn text_and_autobuyer_ids_without_project_id_are_refused_each_where_written() {
    let errs = check(&ADOPTING.replace("project_id: 4711\n", "")).unwrap_err();
    assert_mentions(&errs, "`text_id` names a text");
    assert_mentions(&errs, "an autobuyer `id` adopts");
}

#[test]
fn a_url_id_without_project_id_is_valid_and_checked_against_the_journal_at_the_pass() {
    let yaml = ADOPTING
        .replace("project_id: 4711\n", "")
        .replace("unknown_link_rent: 120, ", "")
        .replace("{ text: \"#a#a#/a#\", text_id: 21 }", "\"#a#a#/a#\"")
        .replace("    id: 9876\n", "");
    let c = check(&yaml).unwrap();
    assert_eq!((c.project_id, c.urls[0].url_id), (None, Some(11)));
    let errs = check(&yaml.replace("url_id: 11", "url_id: 0")).unwrap_err();
    assert_mentions(&errs, "`url_id` must be a marketplace id");
}

#[test]
fn an_adopted_autobuyer_needs_the_url_ids_of_its_urls() {
    let yaml = ADOPTING
        .replace("    url_id: 11\n", "")
        .replace("{ text: \"#a#a#/a#\", text_id: 21 }", "\"#a#a#/a#\"");
    let errs = check(&yaml).unwrap_err();
    assert_mentions(&errs, "needs its `url_id`");
}

#[test]
fn a_misspelt_key_of_a_text_gets_did_you_mean() {
    let errs = check(&ADOPTING.replace("text_id: 21", "textid: 21")).unwrap_err();
    assert_mentions(&errs, "did you mean `text_id`");
    let errs = check(&ADOPTING.replace("project_id: 4711", "project_idd: 4711")).unwrap_err();
    assert_mentions(&errs, "did you mean `project_id`");
}

#[test]
fn one_url_id_for_two_urls_is_refused() {
    let yaml = ADOPTING.replace(
        "      - \"#a#new#/a#\"\n",
        "      - \"#a#new#/a#\"\n  - url: https://t.example/b\n    url_id: 11\n    texts: [\"#a#b#/a#\"]\n",
    );
    let errs = check(&yaml).unwrap_err();
    assert_mentions(&errs, "`url_id` 11 is also given to");
}

fn load_two(a: &str, b: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), a).unwrap();
    std::fs::write(dir.path().join("b.yaml"), b).unwrap();
    let report = load_paths(&[dir.path().to_path_buf()]);
    assert!(report.campaigns.is_empty(), "both files refused");
    report.problems.iter().map(ToString::to_string).collect()
}

#[test]
fn one_project_id_in_two_files_is_an_error_naming_both() {
    let errs = load_two(ADOPTING, &adopting_u("id: 9876", "id: 9877"));
    assert_each_file_says(&errs, "`project_id` 4711 is also adopted by");
    assert!(
        errs.iter()
            .any(|e| e.contains("/a.yaml:4:13:") && e.contains("/b.yaml:4:13;")),
        "{errs:?}"
    );
}

#[test]
fn one_autobuyer_id_in_two_files_is_an_error() {
    let errs = load_two(ADOPTING, &adopting_u("4711", "4712"));
    assert_each_file_says(&errs, "autobuyer id 9876 is also adopted by");
}

/// [`ADOPTING`] as campaign `u` of `u.example`, with `from` replaced by `to`.
fn adopting_u(from: &str, to: &str) -> String {
    ADOPTING
        .replace("name: t", "name: u")
        .replace("https://t.example", "https://u.example")
        .replace(from, to)
}

/// Each of the two files is told the clash (each error naming the other file).
#[track_caller]
fn assert_each_file_says(errs: &[String], needle: &str) {
    let told = errs.iter().filter(|e| e.contains(needle)).count();
    assert_eq!(told, 2, "{errs:?}");
}

/// [`adopting_nothing`] and the same as campaign `u` with its domain spelt `from` respelt
/// `to` both get the domain clash, each naming the other.
#[track_caller]
fn assert_u_claims_t_example_too(from: &str, to: &str) {
    let a = adopting_nothing();
    let b = a.replace("name: t", "name: u").replace(from, to);
    let errs = load_two(&a, &b);
    assert_each_file_says(&errs, "domain `t.example` is also the domain of");
}

/// The adopting file with nothing adopted: a campaign that only names its domain.
fn adopting_nothing() -> String {
    ADOPTING
        .replace("project_id: 4711\n", "")
        .replace("    url_id: 11\n", "")
        .replace("{ text: \"#a#a#/a#\", text_id: 21 }", "\"#a#a#/a#\"")
        .replace("    id: 9876\n", "")
}

#[test]
fn one_domain_in_two_files_is_an_error_with_case_and_default_port_folded() {
    assert_u_claims_t_example_too("domain: https://t.example", "domain: https://T.EXAMPLE:443");
}

#[test]
fn one_domain_in_two_files_is_an_error_with_a_leading_www_folded() {
    assert_u_claims_t_example_too("https://t.example", "https://www.t.example");
}
