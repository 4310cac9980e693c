//! Issue 24's hard case, with the real binary: an adopted account whose link list is cut
//! silently at 5 entries, an adopted autobuyer that buys every few seconds, the operator's
//! `resolve list-complete` (which must lapse once the list shows fewer links than the
//! journal holds) and SIGKILLs in between. The sandbox's ledger must show no page bought
//! twice for any URL, and `status`, `plan` and the metric `linkrunner_urls_buying_stopped`
//! (the daemon's `/metrics`) must say why buying stopped.

use std::time::Duration;

use linkrunner_sandbox::faults::Prng;
use linkrunner_sandbox::{Behaviour, Faults, InUse, ListPaging};

use super::campaign::{adopted_team_autobuyer, adopted_url};
use super::support::{Backend, LEASE_TTL, Rig};

const DOMAIN: &str = "https://acme.example";

/// The adopting file: the seeded project, its two URLs with ids, its autobuyer running.
fn adopting_file(s: &InUse) -> String {
    let (shoes, trail) = (&s.urls[1], &s.urls[2]);
    format!(
        "name: acme-shoes\ndomain: {DOMAIN}\nproject_id: {}\nurls:\n{}{}\
         budget:\n  monthly: 5000\n  max_link_price: 150\n  unknown_link_rent: 150\n  daily_links: 12\n  total_links: 12\n\
         buy:\n  schedule: \"0 9 * * *\"\n  link_type_id: 1\n  per_run: 2\n  search: {{ price_rent_to: 150 }}\n{}",
        s.project_id,
        adopted_url(shoes),
        adopted_url(trail),
        adopted_team_autobuyer(s, &trail.url, 500),
    )
}

pub async fn a_cut_list_an_adopted_autobuyer_and_kills_never_buy_a_page_twice(backend: Backend) {
    let faults = Faults {
        latency_ms: 10,
        ..Faults::default()
    };
    let rig = Rig::start(backend, &[], faults).await;
    let seeded = rig.sandbox.seed_in_use(DOMAIN).expect("account seeded");
    rig.sandbox
        .set_behaviour(Behaviour {
            list_page_size: Some(5),
            list_paging: ListPaging::None,
            autobuy_every_ms: Some(3000),
            ..Behaviour::default()
        })
        .expect("behaviour");
    rig.write_file("acme-shoes.yaml", &adopting_file(&seeded));

    // The first pass reads; the operator adopts and vouches for the list (3 links, not cut).
    rig.adopt_and_vouch("acme-shoes", 3, "the UI shows 3 links")
        .await;

    // Passes killed at random moments while the autobuyer buys every 3 s.
    let mut rng = Prng::new(24);
    let mut kills = 0;
    for _ in 0..12 {
        let delay = Duration::from_millis(rng.range(20, 600) as u64);
        if rig.once_killed_after(delay).await {
            kills += 1;
            tokio::time::sleep(LEASE_TTL + Duration::from_millis(200)).await;
        }
        rig.resolve_what_waits_for_an_operator().await;
        if kills == 5 {
            break;
        }
    }
    tokio::time::sleep(LEASE_TTL + Duration::from_millis(200)).await;
    for _ in 0..4 {
        rig.run(&["once"]).await;
        rig.resolve_what_waits_for_an_operator().await;
        tokio::time::sleep(Duration::from_millis(700)).await;
    }

    let ledger = rig.sandbox.ledger();
    let held = ledger.purchases_of(seeded.project_id).len();
    assert!(
        held > 5,
        "the list is cut: more links are held ({held}) than it shows"
    );
    assert_eq!(
        ledger.duplicate_purchases, 0,
        "a page was bought twice for a URL"
    );
    assert!(
        ledger
            .duplicates_by_purchase_calls(seeded.project_id)
            .is_empty()
    );
    let status = rig.run(&["status"]).await;
    let status = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(status.contains("BUYING STOPPED"), "{status}");
    assert!(
        status.contains("resolve list-complete acme-shoes"),
        "{status}"
    );
    let plan = rig.run(&["plan"]).await;
    let plan = String::from_utf8_lossy(&plan.stdout).to_string();
    assert!(plan.contains("buying stopped for"), "{plan}");
    // The metric says it too: the daemon's `/metrics` after its first pass shows both URLs
    // of the file (an adopted project's) stopped.
    let stopped = buying_stopped_metric(&rig).await;
    assert_eq!(stopped, Some(2.0), "linkrunner_urls_buying_stopped");
    eprintln!("{kills} kills, {held} links held");
}

/// `linkrunner_urls_buying_stopped{campaign="acme-shoes"}` as the daemon (`run`) exports it
/// once a pass has set it; `None` if it never shows within 30 s.
async fn buying_stopped_metric(rig: &Rig) -> Option<f64> {
    let (mut child, addr) = rig.spawn_run_listening(&[]);
    let line = "linkrunner_urls_buying_stopped{campaign=\"acme-shoes\"} ";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut value = None;
    while value.is_none() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let body = crate::support::http::http_get(addr, "/metrics").await;
        value = body.and_then(|(_, body)| {
            body.lines()
                .find_map(|l| l.strip_prefix(line))
                .and_then(|v| v.trim().parse().ok())
        });
    }
    child.kill().await.expect("the daemon is stopped");
    value
}
