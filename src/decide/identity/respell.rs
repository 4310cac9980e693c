//! Respelt URLs keep their identity (issue 32): a promoted URL whose text changed but whose
//! `url_id` is the one the journal holds for it is the same URL. Its journal row is re-spelt
//! at the next pass, in one transaction (`store::Campaigns::respell_urls`, run by
//! `effects::rename`): its texts and the specs of the autobuyers that cover it carry over, so
//! nothing is added on the marketplace. No page is bought again: a purchase's key names the
//! URL id, not its spelling (`decide::keys::purchase`), so it needs no respelling.
//! Without `url_id` a new spelling is a new URL. These are the rules: which URLs are respelt,
//! what refuses a `url_id`, the record `plan` plans against.

use serde::Serialize;

use crate::campaign::Campaign;
use crate::decide::caps::autobuyer_fingerprint;
use crate::decide::recorded::Recorded;

/// One URL whose journal row takes the file's new spelling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Respelt {
    pub(crate) url_id: i64,
    /// The spelling the journal holds.
    pub(crate) from: String,
    /// The file's spelling.
    pub(crate) to: String,
    /// Links the project holds on it (ours and others' not released): they carry over.
    pub(crate) links: usize,
}

impl Respelt {
    /// `respell https://a.example/old → https://a.example/new (url id 11 and its 3 links carry over)`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "respell {} → {} (url id {} and its {} link{} carry over)",
            self.from,
            self.to,
            self.url_id,
            self.links,
            if self.links == 1 { "" } else { "s" }
        )
    }
}

/// What a pass hands over for a file's respelt URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Respelling {
    pub(crate) urls: Vec<Respelt>,
    /// Recorded autobuyers whose spec is the file's once the respelt URLs are spelt as
    /// before: their new spec fingerprint (by name), so the respelling replaces none of them.
    pub(crate) fingerprints: Vec<(String, String)>,
}

impl Respelling {
    pub(crate) fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

/// The URLs of `c` whose `url_id` the journal holds under another spelling, or why a
/// `url_id` of the file is refused: an id recorded for a URL the file still lists, a URL
/// recorded with another id, the marketplace's spelling of a respelt URL without its id
/// (`decide::spelling`), or (in a project linkrunner created, where the journal knows
/// every URL) an id the journal does not hold. In an adopted project an unknown id is the
/// adoption's to record.
pub(crate) fn respelling(c: &Campaign, r: &Recorded) -> Result<Respelling, String> {
    super::spelling::taken_spelling(c, r)?;
    let mut urls = Vec::new();
    for u in &c.urls {
        let Some(id) = u.url_id else { continue };
        match r.ids.urls.get(&u.url) {
            Some(&recorded) if recorded == id => continue,
            Some(&recorded) => {
                return Err(format!(
                    "URL {} is recorded with url id {recorded}, not {id}: a URL's id is never re-pointed; correct `url_id` in the file",
                    u.url
                ));
            }
            None => {}
        }
        let old = r.ids.urls.iter().find(|(_, rid)| **rid == id);
        match old {
            Some((old, _)) if c.urls.iter().any(|x| &x.url == old) => {
                return Err(format!(
                    "`url_id` {id} on {} is the recorded id of {old}, which the file still lists: one URL, one id",
                    u.url
                ));
            }
            Some((old, _)) => urls.push(Respelt {
                url_id: id,
                from: old.clone(),
                to: u.url.clone(),
                links: links_on(r, id),
            }),
            None if c.project_id.is_none() => {
                return Err(format!(
                    "`url_id` {id} on {} is not a URL the journal holds for campaign {}: in a project linkrunner created, \
                     `url_id` keeps a respelt URL's identity and names one of its recorded URLs (`status` and `history` show them); \
                     remove it to add the new spelling as a new URL",
                    u.url, c.name
                ));
            }
            None => {}
        }
    }
    let fingerprints = match urls.is_empty() {
        true => Vec::new(),
        false => fingerprints(c, r, &urls),
    };
    Ok(Respelling { urls, fingerprints })
}

fn links_on(r: &Recorded, url_id: i64) -> usize {
    let held = r
        .held
        .iter()
        .filter(|h| h.released.is_none() && h.url_id == url_id);
    let foreign = r
        .foreign
        .iter()
        .filter(|f| f.released.is_none() && f.url_id == Some(url_id));
    held.count() + foreign.count()
}

/// The recorded autobuyers whose fingerprint is the file's spec with the respelt URLs spelt
/// as before: the same spec, their fingerprint under the new spelling.
fn fingerprints(c: &Campaign, r: &Recorded, urls: &[Respelt]) -> Vec<(String, String)> {
    let before = |url: &str| {
        urls.iter()
            .find(|u| u.to == url)
            .map_or_else(|| url.to_string(), |u| u.from.clone())
    };
    let mut out = Vec::new();
    for ab in &c.autobuyers {
        let Some(rec) = r.ids.autobuyers.get(&ab.name) else {
            continue;
        };
        let mut old = ab.clone();
        for u in &mut old.urls {
            u.url = before(&u.url);
        }
        let now = autobuyer_fingerprint(c, ab);
        if now != rec.spec_fingerprint && autobuyer_fingerprint(c, &old) == rec.spec_fingerprint {
            out.push((ab.name.clone(), now));
        }
    }
    out
}

/// `r` as it reads once `s` is handed over: what `plan` plans against before the pass has
/// re-spelt the journal (the same record the pass then reads).
pub(crate) fn applied(r: &Recorded, s: &Respelling) -> Recorded {
    let mut r = r.clone();
    for u in &s.urls {
        if let Some(id) = r.ids.urls.remove(&u.from) {
            r.ids.urls.insert(u.to.clone(), id);
        }
        // The first spelling the marketplace knew stays, over any number of respellings.
        let market = r
            .ids
            .market_urls
            .remove(&u.from)
            .unwrap_or_else(|| u.from.clone());
        r.ids.market_urls.insert(u.to.clone(), market);
        let texts: Vec<_> = r
            .ids
            .texts
            .keys()
            .filter(|(url, _)| url == &u.from)
            .cloned()
            .collect();
        for (url, text) in texts {
            if let Some(id) = r.ids.texts.remove(&(url, text.clone())) {
                r.ids.texts.insert((u.to.clone(), text), id);
            }
        }
    }
    for (name, fp) in &s.fingerprints {
        if let Some(rec) = r.ids.autobuyers.get_mut(name) {
            rec.spec_fingerprint = fp.clone();
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::caps::caps;
    use linkrunner_domain::money::Money;

    const OLD: &str = "https://acme.example/running-shoes";
    const NEW: &str = "https://acme.example/running_shoes";

    fn campaign(url: &str, extra: &str) -> Campaign {
        let yaml = format!(
            "name: acme\ndomain: https://acme.example\nurls:\n  - url: {url}\n{extra}    texts: [\"#a#a#/a#\"]\n\
             budget: {{monthly: 1000, max_link_price: 100, daily_links: 1, total_links: 9}}\n\
             filters: [{{name: f}}]\n\
             autobuyers:\n  - name: ab\n    filter: f\n    state: running\n    urls: [{{url: \"{url}\", monthly_budget: 300, total_links_limit: 3, daily_links_limit: 1}}]\n"
        );
        crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap()
    }

    /// The journal after `campaign(OLD, "")` was worked on: URL 11, its text, the autobuyer.
    fn recorded() -> Recorded {
        let before = campaign(OLD, "");
        let mut r = Recorded::unrecorded_with(&caps(&before), Vec::new());
        r.ids.urls.insert(OLD.into(), 11);
        r.ids.texts.insert((OLD.into(), "#a#a#/a#".into()), 21);
        r.ids.autobuyers.insert(
            "ab".into(),
            Recorded::running_autobuyer_for_tests(
                9,
                &autobuyer_fingerprint(&before, &before.autobuyers[0]),
                Money::from_rubles(300),
            ),
        );
        r
    }

    #[test]
    fn a_url_respelt_with_its_recorded_id_keeps_its_row_texts_and_autobuyer_spec() {
        let c = campaign(NEW, "    url_id: 11\n");
        let r = recorded();
        let s = respelling(&c, &r).unwrap();
        assert_eq!(
            s.urls,
            vec![Respelt {
                url_id: 11,
                from: OLD.into(),
                to: NEW.into(),
                links: 0
            }]
        );
        let after = applied(&r, &s);
        assert_eq!(after.ids.urls.get(NEW), Some(&11));
        assert_eq!(
            after.ids.market_url(NEW),
            OLD,
            "the marketplace's spelling stays"
        );
        assert!(!after.ids.urls.contains_key(OLD));
        assert_eq!(
            after.ids.texts.get(&(NEW.into(), "#a#a#/a#".into())),
            Some(&21)
        );
        assert_eq!(
            after.ids.autobuyers["ab"].spec_fingerprint,
            autobuyer_fingerprint(&c, &c.autobuyers[0]),
            "the autobuyer's spec is unchanged: not replaced"
        );
        assert!(respelling(&c, &after).unwrap().is_empty(), "honoured once");
    }

    #[test]
    fn an_autobuyer_whose_spec_changed_too_keeps_its_old_fingerprint_and_is_replaced() {
        let c = campaign(NEW, "    url_id: 11\n");
        let mut c2 = c.clone();
        c2.autobuyers[0].urls[0].monthly_budget = Money::from_rubles(400);
        let s = respelling(&c2, &recorded()).unwrap();
        assert_eq!(s.urls.len(), 1);
        assert!(s.fingerprints.is_empty());
    }

    #[test]
    fn without_url_id_a_new_spelling_is_a_new_url() {
        let s = respelling(&campaign(NEW, ""), &recorded()).unwrap();
        assert!(s.is_empty());
    }

    #[test]
    fn an_id_the_journal_does_not_hold_is_refused_in_a_created_project_only() {
        let c = campaign(NEW, "    url_id: 12\n");
        let why = respelling(&c, &recorded()).unwrap_err();
        assert!(why.contains("`url_id` 12 on https://acme.example/running_shoes is not a URL the journal holds for campaign acme"), "{why}");
        let mut adopting = c.clone();
        adopting.project_id = Some(5000);
        assert!(
            respelling(&adopting, &recorded()).unwrap().is_empty(),
            "the adoption records it"
        );
    }

    #[test]
    fn a_url_recorded_with_another_id_or_an_id_of_a_listed_url_is_refused() {
        let why = respelling(&campaign(OLD, "    url_id: 12\n"), &recorded()).unwrap_err();
        assert!(why.contains("is recorded with url id 11, not 12"), "{why}");
        let mut c = campaign(NEW, "    url_id: 11\n");
        let mut old = c.urls[0].clone();
        old.url = OLD.into();
        old.url_id = None;
        c.urls.push(old);
        let why = respelling(&c, &recorded()).unwrap_err();
        assert!(why.contains("is the recorded id of https://acme.example/running-shoes, which the file still lists"), "{why}");
    }

    #[test]
    fn the_plan_line_names_the_id_and_its_links() {
        let r = Respelt {
            url_id: 11,
            from: OLD.into(),
            to: NEW.into(),
            links: 3,
        };
        assert_eq!(
            r.describe(),
            "respell https://acme.example/running-shoes → https://acme.example/running_shoes (url id 11 and its 3 links carry over)"
        );
    }
}
