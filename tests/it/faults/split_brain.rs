//! Split brain: two `linkrunner run` processes share one PostgreSQL journal. The one that is
//! buying is frozen with SIGSTOP past its lease while the other takes over and runs the next
//! slot's round; then it is resumed mid-round. Nothing is bought twice, no cap is exceeded,
//! and the journal holds exactly what the marketplace sold. Both runs are canaried too.

use std::time::Duration;

use linkrunner_sandbox::Faults;
use sqlx::{Connection, Row};

use super::support::*;
use crate::support::db::open_store;
use crate::support::init_logs;
use crate::support::pg_cluster::PgCluster;
use crate::support::sandbox;
use crate::support::wait::poll_until;
use crate::support::wait::within;

async fn count(url: &str, sql: &str) -> Option<i64> {
    let mut c = sqlx::PgConnection::connect(url).await.ok()?;
    let n = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(&mut c)
        .await
        .ok()?
        .get::<i64, _>(0);
    let _ = c.close().await;
    Some(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_frozen_past_its_lease_and_resumed_buys_nothing_twice() {
    init_logs();
    let pg = PgCluster::start();
    let canary = Canary::new();
    let mut cfg = sandbox_config(&canary);
    cfg.vary_technical_values = true; // one purchase call per donor: a round has several
    cfg.faults = Faults {
        latency_ms: 250,
        ..Faults::default()
    };
    let sandbox = sandbox::start(cfg).await;
    let campaigns = campaign_dir("* * * * *");
    let store = open_store(&pg.url()).await;
    seed_past_round(&store).await;

    let a = start_binary(&pg.url(), campaigns.path(), &sandbox, &canary).await;
    // Frozen once A has *recorded* a purchase, not merely made one: a purchase the sandbox
    // executed but A had not yet recorded is settled by B from the link list (not A's), and
    // the check below that both daemons bought would then depend on that race.
    within(
        Duration::from_secs(30),
        "daemon A's first recorded purchase",
        || async {
            let recorded = count(
                &pg.url(),
                "SELECT count(*) FROM intents WHERE kind = 'purchase' AND state = 'succeeded'",
            )
            .await?;
            (recorded > 0).then_some(())
        },
    )
    .await;
    a.signal("STOP");
    let frozen_slot = store
        .rounds()
        .last_round(CAMPAIGN)
        .await
        .expect("journal")
        .expect("A's round")
        .slot;
    let b = start_binary(&pg.url(), campaigns.path(), &sandbox, &canary).await;
    let bought_by_a = sandbox.ledger().purchases.len();
    let b_took_over = poll_until(Duration::from_secs(130), || async {
        let r = store.rounds().last_round(CAMPAIGN).await.ok().flatten()?;
        let b_bought = sandbox.ledger().purchases.len() > bought_by_a;
        (r.slot > frozen_slot && r.finished_at.is_some() && b_bought).then_some(())
    })
    .await;
    assert!(
        b_took_over.is_some(),
        "daemon B bought nothing in a later slot while A was frozen; B's log:\n{}",
        b.log_tail(40)
    );
    a.signal("CONT");
    within(
        Duration::from_secs(30),
        "every round finished, every purchase settled",
        || async {
            let running = count(
                &pg.url(),
                "SELECT count(*) FROM rounds WHERE state = 'running'",
            )
            .await?;
            (running == 0 && unsettled_purchases(&store).await == 0).then_some(())
        },
    )
    .await;
    let (a_out, a_err) = a.stop().await;
    let (b_out, b_err) = b.stop().await;

    assert_ledger_invariants(&sandbox.ledger(), &store).await;
    let buyers = count(
        &pg.url(),
        "SELECT count(DISTINCT owner) FROM intents WHERE kind = 'purchase' AND state = 'succeeded'",
    )
    .await
    .expect("journal readable");
    assert_eq!(
        buyers, 2,
        "both daemons bought: the split brain really happened"
    );
    for (what, bytes) in [
        ("A stdout", a_out),
        ("A stderr", a_err),
        ("B stdout", b_out),
        ("B stderr", b_err),
        ("pg_dump", pg.dump()),
    ] {
        assert_eq!(
            canary.found_in(&bytes),
            Vec::<String>::new(),
            "secret in {what}"
        );
    }
}
