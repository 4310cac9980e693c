//! `GET /api/v1/campaigns` pages by default (issue 34): 100 statuses unless asked, at most
//! 1,000 a page (a 400 above that says what to ask instead), `x-total-count`, a stable order,
//! an empty page past the last, and the whole list only as NDJSON when asked for by name.
//! Served in-process over a journal of 250 campaigns, on both backends. And by account
//! (issue 34, an agency bills per client): each status names its account, `?account=ID`
//! filters the API and the page, the summary adds up each account apart.

use linkrunner::money::Money;
use linkrunner::store::CampaignCaps;
use serde_json::Value;

use super::support::at;
use crate::support::db::TestDb;
use crate::support::http::{self, serve_journal};

const CAMPAIGNS: usize = 250;

mod paging {
    use super::*;

    pub(super) async fn the_campaigns_api_pages_by_default_and_streams_the_whole_list_on_request(
        db: TestDb,
    ) {
        // Arrange: 250 campaigns, all in one state, so the default order is by name.
        for i in 0..CAMPAIGNS {
            record(&db, &format!("c-{i:03}"), "default", 1000).await;
        }
        let (addr, stop) =
            serve_journal(&db.store, linkrunner::clock::ManualClock::new(at(12, 0, 0))).await;
        let base = format!("http://{addr}");
        let names = |from: usize, to: usize| -> Vec<String> {
            (from..to).map(|i| format!("c-{i:03}")).collect()
        };

        // Act
        let first = ask(&base, "").await;
        let third = ask(&base, "?page=3").await;
        let past = ask(&base, "?page=4").await;
        let most = ask(&base, "?per_page=1000").await;
        let over = ask(&base, "?per_page=1001").await;
        let lines = ask(&base, "?format=ndjson").await;
        let filtered = ask(&base, "?format=ndjson&q=c-1&sort=name&dir=desc").await;
        let paged_lines = ask(&base, "?format=ndjson&page=2").await;

        // Assert
        stop.cancel();
        assert_eq!((first.status, first.total.as_deref()), (200, Some("250")));
        assert_eq!(first.names(), names(0, 100), "100 unless asked, by name");
        assert_eq!(
            third.names(),
            names(200, 250),
            "the last page is what remains"
        );
        assert_eq!(third.total.as_deref(), Some("250"));
        assert_eq!(
            (past.status, past.body.as_str()),
            (200, "[]"),
            "past the last: empty"
        );
        assert_eq!(most.names(), names(0, 250));
        assert_eq!(over.status, 400, "{}", over.body);
        assert!(
            over.body.contains("1000") && over.body.contains("format=ndjson"),
            "the 400 says the most and what to ask instead: {}",
            over.body
        );
        assert_eq!(lines.status, 200, "{}", lines.body);
        assert_eq!(lines.content_type.as_deref(), Some("application/x-ndjson"));
        assert_eq!(lines.total.as_deref(), Some("250"));
        assert_eq!(
            lines.line_names(),
            names(0, 250),
            "every campaign, one a line"
        );
        let mut wanted = names(100, 200);
        wanted.reverse();
        assert_eq!(
            filtered.line_names(),
            wanted,
            "the list's filter and order apply"
        );
        assert_eq!(filtered.total.as_deref(), Some("100"));
        assert_eq!(paged_lines.status, 400, "{}", paged_lines.body);
        assert!(
            paged_lines.body.contains("format=ndjson"),
            "{}",
            paged_lines.body
        );
    }
}

mod accounts {
    use super::*;

    pub(super) async fn the_api_and_the_page_filter_and_add_up_by_account(db: TestDb) {
        // Arrange: two campaigns of client-a, one of client-b.
        for (name, account, cap) in [
            ("a-1", "client-a", 1000),
            ("a-2", "client-a", 2000),
            ("b-1", "client-b", 500),
        ] {
            record(&db, name, account, cap).await;
        }
        let (addr, stop) =
            serve_journal(&db.store, linkrunner::clock::ManualClock::new(at(12, 0, 0))).await;
        let base = format!("http://{addr}");

        // Act
        let of_a = ask(&base, "?account=client-a").await;
        let second_of_a = ask(&base, "?account=client-a&per_page=1&page=2").await;
        let lines_of_b = ask(&base, "?account=client-b&format=ndjson").await;
        let unknown = ask(&base, "?account=nobody").await;
        let malformed = ask(&base, "?account=Client%20A").await;
        let one = get_json(&base, "/api/v1/campaigns/b-1").await;
        let summary = get_json(&base, "/api/v1/summary").await;
        let page = http::client()
            .get(format!("{base}/?account=client-b"))
            .send()
            .await
            .expect("the page answers");
        let (page_status, page) = (page.status().as_u16(), page.text().await.unwrap());

        // Assert
        stop.cancel();
        assert_eq!(of_a.names(), ["a-1", "a-2"]);
        assert_eq!(
            of_a.total.as_deref(),
            Some("2"),
            "the filtered list's count"
        );
        assert_eq!(of_a.field("account_id"), ["client-a", "client-a"]);
        assert_eq!(
            second_of_a.names(),
            ["a-2"],
            "paging applies to the filtered list"
        );
        assert_eq!(lines_of_b.line_names(), ["b-1"]);
        assert_eq!(
            (
                unknown.status,
                unknown.body.as_str(),
                unknown.total.as_deref()
            ),
            (200, "[]", Some("0")),
            "an account no campaign spends in: an empty page"
        );
        assert_eq!(malformed.status, 400, "{}", malformed.body);
        assert!(
            malformed
                .body
                .contains("account: `Client A` is not an account id"),
            "{}",
            malformed.body
        );
        assert_eq!(one["account_id"], "client-b");
        let accounts: Vec<(String, u64, String)> = summary["accounts"]
            .as_array()
            .expect("accounts")
            .iter()
            .map(|a| {
                let id = a["account"].as_str().unwrap().to_string();
                (
                    id,
                    a["campaigns"].as_u64().unwrap(),
                    a["monthly_cap"].to_string(),
                )
            })
            .collect();
        assert_eq!(
            accounts,
            [
                ("client-a".to_string(), 2, "\"3000\"".to_string()),
                ("client-b".to_string(), 1, "\"500\"".to_string()),
            ],
            "{summary}"
        );
        assert_eq!(page_status, 200, "{page}");
        assert!(
            page.contains("data-matching=\"1\" data-total=\"3\""),
            "{page}"
        );
        assert!(page.contains("<th>Account</th>") && page.contains("<td>client-b</td>"));
        assert!(
            page.contains("id=\"accounts\""),
            "the per-account subtotals"
        );
    }
}

/// Records campaign `name` of `account` with a monthly cap of `cap` rubles.
async fn record(db: &TestDb, name: &str, account: &str, cap: i64) {
    let caps = CampaignCaps {
        account: account.into(),
        name: name.into(),
        monthly_cap: Money::from_rubles(cap),
        daily_links: 1,
        total_links: 10,
    };
    db.store
        .campaigns()
        .upsert_campaign(&caps, at(9, 0, 0))
        .await
        .unwrap();
}

on_both_backends!(
    paging::the_campaigns_api_pages_by_default_and_streams_the_whole_list_on_request,
    accounts::the_api_and_the_page_filter_and_add_up_by_account
);

struct Answer {
    status: u16,
    total: Option<String>,
    content_type: Option<String>,
    body: String,
}

impl Answer {
    /// The campaigns of a JSON page, in its order.
    fn names(&self) -> Vec<String> {
        assert_eq!(self.status, 200, "{}", self.body);
        let page: Value = serde_json::from_str(&self.body).expect("a JSON page");
        page.as_array()
            .expect("an array")
            .iter()
            .map(|c| c["campaign"].as_str().expect("campaign").to_string())
            .collect()
    }

    /// A string field of each status of a JSON page, in its order.
    fn field(&self, name: &str) -> Vec<String> {
        let page: Value = serde_json::from_str(&self.body).expect("a JSON page");
        page.as_array()
            .expect("an array")
            .iter()
            .map(|c| {
                c[name]
                    .as_str()
                    .unwrap_or_else(|| panic!("{name}"))
                    .to_string()
            })
            .collect()
    }

    /// The campaigns of an NDJSON answer, one object a line.
    fn line_names(&self) -> Vec<String> {
        self.body
            .lines()
            .map(|l| {
                let c: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
                c["campaign"].as_str().expect("campaign").to_string()
            })
            .collect()
    }
}

async fn ask(base: &str, query: &str) -> Answer {
    let r = http::client()
        .get(format!("{base}/api/v1/campaigns{query}"))
        .send()
        .await
        .expect("the API answers");
    let header = |name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let (total, content_type) = (header("x-total-count"), header("content-type"));
    Answer {
        status: r.status().as_u16(),
        total,
        content_type,
        body: r.text().await.expect("a body"),
    }
}

/// The JSON at `path`, which must answer 200.
async fn get_json(base: &str, path: &str) -> Value {
    let r = http::client()
        .get(format!("{base}{path}"))
        .send()
        .await
        .expect("the API answers");
    assert_eq!(r.status().as_u16(), 200, "{path}");
    r.json().await.expect("JSON")
}
