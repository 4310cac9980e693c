//! An answer cut short: the status, headers and the first half of the body reach the client,
//! then the connection fails. This is how a client learns nothing about a change that was
//! in fact made — the case its journal must settle without buying twice. Also an answer
//! truncated upstream: whole at the HTTP level, but its JSON cut in half.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use serde_json::Value;

/// Sends `part`, yields once so the server flushes what it has, then errors.
struct CutBody {
    part: Option<Bytes>,
    paused: bool,
}

impl http_body::Body for CutBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if let Some(part) = self.part.take() {
            return Poll::Ready(Some(Ok(Frame::data(part))));
        }
        if !self.paused {
            // Pending lets the server write the headers and the part to the socket first.
            self.paused = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Some(Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "sandbox: answer cut after commit",
        ))))
    }
}

/// `body` answered with `status`, cut in the middle; `Content-Length` promises all of it.
pub(crate) fn cut_short(status: StatusCode, body: &Value) -> Response {
    let text = serde_json::to_vec(body).unwrap_or_default();
    let part = Bytes::copy_from_slice(&text[..text.len() / 2]);
    let cut = CutBody {
        part: Some(part),
        paused: false,
    };
    let mut r = (status, Body::new(cut)).into_response();
    let headers = r.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(text.len()));
    r
}

/// `body` answered with `status`, but only its first half, with a `Content-Length` that
/// matches: the HTTP answer is complete, its JSON is not (a proxy or an overloaded server).
pub(crate) fn truncated(status: StatusCode, body: &Value) -> Response {
    let text = serde_json::to_vec(body).unwrap_or_default();
    let part = text[..text.len() / 2].to_vec();
    (status, [(header::CONTENT_TYPE, "application/json")], part).into_response()
}
