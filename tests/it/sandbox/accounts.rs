//! Several accounts in one sandbox: each its own things, ids, balance, rate limit and ledger;
//! another account's things answer 403; donor pages are shared.

use linkrunner_domain::money::Money;
use linkrunner_sandbox::{Op, SandboxAccount, SandboxConfig};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{
    PROJECT, Sbx, TICKET, TOKEN, config, items_with_page_id, poll_path, read, serve_command, start,
};

const B_TOKEN: &str = "tok-b-5c21-secret";
const B_TICKET: &str = "ticket-b-90de-secret";

/// A sandbox serving the default account and account `b` (changed by `edit`).
async fn two_accounts(edit: impl FnOnce(&mut SandboxAccount, &mut SandboxConfig)) -> Sbx {
    let mut b = SandboxAccount::new("b", B_TOKEN, B_TICKET);
    let mut cfg = config();
    edit(&mut b, &mut cfg);
    start(cfg.with_account(b)).await
}

/// The request with account `b`'s credentials.
fn as_b(req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    req.header("Authorization", format!("Bearer {B_TOKEN}"))
        .header("Cookie", format!("AUTH_TICKET={B_TICKET}"))
}

async fn post_b(sbx: &Sbx, path: &str, body: Value) -> (StatusCode, Value) {
    let res = as_b(sbx.http.post(sbx.url(path))).json(&body).send().await;
    read(res.unwrap()).await
}

async fn get_b(sbx: &Sbx, path: &str) -> (StatusCode, Value) {
    read(as_b(sbx.http.get(sbx.url(path))).send().await.unwrap()).await
}

/// Account `b`'s project for `domain`: `(projectId, urlId, textId)`.
async fn project_b(sbx: &Sbx, domain: &str) -> (i64, i64, i64) {
    let (status, body) = post_b(sbx, PROJECT, json!({ "domain": domain })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = |k: &str| body[k].as_i64().unwrap();
    (id("id"), id("urlId"), id("textId"))
}

/// Account `b`'s search, ready at the first poll: its donors.
async fn donors_b(sbx: &Sbx, url_id: i64) -> Vec<Value> {
    let path = format!("/rest/SearchRent/rent/tree/urlId/{url_id}");
    let (status, job) = post_b(sbx, &path, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{job}");
    let poll = poll_path(
        job["jobHandleId"].as_str().unwrap(),
        job["metaData"].as_str().unwrap(),
    );
    let (status, body) = get_b(sbx, &poll).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    items_with_page_id(&body)
}

/// Account `b`'s purchase of `donor` for its URL and text.
async fn buy_b(
    sbx: &Sbx,
    project: i64,
    donor: &Value,
    url_id: i64,
    text_id: i64,
) -> (StatusCode, Value) {
    let body = json!({
        "forceSeoWait": donor["forceSeoWait"], "linkTypeId": 1, "filterId": null,
        "mosSites": donor["mosSites"], "pagesExtra": null, "searchId": donor["searchId"],
        "pages": [{"pageId": donor["pageId"], "urlId": url_id, "textId": text_id}],
    });
    post_b(
        sbx,
        &format!("/rest/Placement/rent/create/projectId/{project}"),
        body,
    )
    .await
}

#[tokio::test]
async fn another_accounts_things_answer_403_and_change_nothing() {
    let sbx = two_accounts(|_, _| {}).await;
    let (a_project, a_url, a_text) = sbx.project("https://acme.example").await;
    let a_filter = sbx
        .post_ok(
            "/rest/SearchFilter",
            json!({"name": "a", "priceRentFrom": 0}),
        )
        .await["id"]
        .as_i64()
        .unwrap();
    let (a_job, a_meta) = sbx.search(a_url, json!({})).await;
    let (b_project, b_url, b_text) = project_b(&sbx, "https://beta.example").await;
    let b_donor = donors_b(&sbx, b_url).await.remove(0);
    let a_pages = json!([{"pageId": b_donor["pageId"], "urlId": a_url, "textId": a_text}]);
    let buy_with_a_url = json!({
        "forceSeoWait": b_donor["forceSeoWait"], "linkTypeId": 1, "filterId": null,
        "mosSites": b_donor["mosSites"], "pagesExtra": null, "searchId": b_donor["searchId"],
        "pages": a_pages,
    });
    let autobuyer = |filter: i64, url: i64| {
        json!({"autobuyerCommon": {"name": "x", "isAutoApprove": false}, "searchFilterId": filter,
            "urls": [{"urlId": url, "settings": {"monthlyBudget": 100, "totalLinksLimit": 1, "dailyLinksLimit": 1}}]})
    };
    let a_autobuyer = sbx
        .post_ok(
            &format!("/rest/Autobuyer/rent/create/projectId/{a_project}"),
            autobuyer(a_filter, a_url),
        )
        .await["id"]
        .as_i64()
        .unwrap();

    let tries = [
        post_b(
            &sbx,
            &format!("/rest/Content/add/texts/projectId/{a_project}"),
            json!({"urlsTexts": [{"url": "https://acme.example/x", "texts": [{"text": "x"}]}]}),
        )
        .await,
        post_b(
            &sbx,
            &format!("/rest/Project/placements/links?projectId={a_project}"),
            json!({}),
        )
        .await,
        post_b(
            &sbx,
            &format!("/rest/SearchRent/rent/tree/urlId/{a_url}"),
            json!({}),
        )
        .await,
        get_b(&sbx, &poll_path(&a_job, &a_meta)).await,
        post_b(
            &sbx,
            &format!("/rest/Placement/rent/create/projectId/{b_project}"),
            buy_with_a_url,
        )
        .await,
        post_b(
            &sbx,
            &format!("/rest/Autobuyer/rent/create/projectId/{b_project}"),
            autobuyer(a_filter, b_url),
        )
        .await,
        post_b(
            &sbx,
            "/rest/Autobuyer/start",
            json!({"autobuyersIds": [a_autobuyer]}),
        )
        .await,
    ];

    for (i, (status, body)) in tries.iter().enumerate() {
        assert_eq!(*status, StatusCode::FORBIDDEN, "try {i}: {body}");
        assert!(
            body.to_string().contains("belongs to another account"),
            "try {i}: {body}"
        );
    }
    let a = sbx.handle.ledger();
    let b = sbx.handle.ledger_of("b").unwrap();
    assert_eq!((a.account.as_str(), b.account.as_str()), ("default", "b"));
    assert_eq!(a.urls.len(), 1, "no URL added to a's project");
    assert_eq!(
        a.autobuyer(a_autobuyer).unwrap().state,
        linkrunner_sandbox::AutobuyerState::Stopped
    );
    assert!(b.purchases.is_empty() && b.autobuyers.is_empty());
    assert_eq!(b.requests_of(Op::AddTexts, "forbidden"), 1);
    assert_eq!(
        a.requests_of(Op::AddTexts, "forbidden"),
        0,
        "counted as b's"
    );
    let ids = |l: &linkrunner_sandbox::Ledger| -> Vec<i64> {
        let urls = l.urls.iter().map(|u| u.id);
        l.projects.iter().map(|p| p.id).chain(urls).collect()
    };
    let (a_ids, b_ids) = (ids(&a), ids(&b));
    assert_eq!(
        (a.projects.len(), b.projects.len()),
        (1, 1),
        "each sees its own project only"
    );
    assert!(
        a_ids.iter().all(|id| !b_ids.contains(id)),
        "{a_ids:?} {b_ids:?}"
    );
    assert_eq!(b.texts.iter().map(|t| t.id).collect::<Vec<_>>(), [b_text]);
}

#[tokio::test]
async fn ids_are_one_sequence_across_accounts_and_never_coincide() {
    let sbx = two_accounts(|_, _| {}).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let (p, u, t) = sbx.project(&format!("https://a{i}.example")).await;
        let (q, v, w) = project_b(&sbx, &format!("https://a{i}.example")).await;
        ids.extend([p, u, t, q, v, w]);
    }
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    assert_eq!(sbx.handle.accounts(), ["default", "b"]);
    assert_eq!(sbx.handle.ledger().projects.len(), 3);
    assert_eq!(sbx.handle.ledger_of("b").unwrap().projects.len(), 3);
}

#[tokio::test]
async fn each_purchase_debits_its_own_account_and_shows_in_its_own_ledger_only() {
    let sbx = two_accounts(|b, cfg| {
        b.balance = Money::from_rubles(1_000);
        // Every search offers the whole inventory, so both accounts are offered one page.
        cfg.inventory_size = cfg.donors_per_search;
    })
    .await;
    let (a_project, a_url, a_text) = sbx.project("https://acme.example").await;
    let (b_project, b_url, b_text) = project_b(&sbx, "https://beta.example").await;
    let a_donors = sbx.donors(a_url, json!({})).await;
    let b_donors = donors_b(&sbx, b_url).await;
    // The same donor page, offered to both: the inventory is shared.
    let b_donor = b_donors
        .iter()
        .find(|d| a_donors.iter().any(|a| a["pageId"] == d["pageId"]))
        .expect("the same page offered to both")
        .clone();
    let a_donor = a_donors
        .iter()
        .find(|a| a["pageId"] == b_donor["pageId"])
        .unwrap();

    let (a_status, _) = sbx.buy(a_project, &[a_donor], a_url, a_text).await;
    let (b_status, b_body) = buy_b(&sbx, b_project, &b_donor, b_url, b_text).await;

    assert_eq!(
        (a_status, b_status),
        (StatusCode::OK, StatusCode::OK),
        "{b_body}"
    );
    let a = sbx.handle.ledger();
    let b = sbx.handle.ledger_of("b").unwrap();
    let (pa, pb) = (&a.purchases, &b.purchases);
    assert_eq!((pa.len(), pb.len()), (1, 1));
    assert_eq!(
        (pa[0].account.as_str(), pb[0].account.as_str()),
        ("default", "b")
    );
    assert_eq!(pa[0].page_id, pb[0].page_id);
    assert_ne!(pa[0].link_id, pb[0].link_id);
    assert_eq!((a.duplicate_purchases, b.duplicate_purchases), (0, 0));
    assert_eq!(a.spend, pa[0].price);
    assert_eq!(
        a.balance,
        Money::from_rubles(1_000_000)
            .checked_sub(pa[0].price)
            .unwrap()
    );
    assert_eq!(
        b.balance,
        Money::from_rubles(1_000).checked_sub(pb[0].price).unwrap()
    );
}

#[tokio::test]
async fn insufficient_balance_is_per_account() {
    let sbx = two_accounts(|b, _| b.balance = Money::ZERO).await;
    let (b_project, b_url, b_text) = project_b(&sbx, "https://beta.example").await;
    let donor = donors_b(&sbx, b_url).await.remove(0);
    let (a_project, a_url, a_text) = sbx.project("https://acme.example").await;
    let a_donors = sbx.donors(a_url, json!({})).await;

    let (b_status, b_body) = buy_b(&sbx, b_project, &donor, b_url, b_text).await;
    let (a_status, a_body) = sbx.buy(a_project, &[&a_donors[0]], a_url, a_text).await;

    assert_eq!(
        b_status,
        StatusCode::OK,
        "the default isError style: {b_body}"
    );
    assert!(
        b_body.to_string().contains("insufficient balance"),
        "{b_body}"
    );
    assert_eq!(a_status, StatusCode::OK);
    assert!(!a_body.to_string().contains("insufficient"), "{a_body}");
    let b = sbx.handle.ledger_of("b").unwrap();
    assert!(b.purchases.is_empty() && b.spend == Money::ZERO);
    assert_eq!(sbx.handle.ledger().purchases.len(), 1);
}

#[tokio::test]
async fn each_account_has_its_own_rate_limit_and_counts_its_own_429s() {
    let sbx = two_accounts(|b, cfg| {
        cfg.faults.rate_limit = Some(2);
        b.rate_limit = Some(4);
    })
    .await;
    let mut statuses = (Vec::new(), Vec::new());
    for i in 0..5 {
        let body = json!({"domain": format!("https://r{i}.example")});
        statuses
            .0
            .push(sbx.create_project(&format!("https://r{i}.example")).await.0);
        statuses.1.push(post_b(&sbx, PROJECT, body).await.0);
    }

    let limited = |s: &[StatusCode]| {
        s.iter()
            .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
            .count()
    };
    // Five requests each within far less than a second: 3 over the default's 2, 1 over b's 4.
    assert_eq!(
        (limited(&statuses.0), limited(&statuses.1)),
        (3, 1),
        "{statuses:?}"
    );
    let b = sbx.handle.ledger_of("b").unwrap();
    assert_eq!((sbx.handle.ledger().rate_limited, b.rate_limited), (3, 1));
    assert_eq!(b.requests_of(Op::AddProject, "rate_limited"), 1);
    assert_eq!(sbx.handle.calls_of("b"), Some(5));
}

#[tokio::test]
async fn a_ticket_of_another_account_is_refused_and_the_ledger_is_served_per_account() {
    let sbx = two_accounts(|_, _| {}).await;
    let mixed = sbx
        .http
        .post(sbx.url(PROJECT))
        .header("Authorization", format!("Bearer {B_TOKEN}"))
        .header("Cookie", format!("AUTH_TICKET={TICKET}"))
        .json(&json!({"domain": "https://acme.example"}));
    let (status, _) = read(mixed.send().await.unwrap()).await;
    project_b(&sbx, "https://beta.example").await;

    let ledger = |q: &'static str| {
        let url = sbx.url(&format!("/__sandbox/ledger{q}"));
        let http = sbx.http.clone();
        async move { read(http.get(url).send().await.unwrap()).await }
    };
    let (b_status, b) = ledger("?account=b").await;
    let (d_status, d) = ledger("").await;
    let (unknown, _) = ledger("?account=nobody").await;

    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        (b_status, d_status, unknown),
        (StatusCode::OK, StatusCode::OK, StatusCode::NOT_FOUND)
    );
    assert_eq!(b["account"], "b");
    assert_eq!(b["projects"].as_array().unwrap().len(), 1);
    assert_eq!(d["account"], "default");
    assert!(d["projects"].as_array().unwrap().is_empty());
    assert_eq!(
        b["requests"]["add_project"]["forbidden"], 1,
        "b's token: b's count"
    );
    assert!(TOKEN != B_TOKEN);
}

#[tokio::test]
async fn accounts_that_share_a_token_or_reuse_an_id_are_refused() {
    let same_token = config().with_account(SandboxAccount::new("b", TOKEN, "other-ticket"));
    let default_id = config().with_account(SandboxAccount::new("default", "t2", "k2"));
    let twice = config()
        .with_account(SandboxAccount::new("b", "t2", "k2"))
        .with_account(SandboxAccount::new("b", "t3", "k3"));
    for cfg in [same_token, default_id, twice] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let e = linkrunner_sandbox::spawn(cfg, listener).await.unwrap_err();
        assert!(!e.to_string().contains(TOKEN), "{e}");
        assert!(e.to_string().starts_with("sandbox accounts:"), "{e}");
    }
}

#[tokio::test]
async fn the_command_serves_the_accounts_of_its_accounts_file_and_refuses_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.token"), B_TOKEN).unwrap();
    std::fs::write(dir.path().join("b.ticket"), B_TICKET).unwrap();
    let file = dir.path().join("accounts.yaml");
    std::fs::write(
        &file,
        "- id: b\n  token_file: b.token\n  ticket_file: b.ticket\n  rate_limit: 50\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "- id: b\n  token_file: b.token\n  tiket_file: b.ticket\n",
    )
    .unwrap();
    let (_child, base) = serve_command(&["--accounts-file", file.to_str().unwrap()]).await;

    let create = as_b(reqwest::Client::new().post(format!("{base}{PROJECT}")))
        .json(&json!({"domain": "https://beta.example"}));
    let (status, _) = read(create.send().await.unwrap()).await;
    let ledger = reqwest::get(format!("{base}/__sandbox/ledger?account=b"))
        .await
        .unwrap();
    let (_, b) = read(ledger).await;
    let refused = crate::support::binary::tokio(crate::support::binary::command())
        .args([
            "sandbox",
            "--listen",
            "127.0.0.1:0",
            "--token",
            "t",
            "--ticket",
            "k",
        ])
        .args(["--accounts-file", bad.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);

    assert_eq!(status, StatusCode::OK);
    assert_eq!(b["projects"].as_array().unwrap().len(), 1, "{b}");
    assert!(!refused.status.success());
    let at = format!("{}:3:3", bad.display());
    assert!(
        stderr.contains(&at) && stderr.contains("tiket_file"),
        "{stderr}"
    );
    assert!(!stderr.contains(B_TOKEN), "{stderr}");
}
