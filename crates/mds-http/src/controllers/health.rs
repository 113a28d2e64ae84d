//! `/healthz` (the process is alive), `/readyz` (it can serve:
//! [`Node::readiness`](mds_node::Node::readiness)) and `/metrics`. None
//! needs a key.

use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::json;
use crate::error::ApiError;
use crate::state::AppState;

/// Liveness: always `200` while the process serves.
pub async fn healthz() -> Response {
    json(&br#"{"status":"ok"}"#[..])
}

/// `GET /metrics`: the node's metrics in the Prometheus text format.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut resp = state.node().metrics_text().into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    resp
}

/// Readiness: `200` when the store answers within a second and the node's
/// background tasks run, else `503`.
pub async fn readyz(State(state): State<AppState>) -> Result<Response, ApiError> {
    let companies = state.node().readiness().await?;
    Ok(json(serde_json::json!({"status": "ready", "companies": companies}).to_string()))
}
