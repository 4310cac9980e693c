//! Target 4, on SQLite and on PostgreSQL: how long the journal takes to record an intent and
//! its outcome, and how soon `linkrunner once` makes its first call after a SIGKILL when the
//! journal holds a large history (generated in SQL: [`fill`]).

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use serde_json::json;
use tokio::net::TcpListener;

use linkrunner::money::Money;
use linkrunner::store::{
    Backend, BeginOutcome, CampaignCaps, Effect, IntentKind, NewIntent, Outcome, Reservation, Store,
};
use linkrunner_sandbox::{Faults, SandboxConfig, SandboxHandle};

use super::fixture::{self, Scratch};
use super::pg::on_fresh_db;
use super::report::{Verdict, fmt_num, ms, quantile};
use super::settings::BenchSettings;

/// Campaigns in the run that is killed and restarted.
const RESTART_CAMPAIGNS: usize = 100;

pub(crate) async fn run(a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    println!("\n== target 4: journal");
    let mut verdicts = Vec::new();
    let sqlite_dir = Scratch::new("journal")?;
    let sqlite = format!("sqlite://{}/journal.db", sqlite_dir.path().display());
    verdicts.extend(on_backend("sqlite", &sqlite, a).await?);
    match on_fresh_db("journal", async |url| on_backend("postgres", url, a).await).await? {
        Some(v) => verdicts.extend(v),
        None => println!("   PostgreSQL: no server reachable; skipped"),
    }
    verdicts.iter().for_each(Verdict::print);
    Ok(verdicts)
}

/// Both figures of target 4 on one journal: the latencies, then the restart over a large history.
async fn on_backend(backend: &str, url: &str, a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    let (b, c, t) = latencies(url, a.journal_intents).await?;
    print_latencies(backend, a.journal_intents, b, c, t);
    let first_call = restart_after_sigkill(backend, url, a.journal_rows).await?;
    Ok(vec![
        Verdict::reported(
            4,
            &format!("{backend}: p50 / p99 of recording an intent and its outcome"),
            format!("{} / {} ms", fmt_num(ms(t.0)), fmt_num(ms(t.1))),
        ),
        Verdict::at_most(
            4,
            &format!(
                "{backend}, {} journal rows: start to first call after SIGKILL",
                a.journal_rows
            ),
            first_call.as_secs_f64(),
            2.0,
            "s",
        ),
    ])
}

type P50P99 = (Duration, Duration);

fn print_latencies(backend: &str, n: usize, b: P50P99, c: P50P99, t: P50P99) {
    println!(
        "   {backend}: {n} purchases journaled one after another: intent + reservation p50 {} ms, p99 {} ms; outcome p50 {} ms, p99 {} ms; both p50 {} ms, p99 {} ms",
        fmt_num(ms(b.0)),
        fmt_num(ms(b.1)),
        fmt_num(ms(c.0)),
        fmt_num(ms(c.1)),
        fmt_num(ms(t.0)),
        fmt_num(ms(t.1)),
    );
}

/// Journals `n` purchases through the store's API, one after another, and times each half.
async fn latencies(url: &str, n: usize) -> anyhow::Result<(P50P99, P50P99, P50P99)> {
    let store = Store::connect(url).await?;
    store.migrate().await?;
    let now = Utc::now();
    let caps = CampaignCaps {
        name: "bench-journal".into(),
        monthly_cap: Money::from_rubles(1_000_000_000),
        daily_links: u32::try_from(n + 1).unwrap_or(u32::MAX),
        total_links: u32::try_from(n + 1).unwrap_or(u32::MAX),
        account: linkrunner::domain::account::DEFAULT_ACCOUNT.into(),
    };
    store.campaigns().upsert_campaign(&caps, now).await?;
    let lease = store
        .leases()
        .try_acquire_lease(&caps.name, "bench", chrono::Duration::hours(1), now)
        .await?
        .context("the fresh journal has no lease")?;
    let (mut begin, mut complete, mut both) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n as i64 {
        let price = Money::from_rubles(100);
        let intent = NewIntent {
            campaign: caps.name.clone(),
            kind: IntentKind::Purchase,
            natural_key: format!("purchase:bench-journal:{i}"),
            fingerprint: format!("{i:064x}"),
            request: json!({ "page_id": i, "url_id": 1, "text_id": 1, "price": price }),
            reserve: Some(Reservation {
                amount: price,
                links: 1,
                day: now.date_naive(),
            }),
        };
        let t0 = Instant::now();
        let BeginOutcome::Started(ids) = store
            .intents()
            .begin_intents(&lease, &[intent], Utc::now())
            .await?
        else {
            anyhow::bail!("intent {i} was not started");
        };
        let t1 = Instant::now();
        let effect = Effect::Purchased {
            link: Some(i),
            page_id: i,
            url_id: 1,
            text_id: 1,
            price,
        };
        store
            .intents()
            .complete_intent(ids[0], Outcome::Succeeded(effect), Some("{}"), Utc::now())
            .await?;
        let t2 = Instant::now();
        begin.push(t1 - t0);
        complete.push(t2 - t1);
        both.push(t2 - t0);
    }
    store.close().await;
    let q = |v: &mut Vec<Duration>| (quantile(v, 0.5), quantile(v, 0.99));
    Ok((q(&mut begin), q(&mut complete), q(&mut both)))
}

/// Fills the journal, runs `linkrunner once`, kills it with SIGKILL mid-run, starts it again
/// and returns the time from that start to the first request the sandbox receives.
async fn restart_after_sigkill(backend: &str, db_url: &str, rows: u64) -> anyhow::Result<Duration> {
    let dir = Scratch::new("restart")?;
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir_all(&campaigns)?;
    fixture::write_campaigns(&campaigns, RESTART_CAMPAIGNS, "0 9 * * *")?;
    let filled = Instant::now();
    fill(db_url, rows).await?;
    println!(
        "   {backend}: filled the journal with {rows} intents and {rows} ledger rows in {:.1} s",
        filled.elapsed().as_secs_f64()
    );
    let (token, ticket) = ("bench-token", "bench-ticket");
    std::fs::write(dir.path().join("token"), token)?;
    std::fs::write(dir.path().join("ticket"), ticket)?;
    let mut sc = SandboxConfig::new(token, ticket);
    sc.search_ready_after_polls = 1;
    sc.faults = Faults {
        rate_limit: Some(200),
        ..Faults::default()
    };
    let sandbox = linkrunner_sandbox::spawn(sc, TcpListener::bind("127.0.0.1:0").await?).await?;
    let mut first = once(dir.path(), &campaigns, db_url, &sandbox, Stdio::null())?;
    let killed_at = wait_for_calls(&sandbox, 1, RESTART_CAMPAIGNS as u64 * 3).await;
    first.kill().context("SIGKILL to the first run")?;
    first.wait()?;
    let before = calls(&sandbox);
    let started = Instant::now();
    let mut second = once(dir.path(), &campaigns, db_url, &sandbox, Stdio::piped())?;
    let first_call = wait_for_calls(&sandbox, before + 1, before + 1).await;
    let first_call = first_call.map(|_| started.elapsed());
    let finished = wait_exit(&mut second, Duration::from_secs(120)).await;
    let l = sandbox.ledger();
    println!(
        "   {backend}: first run killed after {} calls ({}); restarted run: first call after {}, {}; sandbox: {} purchases, {} duplicate(s)",
        before,
        killed_at.map_or("timed out".into(), |d| format!("{:.2} s", d.as_secs_f64())),
        first_call.map_or("never".into(), |d| format!("{:.0} ms", ms(d))),
        if finished {
            format!("finished ({})", outcomes(&mut second))
        } else {
            "killed after 120 s".into()
        },
        l.purchases.len(),
        l.duplicate_purchases
    );
    sandbox.shutdown().await;
    first_call.context("the restarted run made no call")
}

fn once(
    dir: &Path,
    campaigns: &Path,
    db_url: &str,
    sandbox: &SandboxHandle,
    stdout: Stdio,
) -> anyhow::Result<Child> {
    crate::linkrunner()?
        .arg("--database-url")
        .arg(db_url)
        .arg("--campaigns")
        .arg(campaigns)
        .arg("--api-base-url")
        .arg(sandbox.base_url())
        .arg("--api-token-file")
        .arg(dir.join("token"))
        .arg("--auth-ticket-file")
        .arg(dir.join("ticket"))
        .args(["--rate-limit", "200", "--max-concurrency", "64"])
        .args(["once", "--campaign-concurrency", "64"])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .context("starting linkrunner once")
}

/// How the campaigns of a finished `once` ended, from its text output (`name: outcome ...`,
/// one line each; 100 lines fit in the pipe's buffer, so the run never waited on it).
fn outcomes(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
    }
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for line in text.lines() {
        let outcome = line
            .split(": ")
            .nth(1)
            .and_then(|r| r.split([' ', ':']).next());
        *counts.entry(outcome.unwrap_or("?")).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(o, n)| format!("{n} {o}")).collect();
    counts.join(", ")
}

/// The calls the sandbox's ledger counts (read without copying the ledger: polled every ms).
fn calls(sandbox: &SandboxHandle) -> u64 {
    sandbox.calls()
}

/// Polls the sandbox until it has received `at_least` calls; the time waited, or `None` after 30 s.
/// (`_from` documents where the count started.)
async fn wait_for_calls(sandbox: &SandboxHandle, _from: u64, at_least: u64) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if calls(sandbox) >= at_least {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    None
}

async fn wait_exit(child: &mut Child, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// Bulk history: `rows` failed purchase intents spread over the restart campaigns, and one
/// ledger row (zero delta, so budgets stay consistent) per intent. The same rows on both
/// backends; each generates them in one statement (`generate_series` or a recursive CTE).
async fn fill(db_url: &str, rows: u64) -> anyhow::Result<()> {
    let store = Store::connect(db_url).await?;
    store.migrate().await?;
    let now = Utc::now();
    for i in 0..RESTART_CAMPAIGNS {
        let caps = CampaignCaps {
            name: format!("bench-{i:05}"),
            monthly_cap: Money::from_rubles(5000),
            daily_links: fixture::LINKS_PER_ROUND,
            total_links: fixture::LINKS_PER_ROUND,
            account: linkrunner::domain::account::DEFAULT_ACCOUNT.into(),
        };
        store.campaigns().upsert_campaign(&caps, now).await?;
    }
    let sqlite = store.backend() == Backend::Sqlite;
    store.close().await;
    let intents = if sqlite {
        sqlite_history(rows)
    } else {
        postgres_history(rows)
    };
    // One connection of its own: the store's pool would cut the statement at 30 s.
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(db_url).await?;
    insert_history(&mut conn, &intents).await
}

/// The history intents' columns: a failed purchase of campaign `bench-{n % 100:05}`, key `history:{n}`.
const HISTORY_COLUMNS: &str = "INSERT INTO intents (campaign, kind, natural_key, state, fingerprint, request, owner, created_at, updated_at) ";

fn postgres_history(rows: u64) -> String {
    let k = RESTART_CAMPAIGNS;
    format!(
        "{HISTORY_COLUMNS}SELECT 'bench-' || lpad((i % {k})::text, 5, '0'), 'purchase', 'history:' || i, 'failed', 'history', \
         '{{\"page_id\":0}}', 'bench-history', 0, 0 FROM generate_series(1, {rows}) AS i"
    )
}

fn sqlite_history(rows: u64) -> String {
    let k = RESTART_CAMPAIGNS;
    format!(
        "WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < {rows}) \
         {HISTORY_COLUMNS}SELECT 'bench-' || printf('%05d', i % {k}), 'purchase', 'history:' || i, 'failed', 'history', \
         '{{\"page_id\":0}}', 'bench-history', 0, 0 FROM seq"
    )
}

/// Inserts the history intents, one zero ledger row for each, and refreshes the planner's
/// statistics as a database that grew slowly would have them.
async fn insert_history(conn: &mut sqlx::AnyConnection, intents: &str) -> anyhow::Result<()> {
    sqlx::query(sqlx::AssertSqlSafe(intents.to_string()))
        .execute(&mut *conn)
        .await?;
    let ledger = "INSERT INTO ledger (campaign, intent_id, delta, links, reason, at) \
                  SELECT campaign, id, 0, 0, 'history', 0 FROM intents WHERE owner = 'bench-history'";
    sqlx::query(ledger).execute(&mut *conn).await?;
    sqlx::query("ANALYZE").execute(&mut *conn).await?;
    Ok(())
}
