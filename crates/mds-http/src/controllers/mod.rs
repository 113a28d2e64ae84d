//! One module per endpoint, plus the JSON response helper they share.

pub mod companies;
pub mod health;
pub mod news;
pub mod usage;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// How a response may be cached.
#[derive(Debug, Clone, Copy)]
pub enum Caching {
    /// `private, max-age=N`.
    Private(u64),
    /// `no-store`.
    NoStore,
}

/// A `200 application/json` response with `Cache-Control`.
pub fn json(body: Vec<u8>, caching: Caching) -> Response {
    let cc = match caching {
        Caching::Private(s) => HeaderValue::from_str(&format!("private, max-age={s}")).expect("ASCII"),
        Caching::NoStore => HeaderValue::from_static("no-store"),
    };
    let mut resp = body.into_response();
    let h = resp.headers_mut();
    // Room for what the layers add (ETag, request id, rate-limit headers,
    // Vary) so the map does not grow on the way out.
    h.reserve(16);
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, cc);
    resp
}
