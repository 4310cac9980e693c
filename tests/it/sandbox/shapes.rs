//! Answer shape variants, so a client's tolerance can be tested against each.

use linkrunner_sandbox::SandboxConfig;
use linkrunner_sandbox::shapes::{
    BuyAnswer, CreateIds, ErrorStyle, LinkList, Nesting, PriceField, TextsAnswer,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{config, items_with_page_id, shaped, with_acme_project};

#[tokio::test]
async fn grouped_results_put_donors_in_groups_of_items() {
    let sbx = shaped(|c| c.shape.results = Nesting::Grouped).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let (job, meta) = sbx.search(url_id, json!({})).await;

    let (_, body) = sbx.poll(&job, &meta).await;

    let groups = body.as_array().unwrap();
    assert_eq!(groups[0]["group"], "g1");
    assert!(groups[0]["items"][0]["pageId"].is_i64());
    assert_eq!(items_with_page_id(&body).len(), config().donors_per_search);
}

#[tokio::test]
async fn the_default_result_nests_pages_under_result() {
    let (sbx, _, url_id, _) = with_acme_project().await;
    let (job, meta) = sbx.search(url_id, json!({})).await;
    let (_, body) = sbx.poll(&job, &meta).await;
    assert_eq!(body["status"], "done");
    assert!(body["result"]["pages"][0]["pageId"].is_i64());
}

async fn price_keys(field: PriceField) -> Vec<String> {
    let sbx = shaped(|c| c.shape.price = field).await;
    let (_, url_id, _) = sbx.project("https://acme.example").await;
    let donor = sbx.donors(url_id, json!({})).await.remove(0);
    let keys = ["price", "priceRent", "rentPrice"];
    keys.iter()
        .filter(|k| donor[**k].is_number())
        .map(|k| k.to_string())
        .collect()
}

#[tokio::test]
async fn the_donor_price_field_can_be_named_price_rent_or_rent_price() {
    assert_eq!(price_keys(PriceField::Price).await, ["price"]);
    assert_eq!(price_keys(PriceField::PriceRent).await, ["priceRent"]);
    assert_eq!(price_keys(PriceField::RentPrice).await, ["rentPrice"]);
}

#[tokio::test]
async fn create_answers_can_name_their_ids() {
    let sbx = shaped(|c| c.shape.ids = CreateIds::Named).await;
    let (project, url_id, _) = sbx.project("https://acme.example").await;
    let (_, filter) = sbx
        .post(
            "/rest/SearchFilter",
            json!({"name": "f", "priceArticleFrom": 0, "priceArticleTo": 9}),
        )
        .await;
    let body = json!({"autobuyerCommon": {"name": "a", "isAutoApprove": false}, "searchFilterId": filter["searchFilterId"],
        "urls": [{"urlId": url_id, "settings": {"monthlyBudget": 10, "totalLinksLimit": 0, "dailyLinksLimit": 0}}]});

    let (_, autobuyer) = sbx
        .post(
            &format!("/rest/Autobuyer/rent/create/projectId/{project}"),
            body,
        )
        .await;

    assert!(
        filter["searchFilterId"].is_i64() && filter.get("id").is_none(),
        "{filter}"
    );
    assert!(
        autobuyer["autobuyerId"].is_i64() && autobuyer.get("id").is_none(),
        "{autobuyer}"
    );
}

async fn bought_and_listed(edit: impl FnOnce(&mut SandboxConfig)) -> (Value, Value) {
    let sbx = shaped(edit).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    let donors = sbx.donors(url_id, json!({})).await;
    let (_, bought) = sbx.buy(project, &[&donors[0]], url_id, text_id).await;
    let (_, listed) = sbx
        .post(
            &format!("/rest/Project/placements/links?projectId={project}"),
            json!({}),
        )
        .await;
    (bought, listed)
}

#[tokio::test]
async fn the_buy_answer_can_carry_ids_under_result() {
    let (bought, _) = bought_and_listed(|c| c.shape.buy = BuyAnswer::ResultIds).await;
    assert!(bought["result"]["ids"][0].is_i64(), "{bought}");
}

#[tokio::test]
async fn the_link_list_can_be_data_items_with_placement_ids() {
    let (bought, listed) = bought_and_listed(|c| c.shape.links = LinkList::DataItems).await;
    let item = &listed["data"]["items"][0];
    assert_eq!(item["placementId"], bought["placementIds"][0], "{listed}");
    assert!(item["pageId"].is_i64() && item["price"].is_number() && item["status"].is_string());
}

#[tokio::test]
async fn the_add_texts_answer_can_be_flat_lists_of_urls_and_texts() {
    let sbx = shaped(|c| c.shape.texts = TextsAnswer::Flat).await;
    let (project, _, _) = sbx.project("https://acme.example").await;
    let body =
        json!({"urlsTexts": [{"url": "https://acme.example/a", "texts": [{"text": "#a#x#/a#"}]}]});

    let (_, answer) = sbx
        .post(
            &format!("/rest/Content/add/texts/projectId/{project}"),
            body,
        )
        .await;

    assert_eq!(answer["urls"][0]["url"], "https://acme.example/a");
    assert_eq!(answer["texts"][0]["urlId"], answer["urls"][0]["id"]);
    assert_eq!(answer["texts"][0]["text"], "#a#x#/a#");
}

#[tokio::test]
async fn rejections_can_be_http_422_with_an_error_field() {
    let sbx = shaped(|c| c.shape.errors = ErrorStyle::Http).await;
    let (status, body) = sbx.create_project("nope").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["error"].is_string());
}
