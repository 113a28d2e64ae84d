//! Enforces each key's per-minute limit and monthly quota, meters what
//! counts, and tells every authenticated caller where it stands, in the
//! headers of draft-ietf-httpapi-ratelimit-headers-11 and the `X-RateLimit-*`
//! headers that client libraries read today.
//!
//! What counts against the quota is the route's [`Charge`] (the route
//! table): admitted requests to a counted route, whatever their outcome,
//! except a `304` or a `5xx`. Requests to a free route take from the per-minute limit
//! only, and stay possible when the quota is spent. A counted route's
//! requests are recorded in the daily ledger under its path template: the
//! counted ones as requests, the `304`s as such.

use std::io::Write as _;
use std::sync::OnceLock;

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use mds_domain::ErrorCode;
use mds_limits::{Charge, Decision, Limits, Outcome, Policy};

use mds_node::KeyContext;
use mds_node::metrics::Verdict;

use crate::error::ApiError;
use crate::state::AppState;

/// An admitted request, to settle once it is answered.
pub struct Admission {
    /// `None` when limits are off.
    decision: Option<Decision>,
}

/// Admits a request of `ctx` to a route whose requests take `charge` from
/// the quota, or refuses it with `429` (and its headers). Takes from the
/// per-minute limit and, on a counted route, reserves one request of the
/// month's quota (recorded under the route's template).
pub async fn admit(state: &AppState, ctx: &KeyContext, charge: Charge) -> Result<Admission, ApiError> {
    let Some(decision) = state.node().admit(ctx, charge).await? else {
        return Ok(Admission { decision: None });
    };
    if decision.admitted() {
        state.node().metrics().verdict(Verdict::Admitted);
        return Ok(Admission { decision: Some(decision) });
    }
    let limits =
        Limits { rate_limit_per_minute: ctx.tier.rate_limit_per_minute, monthly_quota: ctx.tier.monthly_quota };
    let code =
        if decision.violated.contains(&Policy::Month) { ErrorCode::QuotaExceeded } else { ErrorCode::RateLimited };
    state.node().metrics().verdict(if code == ErrorCode::QuotaExceeded {
        Verdict::QuotaExceeded
    } else {
        Verdict::RateLimited
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
        .with_violated_policies(decision.violated.iter().map(|p| p.as_str().to_owned()).collect())
        .with_header(header::RETRY_AFTER, HeaderValue::from(decision.retry_after_secs));
    for (k, v) in headers(ctx, &decision) {
        err = err.with_header(k, v);
    }
    Err(err)
}

impl Admission {
    /// Counts the request against the quota unless it was answered `304`
    /// (caching is rewarded), `429` (a refusal is never counted: a stream
    /// refused as `too_many_streams` is refused after admission) or `5xx`
    /// (the service's fault is never billed): a reservation that is not
    /// counted is released. Adds the rate-limit headers to `resp`.
    pub fn settle(self, ctx: &KeyContext, resp: &mut Response) {
        let Some(mut decision) = self.decision else { return };
        if let Some(hold) = decision.hold.take() {
            let status = resp.status();
            hold.settle(if status == StatusCode::NOT_MODIFIED {
                Outcome::NotModified
            } else if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
                Outcome::Released
            } else {
                Outcome::Counted
            });
        }
        let h = resp.headers_mut();
        for (k, v) in headers(ctx, &decision) {
            h.insert(k, v);
        }
    }
}

/// The rate-limit headers of a decision: the policies (made once per tier),
/// where the caller stands on the policy closest to its limit, and the
/// per-minute figures in the `X-RateLimit-*` form. Values that repeat (the
/// tier's limit, the seconds of a minute) are made once, not per request.
pub fn headers(ctx: &KeyContext, d: &Decision) -> [(HeaderName, HeaderValue); 5] {
    let (policy, closest) =
        if d.month.headroom() < d.minute.headroom() { (Policy::Month, &d.month) } else { (Policy::Minute, &d.minute) };
    let mut standing = [0u8; 64];
    let len = {
        let mut w = &mut standing[..];
        write!(w, "\"{}\";r={};t={}", policy.as_str(), closest.remaining, closest.reset_secs)
            .expect("fits in 64 bytes");
        64 - w.len()
    };
    let limit = if d.minute.limit == u64::from(ctx.tier.rate_limit_per_minute) {
        ctx.rate_limit_limit.clone()
    } else {
        HeaderValue::from(d.minute.limit)
    };
    [
        (HeaderName::from_static("ratelimit-policy"), ctx.rate_limit_policy.clone()),
        (HeaderName::from_static("ratelimit"), HeaderValue::from_bytes(&standing[..len]).expect("ASCII")),
        (HeaderName::from_static("x-ratelimit-limit"), limit),
        (HeaderName::from_static("x-ratelimit-remaining"), HeaderValue::from(d.minute.remaining)),
        (HeaderName::from_static("x-ratelimit-reset"), seconds(d.minute.reset_secs)),
    ]
}

/// `n` as a header value; one made once when `n` is within a minute.
fn seconds(n: u64) -> HeaderValue {
    static MINUTE: OnceLock<Vec<HeaderValue>> = OnceLock::new();
    let minute = MINUTE.get_or_init(|| (0..=60u64).map(HeaderValue::from).collect());
    usize::try_from(n).ok().and_then(|i| minute.get(i)).cloned().unwrap_or_else(|| HeaderValue::from(n))
}
