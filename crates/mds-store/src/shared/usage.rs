//! Usage counts and quota history.
//!
//! A usage batch is applied in one write transaction: first its id goes into
//! `usage_batches` with `INSERT … ON CONFLICT DO NOTHING` (no row inserted:
//! the batch was applied before, and nothing else happens; a writer applying
//! the same batch at the same moment waits for the first and then finds the
//! id), then every key prefix is resolved (an unknown one aborts the whole
//! batch, its id included), then the counts are added with the backend's
//! multi-row upsert (`dialect::add_counts`: `requests = requests +
//! excluded.requests`), and ids older than [`USAGE_BATCH_RETENTION`] are
//! pruned. The counts go in in (key, month) order, so writers adding to the
//! same rows at once lock them in one order and never deadlock. Applying
//! usage bumps no change counter: no node caches counts read from the store.
//!
//! Reads run in one read transaction each (`begin_read`): the key, then its
//! counts or its plan tier's and the evaluation tier's `tier_history` and
//! its account's `entitlement_history`.
//!
//! Compiled once per backend (see `shared/mod.rs`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{KeyPrefix, TierName};

use super::dialect;
use super::{Conn, Pool, begin_read, begin_write, db};
use crate::rows::{self, USAGE_BATCH_RETENTION};
use crate::{StoreResult, UsageBatch};

/// Applies a usage batch unless its id was applied before; `applied_at` is
/// the bookkeeping instant of the id (and the clock of the pruning).
pub(crate) async fn apply_usage(pool: &Pool, batch: &UsageBatch, applied_at: DateTime<Utc>) -> StoreResult<bool> {
    rows::check_usage_batch_id(&batch.id)?;
    let deltas = rows::merge_usage(&batch.deltas)?;

    let mut tx = begin_write(pool).await?;
    let fresh = sqlx::query("INSERT INTO usage_batches (id, applied_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING")
        .bind(&batch.id)
        .bind(rows::ts(&applied_at))
        .execute(&mut *tx)
        .await
        .map_err(db)?
        .rows_affected()
        == 1;
    if !fresh {
        // Dropping the transaction rolls it back: nothing was written.
        return Ok(false);
    }

    let keys = rows::distinct_keys(&deltas);
    let prefixes: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    let ids: HashMap<String, i64> = dialect::key_ids(&mut tx, &prefixes).await?.into_iter().collect();
    if let Some(unknown) = keys.iter().find(|k| !ids.contains_key(k.as_str())) {
        return Err(rows::no_key(unknown));
    }
    let mut counts: Vec<(i64, i64, i64)> =
        deltas.iter().map(|d| (ids[d.key.as_str()], i64::from(d.month), d.requests)).collect();
    counts.sort_unstable();
    dialect::add_counts(&mut tx, &counts).await?;

    // Cheap on the index when there is nothing to prune (nearly always).
    sqlx::query("DELETE FROM usage_batches WHERE applied_at < $1")
        .bind(rows::ts(&(applied_at - USAGE_BATCH_RETENTION)))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(true)
}

/// The row id, tier and account id of a key; `NotFound` if there is none.
async fn key_row(conn: &mut Conn, key: &KeyPrefix) -> StoreResult<(i64, String, i64)> {
    let r = sqlx::query_as::<_, (i64, String, i64)>("SELECT id, tier, account_id FROM api_keys WHERE prefix = $1")
        .bind(key.as_str())
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    r.ok_or_else(|| rows::no_key(key))
}

/// A key's stored counts for the months `from..=to`, oldest first.
pub(crate) async fn usage(
    pool: &Pool,
    key: &KeyPrefix,
    from: BillingMonth,
    to: BillingMonth,
) -> StoreResult<Vec<(BillingMonth, u64)>> {
    // One read transaction, so the key check and the counts agree.
    let mut tx = begin_read(pool).await?;
    let (id, _, _) = key_row(&mut tx, key).await?;
    let rs = sqlx::query(
        "SELECT month, requests FROM usage_counts WHERE key_id = $1 AND month BETWEEN $2 AND $3 ORDER BY month",
    )
    .bind(id)
    .bind(i64::from(from.key()))
    .bind(i64::from(to.key()))
    .fetch_all(&mut *tx)
    .await
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    rs.iter().map(rows::usage_count).collect()
}

/// One tier's quota changes, oldest first.
async fn tier_quotas(conn: &mut Conn, tier: &str) -> StoreResult<Vec<(DateTime<Utc>, u64)>> {
    let rs = sqlx::query("SELECT effective_from, monthly_quota FROM tier_history WHERE tier = $1 ORDER BY id")
        .bind(tier)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    Ok(rows::oldest_first(rs.iter().map(rows::tier_change).collect::<StoreResult<_>>()?))
}

/// The quota history of a key, revoked or not.
pub(crate) async fn quota_history(pool: &Pool, key: &KeyPrefix) -> StoreResult<QuotaHistory> {
    let mut tx = begin_read(pool).await?;
    let (_, tier, account_id) = key_row(&mut tx, key).await?;
    let plan_tier = tier_quotas(&mut tx, &tier).await?;
    let evaluation = tier_quotas(&mut tx, TierName::evaluation().as_str()).await?;
    let rs = sqlx::query("SELECT effective_from, entitled FROM entitlement_history WHERE account_id = $1 ORDER BY id")
        .bind(account_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    let entitled = rows::oldest_first(rs.iter().map(rows::entitlement_change).collect::<StoreResult<_>>()?);
    Ok(QuotaHistory { plan_tier, evaluation, entitled })
}
