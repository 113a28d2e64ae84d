//! The schemas of the admin API's request bodies, for its document only:
//! the handlers read their bodies field by field ([`super::body::Body`]),
//! and these state the same fields, types and bounds (a field a route does
//! not define is refused, hence `additionalProperties: false`; `null` counts
//! as absent).

#![allow(dead_code)]

use serde::Deserialize;
use utoipa::ToSchema;

/// The body of [`super::controllers::put_tier`].
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TierLimitsBody {
    /// Requests per minute.
    #[schema(minimum = 1, maximum = 4_294_967_295_u64)]
    rate_limit_per_minute: u64,
    /// Requests per calendar month (UTC).
    #[schema(minimum = 1, maximum = 9_223_372_036_854_775_807_u64)]
    monthly_quota: u64,
}

/// The body of [`super::controllers::create_account`].
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountCreateBody {
    /// 1 to 64 characters of a-z, 0-9, `_` and `-`, starting with a letter or digit.
    #[schema(example = "acme", pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    name: String,
    /// Whether its keys get their tier's limits (default `true`).
    entitled: Option<bool>,
}

/// The body of [`super::controllers::update_account`].
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountEntitlementBody {
    /// `false` lapses the account (its keys are held to the evaluation
    /// tier), `true` restores it.
    entitled: bool,
}

/// The body of [`super::controllers::issue_key`].
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyIssueBody {
    /// The account's name.
    #[schema(example = "acme", pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    account: String,
    /// The tier's name.
    #[schema(example = "pro", pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    tier: String,
    /// `live` or `test`.
    #[schema(example = "live", pattern = "^(live|test)$")]
    environment: String,
    /// When the key stops working (RFC 3339).
    #[schema(format = DateTime, example = "2027-01-01T00:00:00Z")]
    expires_at: Option<String>,
}

/// The body of [`super::controllers::roll_key`] (optional).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyRollBody {
    /// Seconds the old key keeps working (default 86400).
    #[schema(minimum = 0, maximum = 31_536_000)]
    expires_in: Option<u64>,
}

/// The body of [`super::webhooks::disable_webhook`] (optional).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookDisableBody {
    /// Why, 1 to 500 characters (recorded in the audit log).
    #[schema(min_length = 1, max_length = 500)]
    reason: Option<String>,
}
