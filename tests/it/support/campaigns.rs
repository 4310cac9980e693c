//! Campaign files for a test: written into a directory the engine or the binary reads,
//! loaded back as the engine loads them, and the one plain campaign most daemon tests run.

use std::path::Path;

use linkrunner::campaign::{self, Campaign, LoadedCampaign};

/// Writes (or replaces) `dir/file` with `yaml`.
pub fn write(dir: &Path, file: &str, yaml: &str) {
    std::fs::write(dir.join(file), yaml).expect("write campaign file");
}

/// A fresh directory holding `files` (file name, YAML).
pub fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("campaign dir");
    for (file, yaml) in files {
        write(dir.path(), file, yaml);
    }
    dir
}

/// Every campaign in `dir`, as the engine loads them; the test fails on any problem.
pub fn load(dir: &Path) -> Vec<LoadedCampaign> {
    let report = campaign::load_dir(dir);
    assert!(
        report.problems.is_empty(),
        "fixtures are valid: {:?}",
        report.problems
    );
    report.campaigns
}

/// One campaign parsed from YAML, for tests that need its model.
pub fn load_one(yaml: &str) -> Campaign {
    let dir = dir_with(&[("c.yaml", yaml)]);
    load(dir.path()).remove(0).campaign
}

/// A campaign file's head: `name` on `domain`, one promoted `url` with `texts`; the budget
/// and what it buys are the test's own.
pub fn head(name: &str, domain: &str, url: &str, texts: &[&str]) -> String {
    let mut out = format!("name: {name}\ndomain: {domain}\nurls:\n  - url: {url}\n    texts:\n");
    for text in texts {
        out.push_str(&format!("      - \"{text}\"\n"));
    }
    out
}

/// A valid campaign on `https://NAME.example` that buys two links per round on `schedule`
/// within `monthly` rubles (300 a link at most, limits that never bind).
pub fn simple(name: &str, schedule: &str, monthly: u32) -> String {
    let domain = format!("https://{name}.example");
    let texts = [
        &format!("Buy #a#{name}#/a# now"),
        &format!("#a#{name} shop#/a#"),
    ];
    let head = head(
        name,
        &domain,
        &format!("{domain}/page"),
        &texts.map(String::as_str),
    );
    format!(
        r##"{head}budget:
  monthly: {monthly}
  max_link_price: 300
  daily_links: 100
  total_links: 500
buy:
  schedule: "{schedule}"
  link_type_id: 1
  per_run: 2
  search:
    price_rent_from: 10
    price_rent_to: 300
"##
    )
}
