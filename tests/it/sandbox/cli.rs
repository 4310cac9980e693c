//! `linkrunner sandbox`: base URL on the first line of stdout, serves, stops on SIGTERM.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use tokio::process::Command;

use super::support::{TICKET, TOKEN, read, serve_command};
use crate::support::binary;

#[tokio::test]
async fn the_command_prints_its_base_url_first_serves_and_stops_on_sigterm() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (mut child, base) =
        serve_command(&["--prefix", "/api", "--sandbox-auth-scheme", "raw"]).await;

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
    let out = binary::tokio(binary::command())
        .args(["sandbox", "--listen", "127.0.0.1:0", "--ticket", "k"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--token-file"), "{stderr}");
}
