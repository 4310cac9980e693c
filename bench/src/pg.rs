//! A fresh PostgreSQL database per benchmark run, created from the admin URL in
//! `LINKRUNNER_TEST_DATABASE_URL`, else `DATABASE_URL`, else the local server, and dropped after.

use sqlx::Connection;

pub(crate) fn admin_url() -> String {
    std::env::var("LINKRUNNER_TEST_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A database of its own on the server behind `admin`.
#[derive(Debug)]
pub(crate) struct FreshDb {
    admin: String,
    name: String,
    url: String,
}

impl FreshDb {
    /// `Ok(None)` when no server answers at the admin URL.
    pub(crate) async fn create(tag: &str) -> anyhow::Result<Option<FreshDb>> {
        let admin = admin_url();
        let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await else {
            return Ok(None);
        };
        let stamp = chrono::Utc::now().timestamp_micros() % 1_000_000_000;
        let name = format!("lr_bench_{tag}_{}_{stamp}", std::process::id());
        let sql = format!("CREATE DATABASE {name}");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut conn)
            .await?;
        conn.close().await.ok();
        let mut url = url::Url::parse(&admin)?;
        url.set_path(&name);
        Ok(Some(FreshDb {
            admin,
            name,
            url: url.to_string(),
        }))
    }

    /// Drops the database, closing whatever still uses it.
    pub(crate) async fn drop_db(self) {
        if let Ok(mut conn) = sqlx::PgConnection::connect(&self.admin).await {
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
            let _ = sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut conn)
                .await;
        }
    }
}

/// `each` on a fresh database `tag` of its own, dropped afterwards whatever `each` returned;
/// `None` when no server answers at the admin URL (the caller says it skipped).
pub(crate) async fn on_fresh_db<T>(
    tag: &str,
    each: impl AsyncFnOnce(&str) -> anyhow::Result<T>,
) -> anyhow::Result<Option<T>> {
    let Some(db) = FreshDb::create(tag).await? else {
        return Ok(None);
    };
    let result = each(&db.url).await;
    db.drop_db().await;
    result.map(Some)
}
