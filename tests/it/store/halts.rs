//! The operator's halt (issue 33): kept apart from the automatic halts, lifted only by a
//! resume, and every press kept with who, when and why.

use chrono::Duration;
use linkrunner::store::{HaltEvent, HaltKind, HaltScope, IntentKind, Outcome, Store};

use super::support::*;

pub async fn an_operators_halt_is_lifted_only_by_resume_and_every_press_is_kept(db: TestDb) {
    // Arrange: the credentials halt and a campaign's halt, then an operator's halt.
    let store = &db.store;
    credentials_halt(store).await;
    store
        .set_halt(&HaltScope::campaign(CAMPAIGN), "autobuyer creation", t0())
        .await
        .unwrap();
    store
        .operator_halt("alice", "marketplace double-charges", t0())
        .await
        .unwrap();
    // A second press keeps `since` and takes the new author and reason.
    let later = t0() + Duration::minutes(5);
    store
        .operator_halt("bob", "still double-charging", later)
        .await
        .unwrap();

    // Act: every automatic halt is lifted, as a credential recovery and `resolve` do.
    store.clear_halt(&HaltScope::Global).await.unwrap();
    store
        .clear_halt(&HaltScope::campaign(CAMPAIGN))
        .await
        .unwrap();
    let after_recovery = store.halts().await.unwrap();
    let resumed = store
        .operator_resume("carol", "fixed upstream", later + Duration::minutes(1))
        .await
        .unwrap();
    let resumed_again = store
        .operator_resume("carol", "again", later + Duration::minutes(2))
        .await
        .unwrap();

    // Assert
    assert_eq!(after_recovery.len(), 1, "{after_recovery:?}");
    let h = &after_recovery[0];
    assert_eq!(h.scope, HaltScope::Global);
    assert_eq!(h.kind, HaltKind::Operator);
    assert!(h.is_operator() && !h.is_credentials());
    assert_eq!(h.by.as_deref(), Some("bob"));
    assert_eq!(h.reason, "still double-charging");
    assert_eq!(h.since, t0());
    assert!(resumed, "the resume lifted the halt");
    assert!(!resumed_again, "nothing was left to resume");
    assert!(store.halts().await.unwrap().is_empty());
    let events = assert_log(
        store,
        [
            ("resume", "carol", "fixed upstream"),
            ("halt", "bob", "still double-charging"),
            ("halt", "alice", "marketplace double-charges"),
        ],
    )
    .await;
    assert_eq!(events[0].at, later + Duration::minutes(1));
    assert!(events.iter().all(|e| e.scope == HaltScope::Global));
}

pub async fn the_operators_halt_is_listed_before_the_credentials_halt(db: TestDb) {
    // Arrange
    let store = &db.store;
    credentials_halt(store).await;
    store.operator_halt("alice", "stop", t0()).await.unwrap();

    // Act
    let halts = store.halts().await.unwrap();

    // Assert: both global, the operator's first (what `status` and the page show).
    let kinds: Vec<HaltKind> = halts.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, vec![HaltKind::Operator, HaltKind::Automatic]);
    assert!(halts.iter().all(|h| h.is_global()));
}

pub async fn the_anomaly_brake_halts_a_scope_once_and_a_campaigns_resume_lifts_it_alone(
    db: TestDb,
) {
    // Arrange: an operator's account-wide halt, then the brake on a campaign, twice.
    let store = &db.store;
    let scope = HaltScope::campaign(CAMPAIGN);
    store.operator_halt("alice", "stop", t0()).await.unwrap();
    let first = store
        .brake(&scope, "committed 4500 RUB", t0())
        .await
        .unwrap();
    let again = store
        .brake(&scope, "committed 9000 RUB", t0() + Duration::minutes(1))
        .await
        .unwrap();

    // Act: the campaign is resumed, then the account.
    let at = t0() + Duration::minutes(5);
    let campaign_lifted = store
        .operator_resume_scope(&scope, "bob", "a marketplace bug, fixed", at)
        .await
        .unwrap();
    let left = store.halts().await.unwrap();
    let resumes = store.last_resumes().await.unwrap();

    // Assert: set once, with the first figures; the campaign's resume left the account's halt.
    assert!(first, "the brake set its halt");
    assert!(!again, "a halt in force is not set again");
    assert!(campaign_lifted);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].scope, HaltScope::Global);
    assert_eq!(resumes.get(&scope), Some(&at));
    assert_eq!(resumes.get(&HaltScope::Global), None);
    assert_log(
        store,
        [
            ("resume", "bob", "a marketplace bug, fixed"),
            ("halt", "anomaly brake", "committed 4500 RUB"),
            ("halt", "alice", "stop"),
        ],
    )
    .await;
}

pub async fn the_brake_observes_what_was_committed_and_bought_by_time(db: TestDb) {
    // Arrange: two purchases at t0, one of them bought; an autobuyer's budget reserved.
    let store = &db.store;
    let lease = campaign_with_lease(store, &caps(100_000, 100, 1000)).await;
    let bought = started(store, &lease, purchase(1, 300)).await;
    started(store, &lease, purchase(2, 200)).await;
    started(
        store,
        &lease,
        reserving(
            free_intent(
                IntentKind::CreateAutobuyer,
                "ab:auto",
                serde_json::json!({}),
            ),
            500,
        ),
    )
    .await;
    complete(
        store,
        bought,
        Outcome::Succeeded(purchased(1, Some(77), 300)),
    )
    .await;

    // Act
    let since_t0 = store
        .reports()
        .observed_since(t0(), t0() + Duration::minutes(1))
        .await
        .unwrap();
    let after = store
        .reports()
        .observed_since(t0() + Duration::seconds(1), t0() + Duration::minutes(1))
        .await
        .unwrap();

    // Assert: 1,000 RUB reserved and one link bought in the window; nothing after it.
    assert_eq!(since_t0.len(), 1, "{since_t0:?}");
    assert_eq!(since_t0[0].0, CAMPAIGN);
    assert_eq!(since_t0[0].1.committed, rub(1_000));
    assert_eq!(since_t0[0].1.links, 1);
    assert!(after.is_empty(), "{after:?}");
}

/// The last ten halts and resumes, asserted to be `expected` as (action, by, reason),
/// newest first.
async fn assert_log(store: &Store, expected: [(&str, &str, &str); 3]) -> Vec<HaltEvent> {
    let events = store.halt_events(10).await.unwrap();
    let log: Vec<(&str, &str, &str)> = events
        .iter()
        .map(|e| (e.action.as_str(), e.by.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(log, expected);
    events
}

/// The halt a credentials rejection sets: global, at `t0`.
async fn credentials_halt(store: &Store) {
    let set = store.set_halt(&HaltScope::Global, "credentials rejected during x", t0());
    set.await.unwrap();
}

/// Issue 34: an account's halt is kept under `@ID`, apart from a campaign of the same
/// spelling, and covers the campaigns the journal records in that account only.
pub async fn an_accounts_halt_has_its_own_key_and_covers_that_accounts_campaigns(db: TestDb) {
    // Arrange: `shoes` in account `b`, `boots` in the default one; the credentials halt of
    // `b`, a campaign named `b`'s own halt, an operator's halt of account `c`.
    let store = &db.store;
    let in_account = |name: &str, account: &str| {
        let mut c = caps(1000, 5, 50);
        c.name = name.into();
        c.account = account.into();
        c
    };
    campaign(store, &in_account("shoes", "b")).await;
    campaign(store, &in_account("boots", "default")).await;
    let (b, named_b) = (HaltScope::account("b"), HaltScope::campaign("b"));
    store
        .set_halt(&b, "credentials rejected during x", t0())
        .await
        .unwrap();
    store
        .set_halt(&named_b, "autobuyer creation", t0())
        .await
        .unwrap();
    let c = HaltScope::account("c");
    store
        .operator_halt_scope(&c, "alice", "audit", t0())
        .await
        .unwrap();

    // Act: the campaign named `b`'s halt is lifted.
    let all = store.halts().await.unwrap();
    store.clear_halt(&named_b).await.unwrap();
    let left = store.halts().await.unwrap();

    // Assert: each scope read back as written; `b`'s account halt stays.
    let scopes = |hs: &[linkrunner::store::Halt]| -> Vec<(HaltScope, HaltKind)> {
        hs.iter().map(|h| (h.scope.clone(), h.kind)).collect()
    };
    assert_eq!(
        scopes(&all),
        vec![
            (b.clone(), HaltKind::Automatic),
            (c.clone(), HaltKind::Operator),
            (named_b, HaltKind::Automatic),
        ]
    );
    assert_eq!(
        scopes(&left),
        vec![
            (b.clone(), HaltKind::Automatic),
            (c.clone(), HaltKind::Operator)
        ]
    );
    let events = store.halt_events(5).await.unwrap();
    assert_eq!(events[0].scope, c);
    let covering = |name: &'static str| async move {
        let hs = store.halts_covering(name).await.unwrap();
        hs.into_iter().map(|h| h.scope).collect::<Vec<_>>()
    };
    assert_eq!(covering("shoes").await, vec![b.clone()]);
    assert_eq!(covering("boots").await, Vec::<HaltScope>::new());
    let accounts = store.halt_accounts(&left).await.unwrap();
    assert_eq!(
        (accounts.of("shoes"), accounts.of("boots")),
        ("b", "default")
    );

    // Act: `resume` without a scope: every account resumes, each resume recorded.
    store.operator_halt("bob", "all", t0()).await.unwrap();
    let lifted = store
        .operator_resume_accounts("bob", "done", t0())
        .await
        .unwrap();

    // Assert: the operator's halts of every account and of `c` lifted; `b`'s credentials
    // halt (automatic) is no operator's to lift.
    assert_eq!(lifted, vec![HaltScope::Global, c]);
    assert_eq!(
        scopes(&store.halts().await.unwrap()),
        vec![(b, HaltKind::Automatic)]
    );
}

/// Runs this version's migration `*_account_credentials_halt.sql` again, on the test's database.
async fn account_halt_migration(db: &TestDb) {
    run_migration_again(
        db,
        include_str!("../../../migrations/sqlite/20261130030007_account_credentials_halt.sql"),
        include_str!("../../../migrations/postgres/20261130030007_account_credentials_halt.sql"),
    )
    .await;
}

/// Issue 34's upgrade: a journal's automatic credentials halt of every campaign (`*`, the one
/// account of then) becomes the default account's, reason and `since` kept, so the default
/// account's working read lifts it and no other account's; an operator's halt of every
/// account stays every account's. Where the default account's halt is already set, the
/// old one is dropped.
pub async fn the_upgrade_gives_an_old_credentials_halt_to_the_default_account(db: TestDb) {
    // Arrange: halts as a linkrunner before accounts left them.
    let store = &db.store;
    credentials_halt(store).await;
    store.operator_halt("alice", "stop", t0()).await.unwrap();

    // Act
    account_halt_migration(&db).await;

    // Assert
    let halts = store.halts().await.unwrap();
    let default = HaltScope::account("default");
    let auto: Vec<_> = halts.iter().filter(|h| !h.is_operator()).collect();
    assert_eq!(auto.len(), 1, "{halts:?}");
    assert_eq!(auto[0].scope, default);
    assert_eq!(auto[0].reason, "credentials rejected during x");
    assert_eq!(auto[0].since, t0());
    assert!(halts.iter().any(|h| h.is_operator() && h.is_global()));

    // Arrange: both a `*` (an old replica during a rolling upgrade) and `@default`.
    credentials_halt(store).await;

    // Act
    account_halt_migration(&db).await;

    // Assert: one credentials halt, the default account's.
    let halts = store.halts().await.unwrap();
    let auto: Vec<_> = halts.iter().filter(|h| !h.is_operator()).collect();
    assert_eq!(auto.len(), 1, "{halts:?}");
    assert_eq!(auto[0].scope, default);
}
