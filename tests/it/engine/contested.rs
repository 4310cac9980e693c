//! Issue 32 (3): a page held for a URL is never bought again, whoever holds it. The team buys
//! by hand in an adopted project while linkrunner's search runs (the sandbox's
//! `team_buys_during_search`): the round reads the list again right before buying and leaves
//! both that page and, by the donor-site rule, every page of its site to the team.

use chrono::{TimeZone as _, Utc};
use linkrunner::clock::ManualClock;
use linkrunner_sandbox::{InUse, LinkStatus, Purchase, SandboxConfig, TeamBuy};

use super::adoption::adopted_and_vouched;
use super::support::{TestDb, World, sandbox_config};
use crate::support::ledger::careless_autobuyers_buy_held_pages;

/// An adopted account (its autobuyer stopped), the adoption confirmed and the list vouched
/// complete, so buy rounds may buy on every URL; then the team buys by hand during searches.
async fn adopted_with_the_team_buying(
    db: TestDb,
    cfg: SandboxConfig,
    how: TeamBuy,
) -> (World, InUse) {
    let w = World::new(db, cfg).await;
    let seeded = adopted_and_vouched(&w, |s| s.hand_links.len() as u32).await;
    w.converge(4).await;
    let mut b = w.sandbox.behaviour();
    b.team_buys_during_search = Some(how);
    w.sandbox
        .set_behaviour(b)
        .expect("the team buys during searches");
    (w, seeded)
}

/// The active links of the project: `(by the team during a search, by linkrunner)`, told
/// apart by the journal's own purchases.
async fn links_by_whom(w: &World, seeded: &InUse) -> (Vec<Purchase>, Vec<Purchase>) {
    let r = w.recorded("acme-shoes").await;
    let ours: Vec<(i64, i64)> = r.held.iter().map(|h| (h.url_id, h.page_id)).collect();
    let seeded_ids: Vec<i64> = seeded.hand_links.iter().map(|h| h.link_id).collect();
    let active: Vec<Purchase> = w
        .ledger()
        .purchases_of(seeded.project_id)
        .into_iter()
        .filter(|p| p.status == LinkStatus::Active && !seeded_ids.contains(&p.link_id))
        .cloned()
        .collect();
    active
        .into_iter()
        .filter(|p| p.autobuyer_id.is_none())
        .partition(|p| !ours.contains(&(p.url_id, p.page_id)))
}

/// The team takes the round's first pick by hand between the search and the purchase: the
/// page is not bought again for that URL (today's re-read ran only where an autobuyer covers
/// the URL, and the adopted autobuyer here is stopped).
pub async fn a_page_the_team_buys_by_hand_during_a_search_is_not_bought_again(db: TestDb) {
    let (w, seeded) = adopted_with_the_team_buying(db, sandbox_config(), TeamBuy::Cheapest).await;

    w.pass(true).await;

    let (team, ours) = links_by_whom(&w, &seeded).await;
    assert!(!team.is_empty(), "the team bought during the search");
    assert!(!ours.is_empty(), "the round still bought other pages");
    w.assert_invariants().await;
}

/// The team buys another page of the round's first pick's donor site: the pick is free as a
/// page, but its site now links to the URL, so it is not bought (one link per donor site and
/// URL, whoever holds the first).
pub async fn a_donor_site_the_team_links_during_a_search_gets_no_second_link(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.pages_per_site = 2;
    let how = TeamBuy::SameSiteAsCheapest;
    let (w, seeded) = adopted_with_the_team_buying(db, cfg, how).await;

    w.pass(true).await;

    let (team, ours) = links_by_whom(&w, &seeded).await;
    assert!(!team.is_empty(), "the team bought during the search");
    assert!(!ours.is_empty(), "the round still bought other pages");
    let site = |p: &Purchase| w.sandbox.donor_site(p.page_id).expect("a donor page");
    for t in &team {
        let twice = ours
            .iter()
            .find(|o| o.url_id == t.url_id && site(o) == site(t));
        assert!(
            twice.is_none(),
            "link {:?} is a second link from {} to URL {} after the team's {}",
            twice.map(|o| o.link_id),
            site(t),
            t.url_id,
            t.link_id
        );
    }
    w.assert_invariants().await;
}

/// A careless marketplace autobuyer buys pages the project already holds for its URL: the next
/// read of the link list records each page held twice once (a second read does not count it
/// again), counts it in `linkrunner_pages_held_twice_total`, and `status` names both links.
pub async fn a_page_held_twice_is_recorded_once_counted_and_shown_with_both_links(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", super::fixtures::ACME);
    w.converge(4).await;
    w.pass(true).await;
    let doubles = careless_autobuyers_buy_held_pages(&w.sandbox, 20);
    let ledger = w.ledger();

    w.pass(false).await;
    w.pass(false).await;

    let recorded = w.store().links().held_twice("acme-shoes").await.unwrap();
    let pairs: Vec<(i64, i64)> = recorded.iter().map(|t| (t.url_id, t.page_id)).collect();
    assert_eq!(pairs, doubles);
    for t in &recorded {
        let mut ids: Vec<i64> = ledger
            .purchases
            .iter()
            .filter(|p| (p.url_id, p.page_id) == (t.url_id, t.page_id))
            .map(|p| p.link_id)
            .collect();
        ids.sort();
        assert_eq!(t.link_ids, ids, "both links named");
    }
    let counted = format!(
        "linkrunner_pages_held_twice_total{{campaign=\"acme-shoes\"}} {}",
        doubles.len()
    );
    let metrics = w.engine.metrics().render();
    assert!(
        metrics.contains(&counted),
        "once per page, not per read: {metrics}"
    );
    let status = super::binary::run(&w, &["status"]).await;
    let out = super::binary::text(&status);
    let t = &recorded[0];
    let ids: Vec<String> = t.link_ids.iter().map(i64::to_string).collect();
    let line = format!(
        "PAGE HELD TWICE: page {} holds {} links for URL id {} (links {})",
        t.page_id,
        t.links,
        t.url_id,
        ids.join(", ")
    );
    assert!(out.contains(&line), "{out}");
}

/// `buy.skip_autobuyer_urls: true`: buy rounds leave `/running-shoes`, which the running
/// autobuyer covers, to it (no search, no purchase call there) and buy for `/trail`; `plan`
/// names the URL left and its autobuyer.
pub async fn buy_rounds_leave_an_autobuyers_urls_to_it_when_the_file_says_so(db: TestDb) {
    let file = super::fixtures::ACME.replace(
        "  order: cheapest\n",
        "  order: cheapest\n  skip_autobuyer_urls: true\n",
    );
    assert_ne!(file, super::fixtures::ACME);
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", &file);
    w.converge(4).await;
    let plan = super::binary::run(&w, &["plan"]).await;
    let shown = super::binary::text(&plan);
    let shoes = "https://acme.example/running-shoes";
    assert!(
        shown.contains(&format!(
            "buy rounds leave {shoes} to autobuyer acme-auto (buy.skip_autobuyer_urls)"
        )),
        "{shown}"
    );

    w.pass(true).await;

    let r = w.recorded("acme-shoes").await;
    let (shoes_id, trail_id) = (r.ids.urls[shoes], r.ids.urls["https://acme.example/trail"]);
    let ledger = w.ledger();
    let by_rounds: Vec<&Purchase> = ledger
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_none())
        .collect();
    assert!(
        by_rounds.iter().any(|p| p.url_id == trail_id),
        "{by_rounds:?}"
    );
    assert!(
        !by_rounds.iter().any(|p| p.url_id == shoes_id),
        "nothing bought by a round where the autobuyer buys: {by_rounds:?}"
    );
    w.assert_invariants().await;
}

/// Issue 32 (3): the link list lags 2 s behind purchases (the sandbox's `list_lag_ms`). A round
/// buys; a read 1 s later does not show its links, one 2.1 s after the purchase does: the
/// journal learns 2.1 s from our own purchases, and `plan` (text and markdown) says so where
/// buy rounds and the running autobuyer share `/running-shoes`, with the way out.
pub async fn plan_shows_the_list_lag_learned_from_our_purchases_where_rounds_and_an_autobuyer_share_a_url(
    db: TestDb,
) {
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 26, 9, 0, 0).unwrap());
    let w = World::on_clock(db, sandbox_config(), clock.clone(), |_| {}).await;
    w.write_campaign("acme-shoes", super::fixtures::ACME);
    let shoes = "https://acme.example/running-shoes (autobuyer acme-auto)";
    let way_out = "set buy.skip_autobuyer_urls: true to leave such URLs to the autobuyer";
    let plan = |args: &'static [&'static str]| {
        let w = &w;
        async move { super::binary::text(&super::binary::run(w, args).await) }
    };
    let before = plan(&["plan"]).await;
    assert!(
        before.contains("the link list's lag behind purchases is not measured yet")
            && before.contains(shoes),
        "{before}"
    );
    let mut b = w.sandbox.behaviour();
    b.list_lag_ms = 2_000;
    w.sandbox.set_behaviour(b).expect("a lagging list");

    w.pass(true).await;
    let bought = w.recorded("acme-shoes").await.held.len();
    clock.advance(chrono::Duration::seconds(1));
    w.pass(false).await;
    let unseen = w.recorded("acme-shoes").await;
    clock.advance(chrono::Duration::milliseconds(1_100));
    w.pass(false).await;

    assert!(bought > 0, "the round bought");
    assert!(
        unseen.held.iter().all(|h| h.listed_after_ms.is_none()),
        "a read 1 s after the purchase shows nothing yet"
    );
    let r = w.recorded("acme-shoes").await;
    let lags: Vec<Option<i64>> = r.held.iter().map(|h| h.listed_after_ms).collect();
    assert!(lags.iter().all(|l| *l == Some(2_100)), "{lags:?}");
    let line = format!(
        "the link list lags up to 2.1 s behind purchases (the largest of the last {bought} measured): a page an autobuyer takes in that window can be bought again for {shoes}; {way_out}"
    );
    let text = plan(&["plan"]).await;
    assert!(text.contains(&line), "{text}");
    let markdown = plan(&["plan", "--format", "markdown"]).await;
    assert!(
        markdown.contains("the link list lags up to 2.1 s behind purchases"),
        "{markdown}"
    );
}
