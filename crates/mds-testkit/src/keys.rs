//! Issuing a key for a test, without an audit entry ([`issue_key`]). The
//! service issues keys through `mds_node::admin`, audited, drawing again
//! when a prefix is taken; a test's one draw is stored as it is.

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, ApiKey, Environment, TierName};
use mds_store::{KeyRecord, Store, StoreResult};

/// Makes a new key of `environment` for `account` on `tier`, created at
/// `now`, stores its hash and returns the key (the only time it exists in
/// the clear). `NotFound` for an unknown account or tier.
pub async fn issue_key(
    store: &dyn Store,
    account: &AccountName,
    tier: &TierName,
    environment: Environment,
    now: DateTime<Utc>,
) -> StoreResult<ApiKey> {
    let key = ApiKey::generate(environment);
    let record = KeyRecord {
        prefix: key.prefix(),
        hash: key.hash(),
        account: account.clone(),
        tier: tier.clone(),
        environment,
        created_at: now,
        revoked_at: None,
        expires_at: None,
    };
    store.create_key(&record).await?;
    Ok(key)
}
