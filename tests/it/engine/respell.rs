//! Issue 32 item 2: `url_id` on any URL the journal knows. A promoted URL respelt in its file
//! with its recorded `url_id` keeps its identity (the real binary's `plan` and `once`, with a
//! buy round): no URL or text is added on the marketplace, the autobuyer covering it is not
//! replaced, and no page is bought again for it. Without `url_id` a new spelling is a new URL;
//! an id the journal does not hold is refused. Asserted on the sandbox's ledger.

use std::collections::HashSet;

use linkrunner_sandbox::{Ledger, Op};

use super::binary::{run, text};
use super::fixtures::ACME;
use super::support::{TestDb, World, sandbox_config};
use crate::support::ledger::requests;

const OLD: &str = "https://acme.example/running-shoes";
const NEW: &str = "https://acme.example/running_shoes";

/// ACME with its first URL (and the autobuyer's) spelt `NEW`, with `url_id` when given.
fn respelt(url_id: Option<i64>) -> String {
    let id = url_id.map_or_else(String::new, |id| format!("    url_id: {id}\n"));
    ACME.replace(
        &format!("  - url: {OLD}\n    texts:"),
        &format!("  - url: {NEW}\n{id}    texts:"),
    )
    .replace(
        &format!("      - url: {OLD}"),
        &format!("      - url: {NEW}"),
    )
}

fn url_id_of(ledger: &Ledger, url: &str) -> i64 {
    ledger
        .urls
        .iter()
        .find(|u| u.url == url)
        .map(|u| u.id)
        .expect("the URL exists on the marketplace")
}

/// What a respelling must not repeat: URLs, texts, autobuyer creations, stops and starts.
fn made(ledger: &Ledger) -> (usize, usize, u64, u64, u64) {
    (
        ledger.urls.len(),
        ledger.texts.len(),
        requests(ledger, Op::CreateAutobuyer),
        requests(ledger, Op::StopAutobuyers),
        requests(ledger, Op::StartAutobuyers),
    )
}

pub async fn a_url_respelt_with_its_url_id_keeps_its_identity_and_buys_no_page_again(db: TestDb) {
    // Arrange: acme-shoes bought its first round and runs its autobuyer on the URL.
    let w = acme_converged(db, true).await;
    let before = w.ledger();
    let id = url_id_of(&before, OLD);
    let bought: Vec<i64> = before
        .purchases
        .iter()
        .filter(|p| p.url_id == id)
        .map(|p| p.page_id)
        .collect();
    assert!(!bought.is_empty(), "the first round bought for the URL");
    assert!(
        !respelt(Some(id)).contains(OLD),
        "every spelling of the URL changed"
    );

    // Act: the URL is respelt with its `url_id`; `plan`, then `once` (a buy round), twice.
    w.write_campaign("acme-shoes", &respelt(Some(id)));
    let plan = run(&w, &["plan"]).await;
    let once = run(&w, &["once"]).await;
    let again = run(&w, &["once"]).await;

    // Assert: `plan` says the URL carries over and adds nothing; the marketplace got no new
    // URL or text, no autobuyer was replaced, and no page was bought twice for the URL.
    let shown = String::from_utf8_lossy(&plan.stdout);
    let line = format!("respell {OLD} → {NEW} (url id {id} and its ");
    assert!(shown.contains(&line), "{}", text(&plan));
    assert!(!shown.contains("promoted URL"), "{shown}");
    assert!(!shown.contains("replace autobuyer"), "{shown}");
    assert!(once.status.success(), "{}", text(&once));
    assert!(again.status.success(), "{}", text(&again));
    let after = w.ledger();
    assert_eq!(
        made(&after),
        made(&before),
        "nothing added, replaced or switched"
    );
    assert_eq!(after.duplicate_purchases, 0);
    let pages: Vec<(i64, i64)> = after
        .purchases
        .iter()
        .map(|p| (p.url_id, p.page_id))
        .collect();
    let unique: HashSet<&(i64, i64)> = pages.iter().collect();
    assert_eq!(unique.len(), pages.len(), "a page bought again: {pages:?}");
    assert!(
        after.purchases.len() > before.purchases.len(),
        "spending continues: {} → {}",
        before.purchases.len(),
        after.purchases.len()
    );
    let ids = recorded_ids(&w).await;
    assert_eq!(ids.urls.get(NEW), Some(&id));
    assert!(
        !ids.urls.contains_key(OLD),
        "one row for the URL: {:?}",
        ids.urls
    );
}

pub async fn a_new_spelling_without_url_id_is_a_new_url_and_an_unknown_url_id_is_refused(
    db: TestDb,
) {
    // Arrange: acme-shoes converged.
    let w = acme_converged(db, false).await;
    let before = w.ledger();

    // Act 1: a `url_id` the journal does not hold for the campaign.
    w.write_campaign("acme-shoes", &respelt(Some(999_999)));
    let refused = run(&w, &["once"]).await;

    // Assert 1: blocked, naming the id and the way out; nothing sent that changes anything.
    let said = "`url_id` 999999 on https://acme.example/running_shoes is not a URL the journal holds for campaign acme-shoes";
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let out = String::from_utf8_lossy(&refused.stdout);
    assert!(out.contains("acme-shoes: blocked"), "{}", text(&refused));
    assert!(out.contains(said), "{}", text(&refused));
    assert_eq!(made(&w.ledger()), made(&before));

    // Act 2: the new spelling without `url_id`.
    w.write_campaign("acme-shoes", &respelt(None));
    let plan = run(&w, &["plan"]).await;
    let once = run(&w, &["once"]).await;

    // Assert 2: a new URL, as the docs say (and its autobuyer's spec changed: replaced).
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("add 1 promoted URL(s)"),
        "{}",
        text(&plan)
    );
    assert!(once.status.success(), "{}", text(&once));
    let after = w.ledger();
    assert_ne!(url_id_of(&after, NEW), url_id_of(&after, OLD));
}

/// What the journal holds for `acme-shoes`: its URL, text and filter ids and spellings.
async fn recorded_ids(w: &World) -> linkrunner_domain::records::RemoteIds {
    w.store()
        .campaigns()
        .remote_ids("acme-shoes")
        .await
        .unwrap()
}

/// `acme-shoes` (the ACME fixture) passed once, with a buy round or not, then converged.
pub async fn acme_converged(db: TestDb, buy_round: bool) -> World {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.pass(buy_round).await;
    w.converge(3).await;
    w
}

pub async fn a_text_added_under_a_respelt_url_goes_to_its_url_id_and_makes_no_second_url(
    db: TestDb,
) {
    // Arrange: acme-shoes converged, its project created by linkrunner; the URL is respelt
    // with its `url_id` and the respelling is recorded.
    let w = acme_converged(db, false).await;
    let id = url_id_of(&w.ledger(), OLD);
    w.write_campaign("acme-shoes", &respelt(Some(id)));
    w.converge(3).await;
    let before = w.ledger();

    // Act: a text is added to the respelt URL.
    const ADDED: &str = "#a#new running shoes#/a# for the road";
    let with_text = respelt(Some(id)).replace(
        "      - \"#a#acme running shoes#/a#\"\n",
        &format!("      - \"#a#acme running shoes#/a#\"\n      - \"{ADDED}\"\n"),
    );
    assert_ne!(with_text, respelt(Some(id)), "the text is in the file");
    w.write_campaign("acme-shoes", &with_text);
    let plan = run(&w, &["plan"]).await;
    let once = run(&w, &["once"]).await;

    // Assert: `plan` shows the file's spelling; the marketplace got the text on the URL's
    // id under the spelling it knows, and no second URL; the journal keeps both spellings
    // and the text against the same id.
    assert!(once.status.success(), "{}", text(&once));
    let shown = String::from_utf8_lossy(&plan.stdout);
    assert!(shown.contains(NEW), "{shown}");
    let after = w.ledger();
    assert_eq!(
        after.urls.len(),
        before.urls.len(),
        "no second URL: {:?}",
        after.urls
    );
    assert!(after.urls.iter().all(|u| u.url != NEW), "{:?}", after.urls);
    let added: Vec<i64> = after
        .texts
        .iter()
        .filter(|t| t.text == ADDED)
        .map(|t| t.url_id)
        .collect();
    assert_eq!(added, vec![id], "the text on url id {id}");
    let ids = recorded_ids(&w).await;
    assert_eq!(ids.urls.get(NEW), Some(&id));
    assert_eq!(ids.market_url(NEW), OLD);
    assert!(
        ids.texts
            .contains_key(&(NEW.to_string(), ADDED.to_string()))
    );
    assert!(run(&w, &["once"]).await.status.success(), "converges");
    assert_eq!(w.ledger().urls.len(), before.urls.len());
}
