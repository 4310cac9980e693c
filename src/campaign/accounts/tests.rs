//! The accounts file: the old form unchanged, the list of accounts, the directory form, and
//! every refusal with its `path:line:column`.

use std::path::Path;

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Loads `text` as a single accounts file.
fn load_text(text: &str) -> Result<AccountsFile, Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "accounts.yaml", text);
    load_accounts(&path).map_err(|ps| ps.iter().map(|p| relative(&p.to_string())).collect())
}

/// A problem without the temporary directory: `file:line:column: error: message`.
fn relative(line: &str) -> String {
    let (path, rest) = line.split_once(':').unwrap();
    let name = Path::new(path).file_name().unwrap().to_str().unwrap();
    format!("{name}:{rest}")
}

fn cap(rub: i64) -> Option<CapSetting> {
    Some(CapSetting::Cap(Money::from_rubles(rub)))
}

const CLIENT_A: &str = concat!(
    "  - id: client-a\n",
    "    base_url: https://a.example/api\n",
    "    token_file: /run/secrets/a-token\n",
    "    ticket_file: /run/secrets/a-ticket\n",
);

#[test]
fn the_old_form_is_the_default_accounts_caps_and_lists_no_account() {
    let f = load_text("# the account\nmonthly_cap: 50000\napprove_above: 5000\n").unwrap();

    assert_eq!(
        f.default,
        AccountCaps {
            monthly_cap: cap(50_000),
            approve_above: Some(Money::from_rubles(5_000)),
        }
    );
    assert!(f.accounts.is_empty());
    assert_eq!(f.ids(), BTreeSet::from(["default".to_string()]));
}

#[test]
fn a_file_lists_accounts_with_their_settings_and_caps() {
    let text = format!(
        "monthly_cap: 50000\naccounts:\n{CLIENT_A}    rate_limit: 10\n    max_in_flight: 4\n    request_timeout_seconds: 30\n    auth_scheme: raw\n    field_map: {{price: priceRent}}\n    unpaged_link_list: partial\n    monthly_cap: 20000\n    approve_above: 2000\n  - id: client-b\n    base_url: https://b.example\n    login: agency-b\n    api_key_file: /run/secrets/b-key\n    monthly_cap: none\n"
    );

    let f = load_text(&text).unwrap();

    assert_eq!(f.default.monthly_cap, cap(50_000));
    let [a, b] = &f.accounts[..] else {
        panic!("{f:?}")
    };
    assert_eq!(
        (a.id.as_str(), a.base_url.as_str()),
        ("client-a", "https://a.example/api")
    );
    assert_eq!(
        a.credentials,
        EntryCredentials::Files {
            token_file: "/run/secrets/a-token".into(),
            ticket_file: "/run/secrets/a-ticket".into(),
        }
    );
    assert_eq!(
        (a.rate_limit, a.max_in_flight, a.request_timeout_seconds),
        (Some(10), Some(4), Some(30))
    );
    assert_eq!(a.auth_scheme, Some(EntryAuthScheme::Raw));
    assert_eq!(a.field_map.as_deref(), Some("price=priceRent"));
    assert_eq!(a.unpaged_link_list, Some(EntryUnpaged::Partial));
    assert_eq!(b.unpaged_link_list, None, "not given: the flag's");
    assert_eq!(a.caps.monthly_cap, cap(20_000));
    assert_eq!(a.caps.approve_above, Some(Money::from_rubles(2_000)));
    assert!(matches!(&b.credentials, EntryCredentials::Login { login, .. } if login == "agency-b"));
    assert_eq!(b.caps.monthly_cap, Some(CapSetting::Remove));
    assert!(
        a.at("rate_limit").ends_with("accounts.yaml:7:17"),
        "{}",
        a.at("rate_limit")
    );
    assert_eq!(
        f.ids(),
        BTreeSet::from(["default".into(), "client-a".into(), "client-b".into()])
    );
}

#[test]
fn a_file_of_accounts_alone_leaves_the_default_cap_unset() {
    let f = load_text(&format!("accounts:\n{CLIENT_A}")).unwrap();

    assert_eq!(f.default, AccountCaps::default());
    assert_eq!(f.accounts.len(), 1);
}

#[test]
fn every_problem_is_refused_at_its_position() {
    let cases: &[(&str, &str)] = &[
        (
            "monthly_cap: 10\nmonthly_cup: 5\n",
            "accounts.yaml:2:1: error: unknown key `monthly_cup`",
        ),
        ("{}\n", "accounts.yaml:1:1: error: the file sets neither"),
        (
            "monthly_cap: -1\n",
            "accounts.yaml:1:14: error: `monthly_cap` must not be negative",
        ),
        (
            "monthly_cap: 10\napprove_above: 0\n",
            "accounts.yaml:2:16: error: `approve_above` must be more than 0",
        ),
        (
            "accounts:\n  - id: Client-A\n    base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n",
            "accounts.yaml:2:9: error: `id` `Client-A` must be 1 to 63",
        ),
        (
            "accounts:\n  - id: default\n    base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n",
            "accounts.yaml:2:9: error: `default` is the command line's account",
        ),
        (
            "accounts:\n  - base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n",
            "accounts.yaml:2:5: error: an account of `accounts` needs an `id`",
        ),
        (
            "accounts:\n  - id: a\n    token_file: /t\n    ticket_file: /k\n",
            "accounts.yaml:2:9: error: account `a` has no `base_url`",
        ),
        (
            "accounts:\n  - id: a\n    base_url: https://a.example\n    token_file: /t\n",
            "accounts.yaml:2:9: error: credentials: give `token_file` and `ticket_file`",
        ),
        (
            "accounts:\n  - id: a\n    base_url: https://a.example\n    login: me\n    api_key_file: /k\n    token_file: /t\n",
            "accounts.yaml:4:12: error: `login` obtains the token and the ticket itself",
        ),
        (
            "accounts:\n  - id: a\n    base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n    rate_limit: 0\n",
            "accounts.yaml:6:17: error: `rate_limit` 0 is not from 1 to 10000",
        ),
        (
            "accounts:\n  - id: a\n    base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n    rate_limt: 5\n",
            "accounts.yaml:6:5: error: unknown key `rate_limt`",
        ),
        (
            "accounts:\n  - id: a\n    base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n    unpaged_link_list: sometimes\n",
            "accounts.yaml:6:24: error:",
        ),
        (
            "accounts:\n  - id: a\n    base_url: https://a.example\n    token_file: /t\n    ticket_file: /k\n  - id: a\n    base_url: https://b.example\n    token_file: /t\n    ticket_file: /k\n",
            "accounts.yaml:6:9: error: account `a` is listed twice (first at ",
        ),
    ];
    for (text, want) in cases {
        let problems = load_text(text).expect_err(text);
        assert!(
            problems.iter().any(|p| p.starts_with(want)),
            "{text}\nwanted {want}\ngot {problems:#?}"
        );
    }
}

#[test]
fn a_file_past_the_size_limit_is_refused_unread() {
    let big = format!(
        "monthly_cap: 1\n#{}\n",
        "x".repeat(MAX_ACCOUNTS_FILE_BYTES as usize)
    );

    let problems = load_text(&big).unwrap_err();

    assert!(
        problems[0].starts_with("accounts.yaml:1:1: error: file is larger"),
        "{problems:?}"
    );
}

#[test]
fn a_directory_gives_one_account_per_file_and_the_default_caps_in_a_file_without_id() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "client-a.yaml",
        &CLIENT_A.replace("  - ", "").replace("\n    ", "\n"),
    );
    write(dir.path(), "default.yaml", "monthly_cap: 900\n");
    write(dir.path(), "notes.txt", "not an account\n");
    write(dir.path(), ".hidden.yaml", "garbage: [\n");

    let f = load_accounts(dir.path()).unwrap();

    assert_eq!(f.default.monthly_cap, cap(900));
    assert_eq!(f.accounts.len(), 1);
    assert_eq!(f.accounts[0].id, "client-a");
    assert!(
        f.accounts[0].at("base_url").ends_with("client-a.yaml:2:11"),
        "{}",
        f.accounts[0].at("base_url")
    );
}

#[test]
fn a_directory_refuses_every_broken_file_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let entry = "id: a\nbase_url: https://a.example\ntoken_file: /t\nticket_file: /k\n";
    write(dir.path(), "a.yaml", entry);
    write(dir.path(), "b.yaml", entry);
    write(
        dir.path(),
        "c.yml",
        "id: c\nbase_url: https://c.example\ntoken_file: /t\n",
    );
    write(
        dir.path(),
        "d.yaml",
        "monthly_cap: 1\nbase_url: https://d.example\n",
    );

    let problems: Vec<String> = load_accounts(dir.path())
        .unwrap_err()
        .iter()
        .map(|p| relative(&p.to_string()))
        .collect();

    let want = [
        "b.yaml:1:5: error: account `a` is listed twice",
        "c.yml:1:5: error: credentials:",
        "d.yaml:2:11: error: `base_url`: this file describes the default account",
    ];
    for w in want {
        assert!(
            problems.iter().any(|p| p.starts_with(w)),
            "wanted {w}\ngot {problems:#?}"
        );
    }
}

/// A campaign of `account` (none: the default one), valid otherwise.
fn campaign_file(name: &str, account: Option<&str>) -> String {
    let account = account
        .map(|a| format!("account: {a}\n"))
        .unwrap_or_default();
    format!(
        "name: {name}\n{account}domain: https://{name}.example\nurls:\n  - url: https://{name}.example/a\n    texts: [\"#a#a#/a#\"]\nbudget: {{monthly: 1000, max_link_price: 100, daily_links: 5, total_links: 50}}\n"
    )
}

#[test]
fn a_campaign_of_an_account_not_served_is_refused_at_its_key_and_held() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.yaml", &campaign_file("ok", None));
    write(
        dir.path(),
        "served.yaml",
        &campaign_file("served", Some("client-a")),
    );
    write(
        dir.path(),
        "stray.yaml",
        &campaign_file("stray", Some("client-x")),
    );
    let mut report = crate::campaign::load_dir(dir.path());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let known = BTreeSet::from(["default".to_string(), "client-a".to_string()]);

    reject_unknown_accounts(&mut report, &known);

    let names: Vec<&str> = report
        .campaigns
        .iter()
        .map(|c| c.campaign.name.as_str())
        .collect();
    assert_eq!(names, ["ok", "served"]);
    let problems: Vec<String> = report
        .problems
        .iter()
        .map(|p| relative(&p.to_string()))
        .collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with(
            "stray.yaml:2:10: error: `account` `client-x` is not an account of this deployment"
        ),
        "{problems:?}"
    );
    assert!(
        report.invalid.holds("stray", None),
        "held as recorded, never removed"
    );
}
