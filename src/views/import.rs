//! `linkrunner import`: what the link list (operation 6) shows of an existing project, written
//! as a campaign file that adopts it, for the team to review. Pure: the command reads the list
//! and writes the file; this renders it.
//!
//! The API cannot list URLs, texts or autobuyers, nor show a URL's address or a text's words:
//! the file carries every `url_id` and `text_id` the list names, each with a placeholder for
//! the team to replace, and caps equal to today's commitment (every held link at its rent, or
//! at `unknown_link_rent` when the list shows none), so nothing new fits until the team
//! raises them on purpose. Everything else is a commented example.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use linkrunner_domain::market::{LinkRecord, ListCompleteness};
use linkrunner_domain::money::Money;

/// What `import` read and was told.
#[derive(Debug, Clone)]
pub(crate) struct ImportInput<'a> {
    /// The campaign's name (already checked: `[a-z0-9][a-z0-9-]{0,62}`).
    pub(crate) name: &'a str,
    /// The account the project is in (`import --account`); `None`: the default account, and
    /// the file names none.
    pub(crate) account: Option<&'a str>,
    /// The domain as the file writes it (absolute, no trailing slash).
    pub(crate) domain: &'a str,
    pub(crate) project_id: i64,
    /// The links the project holds (leaving ones already left out).
    pub(crate) held: &'a [LinkRecord],
    /// Listed links left out because their status says they left.
    pub(crate) leaving: usize,
    pub(crate) completeness: &'a ListCompleteness,
    /// `--unknown-link-rent`; without it, the highest rent the list shows.
    pub(crate) unknown_link_rent: Option<Money>,
    pub(crate) generated_at: DateTime<Utc>,
}

/// Why no file can be written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ImportError {
    #[error(
        "the link list shows no rent for {unpriced} of its {held} link(s) and no link with a rent: \
         give --unknown-link-rent RUB (what such a link counts against the cap)"
    )]
    NoRentKnown { unpriced: usize, held: usize },
}

/// What the file's figures come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Commitment {
    /// Every held link at its rent, or at `unknown_link_rent`.
    monthly: Money,
    unknown_link_rent: Money,
    /// The highest rent counted for one link.
    max_link_price: Money,
    unpriced: usize,
}

/// Today's commitment of the held links: a link without a rent counts at `unknown_link_rent`
/// (the flag, else the highest rent shown: never a lower guess than the list allows).
pub(crate) fn commitment(
    held: &[LinkRecord],
    unknown_link_rent: Option<Money>,
) -> Result<Commitment, ImportError> {
    let shown_max = held.iter().filter_map(|l| l.price).max();
    let unpriced = held.iter().filter(|l| l.price.is_none()).count();
    let unknown = match (unknown_link_rent, shown_max) {
        (Some(m), _) => m,
        (None, Some(m)) => m,
        (None, None) => {
            return Err(ImportError::NoRentKnown {
                unpriced,
                held: held.len(),
            });
        }
    };
    let monthly = held.iter().fold(Money::ZERO, |acc, l| {
        acc.checked_add(l.price.unwrap_or(unknown))
            .unwrap_or(Money::MAX)
    });
    let max_link_price = shown_max.map_or(unknown, |m| m.max(unknown));
    Ok(Commitment {
        monthly,
        unknown_link_rent: unknown,
        max_link_price,
        unpriced,
    })
}

/// The campaign file for `input`.
pub(crate) fn campaign_file(input: &ImportInput<'_>) -> Result<String, ImportError> {
    let money = commitment(input.held, input.unknown_link_rent)?;
    let mut out = String::new();
    header(&mut out, input, &money);
    let _ = writeln!(out, "name: {}", input.name);
    if let Some(account) = input.account {
        let _ = writeln!(out, "account: {account}");
    }
    let _ = writeln!(out, "domain: {}", quoted(input.domain));
    let _ = writeln!(out, "project_id: {}", input.project_id);
    urls(&mut out, input);
    budget(&mut out, input, &money);
    out.push_str(COMMENTED_REST);
    Ok(out)
}

fn header(out: &mut String, input: &ImportInput<'_>, money: &Commitment) {
    let _ = writeln!(
        out,
        "# yaml-language-server: $schema=../schema/campaign.schema.json\n\
         # Written by `linkrunner import --project-id {} --domain {}` at {}.\n\
         # It adopts project {}: linkrunner creates no project, counts every link below as held\n\
         # and never buys its page again for that URL. REVIEW IT BEFORE YOU COMMIT IT:\n\
         #  - replace each placeholder `url` with the address the marketplace's UI shows for its\n\
         #    url_id, and each placeholder text with its words (the API shows only the ids);\n\
         #  - the caps equal today's commitment, so nothing new fits until you raise them;\n\
         #  - add `id:` entries for autobuyers you started in the UI (the API cannot list them).",
        input.project_id,
        input.domain,
        input.generated_at.format("%Y-%m-%d %H:%M UTC"),
        input.project_id
    );
    let _ = writeln!(
        out,
        "# The link list showed {} held link(s) ({} without a rent), {} leaving; {}.",
        input.held.len(),
        money.unpriced,
        input.leaving,
        completeness_note(input.completeness)
    );
}

fn completeness_note(c: &ListCompleteness) -> String {
    match c {
        ListCompleteness::AllPages { pages } => {
            format!("paging showed every link ({pages} page(s))")
        }
        ListCompleteness::NoPagingFields => "its answer had no paging fields, so it MAY BE CUT: \
             links it did not show are missing here and in the caps"
            .to_string(),
        ListCompleteness::Partial { reason } => format!(
            "it was NOT READ WHOLE ({reason}): links it did not show are missing here and in the caps"
        ),
    }
}

/// What the list shows held on one `url_id`.
#[derive(Debug, Default)]
struct UrlHoldings {
    text_ids: BTreeSet<i64>,
    links: usize,
    /// The rent the list shows for them (links without one add nothing here).
    rent: Money,
}

/// Per `url_id`, what is held there; and how many links the list shows without a URL id.
fn by_url(held: &[LinkRecord]) -> (BTreeMap<i64, UrlHoldings>, usize) {
    let mut urls: BTreeMap<i64, UrlHoldings> = BTreeMap::new();
    let mut without = 0;
    for l in held {
        let Some(url_id) = l.url_id else {
            without += 1;
            continue;
        };
        let e = urls.entry(url_id).or_default();
        e.text_ids.extend(l.text_id);
        e.links += 1;
        e.rent = e
            .rent
            .checked_add(l.price.unwrap_or(Money::ZERO))
            .unwrap_or(Money::MAX);
    }
    (urls, without)
}

fn urls(out: &mut String, input: &ImportInput<'_>) {
    let (urls, without) = by_url(input.held);
    if without > 0 {
        let _ = writeln!(
            out,
            "# {without} held link(s) have no url_id in the list: they count against the cap all the same."
        );
    }
    if urls.is_empty() {
        let _ = writeln!(
            out,
            "# The list names no URL of this project: add the URLs to promote.\n\
             urls:\n  - url: {}\n    texts:\n      - \"#a#TODO anchor#/a#\"",
            quoted(&format!("{}/", input.domain))
        );
        return;
    }
    out.push_str("urls:\n");
    for (url_id, h) in &urls {
        let (texts, links, rent) = (&h.text_ids, h.links, h.rent);
        let _ = writeln!(
            out,
            "  # url_id {url_id}: {links} held link(s), {rent} RUB/month shown\n  \
             - url: {}   # TODO: the address of url_id {url_id}\n    url_id: {url_id}\n    texts:",
            quoted(&format!("{}/linkrunner-import/url-{url_id}", input.domain))
        );
        if texts.is_empty() {
            let _ = writeln!(
                out,
                "      # the list names no text of url_id {url_id}: this one would be ADDED; name an existing one instead\n      \
                 - \"#a#TODO anchor#/a#\""
            );
        }
        for text_id in texts {
            let _ = writeln!(
                out,
                "      - {{ text: \"#a#TODO text {text_id}#/a#\", text_id: {text_id} }}   # TODO: its words"
            );
        }
    }
}

fn budget(out: &mut String, input: &ImportInput<'_>, money: &Commitment) {
    let monthly = money.monthly.max(money.max_link_price);
    let links = u32::try_from(input.held.len()).unwrap_or(u32::MAX).max(1);
    let _ = writeln!(
        out,
        "budget:\n  \
         monthly: {monthly}   # today's commitment; raise it to let linkrunner buy\n  \
         max_link_price: {}\n  \
         unknown_link_rent: {}   # what a held link without a rent in the list counts\n  \
         daily_links: 1\n  \
         total_links: {links}",
        money.max_link_price, money.unknown_link_rent
    );
}

/// Strings are written double-quoted with JSON escapes, which YAML reads alike.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

const COMMENTED_REST: &str = "\
# Everything below is for you to decide; uncomment what you want.
# paused: false
# buy:
#   schedule: \"0 9 * * *\"
#   link_type_id: 1
#   per_run: 1
#   search: { price_rent_from: 10, price_rent_to: 150 }
# filters:
#   - { name: cheap, price_article_from: 0, price_article_to: 500, price_rent_from: 10, price_rent_to: 80 }
# autobuyers:
#   - name: ui-autobuyer
#     id: 0                # its id in the marketplace's UI: adopts it (stopped or started to match `state`)
#     filter: cheap
#     auto_approve: false
#     state: running
#     urls:
#       - { url: https://..., monthly_budget: 1000, total_links_limit: 20, daily_links_limit: 1 }
";

#[cfg(test)]
mod tests {
    use super::*;

    fn link(url: Option<i64>, text: Option<i64>, rub: Option<i64>) -> LinkRecord {
        LinkRecord {
            url_id: url,
            text_id: text,
            price: rub.map(Money::from_rubles),
            ..LinkRecord::default()
        }
    }

    #[test]
    fn a_link_without_a_rent_counts_at_the_highest_rent_shown_unless_told() {
        let held = [
            link(Some(1), Some(2), Some(100)),
            link(Some(1), Some(2), Some(40)),
            link(Some(1), None, None),
        ];
        let c = commitment(&held, None).unwrap();
        assert_eq!(
            (c.monthly, c.unknown_link_rent, c.unpriced),
            (Money::from_rubles(240), Money::from_rubles(100), 1)
        );
        let told = commitment(&held, Some(Money::from_rubles(300))).unwrap();
        assert_eq!(
            (told.monthly, told.max_link_price),
            (Money::from_rubles(440), Money::from_rubles(300))
        );
    }

    #[test]
    fn without_any_rent_shown_or_told_there_is_no_file() {
        let held = [link(Some(1), None, None)];
        assert_eq!(
            commitment(&held, None),
            Err(ImportError::NoRentKnown {
                unpriced: 1,
                held: 1
            })
        );
    }

    #[test]
    fn every_url_and_text_id_of_the_list_is_in_the_file_once() {
        let held = [
            link(Some(11), Some(21), Some(100)),
            link(Some(11), Some(21), Some(50)),
            link(Some(11), Some(22), Some(50)),
            link(Some(12), Some(23), None),
            link(None, None, Some(10)),
        ];
        let input = ImportInput {
            name: "acme-example",
            account: Some("client-b"),
            domain: "https://acme.example",
            project_id: 4711,
            held: &held,
            leaving: 0,
            completeness: &ListCompleteness::AllPages { pages: 1 },
            unknown_link_rent: None,
            generated_at: DateTime::<Utc>::UNIX_EPOCH,
        };
        let text = campaign_file(&input).unwrap();
        assert_eq!(text.matches("url_id: 11\n").count(), 1, "{text}");
        assert_eq!(text.matches("url_id: 12\n").count(), 1, "{text}");
        for id in [21, 22, 23] {
            assert_eq!(
                text.matches(&format!("text_id: {id} }}")).count(),
                1,
                "{text}"
            );
        }
        assert!(
            text.contains("monthly: 310 "),
            "100+50+50+100(unknown)+10: {text}"
        );
        assert!(text.contains("project_id: 4711\n"), "{text}");
        assert!(text.contains("\naccount: client-b\n"), "{text}");
    }
}
