//! [`RawCampaign`] → [`Campaign`]: every check of meaning, every problem reported at once.
//! Each part checks what it can even when another part is broken, so one run of `validate`
//! shows everything; but a campaign with any problem is never returned.

use std::collections::HashSet;

use super::checks::check_name;
use super::diag::Problems;
use super::model::{Campaign, PromotedUrl};
use super::raw::{RawCampaign, RawText, RawUrl};
use super::rules;
use super::span::At;
use super::{adoption, autobuyers, spend};

/// Most promoted URLs per campaign, and texts per URL.
pub(super) const MAX_URLS: usize = 1000;
pub(super) const MAX_TEXTS: usize = 100;

/// Checks one parsed file for meaning.
pub(super) fn validate(raw: &RawCampaign) -> Result<Campaign, Problems> {
    let mut p = Problems::default();
    check_name(&raw.name, &mut p);
    let domain = domain(&raw.domain, &mut p);
    let before = p.len();
    let urls = urls(&raw.urls, domain.as_deref(), &mut p);
    // Autobuyer URLs are checked against the promoted ones only when those are sound;
    // otherwise one typo would be reported again at every reference to it.
    let urls_ok = domain.is_some() && p.len() == before;
    let budget = spend::budget(&raw.budget.value, &mut p);
    let buy = raw
        .buy
        .as_ref()
        .map(|b| spend::buy(&b.value, &budget, &mut p));
    let filters = spend::filters(&raw.filters, &mut p);
    let autobuyers = autobuyers::autobuyers(
        &raw.autobuyers,
        urls_ok.then_some(urls.as_slice()),
        &filters,
        &mut p,
    );
    spend::check_commitment(&raw.budget, &budget, buy.as_ref(), &autobuyers, &mut p);
    let project_id = adoption::check(raw, &mut p);
    let renamed_from = renamed_from(raw, &mut p);
    let account = account(raw, &mut p);
    moved_from(raw, &mut p);
    if !p.is_empty() {
        return Err(p);
    }
    Ok(Campaign {
        name: raw.name.value.clone(),
        domain: domain.unwrap_or_default(),
        paused: raw.paused.as_ref().is_some_and(|b| b.value),
        urls,
        budget: budget.value,
        buy,
        filters,
        autobuyers,
        project_id,
        renamed_from,
        account,
    })
}

/// `account`: a valid account id (whether the accounts file knows it is checked where the
/// file is read: `campaign::accounts`); absent, the default account.
fn account(raw: &RawCampaign, p: &mut Problems) -> String {
    match &raw.account {
        Some(a) => {
            if !linkrunner_domain::account::valid_id(&a.value) {
                p.at(
                    a.pos,
                    format!(
                        "`account` `{}` must be 1 to 63 lowercase letters, digits or `-`, starting with a letter or digit (an `id` of the accounts file)",
                        a.value
                    ),
                );
            }
            a.value.clone()
        }
        None => linkrunner_domain::account::DEFAULT_ACCOUNT.to_string(),
    }
}

/// `renamed_from`: a valid campaign name, and not the campaign's own (a rename to itself
/// would hand nothing anywhere, and says the file was edited wrongly).
fn renamed_from(raw: &RawCampaign, p: &mut Problems) -> Option<String> {
    let old = raw.renamed_from.as_ref()?;
    check_name(old, p);
    if old.value == raw.name.value {
        p.at(
            old.pos,
            format!(
                "`renamed_from` is this campaign's own name `{}`; give the name it had before, or remove the key",
                old.value
            ),
        );
    }
    Some(old.value.clone())
}

/// An autobuyer's `moved_from`: a valid campaign name, and not this campaign's own (the
/// autobuyer would move nowhere).
fn moved_from(raw: &RawCampaign, p: &mut Problems) {
    for a in &raw.autobuyers {
        let Some(from) = &a.value.moved_from else {
            continue;
        };
        check_name(from, p);
        if from.value == raw.name.value {
            p.at(
                from.pos,
                format!(
                    "autobuyer `{}`: `moved_from` is this campaign's own name `{}`; give the campaign whose file declared it, or remove the key (renaming an autobuyer within one file replaces it)",
                    a.value.name.value, from.value
                ),
            );
        }
    }
}

fn domain(d: &At<String>, p: &mut Problems) -> Option<String> {
    rules::normalize_domain(&d.value)
        .map_err(|e| p.at(d.pos, e))
        .ok()
}

fn urls(raw: &At<Vec<RawUrl>>, domain: Option<&str>, p: &mut Problems) -> Vec<PromotedUrl> {
    if raw.value.is_empty() {
        p.at(raw.pos, "`urls` is empty; list at least one promoted URL");
    }
    if raw.value.len() > MAX_URLS {
        p.at(raw.pos, format!("`urls` lists more than {MAX_URLS} URLs"));
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(raw.value.len());
    for u in &raw.value {
        let url = promoted_url(&u.url, domain, p);
        if let Some(url) = &url
            && !seen.insert(url.clone())
        {
            p.at(
                u.url.pos,
                format!("URL `{url}` is listed twice; give it one entry with all its texts"),
            );
        }
        let texts = texts(&u.texts, p);
        out.push(PromotedUrl {
            url: url.unwrap_or_else(|| u.url.value.clone()),
            texts,
            url_id: u.url_id.as_ref().map(|i| i.value),
            text_ids: u
                .texts
                .value
                .iter()
                .filter_map(|t| Some((t.value.text.clone(), t.value.text_id?)))
                .collect(),
        });
    }
    out
}

/// The normalised URL, or `None` when it is not a URL on the domain (already reported).
fn promoted_url(u: &At<String>, domain: Option<&str>, p: &mut Problems) -> Option<String> {
    let Some(domain) = domain else {
        return None; // the broken domain is already reported; a second message per URL adds nothing
    };
    rules::check_url_on_domain(&u.value, domain)
        .map_err(|e| p.at(u.pos, e))
        .ok()
}

fn texts(raw: &At<Vec<At<RawText>>>, p: &mut Problems) -> Vec<String> {
    if raw.value.is_empty() {
        p.at(
            raw.pos,
            "`texts` is empty; give each URL at least one anchor text",
        );
    }
    if raw.value.len() > MAX_TEXTS {
        p.at(
            raw.pos,
            format!("`texts` lists more than {MAX_TEXTS} texts"),
        );
    }
    let mut seen = HashSet::new();
    for t in &raw.value {
        if let Err(e) = rules::check_text(&t.value.text) {
            p.at(t.pos, e);
        } else if !seen.insert(t.value.text.as_str()) {
            p.at(t.pos, "this text is listed twice for the same URL");
        }
    }
    raw.value.iter().map(|t| t.value.text.clone()).collect()
}
