//! `linkrunner sandbox`: base URL on the first line of stdout, serves, stops on SIGTERM.

use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::support::{TICKET, TOKEN, read};

#[tokio::test]
async fn the_command_prints_its_base_url_first_serves_and_stops_on_sigterm() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut child = Command::new(env!("CARGO_BIN_EXE_linkrunner"))
        .args([
            "sandbox",
            "--listen",
            "127.0.0.1:0",
            "--prefix",
            "/api",
            "--sandbox-auth-scheme",
            "raw",
        ])
        .env("LINKRUNNER_SANDBOX_TOKEN", TOKEN)
        .env("LINKRUNNER_SANDBOX_TICKET", TICKET)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = lines.next_line().await.unwrap().unwrap();

    let res = reqwest::Client::new()
        .post(format!("{base}/rest/Project/addSimpleProjectAndContent"))
        .header("Authorization", TOKEN)
        .header("Cookie", format!("AUTH_TICKET={TICKET}"))
        .json(&json!({"domain": "https://acme.example"}))
        .send()
        .await
        .unwrap();
    let (status, _) = read(res).await;
    let pid = child.id().unwrap().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .unwrap();
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();

    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/api"),
        "{base}"
    );
    assert_eq!(status, StatusCode::OK);
    assert!(killed.success() && exit.success(), "{exit:?}");
}

#[tokio::test]
async fn the_command_refuses_to_start_without_a_token() {
    let out = Command::new(env!("CARGO_BIN_EXE_linkrunner"))
        .args(["sandbox", "--listen", "127.0.0.1:0", "--ticket", "k"])
        .env_remove("LINKRUNNER_SANDBOX_TOKEN")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--token-file"), "{stderr}");
}
