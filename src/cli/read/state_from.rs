//! `plan --state-from URL`: fetches the recorded state a daemon serves
//! (`GET {URL}/api/v1/state`) so a review job plans without the database. Bounded: 10 s for
//! the whole request, at most [`MAX_BODY`] bytes, no redirects; every error names the URL.
//! A daemon with `--http-token-file` needs the same token: `--state-token-file` sends it as
//! `Authorization: Bearer` (marked sensitive; never in an error).

use std::time::Duration;

use anyhow::{Context as _, bail};

use crate::views::state::RecordedState;

/// Far above the state of a thousand busy campaigns; a bigger answer is not a daemon's.
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);

/// `http://daemon:9464` → `http://daemon:9464/api/v1/state`; a URL already naming the path
/// is taken as it is.
pub(crate) fn state_url(base: &str) -> anyhow::Result<url::Url> {
    let u = url::Url::parse(base).map_err(|_| anyhow::anyhow!("--state-from: not a URL"))?;
    if !matches!(u.scheme(), "http" | "https") {
        bail!(
            "--state-from {}: only http:// and https:// URLs are read",
            shown(&u)
        );
    }
    if u.path().trim_end_matches('/').ends_with("/api/v1/state") {
        return Ok(u);
    }
    let mut u = u;
    let path = format!("{}/api/v1/state", u.path().trim_end_matches('/'));
    u.set_path(&path);
    Ok(u)
}

/// The URL as errors print it: a user and password in it (basic auth through a proxy) are
/// sent, never shown.
fn shown(u: &url::Url) -> url::Url {
    let mut u = u.clone();
    let _ = u.set_password(None);
    let _ = u.set_username("");
    u
}

/// Fetches and decodes the served state, with the token in `token_file` if given.
pub(crate) async fn fetch_state(
    base: &str,
    token_file: Option<&std::path::Path>,
) -> anyhow::Result<RecordedState> {
    let token = token_file
        .map(crate::http::AccessToken::from_file)
        .transpose()
        .context("--state-token-file")?;
    let target = state_url(base)?;
    let url = shown(&target);
    // reqwest is built without a crypto provider; a second install is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .build()
        .context("building the HTTP client")?;
    let mut req = http
        .get(target)
        .header(reqwest::header::ACCEPT, "application/json");
    if let Some(t) = &token {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", t.expose()))
            .context("--state-token-file: the token is not a valid header value")?;
        value.set_sensitive(true);
        req = req.header(reqwest::header::AUTHORIZATION, value);
    }
    let mut resp = req.send().await.map_err(|e| {
        anyhow::anyhow!(
            "fetching the recorded state from {url}: {}",
            e.without_url()
        )
    })?;
    let status = resp.status();
    let body = read_capped(&mut resp, &url).await?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        bail!(
            "fetching the recorded state from {url}: HTTP {status}: {}",
            text.trim()
        );
    }
    serde_json::from_slice(&body)
        .with_context(|| format!("the answer of {url} is not a linkrunner state (a linkrunner daemon of another version?)"))
}

async fn read_capped(resp: &mut reqwest::Response, url: &url::Url) -> anyhow::Result<Vec<u8>> {
    let too_large = || anyhow::anyhow!("the answer of {url} is larger than {MAX_BODY} bytes");
    if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| anyhow::anyhow!("reading the answer of {url}: {}", e.without_url()))?
    {
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_path_is_added_once_to_the_daemons_address() {
        let u = |s| state_url(s).unwrap().to_string();
        assert_eq!(
            u("http://127.0.0.1:9464"),
            "http://127.0.0.1:9464/api/v1/state"
        );
        assert_eq!(u("http://d:9464/"), "http://d:9464/api/v1/state");
        assert_eq!(
            u("https://d/linkrunner/"),
            "https://d/linkrunner/api/v1/state"
        );
        assert_eq!(
            u("http://d:9464/api/v1/state"),
            "http://d:9464/api/v1/state"
        );
        assert!(state_url("ftp://d/").is_err());
        assert!(state_url("d:9464").is_err());
        let secret = state_url("http://ci:s3cret@d:9464").unwrap();
        assert_eq!(shown(&secret).to_string(), "http://d:9464/api/v1/state");
        let err = state_url("ftp://ci:s3cret@d/").unwrap_err().to_string();
        assert!(!err.contains("s3cret"), "{err}");
    }
}
