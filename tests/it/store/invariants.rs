//! Random sequences of begin / complete / resolve keep `sum(ledger) == committed <= cap`
//! (SQLite temp file; a handful of cases, each a fresh database).

use linkrunner::money::Money;
use linkrunner::store::{AttemptRef, BeginOutcome, Effect, Outcome, Resolution, StoreError};
use proptest::prelude::*;

use super::support::*;

#[derive(Debug, Clone)]
enum Step {
    Begin { page: i64, price: i64 },
    Succeed { pick: usize, price_delta: i64 },
    Fail { pick: usize },
    Uncertain { pick: usize },
    Resolve { pick: usize, created: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0i64..12, 1i64..400).prop_map(|(page, price)| Step::Begin { page, price }),
        2 => (0usize..16, -20i64..0).prop_map(|(pick, price_delta)| Step::Succeed { pick, price_delta }),
        1 => (0usize..16).prop_map(|pick| Step::Fail { pick }),
        1 => (0usize..16).prop_map(|pick| Step::Uncertain { pick }),
        1 => (0usize..16, any::<bool>()).prop_map(|(pick, created)| Step::Resolve { pick, created }),
    ]
}

async fn run(steps: Vec<Step>) {
    let db = TestDb::sqlite().await;
    let lease = campaign_with_lease(&db.store, &caps(1000, 6, 8)).await;
    let mut ids = Vec::new();
    for s in steps {
        let pick = |i: usize| ids.get(i % ids.len().max(1)).copied();
        let picked = match &s {
            Step::Succeed { pick: i, .. }
            | Step::Fail { pick: i }
            | Step::Uncertain { pick: i } => pick(*i),
            _ => None,
        };
        let result = match s {
            Step::Begin { page, price } => {
                if let BeginOutcome::Started(new) =
                    begin(&db.store, &lease, purchase(page, price)).await
                {
                    ids.extend(new);
                }
                Ok(())
            }
            Step::Succeed {
                pick: i,
                price_delta,
            } => match pick(i) {
                Some(id) => {
                    let row = db
                        .store
                        .intents()
                        .find_intents(Default::default())
                        .await
                        .unwrap()
                        .into_iter()
                        .find(|r| r.id == id.intent)
                        .unwrap();
                    let price = Money::from_kopecks((row.reserved.kopecks() + price_delta).max(0));
                    let effect = Effect::Purchased {
                        link: None,
                        page_id: 1,
                        url_id: 10,
                        text_id: 20,
                        price,
                    };
                    db.store
                        .intents()
                        .complete_intent(id, Outcome::Succeeded(effect), None, t0())
                        .await
                }
                None => Ok(()),
            },
            Step::Fail { pick: i } | Step::Uncertain { pick: i } => match pick(i) {
                Some(id) => {
                    let outcome = match s {
                        Step::Fail { .. } => Outcome::Failed { error: "no".into() },
                        _ => Outcome::Uncertain { error: "?".into() },
                    };
                    db.store
                        .intents()
                        .complete_intent(id, outcome, None, t0())
                        .await
                }
                None => Ok(()),
            },
            Step::Resolve { pick: i, created } => match pick(i) {
                Some(id) => {
                    let r = if created {
                        Resolution::Created { remote_id: 1 }
                    } else {
                        Resolution::NotCreated
                    };
                    db.store
                        .intents()
                        .resolve_intent(id.intent, r, "test", t0())
                        .await
                        .map(|_| ())
                }
                None => Ok(()),
            },
        };
        // Settling an already settled intent is refused, and so is recording onto an attempt
        // that a later `Begin` of the same page re-armed; nothing else may fail.
        match &result {
            Ok(()) | Err(StoreError::InvalidState { .. }) => {}
            Err(StoreError::Fenced { .. }) => {
                let at = picked.expect("only completions are fenced");
                let current = attempts_of(&db.store, at).await;
                assert_ne!(current, at.attempt, "fenced on the live attempt {at}");
            }
            Err(e) => panic!("{e:?}"),
        }
        assert_books_balance(&db.store).await;
        let b = budget(&db.store).await;
        assert!(b.committed <= b.cap, "{b:?}");
        assert!(
            b.links_today <= b.daily_cap && b.links_total <= b.total_cap,
            "{b:?}"
        );
    }
}

async fn attempts_of(store: &linkrunner::store::Store, at: AttemptRef) -> u32 {
    let rows = store
        .intents()
        .find_intents(Default::default())
        .await
        .unwrap();
    rows.into_iter()
        .find(|r| r.id == at.intent)
        .unwrap()
        .attempts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_journal_steps_keep_the_books_balanced_within_the_cap(steps in prop::collection::vec(step(), 1..30)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        rt.block_on(run(steps));
    }
}
