//! Every numeric flag of every command, given to the real binary with 0, -1, a huge and a
//! non-numeric value: a clean error naming the flag (or, for a value in range, a clean run
//! or error), never a panic. The flags are found by asking clap for every argument whose
//! value is a number, so a flag added later is walked too.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use clap::CommandFactory as _;
use clap::builder::ValueParser;
use linkrunner::cli::Cli;
use linkrunner::money::Money;

use crate::support::binary;

/// Beyond every 64-bit integer: always refused.
const HUGE: &str = "99999999999999999999999";
/// The value that once overflowed a date (`--settle-grace`): refused, or taken without harm.
const BIG: &str = "99999999999999";

/// The value parsers of numbers, to recognise numeric arguments by their parser's type.
fn numeric_parsers() -> Vec<ValueParser> {
    vec![
        clap::value_parser!(u8).into(),
        clap::value_parser!(u16).into(),
        clap::value_parser!(u32).into(),
        clap::value_parser!(u64).into(),
        clap::value_parser!(i32).into(),
        clap::value_parser!(i64).into(),
        ValueParser::new(|s: &str| s.parse::<usize>()),
        ValueParser::new(|s: &str| s.parse::<f64>()),
        ValueParser::new(|s: &str| s.parse::<Money>()),
    ]
}

/// One numeric argument of one command: `(command, --long or <POSITIONAL>)`.
#[derive(Debug, Clone)]
struct Numeric {
    command: String,
    long: Option<String>,
    id: String,
}

fn numeric_args() -> Vec<Numeric> {
    let parsers = numeric_parsers();
    let mut cli = Cli::command();
    cli.build();
    let mut out = Vec::new();
    for sub in cli.get_subcommands() {
        for arg in sub.get_arguments() {
            let id = arg.get_value_parser().type_id();
            if parsers.iter().any(|p| p.type_id() == id) {
                out.push(Numeric {
                    command: sub.get_name().to_string(),
                    long: arg.get_long().map(str::to_string),
                    id: arg.get_id().to_string(),
                });
            }
        }
    }
    out
}

/// `linkrunner COMMAND --flag=VALUE` (or the value as the positional) in `dir`, with an
/// empty campaign directory, a journal there, and `busy` (a port this test holds) to listen
/// on, so a command that would serve stops at once instead.
fn run(dir: &Path, busy: &str, n: &Numeric, value: &str) -> (Output, Duration) {
    let mut cmd = binary::command();
    cmd.current_dir(dir)
        .env(
            "LINKRUNNER_DATABASE_URL",
            format!("sqlite://{}/journal.db", dir.display()),
        )
        .env("LINKRUNNER_CAMPAIGNS", dir.join("campaigns"))
        .arg(&n.command);
    match &n.long {
        Some(long) => cmd.arg(format!("--{long}={value}")),
        None => cmd.arg("--").arg(value),
    };
    if ["sandbox", "demo", "run"].contains(&n.command.as_str())
        && n.long.as_deref() != Some("listen")
    {
        cmd.args(["--listen", busy]);
    }
    let started = Instant::now();
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("linkrunner starts");
    let output = loop {
        if let Some(_status) = child.try_wait().expect("try_wait") {
            break child.wait_with_output().expect("output");
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!(
                "linkrunner {} {:?}={value}: still running after 30 s",
                n.command, n.long
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (output, started.elapsed())
}

/// No panic, no signal, and an error (if any) that says so on stderr.
fn assert_clean(n: &Numeric, value: &str, out: &Output) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let what = format!(
        "linkrunner {} {:?} {value}",
        n.command,
        n.long.as_ref().unwrap_or(&n.id)
    );
    assert!(
        !stderr.contains("panicked") && out.status.code() != Some(101),
        "{what} panicked: {stderr}"
    );
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("{what}: killed by a signal"));
    if code != 0 {
        assert!(
            stderr.contains("error"),
            "{what}: exit {code} without an error: {stderr}"
        );
    }
    code != 0
}

/// The refusal names the argument.
fn assert_refused(n: &Numeric, value: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let what = format!(
        "linkrunner {} {:?} {value}",
        n.command,
        n.long.as_ref().unwrap_or(&n.id)
    );
    assert!(assert_clean(n, value, out), "{what} was accepted: {stderr}");
    let named = match &n.long {
        Some(long) => stderr.contains(&format!("--{long}")),
        None => stderr
            .to_ascii_uppercase()
            .contains(&n.id.to_ascii_uppercase()),
    };
    assert!(
        named,
        "{what}: the error does not name the argument: {stderr}"
    );
}

#[test]
fn every_numeric_flag_of_every_command_refuses_bad_values_cleanly_and_never_panics() {
    let all = numeric_args();
    for must in [
        "settle-grace",
        "lease-ttl",
        "rate-limit",
        "request-timeout",
        "http-max-connections",
    ] {
        assert!(
            all.iter().any(|n| n.long.as_deref() == Some(must)),
            "--{must} was not found among the numeric flags: {all:?}"
        );
    }
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir(dir.path().join("campaigns")).expect("campaigns dir");
    let held = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to hold");
    let busy = held.local_addr().expect("addr").to_string();
    let busy = busy.as_str();
    let chunks: Vec<Vec<Numeric>> = all
        .chunks(all.len().div_ceil(4))
        .map(<[_]>::to_vec)
        .collect();
    std::thread::scope(|s| {
        for chunk in &chunks {
            let dir = dir.path();
            s.spawn(move || {
                for n in chunk {
                    for bad in ["-1", HUGE, "abc", "1e3x"] {
                        let (out, _) = run(dir, busy, n, bad);
                        assert_refused(n, bad, &out);
                    }
                    for maybe in ["0", BIG] {
                        let (out, _) = run(dir, busy, n, maybe);
                        assert_clean(n, maybe, &out);
                    }
                }
            });
        }
    });
    eprintln!("{} numeric arguments walked", all.len());
}

#[test]
fn settle_grace_past_a_day_is_refused_with_its_range_instead_of_a_panic() {
    let dir = tempfile::tempdir().expect("dir");
    let out = binary::command()
        .current_dir(dir.path())
        .args(["once", "--settle-grace", BIG])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--settle-grace") && stderr.contains("0..=86400"),
        "{stderr}"
    );
}

/// Issue 25, point 5: a plain `http://` base URL to another machine would carry the token in
/// clear: the real binary refuses it at start, naming the flag that allows it, before any
/// connection — 192.0.2.1 (TEST-NET-1) answers nothing, so a try would hang until its connect
/// timeout. With the flag it gets past that check (to the next missing setting).
#[test]
fn plain_http_to_another_machine_is_refused_at_start_unless_allowed() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir(dir.path().join("campaigns")).expect("campaigns");
    let db = format!("sqlite://{}/journal.db", dir.path().display());
    let campaigns = dir.path().join("campaigns");
    let once = |allow: bool| {
        let mut cmd = binary::command_on(&binary::Target {
            db_url: &db,
            campaigns: &campaigns,
            market: "http://192.0.2.1:9/api",
            token: "insecure-test-token",
            ticket: "insecure-test-ticket",
        });
        cmd.env_remove("LINKRUNNER_ALLOW_INSECURE_HTTP").arg("once");
        if allow {
            cmd.arg("--allow-insecure-http");
        }
        let started = Instant::now();
        let out = cmd.output().expect("runs");
        (out, started.elapsed())
    };

    let (out, took) = once(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("192.0.2.1") && stderr.contains("--allow-insecure-http"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(5), "refused at start: {took:?}");

    let (out, _) = once(true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("--allow-insecure-http"), "{stderr}");
}
