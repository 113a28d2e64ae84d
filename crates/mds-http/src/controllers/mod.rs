//! One module per endpoint, plus the JSON response helper they share.

pub mod companies;
pub mod health;
pub mod news;
pub mod usage;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

use crate::middleware::etag::Tagged;

/// How a response may be cached.
#[derive(Debug, Clone, Copy)]
pub enum Caching<'a> {
    /// This `Cache-Control` value (`private, max-age=N`: the state's
    /// [`private_caching`](crate::state::App::private_caching)).
    Private(&'a HeaderValue),
    /// `no-store`.
    NoStore,
}

/// A `200 application/json` response with `Cache-Control` and the body's `ETag`.
pub fn tagged(t: Tagged, caching: Caching<'_>) -> Response {
    let mut resp = json(t.body, caching);
    resp.headers_mut().insert(header::ETAG, t.etag);
    resp
}

/// A `200 application/json` response with `Cache-Control`.
pub fn json(body: impl Into<Bytes>, caching: Caching<'_>) -> Response {
    let mut resp = Response::new(Body::from(body.into()));
    // Room for the 11 headers of a keyed response (these two, ETag, five
    // rate-limit headers, Content-Length, Vary, X-Request-Id), so the map is
    // allocated once, not grown on the way out.
    let h = resp.headers_mut();
    *h = HeaderMap::with_capacity(12);
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(
        header::CACHE_CONTROL,
        match caching {
            Caching::Private(v) => v.clone(),
            Caching::NoStore => HeaderValue::from_static("no-store"),
        },
    );
    resp
}
