//! `list_links` against a sandbox whose link list shows only part of the truth: one page
//! without paging fields, pages with `page`/`total` or `offset`/`hasMore` fields (read to the
//! end), a list lagging behind purchases, and links an autobuyer bought by itself.

use linkrunner::market::{LinkList, ListCompleteness, Market, MarketClient};
use linkrunner::money::Money;
use linkrunner_sandbox::{Behaviour, ListPaging, Op, SandboxConfig, SandboxHandle};

use super::support::{order, pair, ready_to_buy, sandbox_config};
use crate::support::ledger;
use crate::support::sandbox::lagging;

fn paged(size: usize, paging: ListPaging) -> SandboxConfig {
    let mut cfg = sandbox_config();
    cfg.behaviour = Behaviour {
        list_page_size: Some(size),
        list_paging: paging,
        ..Behaviour::default()
    };
    cfg
}

/// Buys `n` links in one call: `(project id, link ids from the ledger, oldest first)`.
async fn bought(sandbox: &SandboxHandle, client: &MarketClient, n: usize) -> (i64, Vec<i64>) {
    let (project, shoes, donors) = ready_to_buy(client).await;
    let chosen: Vec<_> = donors.iter().take(n).collect();
    let text_id = shoes.texts[0].text_id;
    client
        .buy(project.project_id, &order(&chosen, shoes.url_id, text_id))
        .await
        .unwrap();
    let ids = sandbox
        .ledger()
        .purchases_of(project.project_id)
        .iter()
        .map(|p| p.link_id)
        .collect();
    (project.project_id, ids)
}

/// A sandbox with `cfg` in which `n` links were bought in one call, the client's reading of
/// their list, and the links bought: `(sandbox, list, link ids)`.
async fn bought_and_listed(cfg: SandboxConfig, n: usize) -> (SandboxHandle, LinkList, Vec<i64>) {
    let (sandbox, client) = pair(cfg).await;
    let (project, links) = bought(&sandbox, &client, n).await;
    let list = client.list_links(project).await.unwrap();
    (sandbox, list, links)
}

fn ids(list: &LinkList) -> Vec<i64> {
    list.links.iter().map(|l| l.link_id.unwrap()).collect()
}

#[tokio::test]
async fn a_list_without_paging_fields_is_taken_as_shown_and_says_it_has_none() {
    let (sandbox, list, links) = bought_and_listed(paged(2, ListPaging::None), 5).await;

    assert_eq!(ids(&list), links[..2]);
    assert_eq!(list.completeness, ListCompleteness::NoPagingFields);
    assert_eq!(ledger::requests(&sandbox.ledger(), Op::ListLinks), 1);
}

#[tokio::test]
async fn a_list_with_page_and_total_fields_is_read_page_by_page_to_the_end() {
    let (sandbox, list, links) = bought_and_listed(paged(2, ListPaging::PageTotal), 5).await;

    assert_eq!(ids(&list), links);
    assert_eq!(list.completeness, ListCompleteness::AllPages { pages: 3 });
    assert!(list.completeness.nothing_left_unread());
    assert_eq!(ledger::requests(&sandbox.ledger(), Op::ListLinks), 3);
}

#[tokio::test]
async fn a_list_with_offset_and_has_more_fields_nested_in_data_is_read_to_the_end() {
    let mut cfg = paged(2, ListPaging::OffsetHasMore);
    cfg.shape = "links=data_items".parse().unwrap();
    let (_sandbox, list, links) = bought_and_listed(cfg, 4).await;

    assert_eq!(ids(&list), links);
    assert_eq!(list.completeness, ListCompleteness::AllPages { pages: 2 });
}

#[tokio::test]
async fn a_whole_list_with_paging_fields_is_one_page_shown_complete() {
    let (_sandbox, list, links) = bought_and_listed(paged(100, ListPaging::PageTotal), 3).await;

    assert_eq!(ids(&list), links);
    assert_eq!(list.completeness, ListCompleteness::AllPages { pages: 1 });
}

#[tokio::test]
async fn a_lagging_list_shows_a_fresh_purchase_only_after_the_lag() {
    let mut cfg = sandbox_config();
    let clock = lagging(&mut cfg, 30_000);
    let (sandbox, client) = pair(cfg).await;
    let (project, links) = bought(&sandbox, &client, 2).await;

    let fresh = client.list_links(project).await.unwrap();
    clock.advance(chrono::Duration::seconds(30));
    let later = client.list_links(project).await.unwrap();

    assert!(fresh.links.is_empty(), "{fresh:?}");
    assert_eq!(
        fresh.completeness,
        ListCompleteness::NoPagingFields,
        "a lagging list shows no sign of it"
    );
    assert_eq!(ids(&later), links);
    assert_eq!(sandbox.ledger().purchases_of(project).len(), 2);
}

#[tokio::test]
async fn links_an_autobuyer_bought_are_listed_with_their_price_url_and_text() {
    let (sandbox, client) = pair(paged(1, ListPaging::PageTotal)).await;
    let (project, shoes) = super::support::project_with_shoes(&client).await;
    let filter = client
        .create_filter(&super::flow::cheap_filter())
        .await
        .unwrap();
    let spec = linkrunner::market::AutobuyerSpec {
        name: "auto".into(),
        auto_approve: true,
        search_filter_id: filter,
        urls: vec![linkrunner::market::AutobuyerUrl {
            url_id: shoes.url_id,
            monthly_budget: Money::from_rubles(10_000),
            total_links_limit: 3,
            daily_links_limit: 3,
        }],
    };
    let autobuyer = client
        .create_autobuyer(project.project_id, &spec)
        .await
        .unwrap();
    client.start_autobuyers(&[autobuyer]).await.unwrap();

    let bought = sandbox.autobuy_now(usize::MAX);
    let list = client.list_links(project.project_id).await.unwrap();

    assert_eq!(bought.len(), 3);
    assert_eq!(list.completeness, ListCompleteness::AllPages { pages: 3 });
    for (listed, p) in list.links.iter().zip(&bought) {
        assert_eq!(p.autobuyer_id, Some(autobuyer));
        assert_eq!(listed.link_id, Some(p.link_id));
        assert_eq!(listed.page_id, Some(p.page_id));
        assert_eq!(listed.url_id, Some(shoes.url_id));
        assert_eq!(listed.text_id, Some(shoes.texts[0].text_id));
        assert_eq!(listed.price, Some(p.price));
    }
}
