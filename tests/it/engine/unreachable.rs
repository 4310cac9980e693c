//! Issue 25, point 8: a marketplace that cannot be reached is one state for the whole pass —
//! `marketplace_unreachable`, since when, the last error once — not one long "blocked" error
//! per campaign.

use super::binary::text;
use super::support::{TICKET, TOKEN, TestDb, World, sandbox_config};
use crate::support::binary::{self, Target};

pub async fn an_unreachable_marketplace_is_said_once_for_the_whole_pass(db: TestDb) {
    // Arrange: three campaigns, and a marketplace address where nothing listens.
    let w = World::new(db, sandbox_config()).await;
    w.write_fixture_campaigns();
    let nothing = format!("http://127.0.0.1:{}", crate::support::free_port());
    let mut cmd = binary::command_on(&Target {
        db_url: &w.db.url,
        campaigns: w.dir.path(),
        market: &nothing,
        token: TOKEN,
        ticket: TICKET,
    });
    cmd.arg("once");

    // Act
    let out = binary::tokio(cmd).output().await.expect("once runs");

    // Assert: one state line with the error; each campaign says only that.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let state: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("marketplace_unreachable since "))
        .collect();
    assert_eq!(state.len(), 1, "{stdout}");
    assert!(state[0].contains("could not connect"), "{stdout}");
    for name in ["acme-shoes", "bolt-bikes", "dune-maps"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no line for {name}: {stdout}"));
        assert!(line.contains("marketplace_unreachable"), "{line}");
        assert!(
            !line.contains("could not connect"),
            "the error is said once: {line}"
        );
    }
    assert_eq!(w.ledger().requests.len(), 0, "nothing reached the sandbox");
}
