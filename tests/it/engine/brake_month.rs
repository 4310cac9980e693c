//! The anomaly brake through an ordinary month (issue 33): buy rounds and a running
//! autobuyer on one injected clock shared by the engine and the sandbox, stepping through the
//! 30 days of November (every campaign's round at 09:00, as its daemon's timer would run it;
//! the autobuyer buys at 09:00 and 15:00 within its daily limit, driven by the test through
//! the sandbox's `autobuy_now` on the same clock rather than its wall-clock timer). Every
//! day, right after the round and the autobuyer's buying, the
//! brake's own figures (`observed_since`, `expected`, the slots its daemon counts) stay under
//! half its default threshold, per campaign and account-wide, over the trailing hour and the
//! trailing 24 h: an ordinary month is far from tripping it.

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use linkrunner::campaign::{LoadedCampaign, parse_schedule};
use linkrunner::clock::{ManualClock, SharedClock};
use linkrunner::daemon::brake::observed_of;
use linkrunner::decide::anomaly::{Figures, Window, expected, slots_in};

use super::support::{self, World};
use crate::support::ledger;

/// The brake's default `--anomaly-multiple`.
const MULTIPLE: f64 = 3.0;
/// Half of it: what an ordinary month must stay under.
const BOUND: f64 = MULTIPLE / 2.0;
const PRICE_RUB: i64 = 100;

/// A campaign with a buy round at 09:00 every day, `per_run` links a round.
fn rounds(name: &str, per_run: u32) -> String {
    let head = super::fixtures::one_page(name);
    format!(
        r##"{head}budget:
  monthly: 20000
  max_link_price: {PRICE_RUB}
  daily_links: {per_run}
  total_links: 200
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: {per_run}
"##
    )
}

/// Buy rounds at 09:00 and a running autobuyer limited to 2 links a day.
fn auto() -> String {
    crate::support::campaigns::head(
        "auto-shop",
        "https://auto-shop.example",
        "https://auto-shop.example/a",
        &["#a#auto shop#/a#", "Buy #a#auto shop goods#/a# here"],
    ) + r##"budget:
  monthly: 20000
  max_link_price: 100
  daily_links: 2
  total_links: 200
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: 2
  search:
    price_rent_to: 100
filters:
  - name: auto-cheap
    price_rent_to: 100
autobuyers:
  - name: auto-auto
    filter: auto-cheap
    state: running
    urls:
      - { url: "https://auto-shop.example/a", monthly_budget: 6000, total_links_limit: 100, daily_links_limit: 2 }
"##
}

pub async fn the_anomaly_brakes_figures_stay_under_half_its_threshold_through_a_month(
    db: support::TestDb,
) {
    let start = Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap();
    let clock = ManualClock::new(start);
    let shared: SharedClock = clock.clone();
    let mut cfg = support::priced_config(1000, PRICE_RUB);
    cfg.autobuyers_start_running = true;
    let w = World::on_clock(db, cfg, shared, |_| {}).await;
    w.write_campaign("two-shop", &rounds("two-shop", 2));
    w.write_campaign("three-shop", &rounds("three-shop", 3));
    w.write_campaign("auto-shop", &auto());
    let campaigns = w.campaigns();

    let mut max = Max::default();
    for day in 1..=30u32 {
        let today = NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
        // 09:00, every campaign's slot: the buy round, then the autobuyer buys a link and a
        // reconciliation a minute later sees it appear. 15:00: the autobuyer buys what its
        // daily limit leaves, seen by a reconciliation. The brake's figures after each.
        for (hour, round, autobuy) in [(9, true, 1), (15, false, 5)] {
            let at = Utc.from_utc_datetime(&today.and_hms_opt(hour, 0, 0).unwrap());
            clock.set(at);
            if round {
                support::pass_with(&w.engine, &campaigns, true).await;
            }
            w.sandbox.autobuy_now(autobuy);
            let now = at + Duration::minutes(1);
            clock.set(now);
            support::pass_with(&w.engine, &campaigns, false).await;
            check(&w, &campaigns, Window::Hour, now, &mut max).await;
            check(&w, &campaigns, Window::Day, now, &mut max).await;
        }
    }
    assert!(
        max.scopes.iter().any(|(_, r)| *r > 0.0),
        "the month bought nothing: {max:?}"
    );
    // The autobuyer really bought, every day (the sandbox's limits on the shared clock).
    let ledger = w.ledger();
    let autobuyer_days: std::collections::BTreeSet<NaiveDate> = ledger
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_some())
        .map(|p| p.at.date_naive())
        .collect();
    assert_eq!(autobuyer_days.len(), 30, "{autobuyer_days:?}");
    ledger::assert_no_duplicate_purchase(&ledger);
}

/// The largest ratio seen per scope and figure (kept to tell how far from the bound a
/// month runs when it fails).
#[derive(Debug, Default)]
struct Max {
    scopes: Vec<(String, f64)>,
}

impl Max {
    fn see(&mut self, scope: String, ratio: f64) {
        match self.scopes.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, r)) => *r = r.max(ratio),
            None => self.scopes.push((scope, ratio)),
        }
    }
}

/// The brake's figures at `now` over `window`, per campaign and summed over the account,
/// computed as `daemon/brake.rs` does (no resume, nothing halted, no `--round-every`); each
/// observed figure is at most [`BOUND`] × what the files explain.
async fn check(
    w: &World,
    campaigns: &[LoadedCampaign],
    window: Window,
    now: DateTime<Utc>,
    max: &mut Max,
) {
    let since = now
        - match window {
            Window::Hour => Duration::hours(1),
            Window::Day => Duration::days(1),
        };
    let all = w
        .store()
        .reports()
        .observed_since(since, now)
        .await
        .expect("journal readable");
    let (mut observed_sum, mut explained_sum) = (Figures::default(), Figures::default());
    for lc in campaigns {
        let c = &lc.campaign;
        let cron = c
            .buy
            .as_ref()
            .map(|b| parse_schedule(&b.schedule).expect("a valid schedule"));
        let slots = slots_in(c, cron.as_ref(), None, since, now);
        let explained = expected(c, slots, window);
        let observed = observed_of(all.clone(), &c.name);
        under_half(&c.name, window, now, observed, explained, max);
        observed_sum = observed_sum.plus(observed);
        explained_sum = explained_sum.plus(explained);
    }
    under_half("account", window, now, observed_sum, explained_sum, max);
}

fn under_half(
    scope: &str,
    window: Window,
    now: DateTime<Utc>,
    observed: Figures,
    explained: Figures,
    max: &mut Max,
) {
    let figures = [
        (
            "committed",
            observed.committed.kopecks() as f64,
            explained.committed.kopecks() as f64,
        ),
        ("links", observed.links as f64, explained.links as f64),
    ];
    for (what, o, e) in figures {
        let ratio = if o == 0.0 { 0.0 } else { o / e };
        max.see(format!("{scope} {what} {window:?}"), ratio);
        assert!(
            o <= BOUND * e,
            "{now} ({window:?} window), {scope}: {what} observed {o} against {e} explained, \
             ratio {ratio:.2} > {BOUND} (half the brake's multiple {MULTIPLE}); \
             observed {observed:?}, explained {explained:?}"
        );
    }
}
