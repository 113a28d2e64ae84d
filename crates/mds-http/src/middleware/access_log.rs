//! One log line per request: method, path (never the query string, which
//! may hold a key sent by mistake), status, latency, request id, and the
//! key prefix when the caller was authenticated. Never a key.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::request_id::RequestId;
use crate::auth::KeyContext;
use crate::error::StoreFailure;
use crate::metrics::{Event, route_of};
use crate::state::AppState;

/// Middleware: logs the request once it is answered, and counts it in the
/// node's metrics.
pub async fn log(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = route_of(req.uri().path());
    // What only the log line needs is taken only when it will be written.
    let logged = tracing::enabled!(target: "mds::access", tracing::Level::INFO).then(|| {
        let id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
        (req.method().clone(), redact(req.uri().path()), id)
    });
    let resp = next.run(req).await;
    let latency = start.elapsed();
    state.metrics.request(route, resp.status().as_u16(), latency);
    if resp.extensions().get::<StoreFailure>().is_some() {
        state.metrics.event(Event::StoreError);
    }
    if let Some((method, path, id)) = logged {
        let key = resp.extensions().get::<std::sync::Arc<KeyContext>>().map(|k| k.prefix.as_str());
        tracing::info!(
            target: "mds::access",
            %method,
            %path,
            status = resp.status().as_u16(),
            latency_us = latency.as_micros() as u64,
            request_id = %id,
            key_prefix = key.unwrap_or("-"),
            "request"
        );
    }
    resp
}

/// The path as logged: at most 256 characters, with anything that looks like
/// a key cut off after its scheme.
fn redact(path: &str) -> String {
    let mut out: String = path.chars().take(256).collect();
    for scheme in ["mds_live_", "mds_test_"] {
        let mut from = 0;
        while let Some(i) = out[from..].find(scheme) {
            let start = from + i + scheme.len();
            let end = out[start..].find(|c: char| !c.is_ascii_alphanumeric()).map_or(out.len(), |j| start + j);
            out.replace_range(start..end, "[redacted]");
            from = start + "[redacted]".len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn keys_in_paths_are_redacted() {
        assert_eq!(redact("/v1/news/mds_live_abcDEF123/x"), "/v1/news/mds_live_[redacted]/x");
        assert_eq!(redact("/a/mds_test_x/mds_live_y"), "/a/mds_test_[redacted]/mds_live_[redacted]");
        assert_eq!(redact("/v1/companies"), "/v1/companies");
    }
}
