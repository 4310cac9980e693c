//! Reading an answer body chunk by chunk, never more than the cap, so a huge or endless
//! answer cannot fill memory; a body that ends early is reported, not hidden.

use reqwest::Response;
use serde_json::Value;

use super::classify;

/// The body as JSON; an empty or non-JSON body is `Null`, which decoders read as "no fields".
pub(crate) fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

pub(crate) enum Problem {
    /// Longer than the cap (by Content-Length or by what arrived).
    TooLarge,
    /// The connection ended or failed before the body was complete.
    Cut(String),
}

pub(crate) struct Body {
    pub(crate) bytes: Vec<u8>,
    pub(crate) problem: Option<Problem>,
}

pub(crate) async fn read_capped(response: &mut Response, cap: usize) -> Body {
    let mut bytes = Vec::new();
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Body {
            bytes,
            problem: Some(Problem::TooLarge),
        };
    }
    loop {
        match response.chunk().await {
            Ok(None) => {
                return Body {
                    bytes,
                    problem: None,
                };
            }
            Ok(Some(chunk)) if bytes.len() + chunk.len() > cap => {
                bytes.extend_from_slice(&chunk[..cap - bytes.len()]);
                return Body {
                    bytes,
                    problem: Some(Problem::TooLarge),
                };
            }
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Err(e) => {
                return Body {
                    bytes,
                    problem: Some(Problem::Cut(classify::chain(&e.without_url()))),
                };
            }
        }
    }
}
