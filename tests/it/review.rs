//! `plan --format markdown --base REV` through the real binary, as a pull-request job runs
//! it: 200 campaign files committed in a git repository, one `budget.monthly` raised in the
//! working tree, the plan made on a journal of its own. The comment must hold only that
//! campaign in detail, its money delta, and stay under the 60 KB a comment holds.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::binary;

const TEMPLATE: &str = include_str!("../../campaigns/acme-shoes.yaml");

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    crate::support::binary::assert_success(&out, &format!("git {args:?}"));
}

/// A git repository on `main` whose first commit holds `n` campaigns at 3,000 RUB a month,
/// `shop-NNN.yaml` in its campaign directory; the repository and that directory.
fn committed_shops(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("campaigns");
    std::fs::create_dir_all(&dir).unwrap();
    for k in 0..n {
        std::fs::write(dir.join(format!("shop-{k:03}.yaml")), campaign(k, "3000")).unwrap();
    }
    git(t.path(), &["init", "-q", "-b", "main"]);
    git(t.path(), &["add", "."]);
    git(t.path(), &["commit", "-q", "-m", &format!("{n} campaigns")]);
    (t, dir)
}

/// The template as campaign `k`: a name and a site of its own (one domain belongs to one
/// file), and `monthly` as its cap.
fn campaign(k: usize, monthly: &str) -> String {
    TEMPLATE
        .replace("name: acme-shoes ", &format!("name: shop-{k:03}  "))
        .replace("acme.example", &format!("shop-{k:03}.example"))
        .replace("monthly: 3000 ", &format!("monthly: {monthly} "))
}

fn plan(root: &Path, args: &[&str]) -> Output {
    let mut cmd = binary::command();
    cmd.env(
        "LINKRUNNER_DATABASE_URL",
        format!("sqlite://{}/journal.db", root.display()),
    )
    .env("LINKRUNNER_CAMPAIGNS", root.join("campaigns"))
    .current_dir(root)
    .arg("plan")
    .args(args);
    cmd.output().expect("the binary runs")
}

fn shown(o: &Output) -> String {
    format!(
        "status {:?}\nstderr:\n{}\nstdout:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    )
}

#[test]
fn one_budget_edit_among_200_campaigns_is_the_comment_s_only_detail() {
    let (t, dir) = committed_shops(200);
    std::fs::write(dir.join("shop-117.yaml"), campaign(117, "3500")).unwrap();
    assert!(
        campaign(117, "3500").contains("monthly: 3500 "),
        "the edit took"
    );

    let out = plan(t.path(), &["--format", "markdown", "--base", "main"]);

    assert_eq!(
        out.status.code(),
        Some(2),
        "changes pending: {}",
        shown(&out)
    );
    let md = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(md.len() < 60_000, "{} bytes", md.len());
    assert!(md.starts_with("<!-- linkrunner-plan -->"), "{md}");
    assert!(
        md.contains("1 of 200 campaign(s) change (1 edited, 0 added, 0 removed)"),
        "{md}"
    );
    assert_eq!(
        md.matches("\n### `").count(),
        1,
        "only the changed campaign in detail: {md}"
    );
    assert!(
        md.contains("### `shop-117`: edited — cap +500 RUB/month, +17 %"),
        "{md}"
    );
    assert!(
        md.contains("| `budget.monthly` | 3,000 RUB | 3,500 RUB | +500 RUB, +17 % |"),
        "{md}"
    );
    assert!(md.contains("worst case now 1,450 of 3,500"), "{md}");
    assert!(md.contains("199 other campaign(s) unchanged"), "{md}");
    // Without --base the same 200 campaigns are all shown: the reason for --base.
    let all = plan(t.path(), &["--format", "markdown"]);
    let all = String::from_utf8_lossy(&all.stdout);
    assert!(all.len() < 60_000, "{} bytes without --base", all.len());
    assert!(all.matches("`shop-").count() >= 200, "{all}");
}

#[test]
fn a_base_that_is_not_a_revision_is_an_error_that_says_so() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("campaigns");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("shop-000.yaml"), campaign(0, "3000")).unwrap();
    git(t.path(), &["init", "-q", "-b", "main"]);

    let out = plan(
        t.path(),
        &["--format", "markdown", "--base", "no-such-branch"],
    );

    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`no-such-branch` is not a commit"), "{err}");
    let text = plan(t.path(), &["--base", "main"]);
    assert!(
        String::from_utf8_lossy(&text.stderr).contains("use it with --format markdown"),
        "{}",
        shown(&text)
    );
}

/// `plan --fail-above AMOUNT --base REV` (issue 33): exit 5 when the caps rise by more than
/// AMOUNT against the base, in text and in markdown (which says so under its headline); a
/// rise within AMOUNT keeps the usual exit code (2: changes pending).
#[test]
fn fail_above_exits_5_when_the_caps_rise_past_the_amount_in_text_and_markdown() {
    let (t, dir) = committed_shops(3);
    // 3,000 → 30,000 on one, 3,000 → 3,600 on another: +27,600 RUB/month in all.
    std::fs::write(dir.join("shop-001.yaml"), campaign(1, "30000")).unwrap();
    std::fs::write(dir.join("shop-002.yaml"), campaign(2, "3600")).unwrap();

    let md = plan(
        t.path(),
        &[
            "--format",
            "markdown",
            "--base",
            "main",
            "--fail-above",
            "1000",
        ],
    );
    assert_eq!(md.status.code(), Some(5), "{}", shown(&md));
    let comment = String::from_utf8_lossy(&md.stdout);
    let head: Vec<&str> = comment.lines().take(4).collect();
    assert!(
        head.iter()
            .any(|l| l.contains("❌ Fails `--fail-above 1,000`") && l.contains("+27,600 RUB/month")),
        "said right under the headline: {comment}"
    );

    let text = plan(t.path(), &["--base", "main", "--fail-above", "1000"]);
    assert_eq!(text.status.code(), Some(5), "{}", shown(&text));
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.contains("--fail-above 1,000 RUB/month FAILS (exit 5)")
            && out.contains("6,000 → 33,600"),
        "{out}"
    );

    // Within the amount: the plan's own exit code (changes pending), in both formats.
    for format in ["text", "markdown"] {
        let within = plan(
            t.path(),
            &[
                "--format",
                format,
                "--base",
                "main",
                "--fail-above",
                "27600",
            ],
        );
        assert_eq!(
            within.status.code(),
            Some(2),
            "{format}: {}",
            shown(&within)
        );
    }
    let json = plan(
        t.path(),
        &["--format", "json", "--base", "main", "--fail-above", "1000"],
    );
    assert_eq!(json.status.code(), Some(1), "{}", shown(&json));
    let without_base = plan(t.path(), &["--fail-above", "1000"]);
    assert!(
        String::from_utf8_lossy(&without_base.stderr).contains("--base"),
        "it needs a base: {}",
        shown(&without_base)
    );
}
