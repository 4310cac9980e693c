use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;

use clap::Parser;
use secrecy::ExposeSecret as _;

use super::*;

#[derive(Parser)]
struct Harness {
    #[command(flatten)]
    api: ApiArgs,
}

fn args(extra: &[&str]) -> ApiArgs {
    let mut argv = vec!["t", "--api-base-url", "https://m.example/api"];
    argv.extend_from_slice(extra);
    Harness::parse_from(argv).api
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
    let map: HashMap<String, OsString> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    move |k| map.get(k).cloned()
}

/// An environment that gives the token `t` and the ticket `k`, and nothing else.
fn token_and_ticket() -> impl Fn(&str) -> Option<OsString> + use<> {
    env_of(&[
        ("LINKRUNNER_API_TOKEN", "t"),
        ("LINKRUNNER_AUTH_TICKET", "k"),
    ])
}

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.display().to_string()
}

#[test]
fn secrets_from_files_have_their_trailing_newline_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let tok = write(dir.path(), "tok", "tok-1\n");
    let tkt = write(dir.path(), "tkt", "tkt-1\r\n");
    let token = secrets::load(&secrets::TOKEN, Some(Path::new(&tok)), &env_of(&[])).unwrap();
    let ticket = secrets::load(&secrets::TICKET, Some(Path::new(&tkt)), &env_of(&[])).unwrap();
    assert_eq!(
        (token.expose_secret(), ticket.expose_secret()),
        ("tok-1", "tkt-1")
    );
}

#[test]
fn secret_files_named_by_flags_make_a_client_config() {
    let dir = tempfile::tempdir().unwrap();
    let tok = write(dir.path(), "tok", "tok-1\n");
    let tkt = write(dir.path(), "tkt", "tkt-1\n");
    let a = args(&["--api-token-file", &tok, "--auth-ticket-file", &tkt]);
    let cfg = a.client_config_with(&env_of(&[])).unwrap();
    assert_eq!(cfg.base_url.as_str(), "https://m.example/api");
}

#[test]
fn environment_variables_are_used_when_no_file_is_named() {
    let env = env_of(&[("LINKRUNNER_API_TOKEN", "tok-env\n")]);
    let token = secrets::load(&secrets::TOKEN, None, &env).unwrap();
    assert_eq!(token.expose_secret(), "tok-env");
}

#[test]
fn the_systemd_credentials_directory_is_the_last_resort() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "auth-ticket", "tkt-sd\n");
    let env = env_of(&[("CREDENTIALS_DIRECTORY", dir.path().to_str().unwrap())]);
    let ticket = secrets::load(&secrets::TICKET, None, &env).unwrap();
    assert_eq!(ticket.expose_secret(), "tkt-sd");
}

#[test]
fn a_named_file_wins_over_the_environment_variable() {
    let dir = tempfile::tempdir().unwrap();
    let tok = write(dir.path(), "tok", "from-file");
    let env = env_of(&[("LINKRUNNER_API_TOKEN", "from-env")]);
    let token = secrets::load(&secrets::TOKEN, Some(Path::new(&tok)), &env).unwrap();
    assert_eq!(token.expose_secret(), "from-file");
}

#[test]
fn a_missing_secret_names_every_place_looked() {
    let err = secrets::load(&secrets::TICKET, None, &env_of(&[])).unwrap_err();
    let text = format!("{err:#}");
    for part in [
        "--auth-ticket-file",
        "LINKRUNNER_AUTH_TICKET_FILE",
        "LINKRUNNER_AUTH_TICKET",
        "auth-ticket",
    ] {
        assert!(text.contains(part), "{text}");
    }
}

#[test]
fn an_unreadable_file_is_named_and_its_content_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = secrets::load(&secrets::TOKEN, Some(&missing), &env_of(&[])).unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("--api-token-file") && text.contains("nope"),
        "{text}"
    );
}

#[test]
fn a_token_that_cannot_be_a_header_is_refused_without_echoing_it() {
    let env = env_of(&[
        ("LINKRUNNER_API_TOKEN", "secret\u{7}value"),
        ("LINKRUNNER_AUTH_TICKET", "tkt"),
    ]);
    let err = args(&[]).client_config_with(&env).unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("API token") && !text.contains("secret"),
        "{text}"
    );
}

#[test]
fn a_missing_base_url_is_a_clear_error() {
    let a = Harness::parse_from(["t"]).api;
    let env = token_and_ticket();
    let text = format!("{:#}", a.client_config_with(&env).unwrap_err());
    assert!(
        text.contains("--api-base-url") && text.contains("LINKRUNNER_API_BASE_URL"),
        "{text}"
    );
}

#[test]
fn flags_become_client_settings() {
    let env = token_and_ticket();
    let a = args(&[
        "--auth-scheme",
        "raw",
        "--field-map",
        "price=rentPrice",
        "--read-retries",
        "1",
    ]);
    let cfg = a.client_config_with(&env).unwrap();
    assert_eq!(cfg.auth_scheme, AuthScheme::Raw);
    assert_eq!(
        cfg.field_map.get(crate::market::FieldKey::Price),
        Some("rentPrice")
    );
    assert_eq!(cfg.read_retries, 1);
}

#[test]
fn a_bad_field_map_lists_the_valid_keys() {
    let env = token_and_ticket();
    let err = args(&["--field-map", "cost=x"])
        .client_config_with(&env)
        .unwrap_err();
    assert!(format!("{err:#}").contains("valid keys"), "{err:#}");
}

#[test]
fn a_zero_rate_limit_is_refused_when_the_flags_are_read() {
    let argv = [
        "t",
        "--api-base-url",
        "https://m.example/api",
        "--rate-limit",
        "0",
    ];
    let err = Harness::try_parse_from(argv).err().expect("refused");
    assert!(err.to_string().contains("--rate-limit"), "{err}");
}

#[test]
fn plain_http_to_another_host_is_refused_unless_allowed() {
    let env = token_and_ticket();
    let argv = ["t", "--api-base-url", "http://market.example/api"];
    let err = Harness::parse_from(argv)
        .api
        .client_config_with(&env)
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("--allow-insecure-http"),
        "{err:#}"
    );
    let argv = [
        "t",
        "--api-base-url",
        "http://market.example/api",
        "--allow-insecure-http",
    ];
    assert!(
        Harness::parse_from(argv)
            .api
            .client_config_with(&env)
            .is_ok()
    );
}
