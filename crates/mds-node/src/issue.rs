//! Issuing a key without an audit entry: the demo's key, and tests'. The
//! operator commands and the admin API issue, roll and revoke keys through
//! [`crate::admin`], audited.

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, ApiKey, Environment, TierName};
use mds_store::{NewKey, Store, StoreError, StoreResult};

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
    for _ in 0..PREFIX_TRIES {
        let key = ApiKey::generate(environment);
        let new = NewKey {
            prefix: key.prefix(),
            hash: key.hash(),
            account: account.clone(),
            tier: tier.clone(),
            environment,
            created_at: now,
            expires_at: None,
        };
        match store.create_key(&new).await {
            Ok(_) => return Ok(key),
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Conflict(format!("could not find a free key prefix after {PREFIX_TRIES} tries")))
}
