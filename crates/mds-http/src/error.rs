//! [`ApiError`]: the one error type of the HTTP layer, rendered as
//! RFC 9457 problem+json by [`crate::middleware::problem`].
//!
//! Handlers and middleware return `ApiError`; its response carries the
//! [`Problem`] in an extension and no body yet, so that the problem renderer
//! can add the request id and serialise every problem in one place,
//! together with the bare 404/405 responses of the router.

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mds_domain::{ErrorCode, Problem};
use mds_node::ReadError;
use mds_node::health::NotReady;
use mds_store::StoreError;

/// An error answered to the client.
#[derive(Debug)]
pub struct ApiError {
    problem: Box<Problem>,
    headers: Vec<(HeaderName, HeaderValue)>,
    store_failure: bool,
}

impl ApiError {
    /// An error with `code` and a detail sentence.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        ApiError { problem: Box::new(Problem::new(code, detail)), headers: Vec::new(), store_failure: false }
    }

    /// `400 invalid_parameter` naming `param`.
    pub fn invalid_parameter(param: &str, detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParameter, detail).with_param(param)
    }

    /// `404 not_found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, detail)
    }

    /// `500 internal`. The cause is logged here, once; the body says nothing of it.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ErrorCode::Internal, "an internal error occurred; quote the request_id if you report it")
    }

    /// `503 unavailable` because the store is. The cause is logged here, once.
    pub fn unavailable(cause: &dyn std::fmt::Display) -> Self {
        tracing::warn!(error = %cause, "store unavailable");
        Self::temporarily_unavailable()
    }

    /// `503 unavailable` because the request ran out of time. Logged here,
    /// once, as what it is (not as a store failure: a slow store is one
    /// cause among others).
    pub fn timed_out(limit: std::time::Duration) -> Self {
        tracing::warn!(limit_ms = limit.as_millis() as u64, "request timed out");
        Self::temporarily_unavailable()
    }

    /// `503 unavailable` because this node's budget of key lookups is spent
    /// (a flood of keys it does not hold). Counted in the metrics
    /// (`mds_key_lookups_throttled_total`), not logged per request.
    pub fn key_lookups_spent() -> Self {
        Self::temporarily_unavailable()
    }

    /// The body and `Retry-After` of every `503`.
    fn temporarily_unavailable() -> Self {
        Self::new(ErrorCode::Unavailable, "the service is temporarily unavailable; retry shortly")
            .with_header(axum::http::header::RETRY_AFTER, HeaderValue::from_static("1"))
    }

    /// Names the offending query parameter.
    pub fn with_param(mut self, param: &str) -> Self {
        self.problem.param = Some(param.to_owned());
        self
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Sets `violated_policies` (on 429).
    pub fn with_violated_policies(mut self, policies: Vec<String>) -> Self {
        self.problem.violated_policies = Some(policies);
        self
    }

    /// The error code.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::parse(&self.problem.code).unwrap_or(ErrorCode::Internal)
    }
}

/// Marks a response that failed because of the store (for metrics).
#[derive(Debug, Clone, Copy)]
pub struct StoreFailure;

/// A bad query value: `400 invalid_parameter` naming it.
impl From<mds_domain::ParamError> for ApiError {
    fn from(e: mds_domain::ParamError) -> Self {
        ApiError::invalid_parameter(e.param, e.detail)
    }
}

/// A read the node refused: `400 invalid_parameter`, `400
/// invalid_cursor` or `410 sync_token_expired` naming the parameter, or the
/// store's failure.
impl From<ReadError> for ApiError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Param(e) => e.into(),
            ReadError::InvalidCursor { param, detail } => {
                ApiError::new(ErrorCode::InvalidCursor, detail).with_param(param)
            }
            ReadError::SyncTokenExpired => {
                ApiError::new(ErrorCode::SyncTokenExpired, ReadError::SyncTokenExpired.to_string()).with_param("since")
            }
            ReadError::EventsExpired => {
                ApiError::new(ErrorCode::EventsExpired, ReadError::EventsExpired.to_string()).with_param("since")
            }
            ReadError::Store(e) => e.into(),
        }
    }
}

/// A node that is not ready: `503 unavailable`, saying why.
impl From<NotReady> for ApiError {
    fn from(e: NotReady) -> Self {
        ApiError::new(ErrorCode::Unavailable, e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let mut err = match e {
            StoreError::Unavailable(_) => ApiError::unavailable(&e),
            _ => ApiError::internal(&e),
        };
        err.store_failure = true;
        err
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = status.into_response();
        for (k, v) in self.headers {
            resp.headers_mut().append(k, v);
        }
        resp.extensions_mut().insert(*self.problem);
        if self.store_failure {
            resp.extensions_mut().insert(StoreFailure);
        }
        resp
    }
}
