//! The envelope of every request, routed or not, on both listeners: the
//! application's outermost service, around compression and the router. It
//! finds the request's row in its listener's route table ([`Listener`]:
//! the public [`routes`] or [`crate::admin::routes`], rows of one kind) and
//! does what the row says. In order:
//!
//! 1. [`request_id`]: `X-Request-Id` in, out, and in every problem body.
//! 2. [`access_log`]: the clock starts; at the end, one log line and the
//!    request's metrics. With traces on, [`trace`] starts the request's
//!    span (in the caller's trace, from `traceparent`), runs the request
//!    in a scope that notes its store and Redis calls
//!    ([`mds_domain::calls`]) and, at the end, hands the span and a child
//!    span per call to the exporter.
//! 3. [`head`]: `HEAD` is served as `GET` and its body dropped at the end,
//!    so both carry the same headers (`ETag`, `Content-Length`).
//! 4. [`timeout`]: a request that runs too long gets `503 unavailable`; a
//!    panic is caught and answered `500 internal`.
//! 5. On the keyed routes, [`guard`] (key, limits, `304`) around the rest;
//!    a delegated route (`POST /mcp`) is handed the envelope instead, to
//!    make its requests through it; on the admin routes (and a path the
//!    admin table does not have), the admin token, the body and
//!    `Idempotency-Key` ([`crate::admin::envelope`]), whose parts are
//!    bounded by the timeout each (a retry waiting for its first request
//!    answers `409` at the deadline).
//! 6. On the public listener, compression (tower-http) when the client
//!    accepts an encoding, with
//!    [`etag::tag_encoding`] (a compressed response gets its own tag); else
//!    the router directly, and the `Vary` compression would have added.
//!    A `200` gets its route's `Cache-Control` (before the guard's `304`,
//!    which repeats it).
//! 7. [`problem`]: every error (ours and the router's) becomes problem+json.
//!
//! Both listeners' requests are traced; the public listener's are counted
//! in the metrics, the admin listener's are not (its log lines say
//! `listener` `admin` and the admin token's name, as its spans do).
//!
//! One hand-written service rather than a stack of axum layers: each layer
//! costs a boxed future and clones of the services below it per request,
//! and a route layer is applied, and cloned, per route. A request's route
//! and its properties are found by path in the route table
//! ([`routes::route_of`], the router's own matcher).

use std::convert::Infallible;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use mds_domain::calls;
use tower::{Layer, Service};
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::compression::{Compression, CompressionLayer};

use super::request_id::X_REQUEST_ID;
use super::{access_log, etag, guard, head, problem, request_id, timeout, trace};
use crate::route::{Access, Route};
use crate::state::AppState;
use crate::{admin, routes};

/// The listener an envelope serves, whose route table it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The public API ([`routes`]).
    Public,
    /// The admin API ([`admin::routes`]).
    Admin,
}

impl Listener {
    /// The index of `path`'s row in its table (the table's length for
    /// none).
    pub fn route_of(self, path: &str) -> usize {
        match self {
            Listener::Public => routes::route_of(path),
            Listener::Admin => admin::routes::route_of(path),
        }
    }

    /// The row at `index` (from [`Self::route_of`]), if a route matched.
    pub fn route(self, index: usize) -> Option<&'static Route> {
        match self {
            Listener::Public => routes::route(index),
            Listener::Admin => admin::routes::ROUTES.get(index),
        }
    }

    /// Who may call a path no row has: anyone on the public listener (the
    /// router answers `404`), an admin token on the admin one (a caller
    /// without one learns nothing of the routes, not even which exist).
    fn unmatched(self) -> Access {
        match self {
            Listener::Public => Access::Open,
            Listener::Admin => Access::AdminToken,
        }
    }
}

/// The envelope around the router, which it calls through compression
/// (tower-http) when the client accepts an encoding, and directly when it
/// sends no `Accept-Encoding`: a compressing body is kilobytes of encoder
/// state, boxed and copied for every response even when it compresses
/// nothing. A direct response gets the `Vary` the compression layer would
/// have added ([`vary`]).
///
/// Cloned per request (the request's future owns it): one reference count,
/// which every worker thread touches, rather than one per part.
#[derive(Clone)]
pub struct Envelope(Arc<Parts>);

struct Parts {
    state: AppState,
    router: Router,
    compression: Compression<Router>,
    listener: Listener,
}

impl Envelope {
    /// Wraps the public listener's `router` (with its state), compressing
    /// with gzip, br or zstd.
    pub fn new(state: AppState, router: Router) -> Self {
        Self::of(Listener::Public, state, router)
    }

    /// Wraps `router` (with its state), of `listener`.
    pub fn of(listener: Listener, state: AppState, router: Router) -> Self {
        let compression = CompressionLayer::new().gzip(true).br(true).zstd(true).layer(router.clone());
        Envelope(Arc::new(Parts { state, router, compression, listener }))
    }
}

impl Service<Request> for Envelope {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // An axum `Router` is always ready, and so is compression around it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let serve = wrap(self.clone(), req);
        if self.0.state.http().traces.is_some() {
            // Its store and Redis calls are noted for its span's children.
            Box::pin(calls::scoped(serve))
        } else {
            Box::pin(serve)
        }
    }
}

/// Serves `req` in the envelope.
async fn wrap(envelope: Envelope, mut req: Request) -> Result<Response, Infallible> {
    let Parts { state, router, compression, listener } = &*envelope.0;
    let public = *listener == Listener::Public;
    let request_id = request_id::assign(req.headers());
    let entry = access_log::Entry::begin(&req, *listener);
    let span = state.http().traces.as_ref().and_then(|_| trace::RequestSpan::begin(req.headers(), req.method()));
    let head = head::as_get(&mut req);
    // For the problem of the router's bare 405.
    let method = req.method().clone();
    let route = listener.route(entry.route());
    let mut key = None;
    let mut actor = None;
    // The guard's pass, kept outside the bounded part: a request that times
    // out or panics after admission is still finished (its quota
    // reservation released, as for every `5xx`; its rate-limit headers on).
    let mut passed = None;
    let call = async |req: Request| {
        if public && req.headers().contains_key(header::ACCEPT_ENCODING) {
            let Ok(resp) = compression.clone().call(req).await;
            let mut resp = resp.map(Body::new);
            etag::tag_encoding(&mut resp);
            resp
        } else {
            let Ok(mut resp) = router.clone().call(req).await;
            if public {
                vary(&mut resp);
            }
            resp
        }
    };
    let resp = match route.map_or(listener.unmatched(), |r| r.access) {
        Access::AdminToken => admin::envelope::serve(state, route, req, &mut actor, call).await,
        access => {
            // Pinned in place: the request's whole future is not moved
            // (copied) again.
            let serve = pin!(async {
                match (access, route) {
                    (Access::Keyed(charge), Some(r)) => match guard::admit(state, &mut req, r, charge).await {
                        Ok(pass) => passed = pass,
                        Err(refused) => {
                            key = refused.key;
                            return refused.response;
                        }
                    },
                    // Its handler makes its requests through the envelope.
                    (Access::Delegated, _) => {
                        req.extensions_mut().insert(envelope.clone());
                    }
                    _ => {}
                }
                let mut resp = call(req).await;
                if let Some(route) = route.filter(|_| resp.status() == StatusCode::OK) {
                    resp.headers_mut().insert(header::CACHE_CONTROL, route.caching.header_value(state));
                }
                resp
            });
            timeout::bound(state.http().request_timeout, serve).await
        }
    };
    let resp = match passed {
        Some(passed) => {
            if entry.logs() || span.is_some() {
                key = Some(passed.key().clone());
            }
            passed.finish(resp)
        }
        None => resp,
    };
    let mut resp = problem::render(resp, &request_id, &method);
    if head {
        head::drop_body(&mut resp);
    }
    let caller = match (&key, &actor) {
        (Some(key), _) => access_log::Caller::Key(key),
        (None, Some(actor)) => access_log::Caller::Admin(actor),
        (None, None) => access_log::Caller::None,
    };
    entry.finish(state, &resp, &request_id, caller);
    if let (Some(span), Some(tracer)) = (span, &state.http().traces) {
        span.finish(tracer, route.map(|r| r.path), resp.status(), caller, &request_id, calls::take());
    }
    resp.headers_mut().insert(X_REQUEST_ID.clone(), request_id);
    Ok(resp)
}

/// `Vary: accept-encoding` on a response the compression layer would have
/// compressed for a client that asked: as that layer adds it (tower-http's
/// `ResponseFuture::poll`), with the layer's default predicate.
fn vary(resp: &mut Response) {
    let h = resp.headers();
    let compressible = !h.contains_key(header::CONTENT_ENCODING)
        && !h.contains_key(header::CONTENT_RANGE)
        && DefaultPredicate::new().should_compress(resp);
    let varies = h
        .get_all(header::VARY)
        .iter()
        .any(|v| v.as_bytes().windows("accept-encoding".len()).any(|w| w.eq_ignore_ascii_case(b"accept-encoding")));
    if compressible && !varies {
        resp.headers_mut().append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
}
