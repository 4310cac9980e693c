//! `GET /`: reads the one read model (the list's rows, `super::all_rows`, and their summary)
//! and answers the view the query asks for: the list (`super::board`) or one campaign
//! (`super::page`, its whole status). Either also reads the month's commitment per day
//! (`views::days`: one aggregate query of the ledger) for its picture (`super::picture`).
//! A query it cannot take is answered 400, naming the parameter.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::board::{PageQuery, View, render_page};
use super::page::{page_not_found, render_detail};
use super::{AppState, one_status, rows_and_summary, unavailable};
use crate::views::days::month_days;

pub(super) async fn status_page(
    State(s): State<AppState>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return bad_request("the query string is not understood");
    };
    let view = match q.campaign.is_none().then(|| View::parse(&q)).transpose() {
        Ok(v) => v,
        Err(why) => return bad_request(&why),
    };
    let now = s.clock.now();
    if let Some(name) = &q.campaign {
        let read = async {
            let Some(c) = one_status(&s, name).await? else {
                return Ok(None);
            };
            let days = month_days(&s.store, now, &[name.as_str()], Some(name)).await?;
            Ok(Some((c, days)))
        };
        return match read.await {
            Ok(Some((c, days))) => html(render_detail(&c, &days, now)).into_response(),
            Ok(None) => (StatusCode::NOT_FOUND, html(page_not_found(name, now))).into_response(),
            Err(e) => unavailable(&s, e),
        };
    }
    let view = view.unwrap_or_default();
    let read = async {
        let (all, sum) = rows_and_summary(&s).await?;
        let shown: Vec<&str> = view
            .page_rows(&all)
            .iter()
            .map(|c| c.campaign.as_str())
            .collect();
        let days = month_days(&s.store, now, &shown, None).await?;
        Ok::<_, crate::store::StoreError>(render_page(&all, &sum, &view, &days, now))
    };
    match read.await {
        Ok(page) => html(page).into_response(),
        Err(e) => unavailable(&s, e),
    }
}

fn html(body: String) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
}

fn bad_request(why: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("bad query: {why}\n"),
    )
        .into_response()
}
