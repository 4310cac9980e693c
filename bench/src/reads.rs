//! Target 6, on SQLite and on PostgreSQL: how long the status page's first screen (`/`),
//! `/api/v1/summary` and the first page of `/api/v1/campaigns` take to answer over a large
//! journal (issue 34: ≤ 300 ms at 10,000 campaigns and 100,000 journal rows).
//!
//! The journal is seeded directly in SQL (as target 4 fills its history), not through the
//! marketplace: `--read-campaigns` campaigns, each with a budget, a bought link, its ledger
//! row and a finished round, and `--read-journal-rows` intents in all with as many ledger
//! rows, dated over the current month, so the month's reads (the summary's links, the page's
//! picture) have the month's movements to sum. The router is the product's, served in this
//! process on loopback; each path is asked [`ASKED`] times after one warm-up and the median
//! is the figure. The reads the answers are made of are timed apart too, so a slow answer
//! says where its time goes.

use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{Datelike, Timelike, Utc};
use tokio::net::TcpListener;

use linkrunner::clock::to_millis;
use linkrunner::http::{AppState, Health, router, serve};
use linkrunner::metrics::Metrics;
use linkrunner::store::{Backend, Store};
use linkrunner::views::overview::FileFacts;

use super::fixture::Scratch;
use super::pg::on_fresh_db;
use super::report::{Verdict, fmt_num, ms};
use super::settings::BenchSettings;

/// Requests timed per path (after one warm-up).
const ASKED: usize = 5;
/// The goal of the first screen and the summary.
const GOAL_MS: f64 = 300.0;

pub(crate) async fn run(a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    println!(
        "\n== target 6: reads at {} campaigns and {} journal rows (intents and as many ledger rows)",
        a.read_campaigns, a.read_journal_rows
    );
    let mut verdicts = Vec::new();
    let dir = Scratch::new("reads")?;
    let sqlite = format!("sqlite://{}/journal.db", dir.path().display());
    verdicts.extend(on_backend("sqlite", &sqlite, a).await?);
    match on_fresh_db("reads", async |url| on_backend("postgres", url, a).await).await? {
        Some(v) => verdicts.extend(v),
        None => println!("   PostgreSQL: no server reachable; skipped"),
    }
    verdicts.iter().for_each(Verdict::print);
    Ok(verdicts)
}

async fn on_backend(backend: &str, url: &str, a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    let seeded = Instant::now();
    seed(url, a.read_campaigns, a.read_journal_rows).await?;
    println!(
        "   {backend}: seeded {} campaigns and {} intents + {} ledger rows in {:.1} s",
        a.read_campaigns,
        a.read_journal_rows,
        a.read_journal_rows,
        seeded.elapsed().as_secs_f64()
    );
    let store = Store::connect(url).await?;
    parts(backend, &store).await?;
    let state = AppState {
        metrics: std::sync::Arc::new(Metrics::new()),
        store: store.clone(),
        health: std::sync::Arc::new(Health::default()),
        clock: linkrunner::clock::system(),
    };
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    // Stopped by aborting its task: the bench does not name the shutdown token's crate.
    let server = tokio::spawn(serve(listener, router(state), Default::default()));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()?;
    let mut verdicts = Vec::new();
    for (path, judged) in [
        ("/", true),
        ("/api/v1/summary", true),
        ("/api/v1/campaigns", false),
        ("/?per_page=200", false),
    ] {
        let (median, max, bytes) = timed(&http, &format!("{base}{path}")).await?;
        println!(
            "   {backend}: GET {path}: median {} ms, slowest {} ms of {ASKED}, {:.1} KB",
            fmt_num(ms(median)),
            fmt_num(ms(max)),
            bytes as f64 / 1024.0
        );
        if judged {
            verdicts.push(Verdict::at_most(
                6,
                &format!(
                    "{backend}, {} campaigns, {} journal rows: GET {path} (median of {ASKED})",
                    a.read_campaigns, a.read_journal_rows
                ),
                ms(median),
                GOAL_MS,
                "ms",
            ));
        }
    }
    server.abort();
    store.close().await;
    Ok(verdicts)
}

/// The median and the slowest of [`ASKED`] answers after a warm-up, and the answer's size.
async fn timed(http: &reqwest::Client, url: &str) -> anyhow::Result<(Duration, Duration, usize)> {
    let mut took = Vec::with_capacity(ASKED);
    let mut bytes = 0;
    for i in 0..=ASKED {
        let t0 = Instant::now();
        let answer = http.get(url).send().await?;
        let status = answer.status();
        bytes = answer.bytes().await?.len();
        anyhow::ensure!(status.is_success(), "{url} answered {status}");
        if i > 0 {
            took.push(t0.elapsed());
        }
    }
    took.sort_unstable();
    Ok((took[ASKED / 2], took[ASKED - 1], bytes))
}

/// The reads an answer is made of, each timed once: where the time goes.
async fn parts(backend: &str, store: &Store) -> anyhow::Result<()> {
    let now = Utc::now();
    let t0 = Instant::now();
    let names = store.campaigns().campaign_names().await?;
    let t_names = t0.elapsed();
    let t0 = Instant::now();
    let rows =
        linkrunner::views::list::campaign_rows(store, &names, now, &FileFacts::default()).await?;
    let t_rows = t0.elapsed();
    let month = linkrunner::views::month::Month::of(now);
    // The summary's links of the month as read before issue 34 (the report's line of every
    // campaign, then its total) and as read now (the total alone).
    let t0 = Instant::now();
    let report = linkrunner::views::month::month_report(store, month).await?;
    let t_report = t0.elapsed();
    let t0 = Instant::now();
    let links = linkrunner::views::month::month_total(store, month)
        .await?
        .links_bought;
    let t_links = t0.elapsed();
    anyhow::ensure!(
        links == report.total.links_bought,
        "the month's total and the report's differ"
    );
    let t0 = Instant::now();
    let mut day_rows = 0usize;
    store
        .reports()
        .ledger_days_total(month.start(), month.end(), |_| day_rows += 1)
        .await?;
    let t_days = t0.elapsed();
    println!(
        "   {backend}: the reads: campaign names {} ms; the list's rows of {} campaigns {} ms; \
         the month's links bought ({links}): {} ms as the month's total, {} ms through the whole report; \
         the month per day for the picture ({day_rows} days) {} ms",
        fmt_num(ms(t_names)),
        rows.len(),
        fmt_num(ms(t_rows)),
        fmt_num(ms(t_links)),
        fmt_num(ms(t_report)),
        fmt_num(ms(t_days)),
    );
    Ok(())
}

/// Seeds a fresh journal: `campaigns` campaigns (`r-1` …), each with a budget, one bought
/// link (a succeeded purchase, its ledger row and its held link) and a finished round; then
/// failed purchases up to `rows` intents in all, each with a ledger row of zero (so budgets
/// stay what the ledger sums to); every ledger row inside the current month.
async fn seed(url: &str, campaigns: usize, rows: u64) -> anyhow::Result<()> {
    let store = Store::connect(url).await?;
    store.migrate().await?;
    let sqlite = store.backend() == Backend::Sqlite;
    store.close().await;
    let now = Utc::now();
    let now_ms = to_millis(now);
    // Minutes since the month began: the ledger's rows are spread over them.
    let month_minutes = (i64::from(now.day0()) * 1440 + i64::from(now.hour()) * 60).max(1);
    let n = campaigns.max(1);
    let extra = rows.saturating_sub(n as u64);
    let seq = |count: u64| {
        format!(
            "WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < {count}) "
        )
    };
    let cast_text = if sqlite { "CAST(i AS TEXT)" } else { "i::text" };
    let name = |expr: &str| format!("'r-' || {}", expr.replace("{i}", cast_text));
    let statements = [
        format!(
            "{}INSERT INTO campaigns (name, created_at, updated_at) SELECT {}, {now_ms}, {now_ms} FROM seq",
            seq(n as u64),
            name("{i}")
        ),
        format!(
            "{}INSERT INTO budgets (campaign, cap, committed, links, total_links, daily_links) \
             SELECT {}, 500000, 10000, 1, 100, 5 FROM seq",
            seq(n as u64),
            name("{i}")
        ),
        format!(
            "{}INSERT INTO intents (campaign, kind, natural_key, state, fingerprint, request, owner, created_at, updated_at) \
             SELECT {}, 'purchase', 'reads:bought:' || {cast_text}, 'succeeded', 'reads', '{{\"page_id\":0}}', 'bench-reads', {now_ms}, {now_ms} FROM seq",
            seq(n as u64),
            name("{i}")
        ),
        format!(
            "{}INSERT INTO intents (campaign, kind, natural_key, state, fingerprint, request, owner, created_at, updated_at) \
             SELECT 'r-' || {}, 'purchase', 'reads:history:' || {cast_text}, 'failed', 'reads', '{{\"page_id\":0}}', 'bench-reads', {now_ms}, {now_ms} FROM seq",
            seq(extra.max(1)),
            if sqlite {
                format!("CAST(i % {n} + 1 AS TEXT)")
            } else {
                format!("(i % {n} + 1)::text")
            },
        ),
        format!(
            "INSERT INTO ledger (campaign, intent_id, delta, links, reason, at) \
             SELECT campaign, id, CASE WHEN state = 'succeeded' THEN 10000 ELSE 0 END, \
             CASE WHEN state = 'succeeded' THEN 1 ELSE 0 END, 'reserve', \
             {now_ms} - (id % {month_minutes}) * 60000 FROM intents WHERE owner = 'bench-reads'"
        ),
        "INSERT INTO held_links (campaign, intent_id, link_id, page_id, url_id, text_id, price, bought_at) \
         SELECT campaign, id, id, id, 1, 1, 10000, created_at FROM intents \
         WHERE owner = 'bench-reads' AND state = 'succeeded'"
            .to_string(),
        format!(
            "INSERT INTO rounds (campaign, slot, holder, state, detail, claimed_at, finished_at) \
             SELECT name, {}, 'bench-reads', 'succeeded', '', {now_ms}, {now_ms} FROM campaigns",
            now_ms - 3_600_000
        ),
        "ANALYZE".to_string(),
    ];
    // One connection of its own: the store's pool would cut a long statement at 30 s.
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(url).await?;
    for sql in statements {
        sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
            .execute(&mut conn)
            .await
            .with_context(|| format!("seeding: {sql}"))?;
    }
    Ok(())
}
