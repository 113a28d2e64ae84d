//! Renders every error as `application/problem+json`: the [`ApiError`]s of
//! handlers and middleware (their [`Problem`] travels in a response
//! extension) and the router's own bare `404`/`405`, so no plain-text
//! rejection ever reaches a client. Adds the request id to the body.
//! Called by [`super::envelope`] on every response.
//!
//! [`ApiError`]: crate::error::ApiError

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use mds_domain::{ErrorCode, Problem};

/// The problem media type.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The methods of RFC 9110, which a `405` may name (and a span names as
/// they are; `trace.rs`).
pub(crate) const STANDARD_METHODS: [Method; 9] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::CONNECT,
    Method::OPTIONS,
    Method::TRACE,
    Method::PATCH,
];

/// Renders the problem of `resp`, if it is an error: the [`Problem`] an
/// [`ApiError`](crate::error::ApiError) left in its extensions, or one made
/// for a bare error status (`method` is the request's, for the router's
/// `405`).
pub fn render(mut resp: Response, request_id: &HeaderValue, method: &Method) -> Response {
    let problem = match resp.extensions_mut().remove::<Problem>() {
        Some(p) => Some(p),
        None => bare_error(&resp, method),
    };
    let Some(mut problem) = problem else { return resp };
    problem.request_id = request_id.to_str().ok().map(str::to_owned);
    let body = serde_json::to_vec(&problem).expect("a problem always serialises");
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    *resp.body_mut() = Body::from(body);
    resp
}

/// A problem for an error response that was made without one (the router's
/// 404/405, a rejection of a layer we do not own). Nothing the caller sent
/// is repeated but a standard method's name: a path or a custom method may
/// carry a key (`POST /v1/news/mds_live_…`), and no response echoes one.
fn bare_error(resp: &Response, method: &Method) -> Option<Problem> {
    let status = resp.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return None;
    }
    Some(match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = resp.headers().get(header::ALLOW).and_then(|v| v.to_str().ok()).unwrap_or("GET,HEAD");
            // The router writes `GET,HEAD`; the sentence lists `GET, HEAD`.
            let allow = allow.split(',').map(str::trim).collect::<Vec<_>>().join(", ");
            let method = if STANDARD_METHODS.contains(method) { method.as_str() } else { "this method" };
            Problem::new(
                ErrorCode::MethodNotAllowed,
                format!("{method} is not allowed on this route; allowed: {allow}"),
            )
        }
        StatusCode::NOT_FOUND => {
            Problem::new(ErrorCode::NotFound, "no such route; see the API reference (/docs) for the routes")
        }
        s if s.is_server_error() => {
            tracing::error!(status = s.as_u16(), "error response without a problem");
            Problem::new(ErrorCode::Internal, "an internal error occurred; quote the request_id if you report it")
        }
        s => {
            // A client error from a layer we do not own (e.g. a body limit).
            let mut p = Problem::new(ErrorCode::InvalidParameter, "the request could not be processed as sent");
            p.status = s.as_u16();
            p
        }
    })
}
