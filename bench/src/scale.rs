//! Target 3: many campaigns loaded and scheduled by `linkrunner run`, at each size of
//! `--scale-campaigns`, so it is plain whether time and memory grow linearly: start-up (load,
//! validate, plan) against an empty journal, in this process; then the daemon in a process of
//! its own ([`super::daemon`]), on SQLite and on PostgreSQL: its first reconciliation against
//! an unthrottled, zero-latency sandbox (time, and marketplace calls per second through the
//! journal), its resident memory (the sandbox outside it) and its idle CPU. The verdicts are
//! judged at the largest size.

use std::sync::Arc;
use std::time::{Duration, Instant};

use linkrunner::app;
use linkrunner::campaign;
use linkrunner::clock;
use linkrunner::metrics::Metrics;
use linkrunner::views::state::{StateSource, plan_all};

use super::daemon::{self, DaemonFigures, Windows};
use super::fixture::{self, Scratch};
use super::pg;
use super::procfs::mib;
use super::report::{Verdict, fmt_num, ms};
use super::settings::BenchSettings;

/// Issue 13's goals for 10,000 campaigns.
const GOAL_CALLS_PER_SECOND: f64 = 500.0;
const GOAL_RECONCILE_AT_10K_S: f64 = 100.0;

/// Everything measured at one size.
struct Size {
    campaigns: usize,
    startup: Duration,
    /// `(backend, figures)`: SQLite, then PostgreSQL when a server answers.
    runs: Vec<(&'static str, DaemonFigures)>,
}

pub(crate) async fn run(a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    let sizes = a.scale_sizes();
    println!(
        "\n== target 3: campaigns loaded and scheduled by `linkrunner run` in its own process, at {} campaigns",
        join(sizes.iter().map(|n| n.to_string()))
    );
    let mut measured = Vec::new();
    for &n in &sizes {
        let secs = |s: u64| (s > 0).then(|| Duration::from_secs(s));
        let windows = Windows {
            idle: Duration::from_secs(a.idle_seconds.max(1)),
            steady: secs(a.steady_seconds),
            looks: secs(a.looks_seconds),
            cycle: secs(a.cycle_seconds),
        };
        measured.push(measure_size(n, windows).await?);
    }
    print_growth(&measured);
    let v = match measured.last() {
        Some(largest) => verdicts(largest),
        None => Vec::new(),
    };
    v.iter().for_each(Verdict::print);
    Ok(v)
}

async fn measure_size(n: usize, windows: Windows) -> anyhow::Result<Size> {
    let dir = Scratch::new("scale")?;
    fixture::write_campaigns(dir.path(), n, fixture::FAR_SCHEDULE)?;
    println!("-- {n} campaigns");
    let (startup, load) = startup(dir.path()).await?;
    println!(
        "   start-up against an empty journal: {:.0} ms (load and validate {:.0} ms, plan {:.0} ms)",
        ms(startup),
        ms(load),
        ms(startup - load)
    );
    let mut runs = Vec::new();
    let db = Scratch::new("scale-db")?;
    let sqlite = format!("sqlite://{}/journal.db", db.path().display());
    // The steady state on SQLite only: it is the daemon's pacing that is measured, not the journal.
    let f = daemon::measure(dir.path(), n, &sqlite, windows).await?;
    print_run("sqlite", n, &f);
    print_steady(n, &f);
    print_looks(&f);
    if let Some(c) = &f.cycle {
        c.print(n);
    }
    runs.push(("sqlite", f));
    let first_only = Windows {
        idle: windows.idle,
        steady: None,
        looks: None,
        cycle: None,
    };
    let measured = async |url: &str| daemon::measure(dir.path(), n, url, first_only).await;
    match pg::on_fresh_db("scale", measured).await? {
        Some(f) => {
            print_run("postgres", n, &f);
            runs.push(("postgres", f));
        }
        None => println!(
            "   PostgreSQL: no server at {}; skipped",
            linkrunner::store::redact_url(&pg::admin_url())
        ),
    }
    Ok(Size {
        campaigns: n,
        startup,
        runs,
    })
}

fn print_run(backend: &str, n: usize, f: &DaemonFigures) {
    let n = n.max(1) as f64;
    let by_op = join(
        f.calls_by_op
            .iter()
            .map(|(op, c)| format!("{op} {}", fmt_num(*c as f64 / n))),
    );
    println!(
        "   {backend}: `run` (pid {}) ready after {:.0} ms, first call after {:.0} ms; first reconciliation {:.2} s: {} calls, {} per campaign ({by_op}), {} calls/s; journal: {}",
        f.pid,
        ms(f.ready_after),
        ms(f.first_call_after),
        f.reconcile().as_secs_f64(),
        f.calls,
        fmt_num(f.calls as f64 / n),
        fmt_num(f.calls_per_second()),
        join(f.intents.iter().map(|(state, c)| format!("{c} {state}")))
    );
    println!(
        "   {backend}: resident memory peak {:.1} MiB ({:.1} MiB before the status page, the summary and the API's first page were served three times), after reconciliation {:.1} MiB, idle {:.1} MiB; CPU {:.2} s until reconciled ({} ms per call); quiet {:.0} s later; idle CPU over {:.0} s: {:.2}% of a core",
        mib(f.peak_rss),
        mib(f.peak_rss_before_page),
        mib(f.rss_after_reconcile),
        mib(f.rss_idle),
        f.cpu_reconciling.as_secs_f64(),
        fmt_num(ms(f.cpu_reconciling) / f.calls.max(1) as f64),
        f.settled_after.as_secs_f64(),
        f.idle_window.as_secs_f64(),
        f.idle_cpu_percent
    );
    match &f.page {
        Ok((took, bytes)) => println!(
            "   {backend}: status page, its largest page (`/?per_page=200` of {n} campaigns, every campaign's row read and sorted): served in {:.0} ms, {:.1} KB",
            ms(*took),
            *bytes as f64 / 1024.0
        ),
        Err(why) => println!("   {backend}: status page, its largest page: {why}"),
    }
}

fn print_looks(f: &DaemonFigures) {
    let Some(l) = &f.looks else {
        return;
    };
    println!(
        "   converged campaigns under a fast cycle (--rate-limit 2000, --reconcile-interval 5): first (full) cycle {:.1} s, {} ms of CPU per reconciliation; then over {:.0} s: {:.0} reconciliations ({:.0} only looked), {} ms of CPU each",
        l.first_cycle.as_secs_f64(),
        fmt_num(l.first_cycle_cpu_ms),
        l.window.as_secs_f64(),
        l.reconciliations,
        l.looked,
        fmt_num(l.cpu_ms_per_reconciliation())
    );
}

fn print_steady(n: usize, f: &DaemonFigures) {
    let Some(s) = &f.steady else {
        return;
    };
    println!(
        "   steady state with run's defaults (--rate-limit 5, --reconcile-interval 300) over {:.0} s: {} calls ({} of buy rounds), {} per campaign per hour without the rounds; {:.0} reconciliations ({:.0} only looked), {} calls and {} ms of CPU each; reconciliation cycle planned {:.0} s, last full cycle {:.0} s (0: none finished yet), backlog {:.0}; resident memory {:.1} MiB; CPU {:.2}% of a core",
        s.window.as_secs_f64(),
        s.calls,
        fmt_num(s.buy_calls),
        fmt_num(s.calls_per_campaign_per_hour(n)),
        s.reconciliations,
        s.looked,
        fmt_num(s.calls_per_reconciliation()),
        fmt_num(s.cpu_ms_per_reconciliation()),
        s.cycle_planned,
        s.cycle_last,
        s.backlog,
        mib(s.rss),
        s.cpu_percent
    );
    let r = &s.rounds;
    if r.due == 0 {
        println!(
            "   steady state: no buy round due (a window under 110 s holds no whole minute for one)"
        );
        return;
    }
    println!(
        "   steady state: {} buy round(s) due in the window (1 campaign in 100, spread over its minutes): {:.0} started, {:.0} within a minute of the slot, {:.0} late; {:.0} finished, {:.1} s after the slot on average",
        r.due,
        r.started,
        r.within_a_minute,
        r.late,
        r.finished,
        r.mean_finish_delay()
    );
}

/// Each figure at every size, and how much it grew from one size to the next against how
/// much the campaigns grew: linear growth shows the same factors.
fn print_growth(sizes: &[Size]) {
    if sizes.len() < 2 {
        return;
    }
    println!(
        "-- growth: campaigns {} ({})",
        join(sizes.iter().map(|s| s.campaigns.to_string())),
        factors(&sizes.iter().map(|s| s.campaigns as f64).collect::<Vec<_>>())
    );
    growth_line(
        "start-up (s)",
        sizes.iter().map(|s| s.startup.as_secs_f64()).collect(),
    );
    let backends: Vec<&str> = sizes[0].runs.iter().map(|(b, _)| *b).collect();
    type Figure = fn(&DaemonFigures) -> f64;
    let figures: [(&str, Figure); 5] = [
        ("first reconciliation (s)", |f| f.reconcile().as_secs_f64()),
        ("calls/s", DaemonFigures::calls_per_second),
        ("CPU until reconciled (s)", |f| {
            f.cpu_reconciling.as_secs_f64()
        }),
        ("peak resident memory (MiB)", |f| mib(f.peak_rss)),
        ("idle resident memory (MiB)", |f| mib(f.rss_idle)),
    ];
    for b in backends {
        for (what, figure) in figures {
            let values: Vec<f64> = sizes
                .iter()
                .filter_map(|s| s.runs.iter().find(|(x, _)| *x == b))
                .map(|(_, f)| figure(f))
                .collect();
            if values.len() == sizes.len() {
                growth_line(&format!("{b}: {what}"), values);
            }
        }
    }
    let steady: Vec<(usize, &crate::daemon::SteadyFigures)> = sizes
        .iter()
        .filter_map(|s| Some((s.campaigns, s.runs.first()?.1.steady.as_ref()?)))
        .collect();
    if steady.len() == sizes.len() {
        type Steady = fn(usize, &crate::daemon::SteadyFigures) -> f64;
        let figures: [(&str, Steady); 6] = [
            ("steady calls per campaign per hour", |n, s| {
                s.calls_per_campaign_per_hour(n)
            }),
            ("steady calls per reconciliation", |_, s| {
                s.calls_per_reconciliation()
            }),
            ("steady reconciliation cycle planned (s)", |_, s| {
                s.cycle_planned
            }),
            ("steady resident memory (MiB)", |_, s| mib(s.rss)),
            ("steady CPU (% of a core)", |_, s| s.cpu_percent),
            ("steady CPU per reconciliation (ms)", |_, s| {
                s.cpu_ms_per_reconciliation()
            }),
        ];
        for (what, f) in figures {
            growth_line(what, steady.iter().map(|(n, s)| f(*n, s)).collect());
        }
    }
}

fn growth_line(what: &str, values: Vec<f64>) {
    println!(
        "   {what}: {} ({})",
        join(values.iter().map(|v| fmt_num(*v))),
        factors(&values)
    );
}

/// `x10, x10.5`: each value over the one before.
fn factors(values: &[f64]) -> String {
    join(values.windows(2).map(|w| {
        if w[0] > 0.0 {
            format!("x{}", fmt_num(w[1] / w[0]))
        } else {
            "x?".to_string()
        }
    }))
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn verdicts(s: &Size) -> Vec<Verdict> {
    let n = s.campaigns;
    let mut v = vec![Verdict::at_most(
        3,
        &format!("start-up (load, validate, plan) of {n} campaigns"),
        s.startup.as_secs_f64(),
        // Issue 13's goal for 10,000 campaigns (was 5 s).
        2.0,
        "s",
    )];
    // The reconciliation goal is 100 s for 10,000 campaigns; other sizes get their share.
    let reconcile_goal = GOAL_RECONCILE_AT_10K_S * n as f64 / 10_000.0;
    let share = if n == 10_000 {
        String::new()
    } else {
        " (100 s at 10000, in proportion)".to_string()
    };
    if let Some(steady) = s.runs.first().and_then(|(_, f)| f.steady.as_ref()) {
        v.push(Verdict::at_most(
            3,
            &format!("steady state at {n} campaigns, run's defaults: calls per reconciliation of a converged campaign"),
            steady.calls_per_reconciliation(),
            1.0,
            "",
        ));
    }
    if let Some(l) = s.runs.first().and_then(|(_, f)| f.looks.as_ref()) {
        v.push(Verdict::at_most(
            3,
            &format!("CPU per converged reconciliation at {n} campaigns, after the first cycle (issue 34)"),
            l.cpu_ms_per_reconciliation(),
            2.0,
            "ms",
        ));
    }
    if let Some(c) = s.runs.first().and_then(|(_, f)| f.cycle.as_ref()) {
        v.extend(c.verdicts(n));
    }
    if let Some(steady) = s.runs.first().and_then(|(_, f)| f.steady.as_ref())
        && steady.rounds.due > 0
    {
        v.push(Verdict::exactly(
            3,
            &format!(
                "steady state at {n} campaigns, run's defaults: buy rounds due not started within a minute (of {})",
                steady.rounds.due
            ),
            steady.rounds.missed(),
            0.0,
        ));
    }
    for (b, f) in &s.runs {
        v.push(Verdict::at_most(
            3,
            &format!("{b}: peak resident memory of `run` with {n} campaigns, the page, the summary and the API read three times (sandbox outside it)"),
            mib(f.peak_rss),
            100.0,
            "MiB",
        ));
        v.push(Verdict::at_most(
            3,
            &format!("{b}: idle CPU of `run` between rounds"),
            f.idle_cpu_percent,
            1.0,
            "% of a core",
        ));
        v.push(Verdict::at_least(
            3,
            &format!(
                "{b}: engine throughput, unthrottled zero-latency sandbox, first reconciliation of {n} campaigns"
            ),
            f.calls_per_second(),
            GOAL_CALLS_PER_SECOND,
            "calls/s",
        ));
        v.push(Verdict::at_most(
            3,
            &format!("{b}: one page of the status page's table at {n} campaigns"),
            // A page that was not served misses the goal.
            f.page
                .as_ref()
                .map_or(f64::INFINITY, |(_, bytes)| *bytes as f64 / 1024.0),
            // Issue 26: at most 200 KB at 10,000 campaigns.
            200.0,
            "KB",
        ));
        v.push(Verdict::at_most(
            3,
            &format!("{b}: first reconciliation of {n} campaigns{share}"),
            f.reconcile().as_secs_f64(),
            reconcile_goal,
            "s",
        ));
    }
    v
}

/// Load, validate and plan every campaign against an empty SQLite journal, as `plan` does.
async fn startup(dir: &std::path::Path) -> anyhow::Result<(Duration, Duration)> {
    let db = Scratch::new("startup")?;
    let url = format!("sqlite://{}/journal.db", db.path().display());
    let store = app::open_journal(&url, &Arc::new(Metrics::new())).await?;
    let started = Instant::now();
    let loaded = campaign::load_dir(dir);
    let load = started.elapsed();
    anyhow::ensure!(loaded.is_clean(), "generated campaigns do not validate");
    // What `plan` does: every file planned against one batch read of the journal.
    let campaigns: Vec<_> = loaded.campaigns.iter().map(|l| &l.campaign).collect();
    let source = StateSource::Journal(store.clone());
    let invalid = linkrunner::campaign::InvalidFiles::default();
    let plans = plan_all(
        &source,
        &campaigns,
        &invalid,
        |_| true,
        clock::system().now(),
    )
    .await?;
    anyhow::ensure!(plans.len() == campaigns.len(), "a plan per campaign");
    let took = started.elapsed();
    store.close().await;
    Ok((took, load))
}
