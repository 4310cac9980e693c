//! The ten operations through the whole flow — create project → add texts → search → poll
//! until ready → buy → list links → filter → autobuyer create → stop → start — each checked
//! against what the sandbox's ledger says it did.

use linkrunner::market::{
    AutobuyerSpec, AutobuyerUrl, FilterSpec, Market, MarketClient, SearchPoll,
};
use linkrunner::money::Money;
use linkrunner_sandbox as sandbox;
use linkrunner_sandbox::{AutobuyerState, Op};

use super::support::{
    DOMAIN, SHOES, TEXTS, client, donors_for, order, pair, project_with_shoes, ready_to_buy,
    sandbox_config, search_params, search_started, shoes,
};
use crate::support::ledger;

pub fn cheap_filter() -> FilterSpec {
    FilterSpec {
        name: "acme-cheap".into(),
        price_article_from: Some(Money::ZERO),
        price_article_to: Some(Money::from_rubles(500)),
        price_rent_from: Some(Money::from_rubles(10)),
        price_rent_to: Some(Money::from_kopecks(8_050)),
        ..FilterSpec::default()
    }
}

pub fn autobuyer(filter_id: i64, url_id: i64) -> AutobuyerSpec {
    AutobuyerSpec {
        name: "acme-auto".into(),
        auto_approve: false,
        search_filter_id: filter_id,
        urls: vec![AutobuyerUrl {
            url_id,
            monthly_budget: Money::from_kopecks(100_050),
            total_links_limit: 20,
            daily_links_limit: 1,
        }],
    }
}

/// Operations 1, 2, 6 and 7: the project with its URL, the cheap filter, and an autobuyer on
/// them; its id.
pub async fn created_autobuyer(client: &MarketClient) -> i64 {
    let (project, shoes) = project_with_shoes(client).await;
    let filter = client.create_filter(&cheap_filter()).await.unwrap();
    client
        .create_autobuyer(project.project_id, &autobuyer(filter, shoes.url_id))
        .await
        .unwrap()
}

/// The state the sandbox holds autobuyer `id` in.
fn state_of(sandbox: &sandbox::SandboxHandle, id: i64) -> AutobuyerState {
    sandbox.ledger().autobuyer(id).unwrap().state
}

/// A sandbox whose autobuyers start running, so that stopping one is visible.
async fn with_running_autobuyer() -> (sandbox::SandboxHandle, MarketClient, i64) {
    let mut cfg = sandbox_config();
    cfg.autobuyers_start_running = true;
    let (sandbox, client) = pair(cfg).await;
    let id = created_autobuyer(&client).await;
    (sandbox, client, id)
}

#[tokio::test]
async fn create_project_answers_the_ids_the_sandbox_recorded() {
    let (sandbox, client) = pair(sandbox_config()).await;

    let ids = client.create_project(DOMAIN).await.unwrap();

    let ledger = sandbox.ledger();
    assert_eq!(ledger.projects.len(), 1);
    assert_eq!(
        (ledger.projects[0].id, ledger.projects[0].domain.as_str()),
        (ids.project_id, DOMAIN)
    );
    let main = ledger.urls.iter().find(|u| u.id == ids.url_id).unwrap();
    assert_eq!(
        (main.project_id, main.url.as_str()),
        (ids.project_id, "https://acme.example/")
    );
    let text = ledger.texts.iter().find(|t| t.id == ids.text_id).unwrap();
    assert_eq!(text.url_id, ids.url_id);
}

#[tokio::test]
async fn add_texts_answers_the_url_and_text_ids_the_sandbox_recorded() {
    let (sandbox, client) = pair(sandbox_config()).await;
    let project = client.create_project(DOMAIN).await.unwrap();

    let created = client
        .add_texts(project.project_id, &shoes())
        .await
        .unwrap();

    let ledger = sandbox.ledger();
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].url, SHOES);
    let url = ledger.urls.iter().find(|u| u.url == SHOES).unwrap();
    assert_eq!(
        (created[0].url_id, project.project_id),
        (url.id, url.project_id)
    );
    let recorded: Vec<(i64, i64, &str)> = ledger
        .texts
        .iter()
        .filter(|t| t.url_id == url.id)
        .map(|t| (t.id, t.url_id, t.text.as_str()))
        .collect();
    let answered: Vec<(i64, i64, &str)> = created[0]
        .texts
        .iter()
        .map(|t| (t.text_id, url.id, t.text.as_str()))
        .collect();
    assert_eq!(answered, recorded);
    assert_eq!(answered.iter().map(|t| t.2).collect::<Vec<_>>(), TEXTS);
}

#[tokio::test]
async fn start_search_queues_one_job_in_the_sandbox() {
    let (sandbox, _, job) = search_started(sandbox_config()).await;

    assert!(!job.job_handle_id.is_empty() && !job.meta_data.is_empty());
    assert_eq!(sandbox.ledger().searches_started, 1);
}

#[tokio::test]
async fn search_result_is_pending_until_the_sandbox_is_ready_then_lists_its_donors() {
    let mut cfg = sandbox_config();
    cfg.search_ready_after_polls = 2;
    cfg.donors_per_search = 7;
    let (sandbox, client) = pair(cfg).await;
    let (_, shoes) = project_with_shoes(&client).await;
    let job = client
        .start_search(shoes.url_id, &search_params())
        .await
        .unwrap();

    let first = client.search_result(&job).await.unwrap();
    let second = client.search_result(&job).await.unwrap();
    let third = client.search_result(&job).await.unwrap();

    assert_eq!((first, second), (SearchPoll::Pending, SearchPoll::Pending));
    let SearchPoll::Ready { donors, unpriced } = third else {
        panic!("the third poll should be ready: {third:?}");
    };
    assert_eq!((donors.len(), unpriced), (7, 0));
    let params = search_params();
    let (from, to) = (
        params.price_rent_from.unwrap(),
        params.price_rent_to.unwrap(),
    );
    assert!(donors.iter().all(|d| d.price >= from && d.price <= to));
    assert_eq!(sandbox.ledger().polls_served, 3);
}

#[tokio::test]
async fn buy_answers_the_link_ids_of_the_purchases_in_the_ledger() {
    let (sandbox, client) = pair(sandbox_config()).await;
    let (project, shoes, donors) = ready_to_buy(&client).await;
    let text_id = shoes.texts[0].text_id;
    let picked = [&donors[0], &donors[1]];

    let link_ids = client
        .buy(project.project_id, &order(&picked, shoes.url_id, text_id))
        .await
        .unwrap();

    let ledger = sandbox.ledger();
    let bought: Vec<(i64, i64, i64, i64, Money)> = ledger
        .purchases
        .iter()
        .map(|p| (p.link_id, p.page_id, p.url_id, p.text_id, p.price))
        .collect();
    let expected: Vec<(i64, i64, i64, i64, Money)> = link_ids
        .iter()
        .zip(picked)
        .map(|(id, d)| (*id, d.page_id, shoes.url_id, text_id, d.price))
        .collect();
    assert_eq!(bought, expected);
    assert_eq!(
        ledger.spend,
        donors[0].price.checked_add(donors[1].price).unwrap()
    );
    assert_eq!(ledger.duplicate_purchases, 0);
}

#[tokio::test]
async fn list_links_answers_every_purchase_in_the_ledger() {
    let (sandbox, client) = pair(sandbox_config()).await;
    let (project, shoes, donors) = ready_to_buy(&client).await;
    let text_id = shoes.texts[1].text_id;
    client
        .buy(
            project.project_id,
            &order(&[&donors[2], &donors[3]], shoes.url_id, text_id),
        )
        .await
        .unwrap();

    let links = client.list_links(project.project_id).await.unwrap().links;

    let listed: Vec<_> = links
        .iter()
        .map(|l| {
            (
                l.link_id,
                l.page_id,
                l.url_id,
                l.text_id,
                l.price,
                l.status.as_deref(),
            )
        })
        .collect();
    let in_ledger: Vec<_> = sandbox
        .ledger()
        .purchases
        .iter()
        .map(|p| {
            let (link, page, url, text) = (p.link_id, p.page_id, p.url_id, p.text_id);
            (
                Some(link),
                Some(page),
                Some(url),
                Some(text),
                Some(p.price),
                Some("active"),
            )
        })
        .collect();
    assert_eq!(listed, in_ledger);
    assert_eq!(listed.len(), 2);
}

#[tokio::test]
async fn create_filter_answers_the_id_of_the_filter_the_sandbox_saved_with_its_params() {
    let (sandbox, client) = pair(sandbox_config()).await;

    let id = client.create_filter(&cheap_filter()).await.unwrap();

    let ledger = sandbox.ledger();
    assert_eq!(ledger.filters.len(), 1);
    let saved = &ledger.filters[0];
    assert_eq!((saved.id, saved.name.as_str()), (id, "acme-cheap"));
    assert_eq!(
        serde_json::Value::Object(saved.params.clone()),
        serde_json::json!({"name": "acme-cheap", "priceArticleFrom": 0, "priceArticleTo": 500,
                           "priceRentFrom": 10, "priceRentTo": 80.5})
    );
}

#[tokio::test]
async fn create_autobuyer_answers_the_id_of_the_autobuyer_the_sandbox_created() {
    let (sandbox, client) = pair(sandbox_config()).await;
    let (project, shoes) = project_with_shoes(&client).await;
    let filter = client.create_filter(&cheap_filter()).await.unwrap();

    let id = client
        .create_autobuyer(project.project_id, &autobuyer(filter, shoes.url_id))
        .await
        .unwrap();

    let ledger = sandbox.ledger();
    let created = ledger
        .autobuyer(id)
        .expect("the answered id is in the ledger");
    assert_eq!(ledger.autobuyers.len(), 1);
    assert_eq!(
        (
            created.project_id,
            created.name.as_str(),
            created.is_auto_approve
        ),
        (project.project_id, "acme-auto", false)
    );
    assert_eq!(created.search_filter_id, filter);
    assert_eq!(
        created.urls,
        vec![sandbox::AutobuyerUrl {
            url_id: shoes.url_id,
            monthly_budget: Money::from_kopecks(100_050),
            total_links_limit: 20,
            daily_links_limit: 1,
        }]
    );
}

#[tokio::test]
async fn stop_autobuyers_stops_them_in_the_sandbox() {
    let (sandbox, client, id) = with_running_autobuyer().await;
    assert_eq!(state_of(&sandbox, id), AutobuyerState::Running);

    client.stop_autobuyers(&[id]).await.unwrap();

    assert_eq!(state_of(&sandbox, id), AutobuyerState::Stopped);
}

#[tokio::test]
async fn start_autobuyers_starts_them_in_the_sandbox() {
    let (sandbox, client, id) = with_running_autobuyer().await;
    client.stop_autobuyers(&[id]).await.unwrap();

    client.start_autobuyers(&[id]).await.unwrap();

    assert_eq!(state_of(&sandbox, id), AutobuyerState::Running);
}

#[tokio::test]
async fn the_whole_flow_sends_each_of_the_ten_operations_and_every_call_is_ok() {
    let sandbox = crate::support::sandbox::start(sandbox_config()).await;
    let client = client(&sandbox);

    let (project, shoes) = project_with_shoes(&client).await;
    let donors = donors_for(&client, shoes.url_id).await;
    let text_id = shoes.texts[0].text_id;
    let order = order(&[&donors[0]], shoes.url_id, text_id);
    client.buy(project.project_id, &order).await.unwrap();
    client.list_links(project.project_id).await.unwrap();
    let filter = client.create_filter(&cheap_filter()).await.unwrap();
    let spec = autobuyer(filter, shoes.url_id);
    let id = client
        .create_autobuyer(project.project_id, &spec)
        .await
        .unwrap();
    client.stop_autobuyers(&[id]).await.unwrap();
    client.start_autobuyers(&[id]).await.unwrap();

    let ledger = sandbox.ledger();
    for op in Op::ALL {
        let counts = ledger.requests.get(op.name());
        let ok = ledger.requests_of(op, "ok");
        assert!(ok >= 1, "{op} was not answered ok: {counts:?}");
        assert_eq!(ledger::requests(&ledger, op), ok, "{op}: {counts:?}");
    }
    assert_eq!(ledger.purchases.len(), 1);
}
