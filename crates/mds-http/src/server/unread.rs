//! A response to a request whose body was not read to its end closes its
//! connection, and says so (`Connection: close`), as nginx does.
//!
//! hyper closes such a connection anyway (the rest of the body is in the
//! way of the next request), but its response would not say it: a client
//! that sent the whole body (the server's lingering close reads it,
//! [`super::conn`]) would put the connection back in its pool as alive and
//! send its next request into a closing connection. Responses that refuse
//! a body unread are `413`s and refusals before the body (`401`, `415`,
//! `429`).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::header::{CONNECTION, HeaderValue};
use bytes::Bytes;
use http_body::{Body as _, Frame, SizeHint};
use hyper::body::Incoming;

/// A request body that marks when it has been read to its end.
pub(super) struct Marked {
    inner: Incoming,
    ended: Arc<AtomicBool>,
}

/// Whether a request's body was read to its end: `None` for a request with
/// no body, or not over HTTP/1 (HTTP/2 ends a stream, not the connection).
pub(super) struct Ended(Option<Arc<AtomicBool>>);

/// The request, with its body watched when it has one (over HTTP/1).
pub(super) fn watch(req: hyper::Request<Incoming>) -> (axum::extract::Request, Ended) {
    let http1 = req.version() <= axum::http::Version::HTTP_11;
    if !http1 || req.body().is_end_stream() {
        return (req.map(Body::new), Ended(None));
    }
    let ended = Arc::new(AtomicBool::new(false));
    let marks = ended.clone();
    (req.map(|inner| Body::new(Marked { inner, ended: marks })), Ended(Some(ended)))
}

impl Ended {
    /// Marks `resp` `Connection: close` if the body was not read to its end;
    /// whether it was not.
    pub(super) fn close_if_unread(&self, resp: &mut axum::response::Response) -> bool {
        let unread = self.0.as_ref().is_some_and(|e| !e.load(Ordering::Acquire));
        if unread {
            resp.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
        }
        unread
    }
}

impl http_body::Body for Marked {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
