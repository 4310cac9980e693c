//! `Recorded::load_many` (each journal table read once for many campaigns) returns, for every
//! campaign, exactly what `Recorded::load` (a dozen queries per campaign) returns, whichever
//! way the batch finds its rows: whole tables, or by name in chunks whose seams fall between
//! campaigns. The journal is varied on purpose: campaigns run by the engine against a sandbox
//! with faults, and two written by hand with a row of every kind a filter tells apart (failed
//! purchases blocked or not, uncertain and in-flight ones, switches that failed, links held
//! and foreign, halts of their own, of another campaign and global, rounds that succeeded
//! before a later one, stalls, today's links and another day's), plus campaigns with nothing
//! recorded and one the journal never saw.

use chrono::{DateTime, Duration, Utc};
use linkrunner::campaign::Campaign;
use linkrunner::daemon::gauges;
use linkrunner::decide::recorded::Recorded;
use linkrunner::market::{CreatedText, CreatedUrl, LinkRecord, ProjectIds};
use linkrunner::money::Money;
use linkrunner::store::{
    AttemptRef, BatchRead, BeginOutcome, CampaignCaps, Effect, HaltScope, IntentFilter, IntentKind,
    IntentState, LeaseToken, ListRead, ListedLink, NewIntent, Outcome, Reservation, RoundOutcome,
    StallReason, Store, StoreError,
};
use linkrunner::views::list::{CampaignRow, campaign_rows};
use linkrunner::views::overview::{FileFact, FileFacts};
use linkrunner::views::report::campaign_statuses;
use linkrunner_sandbox::Faults;

use super::faults::act_as_operator;
use super::fixtures::DUNE;
use super::support::{TOKEN, TestDb, World, sandbox_config};
use crate::support::campaigns;
use crate::support::db::lease_at;

const HAND: [&str; 2] = ["hand-one", "hand-two"];
const QUIET: [&str; 4] = ["quiet-a", "quiet-b", "quiet-c", "quiet-d"];
const NEVER: &str = "never-seen";

pub async fn load_many_reads_exactly_what_load_reads_for_every_campaign(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.seed = 20261213;
    cfg.faults = Faults {
        error_rate: 0.2,
        drop_after_commit_rate: 0.3,
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_fixture_campaigns();
    // Passes with buy rounds, faults and all, an operator resolving what waits for one (as
    // the faults scenario does), until the engine bought links and created an autobuyer.
    let mut seen = std::collections::HashMap::new();
    for _ in 0..20 {
        w.pass(true).await;
        act_as_operator(&w, &mut seen).await;
        let (acme, bolt) = (
            w.recorded("acme-shoes").await,
            w.recorded("bolt-bikes").await,
        );
        let autobuyers = acme.ids.autobuyers.len() + bolt.ids.autobuyers.len();
        if !acme.held.is_empty() && autobuyers > 0 {
            break;
        }
    }
    let now = Utc::now();
    for (i, name) in HAND.iter().enumerate() {
        by_hand(w.store(), name, i as i64, now).await;
    }
    for name in QUIET {
        w.store()
            .campaigns()
            .upsert_campaign(&caps(name), now)
            .await
            .unwrap();
    }
    let store = w.store();
    // An autobuyer creation left uncertain without a halt: the gauges say it waits.
    let lease = lease_at(store, QUIET[0], "by-hand", now).await;
    let create = free(
        QUIET[0],
        IntentKind::CreateAutobuyer,
        "create_autobuyer:quiet",
    );
    let at = begin(store, &lease, create, now).await;
    complete(store, at, uncertain(), now).await;
    // An uncertain purchase without a halt: it does not make the campaign wait.
    let lease = lease_at(store, QUIET[1], "by-hand", now).await;
    let at = begin(store, &lease, purchase(QUIET[1], 1, 100, now), now).await;
    complete(store, at, uncertain(), now).await;
    let halt = |scope: HaltScope| async move {
        store
            .set_halt(&scope, "stopped by hand", now)
            .await
            .unwrap();
    };
    halt(HaltScope::campaign("bolt-bikes")).await;
    let known = store.campaigns().campaign_names().await.unwrap();
    assert_gauges_alike(&w, &known).await;
    assert_rows_alike(store, &known, 4).await;
    halt(HaltScope::Global).await;
    let today = now.date_naive();
    assert_journal_is_varied(store, today).await;

    assert_eq!(known.len(), 9, "{known:?}");
    let mut every = known.clone();
    every.push(NEVER.into());
    let some: Vec<String> = ["acme-shoes", HAND[0], HAND[1], NEVER, HAND[0]]
        .map(String::from)
        .to_vec();
    for (names, how) in [
        (&every, BatchRead::Auto),
        (&every, BatchRead::WholeTables),
        (&every, BatchRead::ByName { chunk: 500 }),
        (&every, BatchRead::ByName { chunk: 2 }),
        (&some, BatchRead::Auto),
        (&some, BatchRead::WholeTables),
        (&some, BatchRead::ByName { chunk: 1 }),
    ] {
        assert_same_as_load(store, names, how, today).await;
    }

    // Campaign files, one of them new to the journal: as `load_or_new`, in the files' order.
    let fresh = campaigns::load_one(&DUNE.replace("name: dune-maps", &format!("name: {NEVER}")));
    let files: Vec<Campaign> = w.campaigns().into_iter().map(|l| l.campaign).collect();
    let mut campaigns: Vec<&Campaign> = vec![&fresh];
    campaigns.extend(files.iter());
    let many = Recorded::load_or_new_many(store, &campaigns, today)
        .await
        .unwrap();
    assert_eq!(many.len(), campaigns.len());
    for (c, r) in campaigns.iter().zip(&many) {
        let one = Recorded::load_or_new(store, c, today).await.unwrap();
        assert_eq!(json(r), json(&one), "load_or_new_many of {}", c.name);
    }
    assert_eq!(many[0].budget.cap, fresh.budget.monthly);

    assert_gauges_alike(&w, &every).await;
    assert_rows_alike(store, &every, 2).await;
    let few: Vec<String> = ["acme-shoes", HAND[0], NEVER].map(String::from).to_vec();
    assert_rows_alike(store, &few, 1).await;
}

/// The list's rows (`campaign_rows`: the page's table and summary, read from counts) equal
/// the rows of the full statuses `status` and `/api/v1/campaigns` show, campaign by campaign
/// in the same order, with a file removed and one paused; at least `states` states among them.
async fn assert_rows_alike(store: &Store, names: &[String], states: usize) {
    let now = Utc::now();
    let paused = names
        .iter()
        .filter(|n| *n != "dune-maps")
        .map(|n| (n.clone(), n == HAND[1]))
        .collect();
    let files = FileFacts::read(paused, true);
    let rows = campaign_rows(store, names, now, &files).await.unwrap();
    let statuses = campaign_statuses(store, names, now, &files).await.unwrap();
    let want: Vec<CampaignRow> = statuses.iter().map(CampaignRow::of).collect();
    assert_eq!(rows, want, "the list's rows of {names:?}");
    let seen: std::collections::BTreeSet<_> = rows.iter().map(|r| r.state).collect();
    assert!(seen.len() >= states, "varied states: {seen:?}");
    if states >= 4 {
        let some = |f: fn(&CampaignRow) -> usize| rows.iter().any(|r| f(r) > 0);
        assert!(
            some(|r| r.uncertain) && some(|r| r.links_held) && some(|r| r.autobuyers),
            "counts that are not all zero: {rows:#?}"
        );
    }
}

/// `gauges::refresh_campaigns` (a batch read that counts intents) sets every gauge
/// `refresh_campaign` (`Recorded::load` per campaign) sets, each on a fresh engine of its own.
async fn assert_gauges_alike(w: &World, names: &[String]) {
    let (batch, one_by_one) = (
        w.engine_with_token(TOKEN).await,
        w.engine_with_token(TOKEN).await,
    );
    let file = |n: &String| match n.as_str() {
        "dune-maps" => FileFact::Removed,
        n => FileFact::Present {
            paused: n == HAND[1],
        },
    };
    let campaigns: Vec<(String, FileFact)> = names.iter().map(|n| (n.clone(), file(n))).collect();
    gauges::refresh_campaigns(&batch, &campaigns).await;
    for (name, file) in &campaigns {
        gauges::refresh_campaign(&one_by_one, name, *file).await;
    }
    let shown = |e: &linkrunner::effects::Engine<_>| -> Vec<String> {
        let text: String = e.metrics().render();
        text.lines()
            .filter(|l| l.contains("campaign=\"") || l.starts_with("linkrunner_database_errors"))
            .map(str::to_string)
            .collect()
    };
    let lines = shown(&batch);
    assert!(lines.len() > 9 * 5, "every campaign's gauges: {lines:#?}");
    assert_eq!(lines, shown(&one_by_one));
}

/// `load_many` read `how` equals `load` for every name; `load` finds no campaign where
/// `load_many` left one out.
async fn assert_same_as_load(
    store: &Store,
    names: &[String],
    how: BatchRead,
    today: chrono::NaiveDate,
) {
    let many = Recorded::load_many_with(store, names, today, how)
        .await
        .unwrap();
    for name in names {
        let one = Recorded::load(store, name, today).await;
        match (one, many.get(name)) {
            (Ok(one), Some(r)) => assert_eq!(json(r), json(&one), "{name}, read {how:?}"),
            (Err(StoreError::NotFound { .. }), None) => assert_eq!(name, NEVER),
            (one, r) => panic!("{name}, read {how:?}: load {one:?}, load_many {r:?}"),
        }
    }
    let known: std::collections::BTreeSet<&String> = names.iter().filter(|n| *n != NEVER).collect();
    assert!(many.keys().eq(known), "read {how:?}: {:?}", many.keys());
}

fn json(r: &Recorded) -> String {
    serde_json::to_string_pretty(r).expect("Recorded serializes")
}

fn caps(name: &str) -> CampaignCaps {
    CampaignCaps {
        account: "default".into(),
        name: name.into(),
        monthly_cap: Money::from_rubles(100_000),
        daily_links: 50,
        total_links: 500,
    }
}

/// A campaign with a row of every kind `Recorded::load` tells apart; `n` varies ids and
/// prices so two such campaigns differ.
async fn by_hand(store: &Store, name: &str, n: i64, now: DateTime<Utc>) {
    store
        .campaigns()
        .upsert_campaign(&caps(name), now)
        .await
        .unwrap();
    let lease = lease_at(store, name, "by-hand", now).await;
    let yesterday = now - Duration::days(1);
    // Remote ids: a project (its list can be noted cut), a URL with a text, a filter.
    let project = ProjectIds {
        project_id: 500 + n,
        url_id: 10,
        text_id: 20,
    };
    let texts = vec![CreatedUrl {
        url: "https://hand.example/".into(),
        url_id: 10,
        texts: vec![CreatedText {
            text: "#a#t#/a#".into(),
            text_id: 20 + n,
        }],
    }];
    let filter = Effect::FilterCreated {
        name: "mid".into(),
        id: 600 + n,
    };
    for (kind, effect) in [
        (IntentKind::CreateProject, Effect::ProjectCreated(project)),
        (IntentKind::AddTexts, Effect::TextsAdded(texts)),
        (IntentKind::CreateFilter, filter),
    ] {
        let i = free(name, kind, &format!("{}:{name}", kind.as_str()));
        let at = begin(store, &lease, i, now).await;
        complete(store, at, Outcome::Succeeded(effect), now).await;
    }
    // Bought: a held link.
    let bought = begin(store, &lease, purchase(name, 1, 100 + n, now), now).await;
    let effect = Effect::Purchased {
        link: Some(7000 + n),
        page_id: 1,
        url_id: 10,
        text_id: 20,
        price: Money::from_rubles(90 + n),
    };
    complete(store, bought, Outcome::Succeeded(effect), now).await;
    // Failed outright: history only, in no list.
    let failed = begin(store, &lease, purchase(name, 2, 100, yesterday), now).await;
    complete(store, failed, failed_outcome("500"), now).await;
    // Uncertain, then failed: blocked from being bought again.
    let blocked = begin(store, &lease, purchase(name, 3, 100, now), now).await;
    complete(store, blocked, uncertain(), now).await;
    complete(
        store,
        blocked,
        failed_outcome("absent from a complete list"),
        now,
    )
    .await;
    // Uncertain still, and one in flight.
    let unsure = begin(store, &lease, purchase(name, 4, 100, now), now).await;
    complete(store, unsure, uncertain(), now).await;
    begin(store, &lease, purchase(name, 5, 100, yesterday), now).await;
    // A running autobuyer holding its budget, its spec's URLs in its creation's request.
    let abid = 990 + n;
    let mut create = free(
        name,
        IntentKind::CreateAutobuyer,
        &format!("create_autobuyer:{name}"),
    );
    create.request = serde_json::json!({"name": "auto", "spec": {"urls": [{"url_id": 10}]}});
    create.reserve = Some(Reservation {
        amount: Money::from_rubles(300 + n),
        links: 0,
        day: now.date_naive(),
    });
    let at = begin(store, &lease, create, now).await;
    let effect = Effect::AutobuyerCreated {
        name: "auto".into(),
        id: abid,
        running: true,
        spec_fingerprint: "spec".into(),
        monthly_budget: Money::from_rubles(300 + n),
    };
    complete(store, at, Outcome::Succeeded(effect), now).await;
    // Autobuyer switches: a failed start still counts for the next generation.
    let start = switch(name, IntentKind::StartAutobuyer, abid, 1);
    let at = begin(store, &lease, start, now).await;
    complete(store, at, failed_outcome("refused"), now).await;
    let stop = switch(name, IntentKind::StopAutobuyer, abid, 2);
    let at = begin(store, &lease, stop, now).await;
    complete(store, at, Outcome::Succeeded(Effect::None), now).await;
    // A failed free intent: history only.
    let filter = free(
        name,
        IntentKind::CreateFilter,
        &format!("create_filter:{name}:cheap"),
    );
    let at = begin(store, &lease, filter, now).await;
    complete(store, at, failed_outcome("400"), now).await;
    // Foreign links (no intent of ours bought pages 50 and 51), the one seen first recorded
    // last: their order is the read's, not the table's.
    for (page, seen) in [(51, now), (50, now - Duration::minutes(1))] {
        let foreign = ListedLink {
            record: LinkRecord {
                link_id: Some(8000 + 10 * n + page),
                page_id: Some(page),
                url_id: Some(10),
                text_id: None,
                price: Some(Money::from_rubles(40 + n)),
                status: None,
            },
            leaving: false,
            autobuyer: None,
        };
        let read = ListRead {
            links: &[foreign],
            proven_complete: false,
            fallback_price: Money::from_rubles(150),
        };
        store
            .links()
            .record_link_list(name, read, seen)
            .await
            .unwrap();
    }
    store
        .intents()
        .note_list_cut(name, 100 + n as u32)
        .await
        .unwrap();
    // Rounds: one that succeeded, a later one that failed, the latest still running.
    for (hours, outcome) in [
        (3, Some(RoundOutcome::Succeeded)),
        (2, Some(RoundOutcome::Failed)),
        (1, None),
    ] {
        let slot = now - Duration::hours(hours + n);
        store
            .rounds()
            .claim_round(name, slot, "by-hand", now)
            .await
            .unwrap();
        if let Some(o) = outcome {
            store
                .rounds()
                .finish_round(name, slot, o, &format!("round {hours}"), now)
                .await
                .unwrap();
        }
    }
    let stall = (n == 0).then_some(StallReason::NothingBought);
    store
        .campaigns()
        .record_stall(name, stall, "by hand", 2 + n as u32, now)
        .await
        .unwrap();
    store
        .set_halt(&HaltScope::campaign(name), "checked by hand", now)
        .await
        .unwrap();
}

async fn begin(store: &Store, lease: &LeaseToken, i: NewIntent, now: DateTime<Utc>) -> AttemptRef {
    match store
        .intents()
        .begin_intents(lease, &[i], now)
        .await
        .expect("begin")
    {
        BeginOutcome::Started(ids) => ids[0],
        other => panic!("expected Started, got {other:?}"),
    }
}

async fn complete(store: &Store, at: AttemptRef, o: Outcome, now: DateTime<Utc>) {
    store
        .intents()
        .complete_intent(at, o, None, now)
        .await
        .expect("complete");
}

fn failed_outcome(error: &str) -> Outcome {
    Outcome::Failed {
        error: error.into(),
    }
}

fn uncertain() -> Outcome {
    Outcome::Uncertain {
        error: "answer cut short".into(),
    }
}

/// A purchase of one link on `page`, its link counted against `day`.
fn purchase(campaign: &str, page: i64, price_rub: i64, day: DateTime<Utc>) -> NewIntent {
    NewIntent {
        campaign: campaign.into(),
        kind: IntentKind::Purchase,
        natural_key: format!("purchase:{campaign}:{page}:10:20"),
        fingerprint: format!("fp-{page}"),
        request: serde_json::json!({"url": "https://hand.example/", "page_id": page, "url_id": 10, "text_id": 20, "text": "t"}),
        reserve: Some(Reservation {
            amount: Money::from_rubles(price_rub),
            links: 1,
            day: day.date_naive(),
        }),
    }
}

fn free(campaign: &str, kind: IntentKind, key: &str) -> NewIntent {
    NewIntent {
        campaign: campaign.into(),
        kind,
        natural_key: key.into(),
        fingerprint: format!("fp-{key}"),
        request: serde_json::json!({"name": key}),
        reserve: None,
    }
}

fn switch(campaign: &str, kind: IntentKind, id: i64, generation: u32) -> NewIntent {
    NewIntent {
        campaign: campaign.into(),
        kind,
        natural_key: format!("{}:{campaign}:{id}:{generation}", kind.as_str()),
        fingerprint: format!("fp-switch-{generation}"),
        request: serde_json::json!({"name": "auto", "autobuyer_id": id}),
        reserve: None,
    }
}

/// Every kind of row the batch read must sort out is there, so a wrong filter shows.
async fn assert_journal_is_varied(store: &Store, today: chrono::NaiveDate) {
    let all = store
        .intents()
        .find_intents(IntentFilter::default())
        .await
        .unwrap();
    let has = |kind: IntentKind, state: IntentState, blocked: bool| {
        all.iter()
            .any(|i| i.kind == kind && i.state == state && i.rebuy_blocked == blocked)
    };
    assert!(has(IntentKind::Purchase, IntentState::Failed, false));
    assert!(has(IntentKind::Purchase, IntentState::Failed, true));
    assert!(all.iter().any(|i| i.state == IntentState::Uncertain));
    assert!(all.iter().any(|i| i.state == IntentState::InFlight));
    assert!(has(IntentKind::StartAutobuyer, IntentState::Failed, false));
    assert!(has(IntentKind::CreateFilter, IntentState::Failed, false));
    for name in HAND {
        let r = Recorded::load(store, name, today).await.unwrap();
        assert_eq!(r.purchases.len(), 3, "bought, uncertain, in flight");
        assert_eq!((r.blocked.len(), r.uncertain.len()), (1, 1));
        assert_eq!(r.autobuyer_generations.values().sum::<usize>(), 2);
        assert_eq!((r.held.len(), r.foreign.len()), (1, 2));
        assert!(r.foreign[0].first_seen_at < r.foreign[1].first_seen_at);
        assert_eq!(r.budget.links_today, 2, "two of three links counted today");
        assert_eq!(
            r.halts.len(),
            2,
            "the global halt and its own, not bolt-bikes'"
        );
        let (last, success) = (r.last_round.unwrap(), r.last_success.unwrap());
        assert!(success.slot < last.slot, "{success:?} {last:?}");
        assert!(r.stall.is_some() && r.ids.list_cut_at.is_some());
        assert!(r.ids.project.is_some() && r.ids.texts.len() == 1 && r.ids.filters.len() == 1);
        assert_eq!((r.ids.autobuyers.len(), r.autobuyer_urls.len()), (1, 1));
    }
    let acme = Recorded::load(store, "acme-shoes", today).await.unwrap();
    let bolt = Recorded::load(store, "bolt-bikes", today).await.unwrap();
    assert!(
        acme.ids.project.is_some() && !acme.held.is_empty(),
        "the engine bought for acme-shoes: {acme:?}"
    );
    assert!(acme.ids.autobuyers.len() + bolt.ids.autobuyers.len() > 0);
}
