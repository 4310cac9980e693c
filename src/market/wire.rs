//! Request bodies, exactly as the spec names their fields. Private to `market/`: the rest
//! of linkrunner sees only the domain types in [`super::types`].
//!
//! Money goes out as a JSON number of rubles ([`Money::to_json_rubles`]), never a float
//! computed here. Pass-through `extra` keys may not shadow a typed field: that would send a
//! value the caller did not see.

use serde::Serialize;
use serde_json::{Map, Value, json};

use linkrunner_domain::market::{AutobuyerSpec, FilterSpec, PurchaseOrder, SearchParams, UrlTexts};
use linkrunner_domain::money::Money;

/// Why a body could not be built; becomes `MarketError::InvalidRequest`.
pub(crate) type BuildError = String;

#[derive(Serialize)]
struct CreateProject<'a> {
    domain: &'a str,
}

pub(crate) fn create_project(domain: &str) -> Value {
    to_json(&CreateProject { domain })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AddTexts<'a> {
    urls_texts: Vec<UrlEntry<'a>>,
}

#[derive(Serialize)]
struct UrlEntry<'a> {
    url: &'a str,
    texts: Vec<TextEntry<'a>>,
}

#[derive(Serialize)]
struct TextEntry<'a> {
    text: &'a str,
}

pub(crate) fn add_texts(urls: &[UrlTexts]) -> Result<Value, BuildError> {
    if urls.is_empty() {
        return Err("no URLs to add".into());
    }
    let urls_texts = urls
        .iter()
        .map(|u| UrlEntry {
            url: &u.url,
            texts: u.texts.iter().map(|t| TextEntry { text: t }).collect(),
        })
        .collect();
    Ok(to_json(&AddTexts { urls_texts }))
}

pub(crate) fn search(params: &SearchParams) -> Result<Value, BuildError> {
    let typed = [
        ("priceRentFrom", params.price_rent_from),
        ("priceRentTo", params.price_rent_to),
    ];
    merge(&typed, &[], &params.extra)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Purchase<'a> {
    force_seo_wait: &'a Value,
    link_type_id: i64,
    filter_id: Option<i64>,
    mos_sites: &'a Value,
    pages_extra: Option<()>,
    search_id: &'a Value,
    pages: Vec<Page>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    page_id: i64,
    url_id: i64,
    text_id: i64,
}

/// Operation 5. An order without pages is refused: it would spend nothing and prove nothing.
pub(crate) fn buy(order: &PurchaseOrder) -> Result<Value, BuildError> {
    if order.pages.is_empty() {
        return Err("a purchase needs at least one page".into());
    }
    let pages = order
        .pages
        .iter()
        .map(|p| Page {
            page_id: p.page_id,
            url_id: p.url_id,
            text_id: p.text_id,
        })
        .collect();
    Ok(to_json(&Purchase {
        force_seo_wait: &order.tech.force_seo_wait,
        link_type_id: order.link_type_id,
        filter_id: order.filter_id,
        mos_sites: &order.tech.mos_sites,
        pages_extra: None,
        search_id: &order.tech.search_id,
        pages,
    }))
}

pub(crate) fn create_filter(f: &FilterSpec) -> Result<Value, BuildError> {
    let typed = [
        ("priceArticleFrom", f.price_article_from),
        ("priceArticleTo", f.price_article_to),
        ("priceRentFrom", f.price_rent_from),
        ("priceRentTo", f.price_rent_to),
    ];
    merge(&typed, &[("name", Value::from(f.name.as_str()))], &f.extra)
}

pub(crate) fn create_autobuyer(spec: &AutobuyerSpec) -> Result<Value, BuildError> {
    if spec.urls.is_empty() {
        return Err("an autobuyer needs at least one URL".into());
    }
    let urls: Vec<Value> = spec
        .urls
        .iter()
        .map(|u| {
            json!({
                "urlId": u.url_id,
                "settings": {
                    "monthlyBudget": u.monthly_budget.to_json_rubles(),
                    "totalLinksLimit": u.total_links_limit,
                    "dailyLinksLimit": u.daily_links_limit,
                }
            })
        })
        .collect();
    Ok(json!({
        "autobuyerCommon": { "name": spec.name, "isAutoApprove": spec.auto_approve },
        "searchFilterId": spec.search_filter_id,
        "urls": urls,
    }))
}

pub(crate) fn autobuyer_ids(ids: &[i64]) -> Result<Value, BuildError> {
    if ids.is_empty() {
        return Err("no autobuyer ids given".into());
    }
    Ok(json!({ "autobuyersIds": ids }))
}

/// Operation 6 filters through body parameters whose names are not documented: none are
/// sent. The first request is `{}`; later ones carry only the paging parameters the previous
/// answer named (`decode::paging`).
pub(crate) fn list_links(page: Map<String, Value>) -> Value {
    Value::Object(page)
}

/// Plain structs with string keys: serialization cannot fail.
fn to_json<T: Serialize>(body: &T) -> Value {
    serde_json::to_value(body).expect("request structs serialize to JSON")
}

/// Typed money fields (omitted when `None`), fixed fields, then `extra` keys as given.
fn merge(
    money: &[(&str, Option<Money>)],
    fixed: &[(&str, Value)],
    extra: &Map<String, Value>,
) -> Result<Value, BuildError> {
    let mut out = Map::new();
    for (k, v) in fixed {
        out.insert((*k).to_string(), v.clone());
    }
    for (k, v) in money {
        if let Some(m) = v {
            out.insert((*k).to_string(), m.to_json_rubles());
        }
    }
    for (k, v) in extra {
        let shadows = fixed.iter().any(|(f, _)| f == k) || money.iter().any(|(f, _)| f == k);
        if shadows {
            return Err(format!(
                "extra parameter `{k}` duplicates a typed field; set the typed field instead"
            ));
        }
        out.insert(k.clone(), v.clone());
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkrunner_domain::market::{AutobuyerUrl, PageTarget, TechValues};

    fn order(pages: Vec<PageTarget>) -> PurchaseOrder {
        PurchaseOrder {
            link_type_id: 1,
            filter_id: None,
            tech: TechValues {
                search_id: json!(77),
                force_seo_wait: json!(0),
                mos_sites: json!("abc"),
            },
            pages,
        }
    }

    #[test]
    fn purchase_body_has_every_documented_field() {
        let page = PageTarget {
            page_id: 1,
            url_id: 2,
            text_id: 3,
        };
        let body = buy(&order(vec![page])).unwrap();
        assert_eq!(
            body,
            json!({"forceSeoWait":0,"linkTypeId":1,"filterId":null,"mosSites":"abc",
                   "pagesExtra":null,"searchId":77,"pages":[{"pageId":1,"urlId":2,"textId":3}]})
        );
    }

    #[test]
    fn purchase_without_pages_is_refused() {
        assert!(buy(&order(vec![])).is_err());
    }

    #[test]
    fn filter_body_omits_absent_prices_and_merges_extra_keys() {
        let mut extra = Map::new();
        extra.insert("domainZone".into(), json!("ru"));
        let f = FilterSpec {
            name: "cheap".into(),
            price_article_from: Some(Money::ZERO),
            price_article_to: Some(Money::from_kopecks(50_050)),
            price_rent_from: None,
            price_rent_to: Some(Money::from_rubles(80)),
            extra,
        };
        assert_eq!(
            create_filter(&f).unwrap(),
            json!({"name":"cheap","priceArticleFrom":0,"priceArticleTo":500.5,"priceRentTo":80,"domainZone":"ru"})
        );
    }

    #[test]
    fn extra_key_that_shadows_a_typed_field_is_refused() {
        let mut extra = Map::new();
        extra.insert("priceRentTo".into(), json!(1));
        let p = SearchParams {
            price_rent_from: None,
            price_rent_to: Some(Money::from_rubles(2)),
            extra,
        };
        assert!(search(&p).unwrap_err().contains("priceRentTo"));
    }

    #[test]
    fn autobuyer_body_nests_settings_per_url() {
        let spec = AutobuyerSpec {
            name: "auto".into(),
            auto_approve: false,
            search_filter_id: 9,
            urls: vec![AutobuyerUrl {
                url_id: 4,
                monthly_budget: Money::from_rubles(1000),
                total_links_limit: 20,
                daily_links_limit: 1,
            }],
        };
        assert_eq!(
            create_autobuyer(&spec).unwrap(),
            json!({"autobuyerCommon":{"name":"auto","isAutoApprove":false},"searchFilterId":9,
                   "urls":[{"urlId":4,"settings":{"monthlyBudget":1000,"totalLinksLimit":20,"dailyLinksLimit":1}}]})
        );
    }

    #[test]
    fn add_texts_body_lists_urls_with_their_texts() {
        let urls = [UrlTexts {
            url: "https://a.example/x".into(),
            texts: vec!["#a#x#/a#".into()],
        }];
        assert_eq!(
            add_texts(&urls).unwrap(),
            json!({"urlsTexts":[{"url":"https://a.example/x","texts":[{"text":"#a#x#/a#"}]}]})
        );
    }

    #[test]
    fn stop_and_start_bodies_list_the_ids() {
        assert_eq!(
            autobuyer_ids(&[3, 4]).unwrap(),
            json!({"autobuyersIds":[3,4]})
        );
        assert!(autobuyer_ids(&[]).is_err());
    }
}
