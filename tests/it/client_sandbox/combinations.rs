//! Shapes in combination, not one at a time: a pairwise-covering set of every `Shape`
//! dimension (`Shape::dimensions()`, so a new value is covered without editing this file)
//! × read faults × how much field map is given. Each combination runs the whole client flow
//! (project → texts → search → poll → buy → list → filter → autobuyer → stop → start) with
//! the field map it needs, and must give the default shape's answers and a clean ledger.
//!
//! `LINKRUNNER_TEST_SHAPE_SAMPLES=N` adds N combinations drawn at random (seed
//! `LINKRUNNER_TEST_SHAPE_SEED`, default 12) to the pairwise set. A failing combination is
//! printed whole, so it can be replayed with `--shape` and `--field-map`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use linkrunner::market::FieldMap;
use linkrunner_sandbox::faults::Prng;
use linkrunner_sandbox::{Faults, Op, Shape};
use tokio::sync::Semaphore;

use super::shapes::{Answers, run_flow};
use super::support::{client_with, sandbox_config};
use crate::support::ledger;
use crate::support::sandbox;

/// Faults a read survives by being retried; changes are never faulted here, so every
/// change must reach the ledger exactly once whatever the reads went through.
const FAULTS: [&str; 4] = ["none", "truncated_reads", "read_errors", "reads_cut_short"];
/// `needed`: only what the shape requires; `dotted`: every id and the price as dotted
/// paths too, which must not disturb shapes that do not need them.
const FIELD_MAPS: [&str; 2] = ["needed", "dotted"];

fn faults(name: &str) -> Faults {
    let reads = Some(BTreeSet::from([Op::SearchResult, Op::ListLinks]));
    match name {
        "truncated_reads" => Faults {
            truncate_rate: 0.3,
            ..Faults::default()
        },
        "read_errors" => Faults {
            error_rate: 0.3,
            error_ops: reads,
            ..Faults::default()
        },
        "reads_cut_short" => Faults {
            drop_after_commit_rate: 0.3,
            drop_ops: reads,
            ..Faults::default()
        },
        _ => Faults::default(),
    }
}

/// Every dimension and its values: the shape's, then faults and field map.
fn dimensions() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut dims = Shape::dimensions();
    dims.push(("faults", FAULTS.to_vec()));
    dims.push(("field_map", FIELD_MAPS.to_vec()));
    dims
}

/// One value index per dimension.
type Combination = Vec<usize>;

/// Greedy pairwise cover: every pair of values of two dimensions appears in some
/// combination. Deterministic, so CI always runs the same set.
fn pairwise(sizes: &[usize]) -> Vec<Combination> {
    let mut uncovered: BTreeSet<(usize, usize, usize, usize)> = BTreeSet::new();
    for a in 0..sizes.len() {
        for b in a + 1..sizes.len() {
            for va in 0..sizes[a] {
                for vb in 0..sizes[b] {
                    uncovered.insert((a, va, b, vb));
                }
            }
        }
    }
    let mut out = Vec::new();
    while let Some(&(a, va, b, vb)) = uncovered.iter().next() {
        let mut combo: Vec<Option<usize>> = vec![None; sizes.len()];
        combo[a] = Some(va);
        combo[b] = Some(vb);
        for d in 0..sizes.len() {
            if combo[d].is_none() {
                let gain = |v: usize| {
                    (0..sizes.len())
                        .filter_map(|e| Some((e, combo[e]?)))
                        .filter(|&(e, ve)| {
                            let key = if e < d { (e, ve, d, v) } else { (d, v, e, ve) };
                            uncovered.contains(&key)
                        })
                        .count()
                };
                combo[d] = (0..sizes[d]).max_by_key(|&v| (gain(v), std::cmp::Reverse(v)));
            }
        }
        let combo: Combination = combo.into_iter().map(|v| v.unwrap_or(0)).collect();
        for a in 0..sizes.len() {
            for b in a + 1..sizes.len() {
                uncovered.remove(&(a, combo[a], b, combo[b]));
            }
        }
        out.push(combo);
    }
    out
}

fn sampled(sizes: &[usize]) -> Vec<Combination> {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let n = env("LINKRUNNER_TEST_SHAPE_SAMPLES").unwrap_or(0);
    let mut rng = Prng::new(env("LINKRUNNER_TEST_SHAPE_SEED").unwrap_or(12));
    (0..n)
        .map(|_| {
            sizes
                .iter()
                .map(|&s| rng.range(0, s as i64 - 1) as usize)
                .collect()
        })
        .collect()
}

/// A combination as the settings that reproduce it.
struct Setup {
    shape: String,
    faults: &'static str,
    field_map: String,
}

impl std::fmt::Display for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--shape {} / faults {} / --field-map '{}'",
            self.shape, self.faults, self.field_map
        )
    }
}

fn setup(dims: &[(&'static str, Vec<&'static str>)], combo: &Combination) -> Setup {
    let value = |key: &str| {
        let i = dims.iter().position(|(k, _)| *k == key).unwrap();
        dims[i].1[combo[i]]
    };
    let shape_keys = Shape::dimensions().len();
    let shape = (0..shape_keys)
        .map(|i| format!("{}={}", dims[i].0, dims[i].1[combo[i]]))
        .collect::<Vec<_>>()
        .join(",");
    let mut map = Vec::new();
    let dotted = value("field_map") == "dotted";
    match value("price") {
        "nested" => map.push("price=prices.rent"),
        "unknown" => map.push("price=costPerMonth"),
        _ if dotted => map.push("price=prices.rent"),
        _ => {}
    }
    if dotted {
        map.extend(["url_id=url.id", "text_id=text.id"]);
    }
    Setup {
        shape,
        faults: value("faults"),
        field_map: map.join(","),
    }
}

/// The flow against a sandbox in `setup`; the ledger must show each change exactly once and
/// exactly the purchases the client reported.
async fn answers_in(setup: &Setup) -> Answers {
    let mut cfg = sandbox_config();
    cfg.shape = setup.shape.parse::<Shape>().unwrap();
    cfg.faults = faults(setup.faults);
    let sandbox = sandbox::start(cfg).await;
    let map = FieldMap::parse(&setup.field_map).unwrap();
    let client = client_with(&sandbox.base_url(), |c| {
        c.field_map = map;
        c.read_retries = 8;
    });
    let answers = run_flow(&client).await;
    let ledger = sandbox.ledger();
    let mut sold: Vec<i64> = ledger.purchases.iter().map(|p| p.link_id).collect();
    let mut bought = answers.bought.clone();
    sold.sort_unstable();
    bought.sort_unstable();
    assert_eq!(
        sold, bought,
        "the ledger holds exactly what the client bought"
    );
    assert_eq!(ledger.duplicate_purchases, 0);
    for op in [
        Op::AddProject,
        Op::BuyLinks,
        Op::AddFilter,
        Op::CreateAutobuyer,
    ] {
        assert_eq!(ledger::requests(&ledger, op), 1, "{op} sent once");
    }
    assert_eq!(
        ledger::requests(&ledger, Op::AddTexts),
        2,
        "two addTexts, each once"
    );
    sandbox.shutdown().await;
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pair_of_shapes_faults_and_field_maps_gives_the_default_answers() {
    let dims = dimensions();
    let sizes: Vec<usize> = dims.iter().map(|(_, v)| v.len()).collect();
    let mut combos = pairwise(&sizes);
    combos.extend(sampled(&sizes));
    let expected = answers_in(&setup(&dims, &vec![0; sizes.len()])).await;
    // A few at a time: each has its own sandbox on its own port.
    let slots = Arc::new(Semaphore::new(4));
    let runs: Vec<_> = combos
        .iter()
        .map(|combo| {
            let (setup, slots) = (setup(&dims, combo), Arc::clone(&slots));
            tokio::spawn(async move {
                let _slot = slots.acquire_owned().await;
                tokio::time::timeout(Duration::from_secs(60), answers_in(&setup)).await
            })
        })
        .collect();
    let mut failures = Vec::new();
    for (n, (combo, run)) in combos.iter().zip(runs).enumerate() {
        let setup = setup(&dims, combo);
        let what = format!("combination {}/{}: {setup}", n + 1, combos.len());
        match run.await {
            Ok(Ok(mut seen)) => {
                if setup.faults != "none" && seen.pending_polls <= expected.pending_polls {
                    // A read retried after the sandbox counted it (truncated, cut short)
                    // moves a search along by a poll the client never saw.
                    seen.pending_polls = expected.pending_polls;
                }
                if seen != expected {
                    failures.push(format!("{what}\n  answers {seen:?}"));
                }
            }
            Ok(Err(_)) => failures.push(format!("{what}\n  did not finish in 60 s")),
            Err(panic) => failures.push(format!("{what}\n  {panic}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} combinations differ from the default shape (expected {expected:?}):\n{}",
        failures.len(),
        combos.len(),
        failures.join("\n")
    );
}

#[test]
fn the_pairwise_set_covers_every_pair_of_values() {
    let sizes: Vec<usize> = dimensions().iter().map(|(_, v)| v.len()).collect();
    let combos = pairwise(&sizes);
    for a in 0..sizes.len() {
        for b in a + 1..sizes.len() {
            for va in 0..sizes[a] {
                for vb in 0..sizes[b] {
                    assert!(
                        combos.iter().any(|c| c[a] == va && c[b] == vb),
                        "dimension {a}={va} with {b}={vb} is never combined"
                    );
                }
            }
        }
    }
    let product: usize = sizes.iter().product();
    assert!(combos.len() < product / 20, "{} of {product}", combos.len());
}
