//! `HEAD` is served exactly as `GET`, then the body is dropped, so a `HEAD`
//! answer carries the same `ETag` and `Content-Length` as the `GET` would.

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::Response;

/// Middleware: serves `HEAD` as `GET` without the body.
pub async fn as_get(mut req: Request, next: Next) -> Response {
    if req.method() != Method::HEAD {
        return next.run(req).await;
    }
    *req.method_mut() = Method::GET;
    let mut resp = next.run(req).await;
    if let Some(n) = resp.body().size_hint().exact() {
        resp.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(n));
    }
    *resp.body_mut() = Body::empty();
    resp
}
