//! The one draw-until-free loop every key issue and roll goes through
//! ([`with_free_prefix`]). The operator commands (`mds demo` among them)
//! and the admin API issue, roll and revoke keys through [`crate::admin`],
//! audited; tests issue theirs with `mds_testkit::issue_key`.

use std::future::Future;

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, ApiKey, Environment, KeyHash, KeyPrefix, TierName};
use mds_store::{KeyRecord, StoreError, StoreResult};

/// How many new keys are drawn when the prefix of the last one is taken.
const PREFIX_TRIES: usize = 5;

/// The sentence of the `Conflict` when no free prefix was drawn.
pub(crate) fn no_free_prefix() -> String {
    format!("could not find a free key prefix after {PREFIX_TRIES} tries")
}

/// Draws a new key of `environment` and hands its prefix and hash to
/// `store`, which stores it; draws again while the store says the prefix
/// (or hash) exists already, at most [`PREFIX_TRIES`] times. The key (the
/// only time it exists in the clear) and what `store` returned.
pub(crate) async fn with_free_prefix<T, F, Fut>(environment: Environment, mut store: F) -> StoreResult<(ApiKey, T)>
where
    F: FnMut(KeyPrefix, KeyHash) -> Fut,
    Fut: Future<Output = StoreResult<T>>,
{
    for _ in 0..PREFIX_TRIES {
        let key = ApiKey::generate(environment);
        match store(key.prefix(), key.hash()).await {
            Ok(stored) => return Ok((key, stored)),
            Err(StoreError::Conflict(m)) if m.contains("already exists") => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Conflict(no_free_prefix()))
}

/// Draws keys as [`with_free_prefix`] does, each a [`KeyRecord`] for
/// `account` on `tier`, created `now` and expiring at `expires_at`, and has
/// `store` store it.
pub(crate) async fn draw_key<T, F, Fut>(
    account: &AccountName,
    tier: &TierName,
    environment: Environment,
    now: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    mut store: F,
) -> StoreResult<(ApiKey, T)>
where
    F: FnMut(KeyRecord) -> Fut,
    Fut: Future<Output = StoreResult<T>>,
{
    with_free_prefix(environment, |prefix, hash| {
        let (account, tier) = (account.clone(), tier.clone());
        store(KeyRecord { prefix, hash, account, tier, environment, created_at: now, revoked_at: None, expires_at })
    })
    .await
}
