//! Every answer shape the sandbox can take (`Shape`): the client's typed answers over the
//! whole flow are identical to those for the default shape — same ids, donors, links.
//! Both sandboxes use the same seed, so they hand out the same ids and donors.

use linkrunner::market::{
    CreatedUrl, Donor, FieldMap, LinkRecord, Market, MarketClient, ProjectIds, SearchJob,
    SearchPoll, UrlTexts,
};
use linkrunner_sandbox::Shape;

use super::flow::{autobuyer, cheap_filter};
use super::support::{DOMAIN, client_with, order, sandbox_config, search_params};
use crate::support::sandbox;

/// What the client answered at each step of the flow.
#[derive(Debug, PartialEq)]
pub(crate) struct Answers {
    pub(crate) project: ProjectIds,
    created: Vec<CreatedUrl>,
    job: SearchJob,
    pub(crate) pending_polls: usize,
    donors: Vec<Donor>,
    unpriced: usize,
    pub(crate) bought: Vec<i64>,
    links: Vec<LinkRecord>,
    filter: i64,
    autobuyer: i64,
    switched: (bool, bool),
    /// The outcome label and execution class of an `addTexts` with a URL off the domain.
    rejection: (&'static str, linkrunner::market::Executed),
}

fn two_urls() -> Vec<UrlTexts> {
    vec![
        UrlTexts {
            url: "https://acme.example/running-shoes".into(),
            texts: vec![
                "Best #a#running shoes#/a#".into(),
                "#a#acme runners#/a#".into(),
            ],
        },
        UrlTexts {
            url: "https://shop.acme.example/trail".into(),
            texts: vec!["#a#trail shoes#/a# for mud".into()],
        },
    ]
}

/// Polls until ready (at most 20 polls); counts the pending answers on the way.
async fn poll(client: &MarketClient, job: &SearchJob) -> (usize, Vec<Donor>, usize) {
    for pending in 0..20 {
        match client.search_result(job).await.unwrap() {
            SearchPoll::Pending | SearchPoll::NotFound { .. } => continue,
            SearchPoll::Ready { donors, unpriced } => return (pending, donors, unpriced),
        }
    }
    panic!("the search was still pending after 20 polls");
}

pub(crate) async fn run_flow(client: &MarketClient) -> Answers {
    let project = client.create_project(DOMAIN).await.unwrap();
    let created = client
        .add_texts(project.project_id, &two_urls())
        .await
        .unwrap();
    let url = &created[1];
    let job = client
        .start_search(url.url_id, &search_params())
        .await
        .unwrap();
    let (pending_polls, donors, unpriced) = poll(client, &job).await;
    let text_id = url.texts[0].text_id;
    let bought = client
        .buy(
            project.project_id,
            &order(&[&donors[0], &donors[5]], url.url_id, text_id),
        )
        .await
        .unwrap();
    let links = client.list_links(project.project_id).await.unwrap().links;
    let filter = client.create_filter(&cheap_filter()).await.unwrap();
    let spec = autobuyer(filter, url.url_id);
    let autobuyer = client
        .create_autobuyer(project.project_id, &spec)
        .await
        .unwrap();
    let stopped = client.stop_autobuyers(&[autobuyer]).await.is_ok();
    let started = client.start_autobuyers(&[autobuyer]).await.is_ok();
    let off_domain = [UrlTexts {
        url: "https://elsewhere.example/".into(),
        texts: vec!["#a#x#/a#".into()],
    }];
    let err = client
        .add_texts(project.project_id, &off_domain)
        .await
        .unwrap_err();
    Answers {
        project,
        created,
        job,
        pending_polls,
        donors,
        unpriced,
        bought,
        links,
        filter,
        autobuyer,
        switched: (stopped, started),
        rejection: (err.metric_label(), err.executed()),
    }
}

/// The flow's answers from a sandbox answering in `shape`, read with `field_map`.
async fn answers_with(shape: &str, field_map: &str) -> Answers {
    let mut cfg = sandbox_config();
    cfg.shape = shape.parse::<Shape>().unwrap();
    let sandbox = sandbox::start(cfg).await;
    let map = FieldMap::parse(field_map).unwrap();
    let client = client_with(&sandbox.base_url(), |c| c.field_map = map);
    run_flow(&client).await
}

#[tokio::test]
async fn the_default_shape_answers_the_whole_flow() {
    let answers = answers_with("", "").await;

    assert_eq!(answers.pending_polls, 2);
    assert_eq!((answers.donors.len(), answers.unpriced), (10, 0));
    assert_eq!(answers.bought.len(), 2);
    assert_eq!(answers.links.len(), 2);
    assert_eq!(answers.switched, (true, true));
    assert_eq!(
        answers.rejection,
        ("rejected", linkrunner::market::Executed::No)
    );
}

macro_rules! same_answers_as_the_default_shape {
    ($($name:ident: $shape:literal,)+) => {$(
        #[tokio::test]
        async fn $name() {
            let expected = answers_with("", "").await;

            let seen = answers_with($shape, "").await;

            assert_eq!(seen, expected, "shape {}", $shape);
        }
    )+};
}

same_answers_as_the_default_shape! {
    donors_grouped_instead_of_under_pages_give_the_same_answers: "results=grouped",
    pending_as_http_202_gives_the_same_answers: "pending=http202",
    pending_as_an_empty_list_gives_the_same_answers: "pending=empty_list",
    price_under_price_rent_gives_the_same_answers: "price=priceRent",
    price_under_rent_price_gives_the_same_answers: "price=rentPrice",
    create_ids_under_their_own_names_give_the_same_answers: "ids=named",
    bought_ids_under_result_give_the_same_answers: "buy=result_ids",
    links_under_data_items_give_the_same_answers: "links=data_items",
    flat_add_texts_answers_give_the_same_answers: "texts=flat",
    errors_as_http_statuses_give_the_same_answers: "errors=http",
    every_variant_at_once_gives_the_same_answers:
        "results=grouped,pending=empty_list,price=rentPrice,ids=named,buy=result_ids,links=data_items,texts=flat,errors=http",
}

#[tokio::test]
async fn a_field_map_naming_the_sandbox_price_field_gives_the_same_answers() {
    let expected = answers_with("", "").await;

    let seen = answers_with("price=rentPrice", "price=rentPrice").await;

    assert_eq!(seen, expected);
}
