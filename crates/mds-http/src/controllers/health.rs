//! `/healthz` (the process is alive) and `/readyz` (it can serve: the store
//! answers). Neither needs a key.

use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use mds_domain::ErrorCode;

use super::json;
use crate::error::ApiError;
use crate::state::AppState;

/// Liveness: always `200` while the process serves.
pub async fn healthz() -> Response {
    json(&br#"{"status":"ok"}"#[..])
}

/// `GET /metrics`: the node's metrics in the Prometheus text format.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let degraded = state.shared.as_ref().is_some_and(|s| s.is_degraded());
    let mut body = state.metrics.render(state.backlog(), degraded);
    if let Some(shared) = &state.shared {
        let s = shared.stats();
        for (name, help, value) in [
            ("mds_redis_errors_total", "Redis calls that failed.", s.redis_errors),
            ("mds_redis_fallbacks_total", "Times this node fell back to limiting alone.", s.fallbacks),
            ("mds_redis_seeds_total", "Month counters seeded into Redis from the store.", s.seeds),
            ("mds_redis_admitted_total", "Requests admitted from Redis leases.", s.redis_admitted),
            (
                "mds_redis_lease_calls_total",
                "Lease scripts sent to Redis (a lease taken or given back).",
                s.lease_calls,
            ),
            (
                "mds_local_admitted_total",
                "Requests admitted by this node alone while Redis was unreachable.",
                s.local_admitted,
            ),
        ] {
            body.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"));
        }
    }
    let mut resp = body.into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    resp
}

/// Readiness: `200` when the store answers within a second and the node's
/// background tasks run, else `503`.
pub async fn readyz(State(state): State<AppState>) -> Result<Response, ApiError> {
    if let Some(why) = state.stopped_task() {
        return Err(ApiError::new(ErrorCode::Unavailable, format!("{why}; this node needs a restart")));
    }
    match tokio::time::timeout(Duration::from_secs(1), state.store.ping()).await {
        Ok(Ok(())) => {
            let body = serde_json::json!({"status": "ready", "companies": state.catalog().len()});
            Ok(json(body.to_string()))
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness check failed");
            Err(ApiError::new(ErrorCode::Unavailable, "the store is unreachable"))
        }
        Err(_) => Err(ApiError::new(ErrorCode::Unavailable, "the store did not answer within 1 s")),
    }
}
