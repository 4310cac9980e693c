//! Generated campaign files and scratch directories for the benchmark.
//!
//! A full-flow campaign: one URL with one text, one filter, one running autobuyer, and a
//! buy round of `per_run: 5` whose caps allow exactly those five links.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Datelike as _, DurationRound as _, Timelike as _, Utc};

/// Once a year, so no buy round falls inside a measurement unless one is put there.
pub(crate) const FAR_SCHEDULE: &str = "0 9 1 1 *";

/// Links one buy round of a generated campaign buys.
pub(crate) const LINKS_PER_ROUND: u32 = 5;

/// A scratch directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(tag: &str) -> std::io::Result<Scratch> {
        let stamp = chrono::Utc::now().timestamp_micros();
        let dir = std::env::temp_dir().join(format!(
            "linkrunner-bench-{tag}-{}-{stamp}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The YAML of campaign number `i`, buying on `schedule` (five-field cron).
pub(crate) fn campaign_yaml(i: usize, schedule: &str) -> String {
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
pub(crate) fn write_campaigns(dir: &Path, n: usize, schedule: &str) -> std::io::Result<()> {
    (0..n).try_for_each(|i| write_campaign(dir, i, schedule))
}

fn write_campaign(dir: &Path, i: usize, schedule: &str) -> std::io::Result<()> {
    std::fs::write(
        dir.join(format!("bench-{i:05}.yaml")),
        campaign_yaml(i, schedule),
    )
}

/// The id of account number `k` of the several-accounts target (7): the default account
/// (the command line's) first, then `a01`, `a02`, … (the accounts file's).
pub(crate) fn account_id(k: usize) -> String {
    match k {
        0 => linkrunner_sandbox::DEFAULT_ACCOUNT.to_string(),
        k => format!("a{k:02}"),
    }
}

/// Writes `per_account * accounts` campaign files into `dir`, campaign `i` of account
/// `i % accounts`: consecutive names change account, so the reconciler's name order
/// interleaves the accounts. The default account's files name no account (as today's do).
pub(crate) fn write_account_campaigns(
    dir: &Path,
    accounts: usize,
    per_account: usize,
    schedule: &str,
) -> std::io::Result<()> {
    (0..accounts * per_account).try_for_each(|i| {
        let yaml = campaign_yaml(i, schedule);
        let yaml = match i % accounts.max(1) {
            0 => yaml,
            k => yaml.replacen('\n', &format!("\naccount: {}\n", account_id(k)), 1),
        };
        std::fs::write(dir.join(format!("bench-{i:05}.yaml")), yaml)
    })
}

/// A campaign whose buy round falls due inside a measured window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DueRound {
    index: usize,
    slot: DateTime<Utc>,
}

/// Gives one campaign in a hundred (at least one) of the `n` in `dir` a buy round due once,
/// at a minute between 30 s after `from` and 20 s before `from + window` (so it starts and
/// finishes inside the window), spread over those minutes; the others keep their files.
/// None when no minute fits the window.
pub(crate) fn schedule_due_rounds(
    dir: &Path,
    n: usize,
    from: DateTime<Utc>,
    window: Duration,
) -> std::io::Result<Vec<DueRound>> {
    let within = (
        from + Duration::from_secs(30),
        from + window.saturating_sub(Duration::from_secs(20)),
    );
    schedule_rounds(dir, n, (n / 100).max(1), within)
}

/// Gives `k` of the `n` campaigns in `dir` (evenly picked) a buy round due once, at the
/// whole minutes within `[from, to]`, spread over them; the others keep their files. None
/// when no minute fits.
pub(crate) fn schedule_rounds(
    dir: &Path,
    n: usize,
    k: usize,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> std::io::Result<Vec<DueRound>> {
    let slots = minutes_within(from, to);
    if slots.is_empty() || n == 0 {
        return Ok(Vec::new());
    }
    let k = k.clamp(1, n);
    let due: Vec<DueRound> = (0..k)
        .map(|j| DueRound {
            index: j * n / k,
            slot: slots[j % slots.len()],
        })
        .collect();
    for d in &due {
        let cron = format!(
            "{} {} {} {} *",
            d.slot.minute(),
            d.slot.hour(),
            d.slot.day(),
            d.slot.month()
        );
        write_campaign(dir, d.index, &cron)?;
    }
    Ok(due)
}

/// Puts the campaigns of `due` back on `schedule`.
pub(crate) fn restore_schedules(
    dir: &Path,
    due: &[DueRound],
    schedule: &str,
) -> std::io::Result<()> {
    due.iter()
        .try_for_each(|d| write_campaign(dir, d.index, schedule))
}

/// Every whole minute in `[from, to]`.
fn minutes_within(from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let minute = chrono::Duration::minutes(1);
    let Ok(floor) = from.duration_trunc(minute) else {
        return Vec::new();
    };
    let mut t = if floor < from { floor + minute } else { floor };
    let mut out = Vec::new();
    while t <= to {
        out.push(t);
        t += minute;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        chrono::NaiveDate::from_ymd_opt(2026, 11, 25)
            .and_then(|d| d.and_hms_opt(h, m, s))
            .map(|t| t.and_utc())
            .expect("a valid time")
    }

    #[test]
    fn due_rounds_fall_on_whole_minutes_inside_the_window_and_are_spread() {
        let dir = Scratch::new("fixture-test").unwrap();
        write_campaigns(dir.path(), 300, FAR_SCHEDULE).unwrap();
        let due =
            schedule_due_rounds(dir.path(), 300, at(10, 0, 50), Duration::from_secs(200)).unwrap();
        // Whole minutes in [10:01:20, 10:03:50]: 10:02 and 10:03; 3 campaigns of 300.
        let slots: Vec<_> = due.iter().map(|d| (d.index, d.slot)).collect();
        assert_eq!(
            slots,
            vec![(0, at(10, 2, 0)), (100, at(10, 3, 0)), (200, at(10, 2, 0))]
        );
        let file = std::fs::read_to_string(dir.path().join("bench-00100.yaml")).unwrap();
        assert!(file.contains(r#"schedule: "3 10 25 11 *""#), "{file}");
        restore_schedules(dir.path(), &due, FAR_SCHEDULE).unwrap();
        let file = std::fs::read_to_string(dir.path().join("bench-00100.yaml")).unwrap();
        assert!(file.contains(FAR_SCHEDULE));
        let short =
            schedule_due_rounds(dir.path(), 300, at(10, 0, 50), Duration::from_secs(40)).unwrap();
        assert!(short.is_empty(), "no minute fits a 40 s window");
    }
}
