//! Issue 25, point 8: the commands that only read (`plan`, `status`, `history`) never migrate
//! the journal: an older schema is reported with the command that upgrades it and stays as it
//! was; a journal that does not exist yet is not created by `plan`.

use super::binary::{run, text};
use super::fixtures::ACME;
use super::support::{TestDb, World, sandbox_config};

async fn applied(w: &World) -> i64 {
    let row: (i64,) = sqlx::query_as("SELECT count(*) FROM _sqlx_migrations")
        .fetch_one(&sqlx::AnyPool::connect(&w.db.url).await.expect("pool"))
        .await
        .expect("count");
    row.0
}

pub async fn read_only_commands_never_migrate_and_name_the_command_that_does(db: TestDb) {
    // Arrange: a journal whose newest migration is recorded as not applied (an older schema).
    sqlx::any::install_default_drivers();
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    let pool = sqlx::AnyPool::connect(&w.db.url).await.expect("pool");
    sqlx::query(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)",
    )
    .execute(&pool)
    .await
    .expect("forget the newest migration");
    pool.close().await;
    let before = applied(&w).await;

    for args in [&["plan"][..], &["status"], &["history"]] {
        // Act
        let out = run(&w, args).await;

        // Assert: refused with the way forward; the schema untouched.
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("schema is older") && err.contains("linkrunner migrate"),
            "{args:?}: {err}"
        );
        assert_eq!(applied(&w).await, before, "{args:?} migrated the journal");
    }
}

pub async fn plan_on_a_journal_that_does_not_exist_creates_nothing(db: TestDb) {
    let mut w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("never.db");
    w.db.url = format!("sqlite://{}", file.display());

    let out = run(&w, &["plan"]).await;

    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!file.exists(), "plan created the journal");
}
