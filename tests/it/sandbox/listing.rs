//! Operation 6 showing part of the truth: paged (with and without paging fields), lagging
//! behind purchases, and without links the marketplace took back — each switched at run time.

use linkrunner_sandbox::{Behaviour, LinkStatus, ListPaging};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{Sbx, config, items_with_page_id, start};
use crate::support::sandbox::lagging;

/// A project whose main URL holds `n` links bought in one call: `(project, link ids)`.
pub async fn bought(sbx: &Sbx, n: usize) -> (i64, Vec<i64>) {
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;
    let chosen: Vec<&Value> = donors.iter().take(n).collect();
    let (status, body) = sbx.buy(project, &chosen, url_id, text_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ids = sbx
        .handle
        .ledger()
        .purchases_of(project)
        .iter()
        .map(|p| p.link_id)
        .collect();
    (project, ids)
}

pub async fn list(sbx: &Sbx, project: i64, body: Value) -> (StatusCode, Value) {
    sbx.post(
        &format!("/rest/Project/placements/links?projectId={project}"),
        body,
    )
    .await
}

/// The ids of the links in one answer (default `links` shape).
pub fn ids(answer: &Value) -> Vec<i64> {
    items_with_page_id(answer)
        .iter()
        .map(|l| l["id"].as_i64().unwrap())
        .collect()
}

/// A sandbox whose list answers two links a page in `paging`'s shape, and a project holding
/// `n` bought links: `(sandbox, project, link ids)`.
async fn paged_with(paging: ListPaging, n: usize) -> (Sbx, i64, Vec<i64>) {
    let mut cfg = config();
    cfg.behaviour = Behaviour {
        list_page_size: Some(2),
        list_paging: paging,
        ..Behaviour::default()
    };
    let sbx = start(cfg).await;
    let (project, links) = bought(&sbx, n).await;
    (sbx, project, links)
}

/// The default sandbox and a project holding `n` bought links: `(sandbox, project, link ids)`.
async fn plain_with(n: usize) -> (Sbx, i64, Vec<i64>) {
    let sbx = start(config()).await;
    let (project, links) = bought(&sbx, n).await;
    (sbx, project, links)
}

#[tokio::test]
async fn a_list_without_paging_fields_answers_its_first_links_and_no_sign_of_more() {
    let (sbx, project, links) = paged_with(ListPaging::None, 5).await;

    let (status, first) = list(&sbx, project, json!({})).await;
    let (_, asked_page_2) = list(&sbx, project, json!({"page": 2, "offset": 2})).await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&first), links[..2]);
    assert_eq!(first.as_object().unwrap().len(), 1, "only `links`: {first}");
    assert_eq!(asked_page_2, first, "paging parameters are ignored");
}

#[tokio::test]
async fn a_page_total_list_answers_every_page_with_its_number_and_the_total() {
    let (sbx, project, links) = paged_with(ListPaging::PageTotal, 5).await;

    let (_, first) = list(&sbx, project, json!({})).await;
    let mut seen = Vec::new();
    for page in 1..=4 {
        let (status, answer) = list(&sbx, project, json!({"page": page})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(answer["page"], json!(page));
        assert_eq!(
            (&answer["pageSize"], &answer["total"]),
            (&json!(2), &json!(5))
        );
        seen.extend(ids(&answer));
    }
    let (_, small) = list(&sbx, project, json!({"page": 2, "pageSize": 1})).await;

    assert_eq!(ids(&first), links[..2]);
    assert_eq!(seen, links, "pages 1-3 hold every link once, page 4 none");
    assert_eq!(ids(&small), links[1..2]);
}

#[tokio::test]
async fn an_offset_list_says_has_more_until_its_last_link() {
    let (sbx, project, links) = paged_with(ListPaging::OffsetHasMore, 5).await;

    let (_, a) = list(&sbx, project, json!({})).await;
    let (_, b) = list(&sbx, project, json!({"offset": 2, "limit": 2})).await;
    let (_, c) = list(&sbx, project, json!({"offset": 4, "limit": 50})).await;

    for (answer, want, more) in [
        (&a, &links[..2], true),
        (&b, &links[2..4], true),
        (&c, &links[4..], false),
    ] {
        assert_eq!(
            (ids(answer), &answer["hasMore"]),
            (want.to_vec(), &json!(more)),
            "{answer}"
        );
    }
    assert_eq!((&c["offset"], &c["limit"]), (&json!(4), &json!(2)));
}

#[tokio::test]
async fn paging_parameters_that_are_not_counts_are_malformed() {
    let (sbx, project, _) = paged_with(ListPaging::PageTotal, 1).await;

    let (zero, _) = list(&sbx, project, json!({"page": 0})).await;
    let (text, _) = list(&sbx, project, json!({"page": "2"})).await;
    let (unknown, _) = list(&sbx, project, json!({"status": "active"})).await;

    assert_eq!(zero, StatusCode::BAD_REQUEST);
    assert_eq!(text, StatusCode::BAD_REQUEST);
    assert_eq!(unknown, StatusCode::OK, "unknown parameters are accepted");
}

#[tokio::test]
async fn a_lagging_list_shows_a_link_only_after_the_lag_on_the_sandbox_clock() {
    let mut cfg = config();
    let clock = lagging(&mut cfg, 60_000);
    let sbx = start(cfg).await;
    let (project, links) = bought(&sbx, 2).await;

    let (_, at_once) = list(&sbx, project, json!({})).await;
    clock.advance(chrono::Duration::seconds(59));
    let (_, almost) = list(&sbx, project, json!({})).await;
    clock.advance(chrono::Duration::seconds(1));
    let (_, after) = list(&sbx, project, json!({})).await;

    assert!(ids(&at_once).is_empty() && ids(&almost).is_empty());
    assert_eq!(ids(&after), links);
    assert_eq!(sbx.handle.ledger().purchases_of(project).len(), 2);
}

#[tokio::test]
async fn the_behaviour_changes_mid_test_through_its_control_endpoint() {
    let (sbx, project, links) = plain_with(3).await;
    let (_, whole) = list(&sbx, project, json!({})).await;

    let (set, echoed) = sbx
        .post("/__sandbox/behaviour", json!({"list_page_size": 1}))
        .await;
    let (_, cut) = list(&sbx, project, json!({})).await;
    let (refused, _) = sbx
        .post("/__sandbox/behaviour", json!({"list_page_size": 0}))
        .await;
    let (typo, _) = sbx
        .post("/__sandbox/behaviour", json!({"list_page_sise": 2}))
        .await;
    let (_, now) = sbx.get("/__sandbox/behaviour").await;

    assert_eq!(ids(&whole), links);
    assert_eq!(
        (set, &echoed["list_page_size"]),
        (StatusCode::OK, &json!(1))
    );
    assert_eq!(ids(&cut), links[..1]);
    assert_eq!(refused, StatusCode::BAD_REQUEST);
    assert_eq!(typo, StatusCode::BAD_REQUEST);
    assert_eq!(
        now["list_page_size"],
        json!(1),
        "a refused change changes nothing"
    );
}

#[tokio::test]
async fn a_removed_link_leaves_the_list_and_the_ledger_shows_when() {
    let (sbx, project, links) = plain_with(3).await;

    let (status, entry) = link_status(&sbx, links[1], "removed").await;
    let (_, listed) = list(&sbx, project, json!({})).await;

    assert_eq!(status, StatusCode::OK, "{entry}");
    assert_eq!(ids(&listed), [links[0], links[2]]);
    let ledger = sbx.handle.ledger();
    let removed = ledger
        .purchases
        .iter()
        .find(|p| p.link_id == links[1])
        .unwrap();
    assert_eq!(removed.status, LinkStatus::Removed);
    assert!(!removed.listed && removed.status_at.is_some());
    assert_eq!(entry["status"], json!("removed"));
}

#[tokio::test]
async fn a_rejected_link_can_stay_listed_with_its_status() {
    let (sbx, project, links) = plain_with(2).await;

    let entry = sbx
        .handle
        .set_link_status(links[0], LinkStatus::Rejected, true)
        .unwrap();
    let (_, listed) = list(&sbx, project, json!({})).await;

    assert_eq!(ids(&listed), links);
    assert_eq!(listed["links"][0]["status"], json!("rejected"));
    assert_eq!(listed["links"][1]["status"], json!("active"));
    assert!(entry.listed && entry.status == LinkStatus::Rejected);
}

#[tokio::test]
async fn a_link_cannot_be_made_active_again_nor_an_unknown_one_changed() {
    let (sbx, _, links) = plain_with(1).await;

    let (active, _) = link_status(&sbx, links[0], "active").await;
    let (unknown, _) = link_status(&sbx, 1, "removed").await;

    assert_eq!(active, StatusCode::BAD_REQUEST);
    assert_eq!(unknown, StatusCode::NOT_FOUND);
    assert_eq!(sbx.handle.ledger().purchases[0].status, LinkStatus::Active);
}

/// Sets link `link`'s status through the control endpoint: its answer.
async fn link_status(sbx: &Sbx, link: i64, status: &str) -> (StatusCode, Value) {
    let body = json!({"link_id": link, "status": status});
    sbx.post("/__sandbox/link_status", body).await
}
