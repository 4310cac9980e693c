//! Issue 24 (7): `linkrunner import` against a sandbox account already in use — a project
//! with two URLs, three texts and links bought by hand — writes a campaign file that adopts
//! it (project, URL and text ids, caps at today's commitment) and changes nothing on the
//! marketplace. The file is checked as YAML and with the campaign model (it validates).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use linkrunner::market::{Market, MarketClient, PageTarget, PurchaseOrder, SearchPoll, UrlTexts};
use linkrunner::metrics::Metrics;
use linkrunner::money::Money;
use linkrunner_sandbox::Op;
use serde_json::Value;

use super::support::{TICKET, TOKEN, TestDb, World, sandbox_config};
use crate::support::app;
use crate::support::binary::{self, Target};

const DOMAIN: &str = "https://hand.example";

/// What a team did by hand in the UI: a project, two URLs with texts, and three links (two
/// on the first URL with different texts, one on the second). Returns the project id.
async fn account_in_use(w: &World) -> i64 {
    let client = MarketClient::new(
        app::client_config(&w.sandbox.base_url(), TOKEN, TICKET),
        Arc::new(Metrics::new()),
    )
    .expect("client");
    let project = client.create_project(DOMAIN).await.expect("project");
    let urls = [
        UrlTexts {
            url: format!("{DOMAIN}/a"),
            texts: vec!["#a#first a#/a#".into(), "#a#second a#/a#".into()],
        },
        UrlTexts {
            url: format!("{DOMAIN}/b"),
            texts: vec!["#a#only b#/a#".into()],
        },
    ];
    let created = client
        .add_texts(project.project_id, &urls)
        .await
        .expect("texts");
    let buys = [(0, 0), (0, 1), (1, 0)];
    for (n, (u, t)) in buys.into_iter().enumerate() {
        let url = &created[u];
        let job = client
            .start_search(url.url_id, &Default::default())
            .await
            .expect("search");
        let SearchPoll::Ready { donors, .. } = client
            .poll_search(&job, Duration::from_secs(5), Duration::from_millis(10))
            .await
            .expect("poll")
        else {
            panic!("search not ready");
        };
        let d = &donors[n];
        let order = PurchaseOrder {
            link_type_id: 1,
            filter_id: None,
            tech: d.tech.clone(),
            pages: vec![PageTarget {
                page_id: d.page_id,
                url_id: url.url_id,
                text_id: url.texts[t].text_id,
            }],
        };
        client
            .buy(project.project_id, &order)
            .await
            .expect("bought");
    }
    project.project_id
}

fn import(w: &World, project: i64, out: &std::path::Path) -> std::process::Output {
    let mut cmd = binary::command_on(&Target {
        db_url: "sqlite://unused-by-import.db",
        campaigns: w.dir.path(),
        market: &w.sandbox.base_url(),
        token: TOKEN,
        ticket: TICKET,
    });
    cmd.current_dir(w.dir.path());
    cmd.args([
        "import",
        "--project-id",
        &project.to_string(),
        "--domain",
        DOMAIN,
        "--output",
    ])
    .arg(out);
    cmd.output().expect("linkrunner import runs")
}

pub async fn import_writes_a_file_that_adopts_the_project_at_todays_commitment(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    let project = account_in_use(&w).await;
    let before = w.ledger();
    let out = w.dir.path().join("hand.yaml");

    let run = import(&w, project, &out);

    assert!(run.status.success(), "{run:?}");
    let text = std::fs::read_to_string(&out).expect("the file is written");
    let file: Value = serde_saphyr::from_str(&text).expect("the file is YAML");
    let bought = before.purchases_of(project);
    assert_eq!(bought.len(), 3);
    assert_eq!(file["project_id"], Value::from(project), "{text}");
    assert_eq!(file["name"], "hand-example");
    assert_eq!(file["domain"], DOMAIN);
    let url_ids: BTreeSet<i64> = file["urls"]
        .as_array()
        .expect("urls")
        .iter()
        .map(|u| u["url_id"].as_i64().expect("url_id"))
        .collect();
    let sold_urls: BTreeSet<i64> = bought.iter().map(|p| p.url_id).collect();
    assert_eq!(url_ids, sold_urls, "{text}");
    let text_ids: BTreeSet<i64> = file["urls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["texts"].as_array().unwrap().clone())
        .map(|t| t["text_id"].as_i64().expect("text_id"))
        .collect();
    let sold_texts: BTreeSet<i64> = bought.iter().map(|p| p.text_id).collect();
    assert_eq!(text_ids, sold_texts, "{text}");
    let money = |v: &Value| Money::parse_rubles(&v.to_string().replace('"', "")).expect("money");
    let rent = bought
        .iter()
        .fold(Money::ZERO, |a, p| a.checked_add(p.price).unwrap());
    let dearest = bought.iter().map(|p| p.price).max().unwrap();
    assert_eq!(money(&file["budget"]["monthly"]), rent, "{text}");
    assert_eq!(money(&file["budget"]["unknown_link_rent"]), dearest);
    assert_eq!(money(&file["budget"]["max_link_price"]), dearest);
    // The file validates with the campaign model and adopts what the list shows.
    let loaded = linkrunner::campaign::load_dir(w.dir.path());
    assert!(loaded.problems.is_empty(), "{:?}\n{text}", loaded.problems);
    let c = &loaded.campaigns[0].campaign;
    assert_eq!(c.project_id, Some(project));
    assert_eq!(c.budget.unknown_link_rent, Some(dearest));
    assert_eq!(c.budget.monthly, rent);
    let model_urls: BTreeSet<i64> = c.urls.iter().filter_map(|u| u.url_id).collect();
    assert_eq!(model_urls, sold_urls);
    let model_texts: BTreeSet<i64> = c
        .urls
        .iter()
        .flat_map(|u| u.text_ids.values().copied())
        .collect();
    assert_eq!(model_texts, sold_texts);
    // Nothing changed on the marketplace: only the link list was read.
    let after = w.ledger();
    assert_eq!(after.purchases.len(), before.purchases.len());
    assert_eq!(after.projects.len(), before.projects.len());
    assert_eq!(after.urls.len(), before.urls.len());
    assert_eq!(after.texts.len(), before.texts.len());
    assert_eq!(
        after.requests_of(Op::ListLinks, "ok"),
        before.requests_of(Op::ListLinks, "ok") + 1
    );
    // An existing file is never replaced.
    let again = import(&w, project, &out);
    assert!(!again.status.success(), "{again:?}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
}
