//! The node's key index: each active key's [`KeyContext`] (who is calling,
//! within which limits) by prefix, built from the store's [`AuthSnapshot`]
//! and rebuilt whenever the store's auth generation moves, so
//! authentication never waits on the store. The stored SHA-256 is compared
//! in constant time ([`mds_domain::KeyHash`]).

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use http::HeaderValue;
use mds_domain::account::enforced_tier;
use mds_domain::{AccountName, ApiKey, Environment, KeyHash, KeyPrefix, Tier, TierName};
use mds_store::AuthSnapshot;

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
        let evaluation =
            tiers.get(TierName::evaluation().as_str()).map_or_else(Tier::default_evaluation, |t| (*t).clone());
        let by_prefix = snapshot
            .keys
            .iter()
            .map(|k| {
                let is_entitled = entitled.get(k.account.as_str()).copied().unwrap_or(false);
                let tier = enforced_tier(is_entitled, tiers.get(k.tier.as_str()).copied(), &evaluation).clone();
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

    /// The context of a well-formed key, if it is known and not revoked:
    /// looked up by its prefix (the 17-character one of keys issued now,
    /// else the 12-character one of keys issued before), then its hash
    /// compared.
    pub fn authenticate(&self, key: &ApiKey) -> Option<Arc<KeyContext>> {
        let hash = key.hash();
        key.prefix_candidates().into_iter().find_map(|prefix| {
            let entry = self.by_prefix.get(prefix)?;
            (entry.hash == hash && entry.context.environment == key.environment()).then(|| entry.context.clone())
        })
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
