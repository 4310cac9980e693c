//! Request bodies as the spec names them. Wrong types and missing required fields are
//! malformed requests (HTTP 400), not rejections.

use serde::Deserialize;
use serde_json::{Number, Value};

use crate::money::Money;
use crate::state::Params;

#[derive(Debug, Deserialize)]
pub(crate) struct AddProject {
    pub(crate) domain: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AddTexts {
    pub(crate) urls_texts: Vec<UrlTexts>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct UrlTexts {
    pub url: String,
    pub texts: Vec<TextItem>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TextItem {
    pub(crate) text: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
/// `pagesExtra` (null in the known use, type otherwise unknown) is accepted and ignored.
pub(crate) struct Buy {
    pub(crate) force_seo_wait: i64,
    pub(crate) link_type_id: i64,
    #[serde(default)]
    pub(crate) filter_id: Option<i64>,
    pub(crate) mos_sites: String,
    pub(crate) search_id: i64,
    pub(crate) pages: Vec<BuyPage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BuyPage {
    pub(crate) page_id: i64,
    pub(crate) url_id: i64,
    pub(crate) text_id: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateAutobuyer {
    pub(crate) autobuyer_common: AutobuyerCommon,
    pub(crate) search_filter_id: i64,
    pub(crate) urls: Vec<AutobuyerUrl>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AutobuyerCommon {
    pub(crate) name: String,
    pub(crate) is_auto_approve: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AutobuyerUrl {
    pub url_id: i64,
    pub(crate) settings: AutobuyerSettings,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AutobuyerSettings {
    pub(crate) monthly_budget: Number,
    pub(crate) total_links_limit: i64,
    pub(crate) daily_links_limit: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AutobuyerIds {
    pub(crate) autobuyers_ids: Vec<i64>,
}

/// Reads an optional rubles field of a free-form object: absent or null is `None`; a value
/// that is not a number with at most two decimals is malformed.
pub(crate) fn rubles_field(params: &Params, key: &str) -> Result<Option<Money>, String> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Money::from_json_number(n)
            .map(Some)
            .map_err(|e| format!("{key}: {e}")),
        Some(other) => Err(format!("{key} must be a number, got {other}")),
    }
}

/// Reads a required string field of a free-form object.
pub(crate) fn string_field(params: &Params, key: &str) -> Result<String, String> {
    match params.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!("{key} must be a string, got {other}")),
        None => Err(format!("missing field `{key}`")),
    }
}
