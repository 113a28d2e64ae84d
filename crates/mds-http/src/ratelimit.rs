//! Enforces each key's per-minute limit and monthly quota, meters what
//! counts, and tells every authenticated caller where it stands, in the
//! headers of draft-ietf-httpapi-ratelimit-headers-11 and the `X-RateLimit-*`
//! headers that client libraries read today.
//!
//! What counts against the quota: admitted requests to companies and news,
//! whatever their outcome, except a `304`. Requests to `/v1/usage` take from
//! the per-minute limit only, and stay possible when the quota is spent.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use mds_domain::ErrorCode;
use mds_limits::{Decision, Limits, PolicyState};

use crate::auth::KeyContext;
use crate::error::ApiError;
use crate::metrics;
use crate::state::AppState;

/// The path whose requests do not count against the quota.
pub const USAGE_PATH: &str = "/v1/usage";

/// Middleware: admission, metering and the rate-limit headers.
pub async fn enforce(State(state): State<AppState>, req: Request, next: Next) -> Result<Response, ApiError> {
    let Some(ctx) = req.extensions().get::<Arc<KeyContext>>().cloned() else {
        // Not an authenticated request (the router's 405): nothing to limit.
        return Ok(next.run(req).await);
    };
    if !state.config.limits {
        return Ok(next.run(req).await);
    }
    let counts = req.uri().path() != USAGE_PATH;
    let limits =
        Limits { rate_limit_per_minute: ctx.tier.rate_limit_per_minute, monthly_quota: ctx.tier.monthly_quota };
    let mut decision = match &state.shared {
        Some(shared) => shared.admit(&*state.store, &ctx.prefix, limits, counts).await?,
        None => state.limiter.admit(&*state.store, &ctx.prefix, limits, counts).await?,
    };
    if !decision.admitted() {
        let code = if decision.violated.contains(&"month") { ErrorCode::QuotaExceeded } else { ErrorCode::RateLimited };
        state.metrics.decision(if code == ErrorCode::QuotaExceeded {
            metrics::Decision::QuotaExceeded
        } else {
            metrics::Decision::RateLimited
        });
        let detail = match code {
            ErrorCode::QuotaExceeded => format!(
                "the monthly quota of {} requests is used up; it renews at the start of next month (UTC), or raise it with a higher tier",
                limits.monthly_quota
            ),
            _ => format!(
                "more than {} requests per minute; retry after {} s",
                limits.rate_limit_per_minute, decision.retry_after_secs
            ),
        };
        let mut err = ApiError::new(code, detail)
            .with_violated_policies(decision.violated.iter().map(|p| p.to_string()).collect())
            .with_header(header::RETRY_AFTER, HeaderValue::from(decision.retry_after_secs));
        for (k, v) in headers(&ctx, &decision) {
            err = err.with_header(k, v);
        }
        return Err(err);
    }
    state.metrics.decision(metrics::Decision::Admitted);
    let ticket = decision.ticket.take();
    let mut resp = next.run(req).await;
    if let Some(t) = ticket {
        t.settle(resp.status() != StatusCode::NOT_MODIFIED);
    }
    let h = resp.headers_mut();
    for (k, v) in headers(&ctx, &decision) {
        h.insert(k, v);
    }
    Ok(resp)
}

/// The rate-limit headers of a decision: the policies (made once per tier),
/// where the caller stands on the policy closest to its limit, and the
/// per-minute figures in the `X-RateLimit-*` form.
pub fn headers(ctx: &KeyContext, d: &Decision) -> [(HeaderName, HeaderValue); 5] {
    let (name, closest): (&str, &PolicyState) =
        if d.month.headroom() < d.minute.headroom() { ("month", &d.month) } else { ("minute", &d.minute) };
    let standing = format!("\"{name}\";r={};t={}", closest.remaining, closest.reset_secs);
    [
        (HeaderName::from_static("ratelimit-policy"), ctx.rate_limit_policy.clone()),
        (HeaderName::from_static("ratelimit"), HeaderValue::from_str(&standing).expect("ASCII")),
        (HeaderName::from_static("x-ratelimit-limit"), HeaderValue::from(d.minute.limit)),
        (HeaderName::from_static("x-ratelimit-remaining"), HeaderValue::from(d.minute.remaining)),
        (HeaderName::from_static("x-ratelimit-reset"), HeaderValue::from(d.minute.reset_secs)),
    ]
}
