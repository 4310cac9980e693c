//! Rounds, searches, halts, link-list sync and remote ids.

use chrono::{DateTime, Duration, Utc};
use linkrunner::market::{CreatedText, CreatedUrl, LinkRecord, ProjectIds, SearchJob};
use linkrunner::store::{
    Effect, Halt, HaltScope, IntentKind, LeaseToken, Outcome, RoundOutcome, RoundRetry, RoundRow,
    RoundState, SearchState, Store,
};

use super::support::*;

/// A purchase on `page` at 10 rubles that succeeded, with the link id the answer gave.
async fn bought_link(store: &Store, lease: &LeaseToken, page: i64, link: Option<i64>) {
    let at = started(store, lease, purchase(page, 10)).await;
    complete(store, at, Outcome::Succeeded(purchased(page, link, 10))).await;
}

async fn last_round(store: &Store) -> RoundRow {
    store
        .rounds()
        .last_round(CAMPAIGN)
        .await
        .expect("last round")
        .expect("a round")
}

/// `holder` claims the deferred round of slot `t0` again at `at`.
async fn reclaim(store: &Store, holder: &str, at: DateTime<Utc>) -> Option<RoundRetry> {
    store
        .rounds()
        .reclaim_round(CAMPAIGN, t0(), holder, at)
        .await
        .expect("reclaim round")
}

pub async fn round_is_claimed_once_only(db: TestDb) {
    campaign(&db.store, &caps(100, 1, 1)).await;
    let other = db.another_store().await;

    let first = db
        .store
        .rounds()
        .claim_round(CAMPAIGN, t0(), "daemon-a", t0())
        .await
        .unwrap();
    let second = other
        .rounds()
        .claim_round(CAMPAIGN, t0(), "daemon-b", t0())
        .await
        .unwrap();

    assert_eq!((first, second), (true, false));
}

pub async fn last_rounds_report_latest_and_latest_success(db: TestDb) {
    campaign(&db.store, &caps(100, 1, 1)).await;
    let next = t0() + Duration::days(1);
    db.store
        .rounds()
        .claim_round(CAMPAIGN, t0(), HOLDER, t0())
        .await
        .unwrap();
    db.store
        .rounds()
        .finish_round(CAMPAIGN, t0(), RoundOutcome::Succeeded, "bought 2", t0())
        .await
        .unwrap();
    db.store
        .rounds()
        .claim_round(CAMPAIGN, next, HOLDER, next)
        .await
        .unwrap();

    let last = last_round(&db.store).await;
    let success = db
        .store
        .rounds()
        .last_successful_round(CAMPAIGN)
        .await
        .unwrap()
        .unwrap();

    assert_eq!((last.slot, last.state), (next, RoundState::Running));
    assert_eq!((success.slot, success.detail.as_str()), (t0(), "bought 2"));
}

pub async fn a_deferred_round_is_claimed_again_by_one_caller_and_keeps_what_it_bought(db: TestDb) {
    campaign(&db.store, &caps(100, 1, 1)).await;
    let later = t0() + Duration::seconds(30);
    assert!(
        db.store
            .rounds()
            .claim_round(CAMPAIGN, t0(), HOLDER, t0())
            .await
            .unwrap()
    );
    // Not deferred yet: nothing to claim again.
    assert_eq!(reclaim(&db.store, "b", later).await, None);
    db.store
        .rounds()
        .defer_round(CAMPAIGN, t0(), "search: HTTP 503", 1, t0())
        .await
        .unwrap();

    // Two processes race for the retry: one wins.
    let (a, b) = tokio::join!(
        db.store.rounds().reclaim_round(CAMPAIGN, t0(), "a", later),
        db.store.rounds().reclaim_round(CAMPAIGN, t0(), "b", later)
    );
    let won: Vec<RoundRetry> = [a.unwrap(), b.unwrap()].into_iter().flatten().collect();
    assert_eq!(
        won,
        vec![RoundRetry {
            attempt: 2,
            bought: 1
        }]
    );
    assert!(
        !db.store
            .rounds()
            .claim_round(CAMPAIGN, t0(), "c", later)
            .await
            .unwrap(),
        "a claimed slot is never claimed as new"
    );

    // The second try is deferred too, then the third succeeds: the slot's count adds up.
    db.store
        .rounds()
        .defer_round(CAMPAIGN, t0(), "lease held elsewhere", 2, later)
        .await
        .unwrap();
    let third = reclaim(&db.store, "a", later).await;
    assert_eq!(
        third,
        Some(RoundRetry {
            attempt: 3,
            bought: 3
        })
    );
    db.store
        .rounds()
        .finish_round(CAMPAIGN, t0(), RoundOutcome::Succeeded, "bought 0", later)
        .await
        .unwrap();
    let last = last_round(&db.store).await;
    assert_eq!(
        (last.state, last.attempts, last.bought),
        (RoundState::Succeeded, 3, 3)
    );
    assert_eq!(
        reclaim(&db.store, "b", later).await,
        None,
        "a finished slot is not tried again"
    );
}

pub async fn search_is_resumed_by_a_new_store(db: TestDb) {
    campaign(&db.store, &caps(100, 1, 1)).await;
    let job = SearchJob {
        job_handle_id: "job-1".into(),
        meta_data: r#"{"k":"v","cgeoip_country_iso_code":"RU"}"#.into(),
    };
    let recorded = db
        .store
        .rounds()
        .record_search(CAMPAIGN, 10, &job, t0() + Duration::minutes(10), t0())
        .await
        .unwrap();
    db.store
        .rounds()
        .note_poll(recorded.id, 3, t0())
        .await
        .unwrap();
    let restarted = db.another_store().await;

    let resumed = restarted
        .rounds()
        .open_search(CAMPAIGN, 10)
        .await
        .unwrap()
        .expect("open search");
    let duplicate = SearchJob {
        job_handle_id: "job-2".into(),
        meta_data: "{}".into(),
    };
    let kept = restarted
        .rounds()
        .record_search(CAMPAIGN, 10, &duplicate, t0(), t0())
        .await
        .unwrap();
    restarted
        .rounds()
        .finish_search(resumed.id, SearchState::Ready, 4, t0())
        .await
        .unwrap();

    assert_eq!(
        (resumed.job, resumed.polls, resumed.state),
        (job.clone(), 3, SearchState::Open)
    );
    assert_eq!(kept.job, job, "the first recorded job is the one to poll");
    assert!(
        restarted
            .rounds()
            .open_search(CAMPAIGN, 10)
            .await
            .unwrap()
            .is_none()
    );
}

/// The pace a new process starts from: the latest ready searches' ages, oldest first; open,
/// expired and older searches are left out.
pub async fn the_latest_ready_searches_say_how_long_searches_take(db: TestDb) {
    campaign(&db.store, &caps(100, 1, 1)).await;
    let rounds = db.store.rounds();
    // URL 1..=4 searched one after another; each ready `url` seconds after it started, but
    // the third expires and the fourth stays open.
    for url in 1..=4_i64 {
        let job = SearchJob {
            job_handle_id: format!("job-{url}"),
            meta_data: "{}".into(),
        };
        let start = t0() + Duration::minutes(url);
        let row = rounds
            .record_search(CAMPAIGN, url, &job, start + Duration::minutes(10), start)
            .await
            .unwrap();
        let state = match url {
            3 => SearchState::Expired,
            4 => continue,
            _ => SearchState::Ready,
        };
        rounds
            .finish_search(row.id, state, 1, start + Duration::seconds(url))
            .await
            .unwrap();
    }
    let secs = |s| std::time::Duration::from_secs(s);

    let restarted = db.another_store().await;
    assert_eq!(
        restarted.rounds().recent_ready_ages(50).await.unwrap(),
        vec![secs(1), secs(2)]
    );
    assert_eq!(
        restarted.rounds().recent_ready_ages(1).await.unwrap(),
        vec![secs(2)],
        "the newest first when there are more than asked for"
    );
}

pub async fn halts_are_set_listed_and_cleared(db: TestDb) {
    db.store
        .set_halt(&HaltScope::Global, "HTTP 401 from the marketplace", t0())
        .await
        .unwrap();
    db.store
        .set_halt(
            &HaltScope::Global,
            "HTTP 403 from the marketplace",
            t0() + Duration::minutes(1),
        )
        .await
        .unwrap();
    let campaign = HaltScope::campaign(CAMPAIGN);
    db.store
        .set_halt(&campaign, "operator", t0())
        .await
        .unwrap();

    db.store.clear_halt(&campaign).await.unwrap();

    let halts = db.store.halts().await.unwrap();
    assert_eq!(
        halts,
        vec![Halt::automatic(
            HaltScope::Global,
            "HTTP 403 from the marketplace",
            t0()
        )]
    );
}

pub async fn a_campaign_named_global_does_not_share_the_credentials_halt(db: TestDb) {
    let named_global = HaltScope::campaign("global");
    db.store
        .set_halt(&HaltScope::Global, "credentials rejected during x", t0())
        .await
        .unwrap();
    db.store
        .set_halt(&named_global, "operator", t0())
        .await
        .unwrap();

    let both = db.store.halts().await.unwrap();
    db.store.clear_halt(&named_global).await.unwrap();
    let left = db.store.halts().await.unwrap();

    let scopes: Vec<_> = both.iter().map(|h| h.scope.clone()).collect();
    assert_eq!(scopes, [HaltScope::Global, named_global]);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].scope, HaltScope::Global);
    assert_eq!(left[0].reason, "credentials rejected during x");
}

pub async fn link_list_is_matched_by_link_id_then_page_and_url(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    bought_link(&db.store, &lease, 1, Some(501)).await;
    bought_link(&db.store, &lease, 2, None).await;
    bought_link(&db.store, &lease, 3, None).await;
    let listed = [
        LinkRecord {
            link_id: Some(501),
            ..Default::default()
        },
        LinkRecord {
            link_id: Some(502),
            page_id: Some(2),
            url_id: Some(10),
            ..Default::default()
        },
        LinkRecord {
            link_id: Some(777),
            page_id: Some(99),
            url_id: Some(10),
            ..Default::default()
        },
    ];

    let report = db
        .store
        .links()
        .record_link_list(CAMPAIGN, read(&listed), t0())
        .await
        .unwrap();

    let held = db.store.links().held_links(CAMPAIGN).await.unwrap();
    assert_eq!((report.matched, report.foreign, report.missing), (2, 1, 1));
    assert_eq!(held[1].link_id, Some(502), "a matched link learns its id");
    assert!(held[0].seen_in_list_at.is_some() && held[2].seen_in_list_at.is_none());
    assert_eq!(
        budget(&db.store).await.held,
        rub(30),
        "absence releases nothing"
    );
}

pub async fn remote_ids_are_recorded_with_their_intents(db: TestDb) {
    let lease = campaign_with_lease(&db.store, &caps(1000, 5, 50)).await;
    let batch = [
        free_intent(
            IntentKind::CreateProject,
            "create_project:acme-shoes",
            serde_json::json!({}),
        ),
        free_intent(
            IntentKind::AddTexts,
            "add_texts:acme-shoes:1",
            serde_json::json!({}),
        ),
        free_intent(
            IntentKind::CreateFilter,
            "create_filter:acme-shoes:cheap",
            serde_json::json!({}),
        ),
    ];
    let ids = started_all(&db.store, &lease, &batch).await;
    let url = "https://acme.example/shoes".to_string();
    let texts = vec![CreatedUrl {
        url: url.clone(),
        url_id: 11,
        texts: vec![CreatedText {
            text: "#a#shoes#/a#".into(),
            text_id: 21,
        }],
    }];
    let effects = [
        Effect::ProjectCreated(ProjectIds {
            project_id: 1,
            url_id: 2,
            text_id: 3,
        }),
        Effect::TextsAdded(texts),
        Effect::FilterCreated {
            name: "cheap".into(),
            id: 5,
        },
    ];
    for (id, effect) in ids.iter().zip(effects) {
        complete(&db.store, *id, Outcome::Succeeded(effect)).await;
    }

    let remote = db.store.campaigns().remote_ids(CAMPAIGN).await.unwrap();

    assert_eq!(
        remote.project,
        Some(ProjectIds {
            project_id: 1,
            url_id: 2,
            text_id: 3
        })
    );
    assert_eq!(
        (
            remote.urls[&url],
            remote.texts[&(url.clone(), "#a#shoes#/a#".to_string())]
        ),
        (11, 21)
    );
    assert_eq!(remote.filters["cheap"], 5);
}

/// A read of `links` that shows no sign of paging, nothing leaving, nothing attributed.
fn read(links: &[LinkRecord]) -> linkrunner::store::ListRead<'static> {
    let listed: Vec<linkrunner::store::ListedLink> = links
        .iter()
        .map(|l| linkrunner::store::ListedLink {
            record: l.clone(),
            leaving: false,
            autobuyer: None,
        })
        .collect();
    linkrunner::store::ListRead {
        links: Box::leak(listed.into_boxed_slice()),
        proven_complete: false,
        fallback_price: linkrunner::money::Money::ZERO,
    }
}
