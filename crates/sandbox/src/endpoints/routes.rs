//! The ten operations at the spec's paths under the prefix, plus the test-only control
//! endpoints under `{prefix}/__sandbox/` (`control.rs`).
//!
//! An id of a thing that exists but is another account's (a project, URL, text, search
//! filter, autobuyer or search job), wherever the request names it (path, query or body),
//! answers 403 `... belongs to another account` and changes nothing, as a project of
//! `Behaviour::foreign_projects` does; an id that is nobody's answers as before.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use tokio::time::Instant;

use super::render;
use super::wire;
use crate::autobuy::{AutobuyerSpec, AutobuyerUrl, Range};
use crate::behaviour::ListPaging;
use crate::buy::{BuyRequest, PageRef};
use crate::listing::PageAsk;
use crate::money::Money;
use crate::ops::Op;
use crate::search::{Poll, PollError};
use crate::server::{Refusal, Shared, json_body, reply};
use crate::state::{Params, Thing, World};

type App = State<Arc<Shared>>;

pub(crate) fn router(shared: Arc<Shared>, prefix: &str, body_limit: usize) -> Router {
    let p = |path: &str| format!("{prefix}{path}");
    Router::new()
        .route(&p("/rest/Project/addSimpleProjectAndContent"), post(add_project))
        .route(&p("/rest/Content/add/texts/projectId/{projectId}"), post(add_texts))
        .route(&p("/rest/SearchRent/rent/tree/urlId/{urlId}"), post(search_start))
        .route(
            &p("/rest/SearchRent/rent/tree/getResult/jobHandleId/{jobHandleId}/rentSearchMetaData/{metaData}"),
            get(search_result),
        )
        .route(&p("/rest/Placement/rent/create/projectId/{projectId}"), post(buy))
        .route(&p("/rest/Project/placements/links"), post(list_links))
        .route(&p("/rest/SearchFilter"), post(add_filter))
        .route(&p("/rest/Autobuyer/rent/create/projectId/{projectId}"), post(create_autobuyer))
        .route(&p("/rest/Autobuyer/stop"), post(stop_autobuyers))
        .route(&p("/rest/Autobuyer/start"), post(start_autobuyers))
        .merge(super::control::router(prefix))
        .merge(super::auth_routes::router(prefix))
        .fallback(|| async { reply(StatusCode::NOT_FOUND, &render::error("no such endpoint")) })
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(shared)
}

fn id(text: &str, name: &str) -> Result<i64, Refusal> {
    text.parse()
        .map_err(|_| Refusal::bad(format!("{name} `{text}` is not an integer")))
}

/// The project id a path or query names, refused with 403 when it belongs to another
/// account (another account's of this sandbox, or one of `Behaviour::foreign_projects`).
fn own_project(world: &World, text: &str) -> Result<i64, Refusal> {
    let project_id = id(text, "projectId")?;
    if world.behaviour.is_foreign(project_id) {
        return Err(Refusal::Forbidden(format!(
            "project {project_id} belongs to another account"
        )));
    }
    not_others(world, Thing::Project, project_id)?;
    Ok(project_id)
}

/// Refuses with 403 an id of a thing that exists but is another account's.
fn not_others(world: &World, thing: Thing, id: i64) -> Result<(), Refusal> {
    if world.is_others(thing, id) {
        return Err(Refusal::Forbidden(format!(
            "{} {id} belongs to another account",
            thing.name()
        )));
    }
    Ok(())
}

async fn add_project(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    app.handle(Op::AddProject, &headers, |world, _| {
        let req: wire::AddProject = json_body(&headers, &body)?;
        let (id, url_id, text_id) = world.add_project(&req.domain)?;
        Ok((StatusCode::OK, render::project_created(id, url_id, text_id)))
    })
    .await
}

async fn add_texts(
    State(app): App,
    Path(project): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    app.handle(Op::AddTexts, &headers, |world, shape| {
        let project_id = own_project(world, &project)?;
        let req: wire::AddTexts = json_body(&headers, &body)?;
        let items: Vec<(String, Vec<String>)> = req
            .urls_texts
            .into_iter()
            .map(|u| (u.url, u.texts.into_iter().map(|t| t.text).collect()))
            .collect();
        let added = world.add_texts(project_id, &items)?;
        Ok((StatusCode::OK, render::texts_added(shape, &added)))
    })
    .await
}

async fn search_start(
    State(app): App,
    Path(url): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    app.handle(Op::SearchStart, &headers, |world, _| {
        let url_id = id(&url, "urlId")?;
        not_others(world, Thing::Url, url_id)?;
        let params: Params = json_body(&headers, &body)?;
        let from = wire::rubles_field(&params, "priceRentFrom").map_err(Refusal::bad)?;
        let to = wire::rubles_field(&params, "priceRentTo").map_err(Refusal::bad)?;
        let (job, meta) = world.start_search(url_id, from, to, Instant::now())?;
        Ok((StatusCode::OK, render::search_queued(&job, &meta)))
    })
    .await
}

async fn search_result(
    State(app): App,
    Path((job, meta)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    app.handle(Op::SearchResult, &headers, |world, shape| {
        if world.is_others_search(&job) {
            return Err(Refusal::Forbidden(format!(
                "search job `{job}` belongs to another account"
            )));
        }
        match world.poll_search(&job, &meta, Instant::now()) {
            Ok(Poll::Pending) => Ok(render::search_pending(shape)),
            Ok(Poll::Ready(found)) => Ok((StatusCode::OK, render::search_ready(shape, &found))),
            Err(PollError::UnknownJob) => Err(Refusal::NotFound(format!("no search job `{job}`"))),
            Err(PollError::MetaDataChanged) => Err(Refusal::bad(
                "rentSearchMetaData differs from the metaData this job was created with",
            )),
        }
    })
    .await
}

async fn buy(
    State(app): App,
    Path(project): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    app.handle(Op::BuyLinks, &headers, |world, shape| {
        let project_id = own_project(world, &project)?;
        let req: wire::Buy = json_body(&headers, &body)?;
        if let Some(filter) = req.filter_id {
            not_others(world, Thing::Filter, filter)?;
        }
        for p in &req.pages {
            not_others(world, Thing::Url, p.url_id)?;
            not_others(world, Thing::Text, p.text_id)?;
        }
        let request = BuyRequest {
            search_id: req.search_id,
            force_seo_wait: req.force_seo_wait,
            mos_sites: req.mos_sites,
            link_type_id: req.link_type_id,
            filter_id: req.filter_id,
            pages: req
                .pages
                .iter()
                .map(|p| PageRef {
                    page_id: p.page_id,
                    url_id: p.url_id,
                    text_id: p.text_id,
                })
                .collect(),
        };
        let ids = world.buy(project_id, &request)?;
        Ok((StatusCode::OK, render::bought(shape, &ids)))
    })
    .await
}

async fn list_links(
    State(app): App,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    app.handle(Op::ListLinks, &headers, |world, shape| {
        let query = query.unwrap_or_default();
        let project = url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "projectId")
            .map(|(_, v)| v.into_owned())
            .ok_or_else(|| Refusal::bad("query parameter projectId is missing"))?;
        let project_id = own_project(world, &project)?;
        // The body is empty in the known use; filters, when sent, must at least be JSON.
        let params: Params = match body.iter().all(u8::is_ascii_whitespace) {
            true => Params::new(),
            false => json_body(&headers, &body)?,
        };
        let ask = match world.behaviour.list_paging {
            ListPaging::None => PageAsk::default(),
            _ => PageAsk::from_params(&params).map_err(Refusal::bad)?,
        };
        let page = world.links(project_id, &ask)?;
        Ok((StatusCode::OK, render::links(shape, &page)))
    })
    .await
}

async fn add_filter(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    app.handle(Op::AddFilter, &headers, |world, shape| {
        let params: Params = json_body(&headers, &body)?;
        let name = wire::string_field(&params, "name").map_err(Refusal::bad)?;
        let range = |name: &'static str| -> Result<Range, Refusal> {
            let from = wire::rubles_field(&params, &format!("{name}From")).map_err(Refusal::bad)?;
            let to = wire::rubles_field(&params, &format!("{name}To")).map_err(Refusal::bad)?;
            Ok(Range { name, from, to })
        };
        let ranges = [range("priceArticle")?, range("priceRent")?];
        let id = world.add_filter(&name, &ranges, params.clone())?;
        Ok((StatusCode::OK, render::created(shape, "searchFilterId", id)))
    })
    .await
}

async fn create_autobuyer(
    State(app): App,
    Path(project): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    app.handle(Op::CreateAutobuyer, &headers, |world, shape| {
        let project_id = own_project(world, &project)?;
        let req: wire::CreateAutobuyer = json_body(&headers, &body)?;
        not_others(world, Thing::Filter, req.search_filter_id)?;
        for u in &req.urls {
            not_others(world, Thing::Url, u.url_id)?;
        }
        let urls = req
            .urls
            .iter()
            .map(autobuyer_url)
            .collect::<Result<Vec<_>, _>>()?;
        let spec = AutobuyerSpec {
            name: req.autobuyer_common.name,
            is_auto_approve: req.autobuyer_common.is_auto_approve,
            filter_id: req.search_filter_id,
            urls,
        };
        let id = world.create_autobuyer(project_id, spec)?;
        Ok((StatusCode::OK, render::created(shape, "autobuyerId", id)))
    })
    .await
}

fn autobuyer_url(u: &wire::AutobuyerUrl) -> Result<AutobuyerUrl, Refusal> {
    let budget = Money::from_json_number(&u.settings.monthly_budget)
        .map_err(|e| Refusal::bad(format!("monthlyBudget: {e}")))?;
    Ok(AutobuyerUrl {
        url_id: u.url_id,
        monthly_budget: budget,
        total_links_limit: u.settings.total_links_limit,
        daily_links_limit: u.settings.daily_links_limit,
    })
}

async fn stop_autobuyers(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    switch(app, Op::StopAutobuyers, headers, body, false).await
}

async fn start_autobuyers(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    switch(app, Op::StartAutobuyers, headers, body, true).await
}

async fn switch(
    app: Arc<Shared>,
    op: Op,
    headers: HeaderMap,
    body: Bytes,
    running: bool,
) -> Response {
    app.handle(op, &headers, |world, _| {
        let req: wire::AutobuyerIds = json_body(&headers, &body)?;
        for id in &req.autobuyers_ids {
            not_others(world, Thing::Autobuyer, *id)?;
        }
        let ids = world.switch_autobuyers(&req.autobuyers_ids, running)?;
        Ok((StatusCode::OK, render::switched(&ids)))
    })
    .await
}
