//! Starting a sandbox on port 0 and talking to it like a client would.

use linkrunner_sandbox::{SandboxConfig, SandboxHandle};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::StatusCode;
use serde_json::{Value, json};

pub const TOKEN: &str = "tok-3f9a-secret";
pub const TICKET: &str = "ticket-77b1-secret";
/// Operation 1's path.
pub const PROJECT: &str = "/rest/Project/addSimpleProjectAndContent";

/// Strict defaults, but searches are ready at the first poll unless a test says otherwise.
pub fn config() -> SandboxConfig {
    crate::support::sandbox::config(TOKEN, TICKET, 0)
}

pub struct Sbx {
    pub handle: SandboxHandle,
    pub http: reqwest::Client,
}

pub async fn start(cfg: SandboxConfig) -> Sbx {
    let handle = crate::support::sandbox::start(cfg).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Sbx { handle, http }
}

/// A sandbox with [`config`] and acme.example's project: the sandbox, then the project's,
/// its main URL's and its text's ids.
pub async fn with_acme_project() -> (Sbx, i64, i64, i64) {
    let sbx = start(config()).await;
    let (project, url_id, text_id) = sbx.project("https://acme.example").await;
    (sbx, project, url_id, text_id)
}

/// A sandbox with [`config`] changed by `edit`.
pub async fn shaped(edit: impl FnOnce(&mut SandboxConfig)) -> Sbx {
    let mut cfg = config();
    edit(&mut cfg);
    start(cfg).await
}

pub fn url_of(base: &str, path: &str) -> String {
    format!("{base}{path}")
}

/// `metaData` percent-encoded for a path segment: everything but letters and digits.
pub fn encode(meta: &str) -> String {
    utf8_percent_encode(meta, NON_ALPHANUMERIC).to_string()
}

impl Sbx {
    pub fn url(&self, path: &str) -> String {
        url_of(&self.handle.base_url(), path)
    }

    pub fn authed(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        req.header("Authorization", format!("Bearer {TOKEN}"))
            .header("Cookie", format!("AUTH_TICKET={TICKET}"))
            .header("Accept", "application/json")
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self
            .authed(self.http.post(self.url(path)))
            .json(&body)
            .send()
            .await
            .unwrap();
        read(res).await
    }

    /// [`Sbx::post`], asserting a 200; the answer.
    pub async fn post_ok(&self, path: &str, body: Value) -> Value {
        let (status, answer) = self.post(path, body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        answer
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let res = self
            .authed(self.http.get(self.url(path)))
            .send()
            .await
            .unwrap();
        read(res).await
    }

    /// Operation 1 for `domain`, whatever it answers.
    pub async fn create_project(&self, domain: &str) -> (StatusCode, Value) {
        self.post(PROJECT, json!({ "domain": domain })).await
    }

    /// `body` posted to `path` as JSON without the credentials (the control endpoints need
    /// none).
    pub async fn post_bare(&self, path: &str, body: Value) -> reqwest::Response {
        let req = self.http.post(self.url(path)).json(&body);
        req.send().await.unwrap()
    }

    /// Operation 1; answers `(projectId, urlId, textId)`.
    pub async fn project(&self, domain: &str) -> (i64, i64, i64) {
        let body = self
            .post_ok(
                "/rest/Project/addSimpleProjectAndContent",
                json!({"domain": domain}),
            )
            .await;
        let id = |k: &str| {
            body[k]
                .as_i64()
                .unwrap_or_else(|| panic!("no {k} in {body}"))
        };
        (id("id"), id("urlId"), id("textId"))
    }

    /// Operation 2 for one URL and text in the default (nested) shape: `(urlId, textId)`.
    pub async fn url_with_text(&self, project: i64, url: &str, text: &str) -> (i64, i64) {
        let body = json!({"urlsTexts": [{"url": url, "texts": [{"text": text}]}]});
        let answer = self
            .post_ok(
                &format!("/rest/Content/add/texts/projectId/{project}"),
                body,
            )
            .await;
        let entry = &answer["result"][0];
        (
            entry["urlId"].as_i64().unwrap(),
            entry["texts"][0]["textId"].as_i64().unwrap(),
        )
    }

    /// Operation 3: `(jobHandleId, metaData)`.
    pub async fn search(&self, url_id: i64, filter: Value) -> (String, String) {
        let body = self
            .post_ok(
                &format!("/rest/SearchRent/rent/tree/urlId/{url_id}"),
                filter,
            )
            .await;
        (
            body["jobHandleId"].as_str().unwrap().into(),
            body["metaData"].as_str().unwrap().into(),
        )
    }

    /// One poll of operation 4.
    pub async fn poll(&self, job: &str, meta: &str) -> (StatusCode, Value) {
        self.get(&poll_path(job, meta)).await
    }

    /// A search whose result is ready at the first poll: the donor items.
    pub async fn donors(&self, url_id: i64, filter: Value) -> Vec<Value> {
        let (job, meta) = self.search(url_id, filter).await;
        let (status, body) = self.poll(&job, &meta).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        items_with_page_id(&body)
    }

    /// Operation 5 for donors that share their technical values.
    pub async fn buy(
        &self,
        project: i64,
        donors: &[&Value],
        url_id: i64,
        text_id: i64,
    ) -> (StatusCode, Value) {
        let pages: Vec<Value> = donors
            .iter()
            .map(|d| json!({"pageId": d["pageId"], "urlId": url_id, "textId": text_id}))
            .collect();
        let first = donors[0];
        let body = json!({
            "forceSeoWait": first["forceSeoWait"], "linkTypeId": 1, "filterId": null,
            "mosSites": first["mosSites"], "pagesExtra": null, "searchId": first["searchId"],
            "pages": pages,
        });
        self.post(
            &format!("/rest/Placement/rent/create/projectId/{project}"),
            body,
        )
        .await
    }
}

pub fn poll_path(job: &str, meta: &str) -> String {
    format!(
        "/rest/SearchRent/rent/tree/getResult/jobHandleId/{}/rentSearchMetaData/{}",
        encode(job),
        encode(meta)
    )
}

pub async fn read(res: reqwest::Response) -> (StatusCode, Value) {
    let status = res.status();
    let text = res.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Every object holding a `pageId`, however deeply nested: donors by what they contain.
pub fn items_with_page_id(v: &Value) -> Vec<Value> {
    match v {
        Value::Object(m) if m.contains_key("pageId") => vec![v.clone()],
        Value::Object(m) => m.values().flat_map(items_with_page_id).collect(),
        Value::Array(a) => a.iter().flat_map(items_with_page_id).collect(),
        _ => Vec::new(),
    }
}

/// `linkrunner sandbox --listen 127.0.0.1:0 ARGS` with this suite's token and ticket, and the
/// base URL it prints first on stdout. Killed when the child is dropped.
pub async fn serve_command(args: &[&str]) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = crate::support::binary::tokio(crate::support::binary::command())
        .args(["sandbox", "--listen", "127.0.0.1:0"])
        .args(args)
        .env("LINKRUNNER_SANDBOX_TOKEN", TOKEN)
        .env("LINKRUNNER_SANDBOX_TICKET", TICKET)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let base = stdout.lines().next_line().await.unwrap().unwrap();
    (child, base)
}
