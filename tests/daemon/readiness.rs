//! `/readyz` follows the journal database: 503 while PostgreSQL is down, 200 once it is back,
//! and the daemon stays up (`/healthz` 200) throughout.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{Daemon, World, at, eventually, free_port, get};

/// A PostgreSQL cluster of this test's own, so it can be stopped and started.
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

fn pg_bin() -> PathBuf {
    let on_path = Command::new("sh")
        .args(["-c", "dirname \"$(command -v initdb)\""])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|d| !d.is_empty() && Path::new(d).join("pg_ctl").exists());
    let found = on_path.map(PathBuf::from).or_else(|| {
        std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").exists())
    });
    found.expect("initdb and pg_ctl are installed (PostgreSQL server binaries)")
}

/// Runs a PostgreSQL tool, as `nobody` when we are root (initdb refuses root).
fn pg(bin: &Path, tool: &str, args: &[&str]) {
    let exe = bin.join(tool);
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let out = cmd.args(args).output().expect("PostgreSQL tool runs");
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

impl Cluster {
    fn init() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .arg("nobody")
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let c = Cluster {
            bin: pg_bin(),
            port: free_port(),
            dir,
        };
        let data = c.data();
        pg(
            &c.bin,
            "initdb",
            &["-D", &data, "-U", "postgres", "-A", "trust", "--no-sync"],
        );
        c
    }

    fn data(&self) -> String {
        format!("{}/data", self.dir.path().display())
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn start(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = format!("{}/server.log", self.dir.path().display());
        pg(
            &self.bin,
            "pg_ctl",
            &["-D", &self.data(), "-l", &log, "-w", "-o", &opts, "start"],
        );
    }

    fn stop(&self) {
        pg(
            &self.bin,
            "pg_ctl",
            &["-D", &self.data(), "-m", "fast", "-w", "stop"],
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(if is_root() { "runuser" } else { "true" })
            .args(if is_root() {
                vec!["-u", "nobody", "--"]
            } else {
                vec![]
            })
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_is_503_while_postgres_is_down_and_200_when_it_returns() {
    // Arrange: a daemon whose journal is on a cluster we can stop.
    let world = World::new(at(9, 0, 30)).await;
    let cluster = tokio::task::spawn_blocking(|| {
        let c = Cluster::init();
        c.start();
        c
    })
    .await
    .unwrap();
    let daemon = Daemon::start(&world, &cluster.url()).await;
    let (readyz, healthz) = (
        format!("{}/readyz", daemon.base),
        format!("{}/healthz", daemon.base),
    );
    eventually("ready at first", Duration::from_secs(10), || async {
        (get(&readyz).await.0 == 200).then_some(())
    })
    .await;

    // Act: PostgreSQL stops.
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.stop();
        cluster
    })
    .await
    .unwrap();

    // Assert: not ready within 5 s, naming the database; alive all along.
    let body = eventually(
        "503 within 5 s of the stop",
        Duration::from_secs(5),
        || async {
            assert_eq!(
                get(&healthz).await.0,
                200,
                "/healthz failed while PostgreSQL was down"
            );
            let (status, body) = get(&readyz).await;
            (status == 503).then_some(body)
        },
    )
    .await;
    let report: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["database"]["ready"], false, "{report}");
    assert_eq!(report["ready"], false, "{report}");

    // Act: PostgreSQL returns.
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.start();
        cluster
    })
    .await
    .unwrap();

    // Assert: ready again within 5 s, the same daemon still running.
    eventually(
        "200 within 5 s of the restart",
        Duration::from_secs(5),
        || async {
            assert_eq!(get(&healthz).await.0, 200);
            (get(&readyz).await.0 == 200).then_some(())
        },
    )
    .await;
    assert!(daemon.is_running());
    daemon.stop().await;
    drop(cluster);
}
