//! The operator at 200 campaigns: the real binary on 200 generated campaign files (some
//! paused, some with autobuyers, two whose files are then removed) against the sandbox.
//! `/api/v1/campaigns`, `linkrunner status` and the status page must say the same state
//! for every campaign, the page's summary must be the API's, filtering the page to a state
//! must show exactly the API's campaigns in it (and the API's own page of them, by the same
//! parameters); and every JSON log line written inside a
//! campaign's work must name the campaign at its top level.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::support::{TICKET, TOKEN, start_sandbox};
use crate::support::binary::{self, Target};
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::http::get;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

const CAMPAIGNS: usize = 200;
const GONE: [&str; 2] = ["gone-a", "gone-b"];

/// Campaign `i`'s name and file: every tenth paused, every fourth with a running autobuyer.
fn campaign_file(i: usize) -> (String, String) {
    let name = format!("shop-{i:03}");
    let mut yaml = campaigns::simple(&name, "0 9 * * *", 2000 + 10 * i as u32);
    if i % 10 == 3 {
        yaml.push_str("paused: true\n");
    }
    if i.is_multiple_of(4) {
        yaml.push_str(&format!(
            "filters:\n  - name: cheap\n    price_rent_from: 10\n    price_rent_to: 80\n\
             autobuyers:\n  - name: auto\n    filter: cheap\n    auto_approve: false\n    state: running\n    urls:\n\
             \x20     - url: https://{name}.example/page\n        monthly_budget: 500\n        total_links_limit: 5\n        daily_links_limit: 1\n"
        ));
    }
    (name, yaml)
}

/// `i` of `shop-i`.
fn index(name: &str) -> Option<usize> {
    name.strip_prefix("shop-")?.parse().ok()
}

/// What the test expects each campaign's state to be once everything settled.
fn expected_states() -> BTreeMap<String, String> {
    let mut want: BTreeMap<String, String> = (0..CAMPAIGNS)
        .map(|i| {
            let state = if i % 10 == 3 { "paused" } else { "running" };
            (format!("shop-{i:03}"), state.to_string())
        })
        .collect();
    for g in GONE {
        want.insert(g.to_string(), "removed".into());
    }
    want
}

async fn json(base: &str, path: &str) -> Value {
    let (status, body) = get(&format!("{base}{path}")).await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// Every campaign's status: the API's whole list, one object a line (a page holds 100).
async fn every_campaign(base: &str) -> Value {
    let path = "/api/v1/campaigns?format=ndjson";
    let (status, body) = get(&format!("{base}{path}")).await;
    assert_eq!(status, 200, "{path}: {body}");
    body.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

fn states_of(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| {
            let name = c["campaign"].as_str().expect("campaign").to_string();
            (name, c["state"].as_str().expect("state").to_string())
        })
        .collect()
}

/// The rows of one page of the status page's table: campaign → `data-state`.
fn page_rows(html: &str) -> BTreeMap<String, String> {
    html.split("<tr data-state=\"")
        .skip(1)
        .map(|row| {
            let (state, rest) = row.split_once('"').expect("state attribute");
            let name = rest
                .split_once("?campaign=")
                .and_then(|(_, r)| r.split_once('"'))
                .expect("the row links to its campaign")
                .0;
            (name.to_string(), state.to_string())
        })
        .collect()
}

/// `data-value` of the element with `id` on the page.
fn page_value(html: &str, id: &str) -> String {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} on the page"));
    let rest = &html[at..];
    let v = rest.split_once("data-value=\"").expect("data-value").1;
    v.split_once('"').expect("closing quote").0.to_string()
}

/// Every campaign's state as the page's table shows it, page by page.
async fn page_states(base: &str) -> BTreeMap<String, String> {
    let mut all = BTreeMap::new();
    for page in 1.. {
        let (status, html) = get(&format!("{base}/?per_page=200&page={page}")).await;
        assert_eq!(status, 200, "{html}");
        all.extend(page_rows(&html));
        if !html.contains("\">next</a>") {
            break;
        }
    }
    all
}

async fn status_states(target: &Target<'_>) -> BTreeMap<String, String> {
    let out = binary::tokio(binary::command_on(target))
        .args(["status", "--format", "json"])
        .output()
        .await
        .expect("linkrunner status runs");
    crate::support::binary::assert_success(&out, "status");
    states_of(&serde_json::from_slice(&out.stdout).expect("status JSON"))
}

/// Kopecks of a money string of the API ("150.50").
fn kopecks(v: &Value) -> i64 {
    let s = v.as_str().expect("money is a string");
    let (rub, kop) = s.split_once('.').unwrap_or((s, "0"));
    rub.parse::<i64>().unwrap() * 100 + format!("{kop:0<2}").parse::<i64>().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_200_campaigns_the_api_status_and_page_agree_and_logs_name_the_campaign() {
    // Arrange
    crate::support::init_logs();
    let dir = tempfile::tempdir().unwrap();
    for i in 0..CAMPAIGNS {
        let (name, yaml) = campaign_file(i);
        campaigns::write(dir.path(), &format!("{name}.yaml"), &yaml);
    }
    for g in GONE {
        campaigns::write(
            dir.path(),
            &format!("{g}.yaml"),
            &campaigns::simple(g, "0 9 * * *", 900),
        );
    }
    let journal = TestDb::sqlite().await;
    let sandbox = start_sandbox(0).await;
    let market = sandbox.base_url();
    let target = Target {
        db_url: &journal.url,
        campaigns: dir.path(),
        market: &market,
        token: TOKEN,
        ticket: TICKET,
    };
    let mut cmd = binary::command_on(&target);
    cmd.env("LINKRUNNER_RECONCILE_INTERVAL", "3600")
        .env("LINKRUNNER_LOG_FORMAT", "json")
        .env("LINKRUNNER_LOG", "info,linkrunner=debug");
    let daemon = binary::Daemon::run(cmd, &[]).await;
    let base = format!("http://{}", daemon.addr);
    let total = CAMPAIGNS + GONE.len();
    within(PATIENCE * 4, "every campaign reconciled", || async {
        let list = every_campaign(&base).await;
        let all = list.as_array().unwrap();
        let done = all
            .iter()
            .filter(|c| {
                let name = c["campaign"].as_str().unwrap_or_default();
                let autobuyers = usize::from(index(name).is_some_and(|i| i.is_multiple_of(4)));
                c["project_id"].is_i64()
                    && c["texts"].as_u64() == Some(2)
                    && c["autobuyers"].as_array().map(Vec::len) == Some(autobuyers)
            })
            .count();
        (done == total).then_some(())
    })
    .await;

    // Act: two files go away.
    for g in GONE {
        std::fs::remove_file(dir.path().join(format!("{g}.yaml"))).unwrap();
    }
    daemon.signal("HUP");

    // Assert: the three surfaces agree on every campaign, and on what the test made.
    let want = expected_states();
    let (api, status, page) = within(
        PATIENCE * 2,
        "the API, status and the page agree",
        || async {
            let api = states_of(&every_campaign(&base).await);
            let status = status_states(&target).await;
            let page = page_states(&base).await;
            (api == want && status == want && page == want).then_some((api, status, page))
        },
    )
    .await;
    assert_eq!(api.len(), total);
    assert_eq!((&status, &page), (&api, &api));
    let list = every_campaign(&base).await;
    for c in list.as_array().unwrap() {
        let paused = c["state"] == "paused";
        let removed = c["state"] == "removed";
        assert_eq!(c["paused"], Value::Bool(paused), "{c}");
        let name = c["campaign"].as_str().unwrap();
        let i: usize = name
            .strip_prefix("shop-")
            .map_or(999, |n| n.parse().unwrap());
        let autobuyers = c["autobuyers"].as_array().expect("autobuyers in the API");
        assert_eq!(autobuyers.len(), usize::from(i.is_multiple_of(4)), "{c}");
        if i.is_multiple_of(4) && !removed {
            assert_eq!(autobuyers[0]["name"], "auto", "{c}");
        }
    }

    // The summary: the API's, equal to what the list adds up to, and on the page.
    let summary = json(&base, "/api/v1/summary").await;
    let (_, html) = get(&format!("{base}/")).await;
    let mut by_state: BTreeMap<String, u64> = BTreeMap::new();
    for s in api.values() {
        *by_state.entry(s.clone()).or_default() += 1;
    }
    for (state, n) in summary["by_state"].as_object().unwrap() {
        let n = n.as_u64().unwrap();
        assert_eq!(n, by_state.get(state).copied().unwrap_or(0), "{state}");
        let shown = html
            .split_once(&format!("id=\"count-{state}\">"))
            .and_then(|(_, r)| r.split_once('<'))
            .expect("the state's count on the page")
            .0;
        assert_eq!(shown, n.to_string(), "{state} on the page");
    }
    let committed: i64 = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| kopecks(&c["monthly_commitment"]))
        .sum();
    assert!(committed > 0, "the running autobuyers count");
    assert_eq!(kopecks(&summary["monthly_commitment"]), committed);
    assert_eq!(
        page_value(&html, "sum-commitment"),
        summary["monthly_commitment"].as_str().unwrap()
    );
    assert_eq!(
        page_value(&html, "sum-cap"),
        summary["monthly_cap"].as_str().unwrap()
    );
    assert_eq!(page_value(&html, "sum-campaigns"), total.to_string());
    let month = summary["month"].as_str().unwrap();
    let report = json(&base, &format!("/api/v1/report?month={month}")).await;
    assert_eq!(
        summary["links_bought_this_month"],
        report["total"]["links_bought"]
    );
    assert_eq!(
        page_value(&html, "sum-links-month"),
        report["total"]["links_bought"].to_string()
    );

    // Filtering to one state shows exactly the API's campaigns in it.
    for state in ["paused", "removed", "running"] {
        let (_, html) = get(&format!("{base}/?state={state}&per_page=200")).await;
        let shown: BTreeSet<String> = page_rows(&html).into_keys().collect();
        let want: BTreeSet<String> = api
            .iter()
            .filter(|(_, s)| *s == state)
            .map(|(n, _)| n.clone())
            .collect();
        assert_eq!(shown, want, "?state={state}");
    }

    // The API takes the page's parameters: one page of statuses, chosen as the table does.
    let paused = json(&base, "/api/v1/campaigns?state=paused&per_page=200").await;
    let want: BTreeMap<String, String> = api
        .iter()
        .filter(|(_, s)| *s == "paused")
        .map(|(n, s)| (n.clone(), s.clone()))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(states_of(&paused), want, "?state=paused");
    let names: Vec<&String> = api.keys().collect();
    let page = json(
        &base,
        "/api/v1/campaigns?sort=name&dir=desc&per_page=7&page=3",
    )
    .await;
    let shown: Vec<&str> = page
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["campaign"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = names
        .iter()
        .rev()
        .skip(14)
        .take(7)
        .map(|n| n.as_str())
        .collect();
    assert_eq!(shown, want, "the third page of 7 by name, descending");
    let (status, body) = get(&format!("{base}/api/v1/campaigns?state=active")).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("state: `active` is not one of"), "{body}");

    // The logs: every line is JSON; every line written in a campaign's work names it.
    let (_, stderr) = daemon.stop().await;
    let text = String::from_utf8(stderr).expect("UTF-8 logs");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_campaign_lines(&lines);
    let named: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l["campaign"].as_str())
        .collect();
    assert_eq!(named.len(), total, "every campaign's work is in the log");
}

/// The process's own lines: start, the reconciliation's plan, credentials, reloads,
/// shutdown. No campaign's work.
const PROCESS_LINES: [(&str, &str); 10] = [
    ("linkrunner::cli::run", "linkrunner daemon starting"),
    ("linkrunner::cli::run", "linkrunner daemon stopped"),
    ("linkrunner::daemon::run", "campaigns loaded"),
    (
        "linkrunner::daemon::reconciler",
        "reconciliation planned within --rate-limit",
    ),
    (
        "linkrunner::daemon::reconciler",
        "every campaign reconciled once",
    ),
    ("linkrunner::daemon::signals", "SIGTERM: shutting down"),
    (
        "linkrunner::daemon::signals",
        "shutting down: in-flight calls finish and are recorded; a second signal exits at once",
    ),
    (
        "linkrunner::market::credentials",
        "marketplace credentials in use",
    ),
    (
        "linkrunner::daemon::division",
        "this daemon works the account now (its account lease)",
    ),
    (
        "linkrunner::daemon::division",
        "another daemon works the account now (its account lease)",
    ),
];

/// Lines of a campaign's work carry `campaign` at the top level, not only in `span`; the
/// only lines without it are the process's own ([`PROCESS_LINES`]).
fn assert_campaign_lines(lines: &[Value]) {
    let mut orphans: BTreeMap<String, usize> = BTreeMap::new();
    for l in lines {
        if let Some(in_span) = l["span"]["campaign"].as_str() {
            assert_eq!(l["campaign"].as_str(), Some(in_span), "{l}");
        }
        let (target, message) = (l["target"].as_str(), l["message"].as_str());
        let process = PROCESS_LINES
            .iter()
            .any(|(t, m)| target == Some(*t) && message == Some(*m));
        if !l["campaign"].is_string() && !process {
            *orphans
                .entry(format!("{target:?} {message:?}"))
                .or_default() += 1;
        }
    }
    assert!(
        orphans.is_empty(),
        "lines without a top-level campaign: {orphans:#?}"
    );
    let with = lines.iter().filter(|l| l["campaign"].is_string()).count();
    assert!(with > 5 * CAMPAIGNS, "{with} lines name a campaign");
}
