//! Kills at random moments: `once` runs against a sandbox with some latency and is killed
//! after a seeded random delay, again and again; then it is restarted until every campaign
//! converges, and the ledger and journal are checked. The seed is printed on failure and can be
//! replayed with `LINKRUNNER_KILL_SEED`.

use std::time::Duration;

use linkrunner::store::IntentState;
use linkrunner_sandbox::Faults;
use linkrunner_sandbox::faults::Prng;

use super::campaign::Spec;
use super::invariants::assert_safe_and_converged;
use super::support::{Backend, LEASE_TTL, Rig};

/// Kills delivered per scenario (a run that had already exited does not count).
pub const KILLS: u32 = 7;
/// Random delays lie in this range (milliseconds): from process start-up to past a full pass.
/// Connecting to PostgreSQL makes a pass slower, so its range reaches further.
fn delay_ms(backend: Backend) -> (i64, i64) {
    match backend {
        Backend::Sqlite => (5, 400),
        Backend::Postgres => (5, 600),
    }
}

/// Two campaigns needing several passes each; `KILLS` kills at seeded random moments; then
/// restarts until converged. Returns how many kills were delivered.
pub async fn killed_at_random_moments(backend: Backend, seed: u64) -> u32 {
    let seed = std::env::var("LINKRUNNER_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(seed);
    // Enough links that the campaigns are still buying when the later kills come: once
    // they converged, `once` ends before any delay and a kill can no longer land.
    let specs = [Spec::new("kill-a", 12), Spec::new("kill-b", 8)];
    let files: Vec<_> = specs.iter().map(Spec::file).collect();
    // Calls slow enough that a pass is still running when the later kills come: with the
    // engine's fewer journal reads, 10 ms let the campaigns converge after six kills.
    let faults = Faults {
        latency_ms: 25,
        ..Faults::default()
    };
    let rig = Rig::start(backend, &files, faults).await;
    eprintln!("random kills on {backend:?}: seed {seed} (replay with LINKRUNNER_KILL_SEED={seed})");
    let mut rng = Prng::new(seed);

    let (mut kills, mut mid_call) = (0, 0);
    for _ in 0..KILLS * 10 {
        if kills == KILLS {
            break;
        }
        let (lo, hi) = delay_ms(backend);
        let delay = Duration::from_millis(rng.range(lo, hi) as u64);
        if rig.once_killed_after(delay).await {
            kills += 1;
            mid_call += u32::from(in_flight(&rig).await > 0);
            // A pass started before the dead holder's lease runs out is skipped at once.
            tokio::time::sleep(LEASE_TTL + Duration::from_millis(200)).await;
        }
        rig.resolve_what_waits_for_an_operator().await;
    }
    eprintln!("{kills} kills delivered, {mid_call} of them between an intent and its outcome");
    rig.restart_until_converged().await;

    assert_safe_and_converged(&rig, &specs).await;
    kills
}

/// Intents a killed process left between "recorded" and "outcome recorded".
async fn in_flight(rig: &Rig) -> usize {
    rig.intents()
        .await
        .iter()
        .filter(|i| i.state == IntentState::InFlight)
        .count()
}
