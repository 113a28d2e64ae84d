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
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json")), (header::CACHE_CONTROL, cc)], body)
        .into_response()
}
