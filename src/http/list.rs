//! `GET /api/v1/campaigns`: the campaigns' statuses a page at a time, or every one of them as
//! a stream of lines.
//!
//! | query | answers |
//! |---|---|
//! | none, or the page's list parameters (`state`, `q`, `account`, `sort`, `dir`, `page`, `per_page`) | one page: a JSON array of at most `per_page` statuses ([`API_PAGING`]: 100 unless asked, at most 1,000), in the table's order (ties by name, so pages are stable); `x-total-count` says how many match; a page past the last is `[]` |
//! | `format=ndjson` (with `state`, `q`, `account`, `sort`, `dir`) | every status that matches, one JSON object a line (`application/x-ndjson`), read and sent [`NDJSON_CHUNK`] campaigns at a time |
//!
//! Why pages by default: a status is a campaign's whole record (intents, links, ids), and
//! every one of 10,000 read and serialized at once took seconds and tens of MiB for one
//! request. The rows that choose a page are the list's counts (`views::list`), cheap for
//! every campaign; only the statuses on the page are read whole. The whole list stays
//! available, but only when asked for by name, and then in bounded memory: the stream holds
//! one chunk of statuses at a time and stops reading when the client goes away.

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::board::{PageQuery, Paging, View};
use super::report::bad_request;
use super::{AppState, all_rows, unavailable};
use crate::store::StoreError;
use crate::views::accounts::Accounts;
use crate::views::report::{CampaignStatus, campaign_statuses_in};

/// One page of the API: 100 statuses unless `per_page` says otherwise, at most 1,000 (about
/// 2 MB of JSON at the most; more is the stream's job).
pub(crate) const API_PAGING: Paging = Paging {
    default: 100,
    max: 1000,
};

/// Campaigns read whole and sent at a time by `format=ndjson`: what the stream holds.
pub(crate) const NDJSON_CHUNK: usize = 100;

/// Which answer a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Page,
    Lines,
}

/// The format and the view `q` asks for of the API; an error says what is wrong and what to
/// ask instead.
fn parse(q: &PageQuery) -> Result<(Format, View), String> {
    let format = match q.format.as_deref() {
        None | Some("") | Some("json") => Format::Page,
        Some("ndjson") => Format::Lines,
        Some(f) => return Err(format!("format: `{f}` is not json or ndjson")),
    };
    if format == Format::Lines && (q.page.is_some() || q.per_page.is_some()) {
        return Err(
            "page and per_page do not apply to format=ndjson, which is every campaign that matches"
                .to_string(),
        );
    }
    let max = API_PAGING.max;
    if let Some(n) = q.per_page.as_deref().and_then(|t| t.parse::<u64>().ok())
        && n > max as u64
    {
        return Err(format!(
            "per_page: `{n}` is over the most one page holds, {max}; ask for the next pages \
             (page=2, 3, ...) or for every campaign at once with format=ndjson"
        ));
    }
    Ok((format, View::parse_within(q, API_PAGING)?))
}

pub(super) async fn campaigns(
    State(s): State<AppState>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return bad_request("bad query: the query string is not understood");
    };
    let (format, view) = match parse(&q) {
        Ok(v) => v,
        Err(why) => return bad_request(&format!("bad query: {why}")),
    };
    let (names, accounts) = match chosen(&s, &view).await {
        Ok(n) => n,
        Err(e) => return unavailable(&s, e),
    };
    let total = ("x-total-count", names.len().to_string());
    match format {
        Format::Page => {
            let on_page = page_of(&view, &names);
            match statuses(&s, on_page, &accounts).await {
                Ok(page) => ([total], Json(page)).into_response(),
                Err(e) => unavailable(&s, e),
            }
        }
        Format::Lines => {
            // Two chunks in the channel at most: the reader waits while the client is slow.
            let (tx, rx) = mpsc::channel(2);
            tokio::spawn(send_lines(s, (names, accounts), tx));
            let body = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|chunk| (chunk, rx))
            });
            (
                [
                    (
                        header::CONTENT_TYPE.as_str(),
                        "application/x-ndjson".to_string(),
                    ),
                    total,
                ],
                Body::from_stream(body),
            )
                .into_response()
        }
    }
}

/// The names of every campaign `view` matches, in its order (every page, not one), and
/// each campaign's account as the rows read it (the statuses carry it; no second read).
async fn chosen(s: &AppState, view: &View) -> Result<(Vec<String>, Accounts), StoreError> {
    let rows = all_rows(s).await?;
    let names = view
        .select(&rows)
        .into_iter()
        .map(|r| r.campaign.clone())
        .collect();
    let accounts = rows.into_iter().map(|r| (r.campaign, r.account)).collect();
    Ok((names, accounts))
}

/// The names on `view`'s page of `matching`; none past the last page (a client that pages
/// until a page is empty stops there; the status page shows its last page instead).
fn page_of<'a>(view: &View, matching: &'a [String]) -> &'a [String] {
    let first = (view.page - 1).saturating_mul(view.per_page);
    if first >= matching.len() {
        return &[];
    }
    &matching[first..(first + view.per_page).min(matching.len())]
}

/// The statuses of `names`, in their order, with the daemon's next rounds and their
/// accounts.
async fn statuses(
    s: &AppState,
    names: &[String],
    accounts: &Accounts,
) -> Result<Vec<CampaignStatus>, StoreError> {
    let (now, files) = (s.clock.now(), s.health.files());
    let mut page = campaign_statuses_in(&s.store, names, now, &files, accounts).await?;
    for st in &mut page {
        st.next_round = s.health.next_round(&st.campaign);
    }
    Ok(page)
}

/// Sends the statuses of `names` as lines, [`NDJSON_CHUNK`] at a time, until done or the
/// client is gone. A journal error ends the body with an error, so the client sees a cut
/// answer, never a short list that looks whole.
async fn send_lines(
    s: AppState,
    (names, accounts): (Vec<String>, Accounts),
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    for chunk in names.chunks(NDJSON_CHUNK) {
        let lines = match statuses(&s, chunk, &accounts).await {
            Ok(page) => lines_of(&page),
            Err(e) => {
                s.metrics.database_errors_total.inc();
                tracing::warn!(error = %e, "status API: journal unavailable mid-stream");
                Err(std::io::Error::other("journal database unavailable"))
            }
        };
        let failed = lines.is_err();
        if tx.send(lines).await.is_err() || failed {
            return;
        }
    }
}

/// One JSON object a line.
fn lines_of(page: &[CampaignStatus]) -> Result<Bytes, std::io::Error> {
    let mut out = Vec::with_capacity(page.len() * 2048);
    for st in page {
        serde_json::to_writer(&mut out, st).map_err(std::io::Error::other)?;
        out.push(b'\n');
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_100_unless_asked_and_at_most_1000() {
        let (f, v) = parse(&PageQuery::of(&[])).unwrap();
        assert_eq!((f, v.page, v.per_page), (Format::Page, 1, 100));
        let (_, v) = parse(&PageQuery::of(&[("per_page", "1000"), ("page", "3")])).unwrap();
        assert_eq!((v.page, v.per_page), (3, 1000));
        let why = parse(&PageQuery::of(&[("per_page", "1001")])).unwrap_err();
        assert!(
            why.contains("1000") && why.contains("format=ndjson"),
            "{why}"
        );
        let why = parse(&PageQuery::of(&[("per_page", "0")])).unwrap_err();
        assert!(why.starts_with("per_page:"), "{why}");
    }

    #[test]
    fn the_stream_is_asked_for_by_name_and_takes_no_page() {
        let (f, _) = parse(&PageQuery::of(&[("format", "ndjson"), ("sort", "name")])).unwrap();
        assert_eq!(f, Format::Lines);
        assert_eq!(
            parse(&PageQuery::of(&[("format", "json")])).unwrap().0,
            Format::Page
        );
        assert!(parse(&PageQuery::of(&[("format", "ndjson"), ("page", "2")])).is_err());
        assert!(
            parse(&PageQuery::of(&[("format", "csv")]))
                .unwrap_err()
                .contains("format")
        );
    }

    #[test]
    fn a_page_past_the_last_is_empty_and_the_last_is_what_remains() {
        let names: Vec<String> = (0..250).map(|i| format!("c-{i:03}")).collect();
        let view = |page| View {
            page,
            per_page: 100,
            ..View::default()
        };
        assert_eq!(page_of(&view(1), &names).len(), 100);
        assert_eq!(page_of(&view(3), &names), &names[200..]);
        assert!(page_of(&view(4), &names).is_empty());
        assert!(page_of(&view(usize::MAX), &names).is_empty());
    }
}
