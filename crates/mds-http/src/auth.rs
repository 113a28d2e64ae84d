//! Authentication: refuses keys in query strings, then turns the
//! `Authorization: Bearer` key into a [`KeyContext`] that the rest of the
//! request path (limiter, meter, handlers) takes from request extensions.
//!
//! Keys are checked against an in-memory [`AuthIndex`] built from the store's
//! [`AuthSnapshot`] and rebuilt whenever the store's generation changes, so
//! authentication never waits on the store. A key is parsed first (scheme,
//! length, checksum): a malformed key is refused without any lookup. The
//! stored SHA-256 is compared in constant time.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, Uri, header};
use chrono::{DateTime, Utc};
use mds_domain::key::looks_like_key;
use mds_domain::{AccountName, ApiKey, Environment, ErrorCode, KeyHash, KeyPrefix, Tier, TierName};
use mds_store::AuthSnapshot;

use crate::error::ApiError;
use crate::metrics::Event;
use crate::state::AppState;

/// Query parameters that carry credentials in other APIs; refused here.
pub const KEY_PARAMETERS: &[&str] = &["api_key", "apikey", "api-key", "key", "token", "access_token"];

/// Who is calling and within which limits: what authentication yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyContext {
    /// The key's public prefix.
    pub prefix: KeyPrefix,
    /// Owning account.
    pub account: AccountName,
    /// `live` or `test`.
    pub environment: Environment,
    /// The tier the key was issued on.
    pub plan_tier: TierName,
    /// The tier enforced now: the plan tier, or `evaluation` when the
    /// account is not entitled.
    pub tier: Tier,
    /// Whether the account's plan covers API access.
    pub entitled: bool,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// The `RateLimit-Policy` header value of the enforced tier, made once.
    pub rate_limit_policy: HeaderValue,
    /// The `X-RateLimit-Limit` header value of the enforced tier, made once.
    pub rate_limit_limit: HeaderValue,
}

struct Entry {
    hash: KeyHash,
    context: Arc<KeyContext>,
}

/// Active keys by prefix, with their resolved limits.
#[derive(Default)]
pub struct AuthIndex {
    by_prefix: HashMap<String, Entry>,
}

impl AuthIndex {
    /// Builds the index: each key's enforced tier resolved from its account's
    /// entitlement and the current tiers.
    pub fn new(snapshot: &AuthSnapshot) -> Self {
        let tiers: HashMap<&str, &Tier> = snapshot.tiers.iter().map(|t| (t.name.as_str(), t)).collect();
        let entitled: HashMap<&str, bool> = snapshot.accounts.iter().map(|a| (a.name.as_str(), a.entitled)).collect();
        let fallback = Tier {
            name: TierName::evaluation(),
            rate_limit_per_minute: mds_domain::account::DEFAULT_TIERS[0].1,
            monthly_quota: mds_domain::account::DEFAULT_TIERS[0].2,
        };
        let evaluation = tiers.get(mds_domain::account::EVALUATION_TIER).map_or(fallback, |t| (*t).clone());
        let by_prefix = snapshot
            .keys
            .iter()
            .map(|k| {
                let is_entitled = entitled.get(k.account.as_str()).copied().unwrap_or(false);
                let tier = match (is_entitled, tiers.get(k.tier.as_str())) {
                    (true, Some(t)) => (*t).clone(),
                    _ => evaluation.clone(),
                };
                let context = KeyContext {
                    prefix: k.prefix.clone(),
                    account: k.account.clone(),
                    environment: k.environment,
                    plan_tier: k.tier.clone(),
                    entitled: is_entitled,
                    created_at: k.created_at,
                    rate_limit_policy: HeaderValue::from_str(&format!(
                        "\"minute\";q={};w=60, \"month\";q={}",
                        tier.rate_limit_per_minute, tier.monthly_quota
                    ))
                    .expect("ASCII"),
                    rate_limit_limit: HeaderValue::from(tier.rate_limit_per_minute),
                    tier,
                };
                (k.prefix.as_str().to_owned(), Entry { hash: k.hash, context: Arc::new(context) })
            })
            .collect();
        AuthIndex { by_prefix }
    }

    /// The context of a well-formed key, if it is known and not revoked.
    pub fn authenticate(&self, key: &ApiKey) -> Option<Arc<KeyContext>> {
        let entry = self.by_prefix.get(key.prefix_str())?;
        (entry.hash == key.hash() && entry.context.environment == key.environment()).then(|| entry.context.clone())
    }

    /// How many active keys there are.
    pub fn len(&self) -> usize {
        self.by_prefix.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_prefix.is_empty()
    }
}

/// `400 api_key_in_query` for a key-like value or a credential parameter in
/// the query string of `uri`, whatever else the request carries. The value
/// is never logged or echoed.
pub fn refuse_key_in_query(uri: &Uri) -> Result<(), ApiError> {
    let Some(q) = uri.query() else { return Ok(()) };
    for (k, v) in form_urlencoded::parse(q.as_bytes()) {
        let named = KEY_PARAMETERS.iter().any(|p| k.eq_ignore_ascii_case(p));
        if named || looks_like_key(&v) || looks_like_key(&k) {
            let param = if looks_like_key(&k) { None } else { Some(k.into_owned()) };
            let e = ApiError::new(
                ErrorCode::ApiKeyInQuery,
                "API keys are accepted only in the Authorization header (Authorization: Bearer <key>); \
                 a key sent in a URL may be logged along the way, so consider rotating it",
            );
            return Err(match param {
                Some(p) => e.with_param(&p),
                None => e,
            });
        }
    }
    Ok(())
}

/// Authenticates the bearer key of a request with `headers`: its
/// [`KeyContext`], or `401`.
pub fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Arc<KeyContext>, ApiError> {
    let token = bearer_token(headers).ok_or_else(missing)?;
    let key = ApiKey::parse(token).map_err(|_| invalid())?;
    let found = state.auth().authenticate(&key);
    state.metrics.event(if found.is_some() { Event::KeyCacheHit } else { Event::KeyCacheMiss });
    found.ok_or_else(invalid)
}

/// The token of an `Authorization: Bearer <token>` header (scheme
/// case-insensitive), if there is a non-empty one.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = v.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn missing() -> ApiError {
    ApiError::new(
        ErrorCode::MissingApiKey,
        "send your API key in the Authorization header: Authorization: Bearer <key>",
    )
    .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mds\""))
}

fn invalid() -> ApiError {
    ApiError::new(ErrorCode::InvalidApiKey, "the API key is not valid; check it, or ask for a new one").with_header(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mds\", error=\"invalid_token\""),
    )
}
