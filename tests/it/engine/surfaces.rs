//! What people and tools read, as one snapshot: `status`, `plan` (text and the pull-request
//! markdown), `report --month` (text, CSV, JSON), the JSON of `/api/v1/campaigns` and
//! `/api/v1/state`, after one deterministic run: a fixed clock, one campaign and one request
//! at a time, the sandbox's default seed. A change to any of these surfaces shows in the
//! snapshot's diff; the moves of the house (issue 23) were made with it byte-identical.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use linkrunner::clock::ManualClock;
use linkrunner::decide::plan;
use linkrunner::decide::recorded::Recorded;
use linkrunner::views::{month, report, review, state};

use super::fixtures::{ACME, BOLT};
use super::support::{self, TICKET, TOKEN, World};
use crate::support::app::{self, Journal};

pub async fn the_read_surfaces_of_one_deterministic_run_match_their_snapshot(db: support::TestDb) {
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 8, 0, 0).unwrap();
    let w = World::new(db, support::sandbox_config()).await;
    let clock = ManualClock::new(now);
    let mut market = app::client_config(&w.sandbox.base_url(), TOKEN, TICKET);
    market.max_concurrency = 1;
    let mut settings = app::settings(Journal::Open(w.store().clone()), market);
    settings.clock = clock.clone();
    settings.engine.campaign_concurrency = 1;
    let engine = app::build(settings).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("bolt-bikes", BOLT);
    let campaigns = w.campaigns();
    // One campaign at a time, in file order, so the sandbox hands out the same ids each run.
    for lc in &campaigns {
        support::pass_with(&engine, std::slice::from_ref(lc), true).await;
    }
    clock.advance(chrono::Duration::minutes(5));
    for lc in &campaigns {
        support::pass_with(&engine, std::slice::from_ref(lc), false).await;
    }
    let now = clock.now_utc();

    let mut out = String::new();
    let mut plans = Vec::new();
    for lc in &campaigns {
        let c = &lc.campaign;
        let st = report::campaign_status(w.store(), &c.name, now)
            .await
            .unwrap();
        out += &format!("== status {}\n{}\n", c.name, report::render_status(&st));
        out += &format!("== api campaign {}\n{}\n", c.name, pretty(&st));
        let r = Recorded::load(w.store(), &c.name, now.date_naive())
            .await
            .unwrap();
        let p = plan::plan_campaign(c, &r, true);
        out += &format!("== plan {}\n{}\n", c.name, report::render_plan(&p));
        plans.push(p);
    }
    out += &format!(
        "== plan markdown\n{}\n",
        review::render_markdown(&plans, &[])
    );
    let m = month::month_report(w.store(), month::Month::of(now))
        .await
        .unwrap();
    out += &format!("== report text\n{}\n", month::render_text(&m));
    out += &format!("== report csv\n{}\n", month::render_csv(&m));
    out += &format!("== report json\n{}\n", pretty(&m));
    let s = state::read_state(w.store(), None, now).await.unwrap();
    out += &format!("== api state\n{}\n", pretty(&s));
    // The holder id (host, pid, start time) is this process's own: the one part that varies.
    let out = out.replace(engine.holder(), "<holder>");
    insta::assert_snapshot!("read_surfaces", out);
}

fn pretty<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).expect("serializable")
}

trait NowUtc {
    fn now_utc(&self) -> chrono::DateTime<Utc>;
}

impl NowUtc for Arc<ManualClock> {
    fn now_utc(&self) -> chrono::DateTime<Utc> {
        linkrunner::clock::Clock::now(self.as_ref())
    }
}
