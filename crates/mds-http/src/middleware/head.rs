//! `HEAD` is served exactly as `GET`, then the body is dropped, so a `HEAD`
//! answer carries the same `ETag` and `Content-Length` as the `GET` would.

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::response::Response;

/// Turns a `HEAD` request into a `GET`; returns whether it was a `HEAD`.
pub fn as_get(req: &mut Request) -> bool {
    let head = req.method() == Method::HEAD;
    if head {
        *req.method_mut() = Method::GET;
    }
    head
}

/// Drops the body of the answer to a `HEAD`, keeping its length.
pub fn drop_body(resp: &mut Response) {
    if let Some(n) = resp.body().size_hint().exact() {
        resp.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(n));
    }
    *resp.body_mut() = Body::empty();
}
