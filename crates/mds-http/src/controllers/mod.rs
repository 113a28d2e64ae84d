//! One module per endpoint, plus the JSON response helper they share.

pub mod changes;
pub mod companies;
pub mod company;
pub mod health;
pub mod news;
pub mod news_list;
pub mod usage;
pub mod usage_daily;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use mds_node::Tagged;

/// A `200 application/json` response with the body's `ETag`.
pub fn tagged(t: Tagged) -> Response {
    let mut resp = json(t.body);
    resp.headers_mut().insert(header::ETAG, t.etag);
    resp
}

/// A `200 application/json` response. Its `Cache-Control` is its route's
/// ([`crate::routes::Caching`]), added by the envelope.
pub fn json(body: impl Into<Bytes>) -> Response {
    let mut resp = Response::new(Body::from(body.into()));
    // Room for the 11 headers of a keyed response (Content-Type,
    // Cache-Control, ETag, five rate-limit headers, Content-Length, Vary,
    // X-Request-Id), so the map is allocated once, not grown on the way out.
    let h = resp.headers_mut();
    *h = HeaderMap::with_capacity(12);
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}
