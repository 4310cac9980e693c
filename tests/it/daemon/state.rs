//! `GET /api/v1/state` and `plan --state-from`: a review job without the database plans
//! exactly what `plan` on the journal plans. The files under review live in a checkout of
//! their own (edited, one added, one removed), as in a pull request; the daemon serves the
//! state a round left behind.

use std::path::Path;
use std::process::Output;

use super::support::{TICKET, TOKEN, World, command_on, run_binary, start_sandbox};
use crate::support::binary::{self, Target};
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::db::rounds;
use crate::support::http::get;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

async fn plan(w: &World, db_url: &str, campaigns: &Path, args: &[&str]) -> Output {
    let mut cmd = command_on(db_url, campaigns, &w.sandbox);
    cmd.arg("plan").args(args);
    binary::tokio(cmd).output().await.expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn shown(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `h:m:s` UTC on the real current date.
fn today_at(h: u32, m: u32, s: u32) -> chrono::DateTime<chrono::Utc> {
    let day = chrono::Utc::now().date_naive();
    day.and_hms_opt(h, m, s).expect("a valid time").and_utc()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_from_the_daemons_state_equals_plan_on_the_journal_after_a_round() {
    // Arrange: two campaigns; a round of kept-shop buys.
    // On today's date: `plan` on the journal counts "links today" by the system clock, the
    // daemon's state by its own (manual) clock; they agree in production, and here only
    // when the manual clock shows the real date.
    let world = World::new(today_at(9, 0, 30)).await;
    world.write(
        "kept.yaml",
        &campaigns::simple("kept-shop", "*/10 * * * *", 5000),
    );
    world.write(
        "gone.yaml",
        &campaigns::simple("gone-shop", "0 3 * * *", 3000),
    );
    let mut daemon = world.start().await;
    within(PATIENCE, "the 09:00 baseline is recorded", || async {
        (!rounds(&world.db_url, "kept-shop").await.is_empty()).then_some(())
    })
    .await;
    world.clock.set(today_at(9, 10, 30));
    let (_, bought) = daemon.next_round("kept-shop").await;
    assert!(bought > 0, "the round bought");
    let base = daemon.base.clone();
    // The pull request's checkout: kept-shop's cap lowered, gone-shop
    // removed, new-shop added.
    let review = tempfile::tempdir().unwrap();
    let kept = campaigns::simple("kept-shop", "*/10 * * * *", 5000)
        .replace("monthly: 5000", "monthly: 700");
    campaigns::write(review.path(), "kept.yaml", &kept);
    campaigns::write(
        review.path(),
        "new.yaml",
        &campaigns::simple("new-shop", "0 9 * * *", 2000),
    );
    let nowhere = format!(
        "sqlite://{}/no/such/dir/journal.db",
        review.path().display()
    );

    for format in ["text", "json", "markdown"] {
        // Act
        let on_journal = plan(&world, &world.db_url, review.path(), &["--format", format]).await;
        let served = plan(
            &world,
            &nowhere,
            review.path(),
            &["--format", format, "--state-from", &base],
        )
        .await;

        // Assert
        assert_eq!(on_journal.status.code(), Some(2), "{}", shown(&on_journal));
        assert_eq!(
            stdout(&served),
            stdout(&on_journal),
            "{format}: {}",
            shown(&served)
        );
        assert_eq!(
            served.status.code(),
            on_journal.status.code(),
            "{}",
            shown(&served)
        );
    }
    let text = stdout(&plan(&world, &world.db_url, review.path(), &[]).await);
    for c in ["kept-shop", "gone-shop", "new-shop"] {
        assert!(text.contains(&format!("campaign {c}\n")), "{c}: {text}");
    }
    assert!(text.contains("of 700 RUB"), "the lowered cap: {text}");
    assert!(
        !text.contains("committed 0 of 700"),
        "the round's links count: {text}"
    );

    let (status, body) = get(&format!("{base}/api/v1/state")).await;
    assert_eq!(status, 200);
    assert!(
        !body.contains(TOKEN) && !body.contains(TICKET),
        "no credentials served"
    );
    assert_eq!(
        get(&format!("{base}/api/v1/state?campaign=kept-shop"))
            .await
            .0,
        200
    );
    assert_eq!(
        get(&format!("{base}/api/v1/state?campaign=no-shop"))
            .await
            .0,
        404
    );

    let (status, body) = get(&format!("{base}/api/v1/report?month=2026-11")).await;
    assert_eq!(status, 200, "{body}");
    let report: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        report["total"]["links_bought"],
        world.sandbox.ledger().purchases.len() as i64
    );
    assert_eq!(
        get(&format!("{base}/api/v1/report?month=2026-13")).await.0,
        400
    );
    assert_eq!(get(&format!("{base}/api/v1/report")).await.0, 400);

    let down = plan(
        &world,
        &nowhere,
        review.path(),
        &["--state-from", "http://127.0.0.1:9/"],
    )
    .await;
    assert_eq!(down.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&down.stderr).contains("http://127.0.0.1:9/api/v1/state"),
        "the error names the URL: {}",
        shown(&down)
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_from_a_daemon_with_a_token_reads_with_the_token_file_and_names_401_without() {
    // Arrange: the real daemon with `--http-token-file`; the review job has the same token
    // in a file of its own, and a wrong one in another.
    crate::support::init_logs();
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir(&campaigns).unwrap();
    campaigns::write(
        &campaigns,
        "a.yaml",
        &campaigns::simple("token-shop", "0 3 * * *", 3000),
    );
    let secret = "state-reader-token-0123456789";
    let token_file = dir.path().join("http-token");
    std::fs::write(&token_file, format!("{secret}\n")).unwrap();
    let wrong_file = dir.path().join("wrong-token");
    std::fs::write(&wrong_file, "not-the-daemons-token-987654").unwrap();
    let journal = TestDb::sqlite().await;
    let sandbox = start_sandbox(0).await;
    let token_arg = token_file.to_str().unwrap();
    let mut daemon = run_binary(
        &journal.url,
        &campaigns,
        &sandbox,
        &["--http-token-file", token_arg],
    )
    .await;
    daemon.ready().await;
    let base = format!("http://{}", daemon.addr);
    let nowhere = format!("sqlite://{}/no/such/dir/journal.db", dir.path().display());
    let plan_with = |extra: Vec<String>| {
        let mut cmd = binary::command_on(&Target {
            db_url: &nowhere,
            campaigns: &campaigns,
            market: &sandbox.base_url(),
            token: TOKEN,
            ticket: TICKET,
        });
        cmd.args(["plan", "--state-from", &base]).args(extra);
        binary::tokio(cmd).output()
    };
    let file_arg = |f: &Path| vec!["--state-token-file".into(), f.display().to_string()];

    // Act
    let with = plan_with(file_arg(&token_file)).await.expect("plan runs");
    let without = plan_with(Vec::new()).await.expect("plan runs");
    let wrong = plan_with(file_arg(&wrong_file)).await.expect("plan runs");

    // Assert: with the token the state is read and planned (0 or 2, never 1); without it, or
    // with another, a clean exit 1 naming the 401 and the URL, no panic, no token shown.
    assert!(
        matches!(with.status.code(), Some(0 | 2)),
        "{}",
        shown(&with)
    );
    assert!(
        stdout(&with).contains("campaign token-shop\n"),
        "{}",
        shown(&with)
    );
    for refused in [&without, &wrong] {
        let err = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{}", shown(refused));
        assert!(err.contains("HTTP 401"), "{}", shown(refused));
        assert!(err.contains(&format!("{base}/api/v1/state")), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!err.contains(secret), "the token is never shown: {err}");
    }
    daemon.stop().await;
}
