//! A request that runs longer than the configured time gets
//! `503 unavailable` with `Retry-After` (the usual cause is a slow store),
//! and its work is dropped.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Middleware: bounds the request's time.
pub async fn bound(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => ApiError::unavailable(&format_args!("request exceeded {} ms", limit.as_millis())).into_response(),
    }
}
