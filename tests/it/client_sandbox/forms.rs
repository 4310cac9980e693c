//! The answer forms of issue 12, one at a time, checked on the sandbox's ledger: pending as
//! a 404, `addTexts` ids nested in `{id, value}` objects, the donor price under a nested key
//! (unpriced until `--field-map price=prices.rent`), and JSON truncated in transit — read
//! again when it answers a read, never resent when it answers a purchase.

use std::collections::BTreeSet;

use linkrunner::market::{
    Executed, FieldMap, Market, MarketError, PendingForm, SearchPoll, UrlTexts,
};
use linkrunner_sandbox::shapes::{Pending, PriceField, TextsAnswer};
use linkrunner_sandbox::{Faults, Op, SandboxConfig};

use super::support::{
    DOMAIN, client_with, donors_for, order, pair, project_with_shoes, ready_order, ready_to_buy,
    sandbox_config, search_params,
};
use crate::support::ledger;
use crate::support::sandbox;

fn config(edit: impl FnOnce(&mut SandboxConfig)) -> SandboxConfig {
    let mut cfg = sandbox_config();
    edit(&mut cfg);
    cfg
}

#[tokio::test]
async fn a_search_answered_404_while_running_is_not_found_then_ready() {
    let (_sandbox, client) = pair(config(|c| c.shape.pending = Pending::Http404)).await;
    let (_, shoes) = project_with_shoes(&client).await;
    let job = client
        .start_search(shoes.url_id, &search_params())
        .await
        .unwrap();

    let (first, seen) = client.search_result_seen(&job).await.unwrap();
    let second = client.search_result(&job).await.unwrap();
    let third = client.search_result(&job).await.unwrap();

    let not_found = SearchPoll::NotFound {
        message: "job not found or not finished".into(),
    };
    assert_eq!((&first, &second), (&not_found, &not_found));
    assert!(
        matches!(
            seen.pending,
            Some(PendingForm::NotFound {
                status: Some(404),
                ..
            })
        ),
        "{seen:?}"
    );
    assert!(
        matches!(&third, SearchPoll::Ready { donors, unpriced: 0 } if donors.len() == 10),
        "{third:?}"
    );
}

#[tokio::test]
async fn ids_nested_in_id_value_objects_are_the_ones_the_sandbox_recorded() {
    let (sandbox, client) = pair(config(|c| c.shape.texts = TextsAnswer::NestedObjects)).await;
    let project = client.create_project(DOMAIN).await.unwrap();
    let request = vec![
        UrlTexts {
            url: "https://acme.example/b".into(),
            texts: vec!["#a#bee#/a#".into(), "#a#bea#/a#".into()],
        },
        UrlTexts {
            url: "https://acme.example/a".into(),
            texts: vec!["#a#ay#/a#".into()],
        },
    ];

    let created = client
        .add_texts(project.project_id, &request)
        .await
        .unwrap();

    let ledger = sandbox.ledger();
    for (req, got) in request.iter().zip(&created) {
        let url = ledger.urls.iter().find(|u| u.url == req.url).unwrap();
        assert_eq!(got.url_id, url.id, "{}", req.url);
        for t in &got.texts {
            let rec = ledger.texts.iter().find(|x| x.id == t.text_id).unwrap();
            assert_eq!((rec.url_id, &rec.text), (url.id, &t.text));
        }
    }
}

#[tokio::test]
async fn a_nested_price_is_unpriced_without_a_field_map_and_read_with_one() {
    let cfg = || config(|c| c.shape.price = PriceField::Nested);
    let (_a, plain) = pair(cfg()).await;
    let mapped_sandbox = sandbox::start(cfg()).await;
    let map = FieldMap::parse("price=prices.rent").unwrap();
    let mapped = client_with(&mapped_sandbox.base_url(), |c| c.field_map = map);
    let (_b, default_client) = pair(sandbox_config()).await;
    let (_, _, expected) = ready_to_buy(&default_client).await;

    let (_, shoes) = project_with_shoes(&plain).await;
    let job = plain
        .start_search(shoes.url_id, &search_params())
        .await
        .unwrap();
    let unmapped = loop {
        match plain.search_result_seen(&job).await.unwrap() {
            (SearchPoll::Ready { donors, unpriced }, seen) => break (donors, unpriced, seen),
            _ => continue,
        }
    };
    let (_, shoes) = project_with_shoes(&mapped).await;
    let donors = donors_for(&mapped, shoes.url_id).await;

    let (none, unpriced, seen) = unmapped;
    assert_eq!(
        (none.len(), unpriced),
        (0, 10),
        "no donor is offered unpriced"
    );
    assert_eq!(seen.skipped.get("price"), Some(&10));
    assert_eq!(
        donors, expected,
        "mapped, the donors are the default shape's"
    );
}

#[tokio::test]
async fn reads_truncated_in_transit_are_read_again_until_whole() {
    let sandbox = sandbox::start(config(|c| c.faults.truncate_rate = 0.3)).await;
    let client = client_with(&sandbox.base_url(), |c| c.read_retries = 10);
    let (project, shoes, donors) = ready_to_buy(&client).await;
    client
        .buy(
            project.project_id,
            &order(&[&donors[0]], shoes.url_id, shoes.texts[0].text_id),
        )
        .await
        .unwrap();

    let mut lists = 0;
    for _ in 0..4 {
        assert_eq!(
            client
                .list_links(project.project_id)
                .await
                .unwrap()
                .links
                .len(),
            1
        );
        lists += 1;
    }

    let ledger = sandbox.ledger();
    assert!(
        ledger::requests(&ledger, Op::ListLinks) > lists,
        "some link lists were truncated and read again: {:?}",
        ledger.requests
    );
    assert_eq!(ledger::requests(&ledger, Op::BuyLinks), 1);
}

#[tokio::test]
async fn a_purchase_answered_with_truncated_json_is_sent_exactly_once() {
    let truncate_buys = Faults {
        truncate_rate: 1.0,
        truncate_ops: Some(BTreeSet::from([Op::BuyLinks])),
        ..Faults::default()
    };
    let (sandbox, client, project, order) = ready_order(config(|c| c.faults = truncate_buys)).await;

    let err = client.buy(project.project_id, &order).await.unwrap_err();

    assert!(matches!(err, MarketError::Undecodable { .. }), "{err:?}");
    assert_eq!(err.executed(), Executed::Yes);
    let ledger = sandbox.ledger();
    assert_eq!(ledger::requests(&ledger, Op::BuyLinks), 1);
    assert_eq!(
        ledger.purchases.len(),
        1,
        "the purchase was made all the same"
    );
}
