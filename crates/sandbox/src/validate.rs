//! Input rules the sandbox enforces as strictly as a careful real server would: absolute
//! http(s) URLs, promoted URLs on the project's domain, and anchor texts with exactly one
//! non-blank `#a#…#/a#`.

use url::Url;

/// Parses an absolute http(s) URL with a host; the error says what is wrong.
pub(crate) fn absolute_http_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("`{text}` is not an absolute URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{text}` is not an http(s) URL"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{text}` has no host"));
    }
    Ok(url)
}

/// The host a project's URLs must live on (lower-cased by the URL parser).
pub(crate) fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_string()
}

/// `url` is on `domain_host` itself or one of its subdomains.
pub(crate) fn on_domain(url: &Url, domain_host: &str) -> bool {
    let host = host_of(url);
    host == domain_host || host.ends_with(&format!(".{domain_host}"))
}

/// Exactly one `#a#`, then exactly one `#/a#`, with a non-blank anchor between them.
pub(crate) fn anchor_text(text: &str) -> Result<(), String> {
    let opens = text.matches("#a#").count();
    let closes = text.matches("#/a#").count();
    if opens != 1 || closes != 1 {
        return Err(format!(
            "text `{text}` must hold exactly one #a#...#/a# (found {opens} #a# and {closes} #/a#)"
        ));
    }
    let start = text.find("#a#").unwrap_or_default() + 3;
    let end = text.find("#/a#").unwrap_or_default();
    if end < start {
        return Err(format!("text `{text}` closes the anchor before opening it"));
    }
    if text[start..end].trim().is_empty() {
        return Err(format!("text `{text}` has a blank anchor"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains_count_as_on_the_domain_but_lookalikes_do_not() {
        let sub = absolute_http_url("https://shop.acme.example/x").unwrap();
        let fake = absolute_http_url("https://notacme.example/x").unwrap();
        assert!(on_domain(&sub, "acme.example"));
        assert!(!on_domain(&fake, "acme.example"));
    }

    #[test]
    fn relative_and_non_http_urls_are_refused() {
        assert!(absolute_http_url("/shoes").is_err());
        assert!(absolute_http_url("ftp://acme.example/").is_err());
    }

    #[test]
    fn anchors_must_be_single_ordered_and_non_blank() {
        assert!(anchor_text("Best #a#shoes#/a# here").is_ok());
        assert!(anchor_text("no anchor").is_err());
        assert!(anchor_text("#a# #/a#").is_err());
        assert!(anchor_text("#/a#x#a#").is_err());
        assert!(anchor_text("#a#a#/a# #a#b#/a#").is_err());
    }
}
