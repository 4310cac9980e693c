//! `linkrunner-bench`: how close linkrunner runs to the marketplace's rate limit, and what it
//! costs in memory, CPU, start-up and journal time. Every figure is printed as
//! `target N: <what> = <figure> (goal <goal>) OK|MISSED by X`; nothing is asserted.
//!
//! | file | target |
//! |---|---|
//! | [`flow`] | 1 at the limit, 2 no wasted calls: the full flow on SQLite and PostgreSQL |
//! | [`scale`] | 3: many campaigns loaded and scheduled by `run` at each size — start-up, first reconciliation and throughput, memory, idle CPU |
//! | [`daemon`] | 3: the measured `linkrunner run`, a process of its own beside the in-process sandbox |
//! | [`cycle`] | 3: the reconciliation cycle against the planned one with buy rounds due (issue 34, item 6) |
//! | [`journal`] | 4: intent and outcome latencies; restart after SIGKILL over a large journal |
//! | [`validation`] | 5: `validate` over many files |
//! | [`reads`] | 6: the status page, the summary and the API's first page over a large journal |
//! | [`accounts`], [`fleet`] | 7: several accounts worked by 1, 2, 4 processes on one PostgreSQL journal — throughput against the limits' sum, 429s, the split, CPU per call |
//! | [`fixture`], [`pg`], [`procfs`], [`report`] | generated campaigns, fresh databases, `/proc` figures, printing |
//! | [`settings`] | [`BenchSettings`]: sizes, latency, limits, which targets |

pub mod accounts;
pub mod args;
pub mod cycle;
pub mod daemon;
pub mod fixture;
pub mod fleet;
pub mod flow;
pub mod journal;
pub mod pg;
pub mod procfs;
pub mod reads;
pub mod report;
pub mod scale;
pub mod settings;
pub mod validation;

use std::process::{Command, ExitCode};

use anyhow::Context as _;

use fixture::Scratch;
use report::{Verdict, fmt_num, ms};
pub use settings::BenchSettings;

/// Runs the chosen targets in an order that keeps their memory figures apart: the scale run
/// first, in a fresh process, then the rest.
pub(crate) async fn run(a: &BenchSettings) -> anyhow::Result<ExitCode> {
    println!(
        "linkrunner bench: {} campaigns at {} ms per call and {} requests/s; {} campaigns for scale; {} journal rows",
        a.flow_campaigns,
        a.latency_ms,
        a.rate_limit,
        a.scale_sizes()
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        a.journal_rows
    );
    let mut verdicts = Vec::new();
    if a.wants(5) {
        verdicts.extend(run_validation(a)?);
    }
    if a.wants(3) {
        verdicts.extend(scale::run(a).await?);
    }
    if a.wants(1) || a.wants(2) {
        verdicts.extend(run_flows(a).await?);
    }
    if a.wants(4) {
        verdicts.extend(journal::run(a).await?);
    }
    if a.wants(6) {
        verdicts.extend(reads::run(a).await?);
    }
    let mut failed = Vec::new();
    if a.wants(7) && a.accounts > 0 {
        let outcome = accounts::run(&a.accounts_setup()).await?;
        verdicts.extend(outcome.verdicts);
        failed = outcome.failed;
    }
    println!("\nsummary");
    for v in &verdicts {
        v.print();
    }
    let missed = verdicts.iter().filter(|v| !v.met()).count();
    println!("{} target figure(s), {missed} missed", verdicts.len());
    if !failed.is_empty() {
        println!("\n--accounts-strict: {} check(s) failed", failed.len());
        failed.iter().for_each(|f| println!("FAILED: {f}"));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn run_validation(a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    let dir = Scratch::new("validate")?;
    fixture::write_campaigns(dir.path(), a.validate_files, "0 9 * * *")?;
    let (took, valid, problems) = validation::time_load_dir(dir.path());
    println!(
        "\n== target 5: validate {} files: {:.0} ms, {valid} valid, {problems} problem(s)",
        a.validate_files,
        ms(took)
    );
    let v = Verdict::at_most(
        5,
        &format!("validate over {} campaign files", a.validate_files),
        took.as_secs_f64(),
        1.0,
        "s",
    );
    v.print();
    Ok(vec![v])
}

async fn run_flows(a: &BenchSettings) -> anyhow::Result<Vec<Verdict>> {
    let setup = a.flow_setup();
    let dir = Scratch::new("flow")?;
    fixture::write_campaigns(dir.path(), a.flow_campaigns, "0 9 * * *")?;
    let market = match &setup.market {
        Some(m) => format!(
            "the marketplace at {} (started outside the bench)",
            m.base_url
        ),
        None => format!(
            "the sandbox: {} ms per call (+ up to {} ms jitter), ready after {} pending poll(s), 429 past {} requests/s",
            setup.latency.as_millis(),
            setup.latency_jitter.as_millis(),
            setup.pending_polls,
            setup.sandbox_rate_limit
        ),
    };
    println!(
        "\n== targets 1 and 2: full flow, {} campaigns against {market}; --rate-limit {}, {}",
        setup.campaigns,
        setup.rate_limit,
        setup.concurrency_label()
    );
    let mut verdicts = Vec::new();
    let sqlite = format!("sqlite://{}/journal.db", dir.path().display());
    let figures = flow::run(&setup, dir.path(), &sqlite).await?;
    verdicts.extend(flow_verdicts(&setup, &figures));
    match pg::on_fresh_db("flow", async |url| flow::run(&setup, dir.path(), url).await).await? {
        Some(figures) => verdicts.extend(flow_verdicts(&setup, &figures)),
        None => println!(
            "PostgreSQL: no server at {}; skipped",
            linkrunner::store::redact_url(&pg::admin_url())
        ),
    }
    Ok(verdicts)
}

fn flow_verdicts(s: &flow::FlowSetup, f: &flow::FlowFigures) -> Vec<Verdict> {
    let n = s.campaigns.max(1) as u64;
    let lower = s.lower_bound(f.calls);
    let ratio = f.wall.as_secs_f64() / lower.as_secs_f64();
    println!("-- {}:", f.backend);
    println!(
        "   wall time {:.2} s; calls {}; {:.1} requests/s achieved; lower bound {:.2} s (calls / limit {:.2} s, critical path {:.2} s); ratio {:.3}",
        f.wall.as_secs_f64(),
        f.calls,
        f.achieved_rate(),
        lower.as_secs_f64(),
        f.calls as f64 / f64::from(s.rate_limit),
        s.critical_path().as_secs_f64(),
        ratio
    );
    let by_op: Vec<String> = f
        .calls_by_op
        .iter()
        .map(|(op, c)| format!("{op} {}", fmt_num(*c as f64 / n as f64)))
        .collect();
    println!(
        "   calls per campaign {} (minimum {}): {}",
        fmt_num(f.calls as f64 / n as f64),
        s.min_calls_per_campaign(),
        by_op.join(", ")
    );
    println!(
        "   polls per search {} (first wait {} ms, then doubled, at most the job's age); 429s {}; bought {} links, {} duplicate(s); {}/{} campaigns converged with {} links",
        fmt_num(f.polls as f64 / f.searches.max(1) as f64),
        s.poll_initial.as_millis(),
        f.rate_limited,
        f.bought,
        f.duplicates,
        f.converged,
        s.campaigns,
        fixture::LINKS_PER_ROUND
    );
    let rates: Vec<String> = f.rates(5).iter().map(u64::to_string).collect();
    println!(
        "   requests/s per 5 s of the run (limit {}): {}",
        s.rate_limit,
        rates.join(" ")
    );
    println!("   peak resident memory {:.1} MiB", procfs::mib(f.peak_rss));
    for (step, count, p50, p99) in &f.journal {
        println!(
            "   journal {step}: {count} writes, p50 <= {} ms, p99 <= {} ms (histogram buckets)",
            fmt_num(p50 * 1000.0),
            fmt_num(p99 * 1000.0)
        );
    }
    let b = &f.backend;
    let v = vec![
        Verdict::at_most(1, &format!("{b}: wall time / lower bound"), ratio, 1.05, ""),
        Verdict::exactly(
            1,
            &format!("{b}: 429s received"),
            f.rate_limited as f64,
            0.0,
        ),
        Verdict::exactly(
            2,
            &format!("{b}: calls per campaign"),
            f.calls as f64 / n as f64,
            s.min_calls_per_campaign() as f64,
        ),
        Verdict::exactly(
            2,
            &format!("{b}: polls per search"),
            f.polls as f64 / f.searches.max(1) as f64,
            s.polls_per_search() as f64,
        ),
    ];
    v.iter().for_each(Verdict::print);
    v
}

/// linkrunner as a process of its own: this binary with `linkrunner` first (see `main.rs`),
/// with an empty environment but `PATH`, so nothing of the caller's settings leaks in.
pub(crate) fn linkrunner() -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("locating the linkrunner-bench binary")?;
    let mut cmd = Command::new(exe);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("linkrunner");
    Ok(cmd)
}
