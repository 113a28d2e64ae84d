//! Issuing and rolling keys: the one place a key is made and stored, for
//! the operator commands, the demo and the admin API.

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, ApiKey, Environment, KeyPrefix, TierName};
use mds_store::{NewKey, RolledKey, Store, StoreError, StoreResult};

/// How many new keys are drawn when the prefix of the last one is taken.
const PREFIX_TRIES: usize = 5;

/// Makes a new key for `account` on `tier`, stores its hash and returns the
/// key (the only time it exists in the clear). A key whose prefix is taken
/// is drawn again. `NotFound` for an unknown account or tier.
pub async fn issue_key(
    store: &dyn Store,
    account: &AccountName,
    tier: &TierName,
    environment: Environment,
    now: DateTime<Utc>,
) -> StoreResult<ApiKey> {
    issue_key_until(store, account, tier, environment, now, None).await
}

/// [`issue_key`] of a key that stops working at `expires_at` (`None`:
/// never). `Invalid` for an expiry not after `now`.
pub async fn issue_key_until(
    store: &dyn Store,
    account: &AccountName,
    tier: &TierName,
    environment: Environment,
    now: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
) -> StoreResult<ApiKey> {
    if expires_at.is_some_and(|e| e <= now) {
        return Err(StoreError::Invalid("expires_at is not in the future".into()));
    }
    for _ in 0..PREFIX_TRIES {
        let key = ApiKey::generate(environment);
        let new = NewKey {
            prefix: key.prefix(),
            hash: key.hash(),
            account: account.clone(),
            tier: tier.clone(),
            environment,
            created_at: now,
            expires_at,
        };
        match store.create_key(&new).await {
            Ok(_) => return Ok(key),
            Err(StoreError::Conflict(m)) if m.contains("already exists") => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Conflict(format!("could not find a free key prefix after {PREFIX_TRIES} tries")))
}

/// Rolls the key `old` (as Stripe's key roll): a new key on its account,
/// tier and environment, returned in the clear (the only time), while the
/// old one keeps working for `overlap` more (`0`: it stops now). `NotFound`
/// for no such key; `Conflict` for a revoked or expired one.
pub async fn roll_key(
    store: &dyn Store,
    old: &KeyPrefix,
    overlap: chrono::Duration,
    now: DateTime<Utc>,
) -> StoreResult<(ApiKey, RolledKey)> {
    if overlap < chrono::Duration::zero() {
        return Err(StoreError::Invalid("the overlap is negative".into()));
    }
    let environment = Environment::of_key(old.as_str())
        .ok_or_else(|| StoreError::NotFound(format!("no key with prefix \"{old}\"")))?;
    for _ in 0..PREFIX_TRIES {
        let key = ApiKey::generate(environment);
        match store.roll_key(old, (&key.prefix(), key.hash()), now, now + overlap).await {
            Ok(rolled) => return Ok((key, rolled)),
            Err(StoreError::Conflict(m)) if m.contains("already exists") => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Conflict(format!("could not find a free key prefix after {PREFIX_TRIES} tries")))
}
