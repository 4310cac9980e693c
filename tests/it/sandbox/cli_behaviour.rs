//! `linkrunner sandbox` flags for the partial-truth behaviours reach the running sandbox.

use serde_json::json;

use super::support::{TICKET, TOKEN, read, serve_command};
use crate::support::binary;

#[tokio::test]
async fn behaviour_flags_are_in_force_when_the_command_serves() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (mut child, base) = serve_command(&[
        "--list-page-size",
        "3",
        "--list-paging",
        "offset_has_more",
        "--list-lag-ms",
        "250",
        "--autobuy-every-ms",
        "60000",
        "--autobuy-buys-held",
        "--autobuy-ignores-limits",
        "--foreign-project",
        "4711",
        "--foreign-project",
        "4712",
        "--executed-error-rate",
        "0.5",
    ])
    .await;
    let http = reqwest::Client::new();

    let get = |path: &'static str| http.get(format!("{base}/__sandbox/{path}")).send();
    let (_, behaviour) = read(get("behaviour").await.unwrap()).await;
    let (_, faults) = read(get("faults").await.unwrap()).await;
    child.kill().await.unwrap();

    assert_eq!(
        behaviour,
        json!({"list_page_size": 3, "list_paging": "offset_has_more", "list_lag_ms": 250,
               "autobuy_every_ms": 60000, "autobuy_buys_held": true,
               "autobuy_ignores_limits": true, "foreign_projects": [4711, 4712]})
    );
    assert_eq!(faults["executed_error_rate"], json!(0.5));
}

#[tokio::test]
async fn an_unknown_paging_style_is_refused_with_the_choices() {
    let out = binary::tokio(binary::command())
        .args([
            "sandbox",
            "--listen",
            "127.0.0.1:0",
            "--list-paging",
            "cursor",
        ])
        .env("LINKRUNNER_SANDBOX_TOKEN", TOKEN)
        .env("LINKRUNNER_SANDBOX_TICKET", TICKET)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("page_total"), "{stderr}");
}
