//! The marketplace's spelling of a respelt URL (issue 32). `Content.addTexts` names a URL by
//! its text, not its id: sent under the file's new spelling, it makes the marketplace create
//! a second URL, and the journal would re-point the file's spelling to it. So the journal keeps
//! the spelling the marketplace created or adopted the URL with (`RemoteIds::market_urls`),
//! every call naming a URL by text sends that one, and what comes back is recorded under the
//! file's spelling, which is what `plan` and `status` show. Used by `effects::steps`; tested
//! here and by `tests/it` `engine::respell::*` on PostgreSQL and SQLite.

use crate::campaign::Campaign;
use crate::decide::recorded::Recorded;
use linkrunner_domain::market::{CreatedUrl, UrlTexts};

/// `urls` (the file's spellings) as the marketplace must read them: each URL under the
/// spelling it knows it by, so its texts land on the URL id the journal holds.
pub(crate) fn to_market(r: &Recorded, urls: &[UrlTexts]) -> Vec<UrlTexts> {
    urls.iter()
        .map(|u| UrlTexts {
            url: r.ids.market_url(&u.url).to_string(),
            texts: u.texts.clone(),
        })
        .collect()
}

/// What the marketplace created for `sent` (its answer is matched to the request, in the
/// request's order), under the file's spellings of `urls`.
pub(crate) fn from_market(urls: &[UrlTexts], created: Vec<CreatedUrl>) -> Vec<CreatedUrl> {
    created
        .into_iter()
        .zip(urls)
        .map(|(mut c, u)| {
            c.url.clone_from(&u.url);
            c
        })
        .collect()
}

/// Why a URL of `c` is refused: it is the marketplace's spelling of a URL the journal holds
/// under another spelling, and the file does not name that URL's id. Added as a new URL, its
/// texts would be sent under that spelling and land on the respelt URL, one id under two rows.
pub(crate) fn taken_spelling(c: &Campaign, r: &Recorded) -> Result<(), String> {
    for u in &c.urls {
        let held = r
            .ids
            .market_urls
            .iter()
            .find(|(file, market)| *market == &u.url && *file != &u.url);
        let Some((file, _)) = held else { continue };
        let Some(&id) = r.ids.urls.get(file) else {
            continue;
        };
        if u.url_id != Some(id) {
            return Err(format!(
                "URL {} is the marketplace's spelling of url id {id}, recorded as {file}: the marketplace would add its texts to that URL; \
                 give it `url_id: {id}` (and drop {file}) to spell it so again",
                u.url
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::caps::caps;
    use linkrunner_domain::market::CreatedText;

    const OLD: &str = "https://acme.example/page-1";
    const NEW: &str = "https://acme.example/Page-1";

    fn campaign(urls: &str) -> Campaign {
        let yaml = format!(
            "name: acme\ndomain: https://acme.example\nurls:\n{urls}\
             budget: {{monthly: 1000, max_link_price: 100, daily_links: 1, total_links: 9}}\n"
        );
        crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap()
    }

    /// The journal once `OLD` (url id 1026) was respelt `NEW`.
    fn respelt() -> Recorded {
        let c = campaign(&format!("  - url: {NEW}\n    texts: [\"#a#a#/a#\"]\n"));
        let mut r = Recorded::unrecorded_with(&caps(&c), Vec::new());
        r.ids.urls.insert(NEW.into(), 1026);
        r.ids.urls.insert("https://acme.example/other".into(), 1027);
        r.ids.market_urls.insert(NEW.into(), OLD.into());
        r
    }

    fn texts(url: &str, text: &str) -> UrlTexts {
        UrlTexts {
            url: url.into(),
            texts: vec![text.into()],
        }
    }

    #[test]
    fn texts_of_a_respelt_url_are_sent_under_the_marketplace_spelling_and_others_as_written() {
        let file = [
            texts(NEW, "#a#b#/a#"),
            texts("https://acme.example/other", "#a#c#/a#"),
        ];
        let sent = to_market(&respelt(), &file);
        assert_eq!(sent[0], texts(OLD, "#a#b#/a#"));
        assert_eq!(sent[1], file[1]);
    }

    #[test]
    fn what_the_marketplace_created_is_recorded_under_the_file_spelling() {
        let file = [texts(NEW, "#a#b#/a#")];
        let created = vec![CreatedUrl {
            url: OLD.into(),
            url_id: 1026,
            texts: vec![CreatedText {
                text: "#a#b#/a#".into(),
                text_id: 77,
            }],
        }];
        let back = from_market(&file, created);
        assert_eq!(back[0].url, NEW);
        assert_eq!(back[0].url_id, 1026);
        assert_eq!(back[0].texts[0].text_id, 77);
    }

    #[test]
    fn the_marketplace_spelling_of_a_respelt_url_is_refused_as_a_new_url() {
        let c = campaign(&format!(
            "  - url: {NEW}\n    url_id: 1026\n    texts: [\"#a#a#/a#\"]\n  - url: {OLD}\n    texts: [\"#a#b#/a#\"]\n"
        ));
        let why = taken_spelling(&c, &respelt()).unwrap_err();
        assert!(
            why.contains("URL https://acme.example/page-1 is the marketplace's spelling of url id 1026, recorded as https://acme.example/Page-1"),
            "{why}"
        );
    }

    #[test]
    fn spelling_a_url_back_with_its_id_is_not_refused() {
        let c = campaign(&format!(
            "  - url: {OLD}\n    url_id: 1026\n    texts: [\"#a#a#/a#\"]\n"
        ));
        assert_eq!(taken_spelling(&c, &respelt()), Ok(()));
        assert_eq!(
            taken_spelling(
                &campaign(&format!("  - url: {NEW}\n    texts: [\"#a#a#/a#\"]\n")),
                &respelt()
            ),
            Ok(())
        );
    }
}
