//! `linkrunner probe`'s findings: what the marketplace at the base URL accepts and how it
//! answers, found with reads only (and, on an existing project, one donor search — which
//! spends nothing). It never buys and creates nothing. Each finding names the setting to use
//! (`--auth-scheme`, `--field-map`) so that `once` then reads the marketplace right.
//!
//! - Reachability and TLS: the first read connects (a TLS failure is a connect failure).
//! - `Authorization`: the configured form on a read; only if that read is refused (401/403)
//!   is the other form tried, again on a read.
//! - The cookie travels on every request: a read that succeeds accepted it.
//! - With a project: one search, polled until ready (each pending form seen is kept); where
//!   the donors were, which field held their price — or, when none could be read, which
//!   field does (found in the answer and proved by decoding the answer with it); the
//!   technical values; then the link list, its shape and whether it pages.
//!
//! What the report holds is redacted: our secrets never, `metaData` by its keys only.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::market::client::MarketClient;
use crate::market::error::MarketError;
use crate::market::field_map::{FieldKey, FieldMap};
use crate::market::seen::{PendingForm, PollSeen};
use crate::market::settings::ClientConfig;
use crate::market::{AuthScheme, Market, inspect};
use linkrunner_domain::market::{ListCompleteness, SearchJob, SearchParams, SearchPoll};

/// What to probe beyond the credentials.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// An existing project: run one search and read its link list.
    pub project: Option<i64>,
    /// The promoted URL to search donors for.
    pub url_id: Option<i64>,
    pub poll_every: Duration,
    /// How long the search may stay pending.
    pub wait: Duration,
}

/// Everything the probe saw, and the settings it suggests.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    base_url: String,
    transport: String,
    reachable: bool,
    auth: AuthFinding,
    pub search: Option<SearchFinding>,
    links: Option<LinksFinding>,
    pub settings: Suggested,
    /// What is wrong and must be fixed before `run` (empty: nothing).
    pub problems: Vec<String>,
    notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AuthFinding {
    configured: &'static str,
    /// The form the marketplace accepted on a read, if any.
    accepted: Option<&'static str>,
    /// Each read tried: the form and how it was answered.
    tried: Vec<(String, String)>,
    cookie: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchFinding {
    url_id: i64,
    /// The keys of `metaData` (values withheld: one is an opaque token).
    meta_data_keys: Vec<String>,
    polls: u32,
    seconds: f64,
    /// Each form of "not ready yet" the marketplace used, once.
    pending_forms: Vec<PendingForm>,
    pub ready: bool,
    donors_at: Option<String>,
    price_fields: Vec<String>,
    donors_offered: usize,
    skipped: std::collections::BTreeMap<String, usize>,
    /// The field that holds the price when the configured names read none.
    price_field_found: Option<String>,
    /// The first donor's `searchId`, `forceSeoWait`, `mosSites` (cut to 40 characters).
    technical_values: Option<Value>,
    /// Distinct combinations of technical values: one purchase call each.
    technical_groups: usize,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct LinksFinding {
    links: usize,
    /// Where the link records were in the first answer, e.g. `links[]`, `data.items[]`.
    records_at: Option<String>,
    completeness: ListCompleteness,
}

/// The settings to run with.
#[derive(Debug, Clone, Serialize)]
pub struct Suggested {
    pub auth_scheme: &'static str,
    /// `--field-map` as it should be (empty: none needed).
    pub field_map: String,
    pub flags: Vec<String>,
}

/// A read that authenticates: the link list of `project`, else a search result for a job
/// that does not exist (any answer but 401/403 passed the credentials).
async fn auth_read(client: &MarketClient, project: Option<i64>) -> Result<(), MarketError> {
    match project {
        Some(p) => client.list_links(p).await.map(|_| ()),
        None => {
            let job = SearchJob {
                job_handle_id: "linkrunner-probe".into(),
                meta_data: "{}".into(),
            };
            match client.search_result_seen(&job).await {
                Ok(_) | Err(MarketError::Rejected { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        }
    }
}

fn scheme_name(s: AuthScheme) -> &'static str {
    match s {
        AuthScheme::Bearer => "bearer",
        AuthScheme::Raw => "raw",
    }
}

fn other(s: AuthScheme) -> AuthScheme {
    match s {
        AuthScheme::Bearer => AuthScheme::Raw,
        AuthScheme::Raw => AuthScheme::Bearer,
    }
}

/// Probes the marketplace of `config`. Never fails: what went wrong is in `problems`. The
/// command uses [`probe_redacting`]; this is the tests' way in.
#[cfg(feature = "test-hooks")]
pub async fn probe(
    config: ClientConfig,
    opts: &ProbeOptions,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
) -> Result<ProbeReport, crate::market::BuildError> {
    Ok(probe_redacting(config, opts, metrics).await?.0)
}

/// [`probe`], with the redactor of the client that ran it: it knows every secret the probe
/// used, including a token the built-in login fetched on the way, for the report's output.
pub(crate) async fn probe_redacting(
    config: ClientConfig,
    opts: &ProbeOptions,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
) -> Result<(ProbeReport, crate::market::redact::Redactor), crate::market::BuildError> {
    let https = config.base_url.as_str().starts_with("https:");
    let configured = config.auth_scheme;
    let mut report = ProbeReport {
        base_url: config.base_url.as_str().to_string(),
        transport: if https {
            "https"
        } else {
            "http (no TLS: plain text)"
        }
        .into(),
        reachable: false,
        auth: AuthFinding {
            configured: scheme_name(configured),
            accepted: None,
            tried: Vec::new(),
            cookie: "not checked".into(),
        },
        search: None,
        links: None,
        settings: Suggested {
            auth_scheme: scheme_name(configured),
            field_map: config.field_map.to_string(),
            flags: Vec::new(),
        },
        problems: Vec::new(),
        notes: Vec::new(),
    };
    let mut client = crate::app::market_client(config.clone(), &metrics)?;
    let Some(scheme) = check_auth(&mut client, &config, opts, &mut report, metrics).await? else {
        report.settings.flags = flags(&report.settings);
        return Ok((report, client.redactor().clone()));
    };
    report.settings.auth_scheme = scheme_name(scheme);
    if let Some(project) = opts.project {
        probe_project(&client, &config.field_map, project, opts, &mut report).await;
    } else {
        report.notes.push(
            "no --project: the donor search, price field and link list were not checked".into(),
        );
    }
    report.settings.flags = flags(&report.settings);
    Ok((report, client.redactor().clone()))
}

/// The auth checks; `Some(scheme)` when a read succeeded with it (`client` then uses it).
async fn check_auth(
    client: &mut MarketClient,
    config: &ClientConfig,
    opts: &ProbeOptions,
    report: &mut ProbeReport,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
) -> Result<Option<AuthScheme>, crate::market::BuildError> {
    let first = auth_read(client, opts.project).await;
    let configured = config.auth_scheme;
    let https = config.base_url.as_str().starts_with("https:");
    report
        .auth
        .tried
        .push((scheme_name(configured).into(), answer_of(&first)));
    match first {
        Ok(()) => {
            report.reachable = true;
            report.auth.accepted = Some(scheme_name(configured));
            report.auth.cookie = "accepted (sent on every request)".into();
            if https {
                report.transport = "https: TLS handshake and certificate accepted".into();
            }
            return Ok(Some(configured));
        }
        Err(MarketError::Unauthorized { .. }) => report.reachable = true,
        Err(e) => {
            report.reachable = !matches!(e, MarketError::Connect { .. });
            report.problems.push(format!(
                "the base URL did not answer a read: {e}{}",
                if https {
                    " (a TLS or certificate failure shows here too)"
                } else {
                    ""
                }
            ));
            return Ok(None);
        }
    }
    let mut alt = config.clone();
    alt.auth_scheme = other(configured);
    let second_client = crate::app::market_client(alt, &metrics)?;
    let second = auth_read(&second_client, opts.project).await;
    report
        .auth
        .tried
        .push((scheme_name(other(configured)).into(), answer_of(&second)));
    if second.is_ok() {
        report.auth.accepted = Some(scheme_name(other(configured)));
        report.auth.cookie = "accepted (sent on every request)".into();
        *client = second_client;
        return Ok(Some(other(configured)));
    }
    report.auth.cookie = "unknown: no read succeeded".into();
    report.problems.push(
        "both Authorization forms were refused: check the API token and the AUTH_TICKET cookie \
         (on the sandbox 401 means the token or its form, 403 the cookie; the marketplace does not document which)"
            .into(),
    );
    Ok(None)
}

fn answer_of(r: &Result<(), MarketError>) -> String {
    match r {
        Ok(()) => "accepted".into(),
        Err(MarketError::Unauthorized { status, .. }) => format!("refused (HTTP {status})"),
        Err(e) => format!("failed: {}", e.metric_label()),
    }
}

fn flags(s: &Suggested) -> Vec<String> {
    let mut f = vec![format!("--auth-scheme {}", s.auth_scheme)];
    if !s.field_map.is_empty() {
        f.push(format!("--field-map {}", s.field_map));
    }
    f
}

async fn probe_project(
    client: &MarketClient,
    map: &FieldMap,
    project: i64,
    opts: &ProbeOptions,
    report: &mut ProbeReport,
) {
    match opts.url_id {
        Some(url_id) => match search(client, map, url_id, opts).await {
            Ok(found) => {
                judge_search(&found, map, report);
                report.search = Some(found);
            }
            Err(e) => report
                .problems
                .push(format!("the donor search failed: {e}")),
        },
        None => report
            .notes
            .push("no --url-id: the donor search was not checked".into()),
    }
    match links(client, project).await {
        Ok(found) => {
            if found.completeness == ListCompleteness::NoPagingFields {
                report.notes.push(
                    "the link list carries no paging fields: if the marketplace may show only a first page, run with --unpaged-link-list partial"
                        .into(),
                );
            }
            report.links = Some(found);
        }
        Err(e) => report
            .problems
            .push(format!("the link list could not be read: {e}")),
    }
}

/// Turns what the search saw into problems and the suggested field map.
fn judge_search(found: &SearchFinding, map: &FieldMap, report: &mut ProbeReport) {
    if !found.ready {
        report.problems.push(format!(
            "the search was not ready after {} polls in {:.0} s: give it a longer --search-deadline",
            found.polls, found.seconds
        ));
        return;
    }
    match &found.price_field_found {
        Some(path) => {
            let fixed = map.clone().with(FieldKey::Price, path.clone());
            report.settings.field_map = fixed.to_string();
        }
        None if found.skipped.get("price").copied().unwrap_or(0) > 0
            && found.donors_offered == 0 =>
        {
            report.problems.push(
                "no donor had a readable price and no field of theirs reads as one: look at the report's donors and name the field with --field-map price=…"
                    .into(),
            );
        }
        None => {}
    }
    if found.skipped.keys().any(|k| k != "price") {
        report.problems.push(format!(
            "donors skipped for a missing technical value ({:?}): map it with --field-map search_id=…, force_seo_wait=… or mos_sites=…",
            found.skipped
        ));
    }
}

async fn search(
    client: &MarketClient,
    map: &FieldMap,
    url_id: i64,
    opts: &ProbeOptions,
) -> Result<SearchFinding, MarketError> {
    let job = client
        .start_search(url_id, &SearchParams::default())
        .await?;
    let started = Instant::now();
    let mut found = SearchFinding {
        url_id,
        meta_data_keys: meta_keys(&job.meta_data),
        polls: 0,
        seconds: 0.0,
        pending_forms: Vec::new(),
        ready: false,
        donors_at: None,
        price_fields: Vec::new(),
        donors_offered: 0,
        skipped: Default::default(),
        price_field_found: None,
        technical_values: None,
        technical_groups: 0,
    };
    loop {
        let (poll, seen) = client.search_result_seen(&job).await?;
        found.polls += 1;
        found.seconds = started.elapsed().as_secs_f64();
        if let Some(form) = seen.pending.clone()
            && !found.pending_forms.contains(&form)
        {
            found.pending_forms.push(form);
        }
        if let SearchPoll::Ready { donors, .. } = poll {
            ready(client, map, &job, &mut found, seen, &donors).await?;
            return Ok(found);
        }
        if started.elapsed() >= opts.wait {
            return Ok(found);
        }
        tokio::time::sleep(opts.poll_every).await;
    }
}

async fn ready(
    client: &MarketClient,
    map: &FieldMap,
    job: &SearchJob,
    found: &mut SearchFinding,
    seen: PollSeen,
    donors: &[crate::market::Donor],
) -> Result<(), MarketError> {
    found.ready = true;
    found.donors_at = seen.donors_at;
    found.price_fields = seen.price_fields;
    found.skipped = seen.skipped;
    found.donors_offered = donors.len();
    found.technical_groups = donors
        .iter()
        .map(|d| d.tech.group_key())
        .collect::<BTreeSet<_>>()
        .len();
    found.technical_values = donors.first().map(inspect::technical_values);
    if found.skipped.get("price").copied().unwrap_or(0) > 0 {
        let raw = inspect::search_result(client, job).await?;
        found.price_field_found = inspect::price_field(&raw, map);
    }
    Ok(())
}

fn meta_keys(meta: &str) -> Vec<String> {
    match serde_json::from_str::<Value>(meta) {
        Ok(Value::Object(m)) => m.keys().cloned().collect(),
        _ => vec!["(not a JSON object)".into()],
    }
}

async fn links(client: &MarketClient, project: i64) -> Result<LinksFinding, MarketError> {
    let list = client.list_links(project).await?;
    let raw = inspect::link_list(client, project).await?;
    let records_at = inspect::link_records_at(&raw);
    Ok(LinksFinding {
        links: list.links.len(),
        records_at,
        completeness: list.completeness,
    })
}

/// The report as text for people.
pub(crate) fn render(r: &ProbeReport) -> String {
    let mut o = Vec::new();
    o.push(format!("base URL: {} ({})", r.base_url, r.transport));
    o.push(format!(
        "reachable: {}",
        if r.reachable { "yes" } else { "no" }
    ));
    let tried: Vec<String> = r
        .auth
        .tried
        .iter()
        .map(|(s, a)| format!("{s} {a}"))
        .collect();
    o.push(format!("Authorization: {}", tried.join("; ")));
    o.push(format!("cookie AUTH_TICKET: {}", r.auth.cookie));
    if let Some(s) = &r.search {
        o.push(format!(
            "search (url id {}): metaData keys {}; {} poll(s) in {:.1} s; {}",
            s.url_id,
            s.meta_data_keys.join(", "),
            s.polls,
            s.seconds,
            if s.ready { "ready" } else { "NOT ready" }
        ));
        for f in &s.pending_forms {
            o.push(format!("  pending form: {}", pending_text(f)));
        }
        o.push(format!(
            "  donors at {}: {} offered, skipped {:?}; price field(s) read: {}",
            s.donors_at.as_deref().unwrap_or("(none)"),
            s.donors_offered,
            s.skipped,
            if s.price_fields.is_empty() {
                "none".into()
            } else {
                s.price_fields.join(", ")
            }
        ));
        if let Some(p) = &s.price_field_found {
            o.push(format!("  the price is under `{p}`: --field-map price={p}"));
        }
        if let Some(t) = &s.technical_values {
            o.push(format!(
                "  technical values: {t} ({} group(s))",
                s.technical_groups
            ));
        }
    }
    if let Some(l) = &r.links {
        o.push(format!(
            "link list: {} link(s) at {}; paging: {}",
            l.links,
            l.records_at.as_deref().unwrap_or("(none)"),
            match &l.completeness {
                ListCompleteness::NoPagingFields => "no paging fields".to_string(),
                ListCompleteness::AllPages { pages } => format!("paged, every page read ({pages})"),
                ListCompleteness::Partial { reason } =>
                    format!("paged, links left unread: {reason}"),
            }
        ));
    }
    for p in &r.problems {
        o.push(format!("PROBLEM: {p}"));
    }
    for n in &r.notes {
        o.push(format!("note: {n}"));
    }
    o.push(format!("settings to use: {}", r.settings.flags.join(" ")));
    o.join("\n") + "\n"
}

fn pending_text(f: &PendingForm) -> String {
    match f {
        PendingForm::HttpStatus { status } => format!("HTTP {status}"),
        PendingForm::StatusField { name, value } => format!("{name}: {value}"),
        PendingForm::NotReadyFlag { name } => format!("{name}: false"),
        PendingForm::NoDonors => "an answer without donors".into(),
        PendingForm::NotFound { status, message } => format!(
            "'not found'{}: {message}",
            status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
        ),
    }
}
