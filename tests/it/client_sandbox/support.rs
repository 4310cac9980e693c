//! This suite's setup: a `MarketClient` pointed at an in-process sandbox (both from
//! [`crate::support`]), and the steps of the marketplace flow that most tests need before the
//! call they are about.

use std::sync::Arc;
use std::time::Duration;

use linkrunner::market::{
    ClientConfig, CreatedUrl, Donor, Market, MarketClient, PageTarget, ProjectIds, PurchaseOrder,
    SearchJob, SearchParams, SearchPoll, UrlTexts,
};
use linkrunner::metrics::Metrics;
use linkrunner::money::Money;
use linkrunner_sandbox::{SandboxConfig, SandboxHandle};

use crate::support::{market, sandbox};

pub const TOKEN: &str = "tok-cs-7a1e-secret";
pub const TICKET: &str = "tkt-cs-90b2-secret";
pub const DOMAIN: &str = "https://acme.example";
pub const SHOES: &str = "https://acme.example/running-shoes";
pub const TEXTS: [&str; 2] = [
    "Best #a#running shoes#/a# in town",
    "#a#acme running shoes#/a#",
];

/// Strict defaults; a search answers "pending" twice before it is ready.
pub fn sandbox_config() -> SandboxConfig {
    SandboxConfig::new(TOKEN, TICKET)
}

/// Fast limits so no test is throttled by the client unless it means to be; two read retries.
pub fn client_config(base: &str) -> ClientConfig {
    let mut c = market::fast_config(base, TOKEN, TICKET);
    c.max_concurrency = 8;
    c.connect_timeout = Duration::from_secs(2);
    c
}

pub fn client_with(base: &str, tweak: impl FnOnce(&mut ClientConfig)) -> MarketClient {
    let mut cfg = client_config(base);
    tweak(&mut cfg);
    MarketClient::new(cfg, Arc::new(Metrics::new())).unwrap()
}

pub fn client(sandbox: &SandboxHandle) -> MarketClient {
    client_with(&sandbox.base_url(), |_| {})
}

/// A sandbox with `cfg` and a default client for it.
pub async fn pair(cfg: SandboxConfig) -> (SandboxHandle, MarketClient) {
    let sandbox = sandbox::start(cfg).await;
    let client = client(&sandbox);
    (sandbox, client)
}

pub fn shoes() -> Vec<UrlTexts> {
    vec![UrlTexts {
        url: SHOES.into(),
        texts: TEXTS.map(String::from).to_vec(),
    }]
}

/// Operations 1 and 2: the project and one promoted URL with two texts.
pub async fn project_with_shoes(client: &MarketClient) -> (ProjectIds, CreatedUrl) {
    let project = client.create_project(DOMAIN).await.unwrap();
    let mut created = client
        .add_texts(project.project_id, &shoes())
        .await
        .unwrap();
    (project, created.remove(0))
}

pub fn search_params() -> SearchParams {
    SearchParams {
        price_rent_from: Some(Money::from_rubles(30)),
        price_rent_to: Some(Money::from_rubles(300)),
        ..SearchParams::default()
    }
}

/// A sandbox with `cfg`, a client, and a search started for the promoted URL of a new
/// project (operations 1 to 3).
pub async fn search_started(cfg: SandboxConfig) -> (SandboxHandle, MarketClient, SearchJob) {
    let (sandbox, client) = pair(cfg).await;
    let (_, shoes) = project_with_shoes(&client).await;
    let job = client.start_search(shoes.url_id, &search_params()).await;
    (sandbox, client, job.unwrap())
}

/// Polls every 10 ms for up to 5 s.
pub async fn poll_until_ready(client: &MarketClient, job: &SearchJob) -> (Vec<Donor>, usize) {
    let poll = client
        .poll_search(job, Duration::from_secs(5), Duration::from_millis(10))
        .await
        .unwrap();
    match poll {
        SearchPoll::Ready { donors, unpriced } => (donors, unpriced),
        other => panic!("the search was not ready after 5 s: {other:?}"),
    }
}

/// Operations 3 and 4: a search for `url_id`, polled until ready.
pub async fn donors_for(client: &MarketClient, url_id: i64) -> Vec<Donor> {
    let job = client.start_search(url_id, &search_params()).await.unwrap();
    let (donors, unpriced) = poll_until_ready(client, &job).await;
    assert_eq!(unpriced, 0, "every sandbox donor has a readable price");
    donors
}

/// A purchase of `donors` (which must share their technical values) for one URL and text.
pub fn order(donors: &[&Donor], url_id: i64, text_id: i64) -> PurchaseOrder {
    PurchaseOrder {
        link_type_id: 1,
        filter_id: None,
        tech: donors[0].tech.clone(),
        pages: donors
            .iter()
            .map(|d| PageTarget {
                page_id: d.page_id,
                url_id,
                text_id,
            })
            .collect(),
    }
}

/// A sandbox with `cfg`, its client, a project ready to buy, and an order for its first donor
/// page: `(sandbox, client, project, order)`.
pub async fn ready_order(
    cfg: SandboxConfig,
) -> (SandboxHandle, MarketClient, ProjectIds, PurchaseOrder) {
    let (sandbox, client) = pair(cfg).await;
    let (project, shoes, donors) = ready_to_buy(&client).await;
    let order = order(&[&donors[0]], shoes.url_id, shoes.texts[0].text_id);
    (sandbox, client, project, order)
}

/// Everything up to a purchase: project, URL with texts, ready donors. Returns the project,
/// the promoted URL and the donors found for it.
pub async fn ready_to_buy(client: &MarketClient) -> (ProjectIds, CreatedUrl, Vec<Donor>) {
    let (project, shoes) = project_with_shoes(client).await;
    let donors = donors_for(client, shoes.url_id).await;
    (project, shoes, donors)
}
