//! `GET /v1/usage`: the calling key's consumption this month and in the
//! months before it since the key was created (at most twelve).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::usage::{BillingMonth, HISTORY_MONTHS, V1Usage, V1UsageWindow};

use super::{Caching, tagged};
use crate::auth::KeyContext;
use crate::error::ApiError;
use crate::middleware::etag::Tagged;
use crate::params::Params;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = "/v1/usage",
    operation_id = "getUsage",
    tag = "usage",
    summary = "Usage of the calling key",
    description = "The calling key's tier, limits, requests this billing month (calendar month, UTC) and in up to \
12 preceding months since the key was created, most recent first. Not counted against the quota; \
`Cache-Control: no-store`.",
    responses(
        (status = 200, description = "The usage record.", body = V1Usage, content_type = "application/json"),
        (status = 304, description = "Not modified: `If-None-Match` matched the `ETag`; no body."),
        (status = 400, response = crate::openapi::BadRequest),
        (status = 401, response = crate::openapi::Unauthorized),
        (status = 405, response = crate::openapi::MethodNotAllowed),
        (status = 429, response = crate::openapi::TooManyRequests),
        (status = 500, response = crate::openapi::Internal),
        (status = 503, response = crate::openapi::Unavailable),
    )
)]
pub async fn show(
    State(state): State<AppState>,
    Extension(ctx): Extension<Arc<KeyContext>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    let meter = state.limiter.meter();
    let now = state.config.clock.now();
    let month = BillingMonth::of(now);
    // With limits shared through Redis, its counter is the live truth across
    // nodes; this node's own view is the fallback.
    let live = match &state.shared {
        Some(shared) => shared.shared_used(&ctx.prefix, month).await,
        None => None,
    };
    let used = match live {
        Some(n) => n,
        None => {
            meter.ensure_seeded(&*state.store, &ctx.prefix, month).await?;
            meter.used(&ctx.prefix, month).unwrap_or(0)
        }
    };
    let current = V1UsageWindow::new(month, used, ctx.tier.monthly_quota);

    let created = BillingMonth::of(ctx.created_at);
    let mut months = Vec::new();
    let mut m = month.prev();
    while m >= created && months.len() < HISTORY_MONTHS {
        months.push(m);
        m = m.prev();
    }
    let mut history = Vec::with_capacity(months.len());
    if let (Some(&newest), Some(&oldest)) = (months.first(), months.last()) {
        let stored: HashMap<BillingMonth, u64> =
            state.store.usage(&ctx.prefix, oldest, newest).await?.into_iter().collect();
        let unflushed = meter.unflushed(&ctx.prefix);
        let quotas = state.store.quota_history(&ctx.prefix).await?;
        for m in months {
            let requests = stored.get(&m).copied().unwrap_or(0) + unflushed.get(&m).copied().unwrap_or(0);
            history.push(V1UsageWindow::new(m, requests, quotas.quota_for(m)));
        }
    }
    let usage = V1Usage {
        key_prefix: ctx.prefix.as_str().to_owned(),
        tier: ctx.tier.name.as_str().to_owned(),
        plan_tier: ctx.plan_tier.as_str().to_owned(),
        entitled: ctx.entitled,
        environment: ctx.environment.as_str().to_owned(),
        rate_limit_per_minute: ctx.tier.rate_limit_per_minute,
        current_month: current,
        history,
    };
    let body = serde_json::to_vec(&usage).map_err(|e| ApiError::internal(&e))?;
    Ok(tagged(Tagged::hashed(body), Caching::NoStore))
}
