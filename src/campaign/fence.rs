//! The ownership fence across campaign files (issue 24): one project, one URL id, one
//! autobuyer and one domain belong to at most one file. Two files for one domain would each
//! create (or adopt) a project with its own cap, two owners of one URL id would each buy for
//! it under their own cap (issue 32), and two owners of one autobuyer would switch it against
//! each other; so each such clash is a problem in every file involved, naming the others and
//! where they say it, and those files contribute no campaign (the other files are
//! unaffected). The journal's owners, live or removed, are checked at the pass
//! (`decide::rename::claimed_id`).
//!
//! Ownership is per marketplace account (issue 34): ids are an account's own (two accounts,
//! maybe two marketplaces, may both have a project 5000), and two of an agency's clients may
//! both promote one site, each in its own account. So files clash only within one account (the
//! files' `account` keys; none: the default account).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::diag::Diagnostic;
use super::raw::RawCampaign;
use super::span::{At, Pos};

/// What one file claims to own, with where it says so.
#[derive(Debug, Clone, Default)]
pub(super) struct Claims {
    /// The account the file spends in (as written; `validate` checks its spelling): claims
    /// of two accounts never clash.
    account: String,
    /// The domain's host (lowercase) and its port when it is not the scheme's default.
    domain: Option<At<String>>,
    project: Option<At<i64>>,
    /// The URLs' `url_id`s.
    urls: Vec<At<i64>>,
    autobuyers: Vec<At<i64>>,
}

impl Claims {
    pub(super) fn of(raw: &RawCampaign) -> Claims {
        Claims {
            account: raw.account.as_ref().map_or_else(
                || linkrunner_domain::account::DEFAULT_ACCOUNT.to_string(),
                |a| a.value.clone(),
            ),
            domain: site_key(&raw.domain.value).map(|k| At::new(k, raw.domain.pos)),
            project: raw.project_id.clone(),
            urls: raw
                .urls
                .value
                .iter()
                .filter_map(|u| u.url_id.clone())
                .collect(),
            autobuyers: raw
                .autobuyers
                .iter()
                .filter_map(|a| a.value.id.clone())
                .collect(),
        }
    }
}

/// The site a domain names, folded so that `https://ACME.example:443`,
/// `https://www.acme.example` and `https://acme.example` (or `http://acme.example`) are one
/// site: host case, a leading `www.`, the scheme and its default port do not make a second
/// site. A team that writes the domain with `www.` in one file and without it in another has
/// one site, and two projects for it would each buy against their own cap.
pub(crate) fn site_key(domain: &str) -> Option<String> {
    let u = url::Url::parse(domain.trim()).ok()?;
    let host = u.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    Some(match u.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// One clash: the file at `index` claims `what`, which the files `others` claim too.
pub(super) struct Clash {
    pub(crate) index: usize,
    pub(crate) diagnostic: Diagnostic,
}

/// Every clash among `files` (path and claims, in load order).
pub(super) fn clashes(files: &[(PathBuf, Claims)]) -> Vec<Clash> {
    let mut out = Vec::new();
    let domains = group(files, |c| c.domain.iter().cloned().collect());
    report(files, &domains, &mut out, |k| {
        format!("domain `{k}` is also the domain of")
    });
    let projects = group(files, |c| id_keys(&c.project));
    report(files, &projects, &mut out, |k| {
        format!("`project_id` {k} is also adopted by")
    });
    let urls = group(files, |c| id_keys(&c.urls));
    report(files, &urls, &mut out, |k| {
        format!("`url_id` {k} is also given in")
    });
    let autobuyers = group(files, |c| id_keys(&c.autobuyers));
    report(files, &autobuyers, &mut out, |k| {
        format!("autobuyer id {k} is also adopted by")
    });
    out
}

/// Claims by account and key: the same key in two accounts is two groups.
type Groups = BTreeMap<(String, String), Vec<(usize, Pos)>>;

/// Ids as the texts [`group`] keys by, each where it stands.
fn id_keys<'a>(ids: impl IntoIterator<Item = &'a At<i64>>) -> Vec<At<String>> {
    ids.into_iter()
        .map(|p| At::new(p.value.to_string(), p.pos))
        .collect()
}

fn group(files: &[(PathBuf, Claims)], keys: impl Fn(&Claims) -> Vec<At<String>>) -> Groups {
    let mut m: Groups = BTreeMap::new();
    for (i, (_, c)) in files.iter().enumerate() {
        for k in keys(c) {
            let entry = m.entry((c.account.clone(), k.value)).or_default();
            // Twice in one file is that file's own problem (checked by `validate`).
            if !entry.iter().any(|(j, _)| *j == i) {
                entry.push((i, k.pos));
            }
        }
    }
    m
}

fn report(
    files: &[(PathBuf, Claims)],
    groups: &Groups,
    out: &mut Vec<Clash>,
    what: impl Fn(&str) -> String,
) {
    for ((_, key), claims) in groups.iter().filter(|(_, v)| v.len() > 1) {
        for &(i, pos) in claims {
            let others: Vec<String> = claims
                .iter()
                .filter(|(j, _)| *j != i)
                .map(|(j, at)| display(&files[*j].0, *at))
                .collect();
            let msg = format!(
                "{} {}; one project, URL id, autobuyer or domain belongs to one campaign file \
                 (see docs/adoption.md, \"a team with a duplicate project\")",
                what(key),
                named(&others)
            );
            out.push(Clash {
                index: i,
                diagnostic: Diagnostic::new(&files[i].0, pos, msg),
            });
        }
    }
}

/// Most other files a clash names: each file of a clash gets its own message, so naming
/// every other file would make n files' messages grow as n² (200 files copied from one
/// template: 200 messages of 199 paths each).
const NAMED_OTHERS: usize = 3;

/// `a, b, c` or `a, b, c and 196 more`.
fn named(others: &[String]) -> String {
    let shown = others[..others.len().min(NAMED_OTHERS)].join(", ");
    match others.len().saturating_sub(NAMED_OTHERS) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// `path:line:column`: where the other file says it, so both ends of a clash are found.
fn display(p: &Path, at: Pos) -> String {
    format!("{}:{}:{}", p.display(), at.line, at.column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clash_of_many_files_names_a_few_others_and_counts_the_rest() {
        let files: Vec<(PathBuf, Claims)> = (0..200)
            .map(|k| {
                let claims = Claims {
                    domain: Some(At::new("acme.example".to_string(), Pos::FILE)),
                    ..Claims::default()
                };
                (PathBuf::from(format!("c/shop-{k:03}.yaml")), claims)
            })
            .collect();
        let out = clashes(&files);
        assert_eq!(out.len(), 200, "every file of the clash has its problem");
        let first = out[0].diagnostic.to_string();
        assert!(
            first.contains(
                "is also the domain of c/shop-001.yaml:1:1, c/shop-002.yaml:1:1, c/shop-003.yaml:1:1 and 196 more;"
            ),
            "{first}"
        );
        assert!(first.len() < 400, "{} bytes: {first}", first.len());
        let two = clashes(&files[..2]);
        assert!(
            two[0]
                .diagnostic
                .to_string()
                .contains("is also the domain of c/shop-001.yaml:1:1;"),
            "two files name each other whole"
        );
    }

    #[test]
    fn host_case_scheme_and_default_ports_fold_into_one_site() {
        let k = site_key("https://acme.example").unwrap();
        assert_eq!(
            site_key("https://ACME.example:443").as_deref(),
            Some(k.as_str())
        );
        assert_eq!(
            site_key("http://acme.example:80").as_deref(),
            Some(k.as_str())
        );
        assert_eq!(
            site_key("http://acme.example/").as_deref(),
            Some(k.as_str())
        );
        assert_eq!(
            site_key("https://WWW.acme.example").as_deref(),
            Some(k.as_str()),
            "a leading www. is the same site"
        );
        assert_ne!(site_key("https://acme.example:8443"), Some(k.clone()));
        assert_ne!(
            site_key("https://wwwacme.example"),
            Some(k.clone()),
            "only a whole `www.` label folds"
        );
        assert_ne!(site_key("https://shop.acme.example"), Some(k));
    }
}
