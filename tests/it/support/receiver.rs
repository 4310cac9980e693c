//! A webhook receiver on loopback port 0 (like svix's TestReceiver), for the notifications:
//! it keeps every request's path and JSON body and answers as told — 200, another status,
//! or never (a receiver that hangs).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::http::{StatusCode, Uri};

/// How the receiver answers.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    Status(u16),
    /// Never: the request hangs until the client gives up.
    Hang,
}

pub struct Receiver {
    pub addr: SocketAddr,
    got: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start(answer: Answer) -> Receiver {
        let got: Arc<Mutex<Vec<(String, serde_json::Value)>>> = Arc::default();
        let kept = got.clone();
        let app = Router::new().fallback(move |uri: Uri, body: Bytes| {
            let kept = kept.clone();
            async move {
                let json = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
                kept.lock().unwrap().push((uri.path().to_string(), json));
                match answer {
                    Answer::Status(code) => StatusCode::from_u16(code).unwrap(),
                    Answer::Hang => std::future::pending().await,
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("receiver port");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { addr, got, task }
    }

    /// `http://ADDR/PATH`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{path}", self.addr)
    }

    /// Every request so far: path and JSON body.
    pub fn received(&self) -> Vec<(String, serde_json::Value)> {
        self.got.lock().unwrap().clone()
    }

    /// The bodies received whose `field` is `value`.
    pub fn with(&self, field: &str, value: &str) -> Vec<serde_json::Value> {
        self.received()
            .into_iter()
            .map(|(_, b)| b)
            .filter(|b| b[field] == value)
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
