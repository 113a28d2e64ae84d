//! Middleware of the request path, outermost first:
//!
//! 1. [`request_id`]: `X-Request-Id` in, out, and in every problem body.
//! 2. [`access_log`]: one log line per request (path, never the query).
//! 3. [`head`]: `HEAD` is served as `GET` without the body, so both carry
//!    the same headers (`ETag`, `Content-Length`).
//! 4. [`problem`]: renders every error (ours and the router's) as problem+json.
//! 5. [`timeout`]: a request that runs too long gets `503 unavailable`; a
//!    panic is caught (tower-http) and answered `500 internal`.
//! 6. compression (tower-http) and [`etag::tag_encoding`].
//! 7. Per route: [`crate::auth`] (key in query, then the bearer key), then
//!    [`etag::conditional`] (strong `ETag`, `304`).

pub mod access_log;
pub mod etag;
pub mod head;
pub mod problem;
pub mod request_id;
pub mod timeout;
