//! The account file's `approve_above` (issue 33) through the real binary: `once` applies the
//! account file, a raise past the approved cap plus the threshold is recorded only up to
//! there, and `linkrunner resolve approve --account` puts the asked cap in force. Asserted on
//! the account cap the journal's reservations check.

use std::path::Path;

use linkrunner::money::Money;
use linkrunner_sandbox::SandboxHandle;

use super::support::{command_on, start_sandbox};
use crate::support::binary;
use crate::support::db::TestDb;

/// `linkrunner ARGS` on the journal, an empty campaigns directory and the sandbox: its exit
/// code and what it printed.
async fn linkrunner(journal: &str, sandbox: &SandboxHandle, args: &[&str]) -> (bool, String) {
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = command_on(journal, empty.path(), sandbox);
    cmd.args(args);
    let out = binary::tokio(cmd).output().await.expect("linkrunner runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

async fn once_with(journal: &str, sandbox: &SandboxHandle, account: &Path) -> String {
    let file = account.to_str().unwrap();
    let (ok, out) = linkrunner(journal, sandbox, &["once", "--account-file", file]).await;
    assert!(ok, "{out}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_account_cap_in_the_account_file_waits_for_resolve_approve_account() {
    // Arrange: the account file's cap, applied once without a threshold.
    crate::support::init_logs();
    let journal = TestDb::sqlite().await;
    let sandbox = start_sandbox(0).await;
    let dir = tempfile::tempdir().unwrap();
    let account = dir.path().join("account.yaml");
    std::fs::write(&account, "monthly_cap: 500\n").unwrap();
    once_with(&journal.url, &sandbox, &account).await;
    let cap = || async {
        journal
            .store
            .campaigns()
            .account_budget("default")
            .await
            .unwrap()
            .cap
    };
    assert_eq!(cap().await, Some(Money::from_rubles(500)));

    // Act: the file raises the cap far past a threshold it adds.
    std::fs::write(&account, "monthly_cap: 5000\napprove_above: 100\n").unwrap();
    let out = once_with(&journal.url, &sandbox, &account).await;

    // Assert: recorded only up to the approved 500 plus 100.
    assert_eq!(cap().await, Some(Money::from_rubles(600)), "{out}");

    // Act: an operator approves it.
    let (ok, out) = linkrunner(
        &journal.url,
        &sandbox,
        &[
            "resolve",
            "approve",
            "--account",
            "--reason",
            "spring sale",
            "--by",
            "ann",
        ],
    )
    .await;

    // Assert: the asked cap is in force at once.
    assert!(ok, "{out}");
    assert_eq!(cap().await, Some(Money::from_rubles(5000)), "{out}");
}
