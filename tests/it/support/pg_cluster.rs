//! A throwaway PostgreSQL cluster a test owns, for what the shared test server must never
//! suffer: being stopped, crashed, restarted or having its connections killed. Started with
//! the server binaries (`initdb`, `pg_ctl`), as `nobody` when the tests run as root (initdb
//! refuses root); stopped and removed when dropped.

use std::path::PathBuf;
use std::process::Command;

use super::free_port;

pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

impl PgCluster {
    /// initdb, then start. Blocks for a second or two.
    pub fn start() -> PgCluster {
        let dir = tempfile::tempdir().expect("cluster dir");
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "nobody"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(ok.success());
        }
        let c = PgCluster {
            dir,
            bin: pg_bin(),
            port: free_port(),
        };
        let data = c.dir.path().join("data");
        let status = c
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "--no-sync"])
            .output()
            .expect("initdb runs");
        assert!(status.status.success(), "initdb: {status:?}");
        c.pg_ctl_start();
        c
    }

    fn command(&self, tool: &str) -> Command {
        if is_root() {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "nobody", "--"]).arg(self.bin.join(tool));
            cmd
        } else {
            Command::new(self.bin.join(tool))
        }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn pg_ctl_start(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-o", &opts, "start"])
            .output()
            .expect("pg_ctl start runs");
        assert!(out.status.success(), "pg_ctl start: {out:?}");
    }

    /// Stops the server; `immediate` is a crash (no checkpoint), `fast` a clean stop.
    pub fn pg_ctl_stop(&self, mode: &str) {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", mode, "-w", "stop"])
            .output()
            .expect("pg_ctl stop runs");
        assert!(out.status.success(), "pg_ctl stop: {out:?}");
    }

    /// `pg_dump` of the daemon's database, as SQL text.
    pub fn dump(&self) -> Vec<u8> {
        let out = Command::new(self.bin.join("pg_dump"))
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-p",
                &self.port.to_string(),
            ])
            .arg("postgres")
            .output()
            .expect("pg_dump runs");
        assert!(out.status.success(), "pg_dump: {out:?}");
        out.stdout
    }

    /// Kills every other backend: the daemon's pooled connections die mid-query.
    pub async fn terminate_backends(&self) -> u64 {
        use sqlx::{Connection, Row};
        let mut conn = sqlx::PgConnection::connect(&self.url())
            .await
            .expect("admin connection");
        let row = sqlx::query(
            "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity \
             WHERE pid <> pg_backend_pid() AND datname IS NOT NULL",
        )
        .fetch_one(&mut conn)
        .await
        .expect("terminate backends");
        let _ = conn.close().await;
        row.get::<i64, _>("n") as u64
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

/// The PostgreSQL server binaries: a versioned Debian directory, else whatever `pg_ctl` on
/// PATH resolves to (symlinks followed, so `pg_dump` sits beside it).
fn pg_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    found.retain(|p| p.join("pg_ctl").exists() && p.join("pg_dump").exists());
    found.sort();
    if let Some(p) = found.pop() {
        return p;
    }
    let on_path = Command::new("sh")
        .args(["-c", "command -v pg_ctl"])
        .output()
        .expect("PostgreSQL server binaries installed (initdb, pg_ctl)");
    let pg_ctl = PathBuf::from(String::from_utf8_lossy(&on_path.stdout).trim());
    let real = std::fs::canonicalize(&pg_ctl).expect("pg_ctl on PATH");
    real.parent().expect("pg_ctl's directory").to_path_buf()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
