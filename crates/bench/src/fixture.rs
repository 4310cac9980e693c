//! Generated campaign files and scratch directories for the benchmark.
//!
//! A full-flow campaign: one URL with one text, one filter, one running autobuyer, and a
//! buy round of `per_run: 5` whose caps allow exactly those five links.

use std::path::{Path, PathBuf};

/// Links one buy round of a generated campaign buys.
pub const LINKS_PER_ROUND: u32 = 5;

/// A scratch directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> std::io::Result<Scratch> {
        let stamp = chrono::Utc::now().timestamp_micros();
        let dir = std::env::temp_dir().join(format!(
            "linkrunner-bench-{tag}-{}-{stamp}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The YAML of campaign number `i`, buying on `schedule` (five-field cron).
pub fn campaign_yaml(i: usize, schedule: &str) -> String {
    format!(
        r##"name: bench-{i:05}
domain: https://bench-{i:05}.example
urls:
  - url: https://bench-{i:05}.example/landing
    texts:
      - "Read #a#bench {i} landing#/a# today"
budget:
  monthly: 5000
  max_link_price: 300
  daily_links: {LINKS_PER_ROUND}
  total_links: {LINKS_PER_ROUND}
buy:
  schedule: "{schedule}"
  link_type_id: 1
  per_run: {LINKS_PER_ROUND}
  search: {{ price_rent_from: 10, price_rent_to: 300 }}
filters:
  - {{ name: bench-cheap, price_article_from: 0, price_article_to: 500, price_rent_from: 10, price_rent_to: 80 }}
autobuyers:
  - name: bench-auto
    filter: bench-cheap
    auto_approve: false
    state: running
    urls:
      - {{ url: "https://bench-{i:05}.example/landing", monthly_budget: 1000, total_links_limit: 20, daily_links_limit: 1 }}
"##
    )
}

/// Writes `n` campaign files into `dir`.
pub fn write_campaigns(dir: &Path, n: usize, schedule: &str) -> std::io::Result<()> {
    for i in 0..n {
        std::fs::write(
            dir.join(format!("bench-{i:05}.yaml")),
            campaign_yaml(i, schedule),
        )?;
    }
    Ok(())
}
