//! `GET /`: the status page of a running daemon, and its escaping of hostile campaign names
//! and marketplace strings.

use chrono::Duration;
use linkrunner::store::{
    BeginOutcome, CampaignCaps, HaltScope, IntentKind, NewIntent, Outcome, RoundOutcome,
    StallReason,
};

use super::support::{World, at};
use crate::support::campaigns;
use crate::support::db::{TestDb, lease_at};
use crate::support::http::get;
use crate::support::http::{self, serve_journal};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_shows_every_campaign_with_its_commitment_and_next_round() {
    // Arrange
    let world = World::new(at(9, 0, 30)).await;
    world.write(
        "a.yaml",
        &campaigns::simple("alpha-shop", "0 9 * * *", 4000),
    );
    world.write(
        "b.yaml",
        &campaigns::simple("beta-shop", "30 10 * * *", 2500),
    );
    let daemon = world.start_reconciled().await;

    // Act
    let answer = http::client()
        .get(format!("{}/", daemon.base))
        .send()
        .await
        .unwrap();
    let headers = answer.headers().clone();
    let body = answer.text().await.unwrap();

    // Assert
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(
        headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    assert!(body.contains("<meta http-equiv=\"refresh\""), "{body}");
    for name in ["alpha-shop", "beta-shop"] {
        assert!(
            body.contains(&format!("<a href=\"/?campaign={name}\">{name}</a>")),
            "{name}'s row links to its page: {body}"
        );
    }
    assert!(
        body.contains("<td class=\"n\">4000</td>") && body.contains("<td class=\"n\">2500</td>"),
        "the caps in the table: {body}"
    );
    assert!(
        body.contains("2026-11-23T09:00:00Z") && body.contains("2026-11-22T10:30:00Z"),
        "the next rounds in the table: {body}"
    );
    let (status, alpha) = get(&format!("{}/?campaign=alpha-shop", daemon.base)).await;
    assert_eq!(status, 200, "{alpha}");
    assert!(alpha.contains("<h1>alpha-shop</h1>"), "{alpha}");
    assert!(alpha.contains("0 of 4000 RUB"), "{alpha}");
    assert!(
        alpha.contains("<dt>Next round</dt><dd>2026-11-23T09:00:00Z</dd>"),
        "alpha's next round: {alpha}"
    );
    assert!(alpha.contains("<h2>Autobuyers: 0</h2>"), "{alpha}");
    let (missing, _) = get(&format!("{}/?campaign=gamma-shop", daemon.base)).await;
    assert_eq!(missing, 404);
    let (bad, why) = get(&format!("{}/?state=active", daemon.base)).await;
    assert_eq!(
        (bad, why.contains("state: `active` is not one of")),
        (400, true),
        "{why}"
    );
    for page in [&body, &alpha] {
        for external in ["<script", "src=", "http://", "https://"] {
            assert!(
                !page.contains(external),
                "no {external} on the page: {page}"
            );
        }
        assert!(
            page.match_indices("href=\"")
                .all(|(i, _)| page[i + 6..].starts_with('/')),
            "every link stays on the page's own origin: {page}"
        );
    }
    daemon.stop().await;
}

const HOSTILE_NAME: &str = "<script>alert('name')</script>";
const HOSTILE_ERROR: &str = "\"><img src=x onerror=alert(1)>";
const HOSTILE_DETAIL: &str = "</dd><iframe srcdoc='x'>";

/// A journal holding hostile strings where the page shows text: a campaign name (the journal
/// does not check names), a marketplace error, a round detail and halt reasons.
async fn hostile_journal(db: &TestDb) {
    let s = &db.store;
    let t0 = at(9, 0, 0);
    let caps = CampaignCaps {
        account: "default".into(),
        name: HOSTILE_NAME.into(),
        monthly_cap: linkrunner::money::Money::from_rubles(100),
        daily_links: 1,
        total_links: 1,
    };
    s.campaigns().upsert_campaign(&caps, t0).await.unwrap();
    let lease = lease_at(s, HOSTILE_NAME, "h", t0).await;
    let intent = NewIntent {
        campaign: HOSTILE_NAME.into(),
        kind: IntentKind::CreateFilter,
        natural_key: "k".into(),
        fingerprint: "f".into(),
        request: serde_json::json!({}),
        reserve: None,
    };
    let ids = begun(s, &lease, intent, t0).await;
    let uncertain = Outcome::Uncertain {
        error: HOSTILE_ERROR.into(),
    };
    s.intents()
        .complete_intent(ids[0], uncertain, None, t0)
        .await
        .unwrap();
    s.rounds()
        .claim_round(HOSTILE_NAME, t0, "h", t0)
        .await
        .unwrap();
    s.rounds()
        .finish_round(HOSTILE_NAME, t0, RoundOutcome::Failed, HOSTILE_DETAIL, t0)
        .await
        .unwrap();
    s.campaigns()
        .record_stall(
            HOSTILE_NAME,
            Some(StallReason::InsufficientBalance),
            HOSTILE_ERROR,
            1,
            t0,
        )
        .await
        .unwrap();
    let scope = HaltScope::Campaign(HOSTILE_NAME.into());
    s.set_halt(&scope, HOSTILE_ERROR, t0).await.unwrap();
    s.set_halt(&HaltScope::Global, HOSTILE_DETAIL, t0)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_escapes_hostile_names_and_marketplace_strings() {
    // Arrange
    let db = TestDb::sqlite().await;
    hostile_journal(&db).await;
    let (addr, stop) = serve_journal(&db.store, linkrunner::clock::system()).await;

    // Act
    let (status, list) = get(&format!("http://{addr}/")).await;
    let encoded = "%3Cscript%3Ealert%28%27name%27%29%3C%2Fscript%3E";
    let (detail_status, detail) = get(&format!("http://{addr}/?campaign={encoded}")).await;

    // Assert
    stop.cancel();
    assert_eq!((status, detail_status), (200, 200), "{list}{detail}");
    let body = format!("{list}{detail}");
    for raw in ["<script", "<img", "<iframe"] {
        assert!(
            !body.contains(raw),
            "{raw} reached the page unescaped: {body}"
        );
    }
    assert!(
        list.contains("&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;")
            && detail.contains("<h1>&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;</h1>"),
        "{body}"
    );
    assert!(
        list.contains(&format!("href=\"/?campaign={encoded}\"")),
        "the link to its page is percent-encoded: {list}"
    );
    assert!(
        detail.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"),
        "{detail}"
    );
    assert!(
        body.contains("&lt;/dd&gt;&lt;iframe srcdoc=&#39;x&#39;&gt;"),
        "{body}"
    );
    assert!(list.contains("all spending stopped"), "{list}");
    assert!(
        detail.contains("Stalled (insufficient_balance) since 2026-11-22T09:00:00Z"),
        "the stall and its reason: {detail}"
    );
    assert!(
        detail.contains("linkrunner resolve"),
        "the command to run: {detail}"
    );
}

/// A purchase of `page` at `price_rub` begun at `when` by `acme-shoes`, under a lease taken then.
async fn bought_at(
    db: &TestDb,
    page: i64,
    price_rub: i64,
    when: chrono::DateTime<chrono::Utc>,
) -> linkrunner::store::AttemptRef {
    let s = &db.store;
    let lease = lease_at(s, "acme-shoes", "h", when).await;
    let intent = NewIntent {
        campaign: "acme-shoes".into(),
        kind: IntentKind::Purchase,
        natural_key: format!("purchase:acme-shoes:{page}:10:20"),
        fingerprint: format!("fp-{page}"),
        request: serde_json::json!({"page_id": page, "url_id": 10, "text_id": 20}),
        reserve: Some(linkrunner::store::Reservation {
            amount: linkrunner::money::Money::from_rubles(price_rub),
            links: 1,
            day: when.date_naive(),
        }),
    };
    let ids = begun(s, &lease, intent, when).await;
    ids[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_draws_the_months_commitment_per_day_against_the_cap() {
    // Arrange: 150 RUB on the 3rd, a jump of 2000 on the 10th, the 150 released on the 15th.
    let db = TestDb::sqlite().await;
    let day = |d: u32| at(12, 0, 0) - Duration::days(22 - i64::from(d));
    let caps = CampaignCaps {
        account: "default".into(),
        name: "acme-shoes".into(),
        monthly_cap: linkrunner::money::Money::from_rubles(3000),
        daily_links: 10,
        total_links: 100,
    };
    db.store
        .campaigns()
        .upsert_campaign(&caps, day(1))
        .await
        .unwrap();
    let small = bought_at(&db, 1, 150, day(3)).await;
    bought_at(&db, 2, 2000, day(10)).await;
    db.store
        .intents()
        .complete_intent(
            small,
            Outcome::Failed {
                error: "refused".into(),
            },
            None,
            day(15),
        )
        .await
        .unwrap();
    let (addr, stop) =
        serve_journal(&db.store, linkrunner::clock::ManualClock::new(at(12, 0, 0))).await;

    // Act
    let (status, list) = get(&format!("http://{addr}/")).await;
    let (detail_status, detail) = get(&format!("http://{addr}/?campaign=acme-shoes")).await;
    db.store
        .campaigns()
        .set_account_cap(
            "default",
            Some(linkrunner::money::Money::from_rubles(2500)),
            "test",
            at(12, 0, 0),
        )
        .await
        .unwrap();
    let (_, under_account_cap) = get(&format!("http://{addr}/")).await;

    // Assert
    stop.cancel();
    assert_eq!((status, detail_status), (200, 200), "{list}{detail}");
    assert!(
        under_account_cap
            .contains("<line class=\"cap\" id=\"month-picture-cap\" data-value=\"2500\"")
            && under_account_cap.contains("(the cap: the account cap)"),
        "an account cap below the campaigns' caps is the line: {under_account_cap}"
    );
    assert!(
        list.contains(
            "<svg class=\"chart\" id=\"month-picture\" viewBox=\"0 0 640 190\" width=\"640\" height=\"190\" \
             role=\"img\" aria-labelledby=\"month-picture-title month-picture-desc\" data-days=\"30\" \
             data-today=\"22\" data-cap=\"3000\" data-committed=\"2000\">"
        ),
        "{list}"
    );
    for (page, id) in [(&list, "month-picture"), (&detail, "campaign-month")] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{page}");
        assert_eq!(page.matches("<rect class=\"day").count(), 22, "{page}");
        for (d, rub) in [
            (2, 0),
            (3, 150),
            (10, 2150),
            (14, 2150),
            (15, 2000),
            (22, 2000),
        ] {
            assert!(
                page.contains(&format!("data-day=\"{d}\" data-value=\"{rub}\"")),
                "day {d}: {rub} RUB: {page}"
            );
        }
        assert!(
            page.contains(&format!(
                "<line class=\"cap\" id=\"{id}-cap\" data-value=\"3000\""
            )),
            "{page}"
        );
        assert!(
            page.contains(
                "at the end of day 22 of 30 the commitment is 2000 RUB (66% of the 3000 RUB cap); \
                 the biggest move of a day: +2000 RUB on day 10."
            ),
            "the text alternative: {page}"
        );
    }
    assert!(
        list.contains("<title>2026-11: from 0 to 2000 RUB</title>"),
        "the row's sparkline: {list}"
    );
    for page in [&list, &detail] {
        assert!(
            !page.contains("<script") && !page.contains("http://"),
            "{page}"
        );
    }
}

/// Begins `intent` alone under `lease` at `at`; the test fails unless it was started.
async fn begun(
    s: &linkrunner::store::Store,
    lease: &linkrunner::store::LeaseToken,
    intent: linkrunner::store::NewIntent,
    at: chrono::DateTime<chrono::Utc>,
) -> Vec<linkrunner::store::AttemptRef> {
    let begun = s.intents().begin_intents(lease, &[intent], at).await;
    let BeginOutcome::Started(ids) = begun.unwrap() else {
        panic!("started")
    };
    ids
}
