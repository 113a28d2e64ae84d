//! Usage counts and quota history on SQLite.
//!
//! A usage batch is applied in one `BEGIN IMMEDIATE` transaction: first its id
//! goes into `usage_batches` (if the id is there already the batch was
//! applied before, and nothing else happens), then every key prefix is
//! resolved (an unknown one aborts the whole batch), then the counts are added
//! with multi-row `INSERT … ON CONFLICT DO UPDATE SET requests = requests +
//! excluded.requests`, and ids older than [`USAGE_BATCH_RETENTION`] are
//! pruned. Applying usage bumps no change counter: no node caches counts read
//! from the store.
//!
//! Quota history is read in one read transaction: the key, its plan tier's
//! and the evaluation tier's `tier_history`, its account's
//! `entitlement_history`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{KeyPrefix, TierName};
use sqlx::{SqliteConnection, SqlitePool};

use super::SqliteStore;
use super::error::db;
use crate::rows::{self, MergedDelta, USAGE_BATCH_RETENTION};
use crate::{StoreResult, UsageBatch};

/// Key prefixes looked up per statement.
const PREFIX_RUN: usize = 500;
/// Counts written per statement (3 bound values each).
const COUNT_RUN: usize = 300;

/// `INSERT INTO usage_counts … ON CONFLICT DO UPDATE` adding `rows` counts.
fn add_counts_sql(rows: usize) -> String {
    let values = vec!["(?, ?, ?)"; rows].join(", ");
    format!(
        "INSERT INTO usage_counts (key_id, month, requests) VALUES {values} \
         ON CONFLICT (key_id, month) DO UPDATE SET requests = usage_counts.requests + excluded.requests"
    )
}

/// The row id of every key of `deltas`; `NotFound` naming the first unknown
/// prefix (in the order of the batch).
async fn key_ids(conn: &mut SqliteConnection, deltas: &[MergedDelta<'_>]) -> StoreResult<HashMap<String, i64>> {
    let keys = rows::distinct_keys(deltas);
    let mut ids = HashMap::with_capacity(keys.len());
    for run in keys.chunks(PREFIX_RUN) {
        let sql = format!("SELECT prefix, id FROM api_keys WHERE prefix IN ({})", vec!["?"; run.len()].join(", "));
        let mut q = sqlx::query_as::<_, (String, i64)>(&sql);
        for k in run {
            q = q.bind(k.as_str());
        }
        ids.extend(q.fetch_all(&mut *conn).await.map_err(db)?);
    }
    match keys.iter().find(|k| !ids.contains_key(k.as_str())) {
        Some(unknown) => Err(rows::no_key(unknown)),
        None => Ok(ids),
    }
}

/// Applies a usage batch unless its id was applied before; `applied_at` is
/// the bookkeeping instant of the id (and the clock of the pruning).
pub(super) async fn apply_usage(
    store: &SqliteStore,
    batch: &UsageBatch,
    applied_at: DateTime<Utc>,
) -> StoreResult<bool> {
    rows::check_usage_batch_id(&batch.id)?;
    let deltas = rows::merge_usage(&batch.deltas)?;

    let mut tx = store.begin_write().await?;
    let fresh = sqlx::query("INSERT INTO usage_batches (id, applied_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING")
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

    let ids = key_ids(&mut tx, &deltas).await?;
    let full_sql = add_counts_sql(COUNT_RUN);
    for run in deltas.chunks(COUNT_RUN) {
        let sql = if run.len() == COUNT_RUN { full_sql.clone() } else { add_counts_sql(run.len()) };
        let mut q = sqlx::query(&sql);
        for d in run {
            q = q.bind(ids[d.key.as_str()]).bind(d.month).bind(d.requests);
        }
        q.execute(&mut *tx).await.map_err(db)?;
    }

    // Cheap on the index when there is nothing to prune (nearly always).
    sqlx::query("DELETE FROM usage_batches WHERE applied_at < ?")
        .bind(rows::ts(&(applied_at - USAGE_BATCH_RETENTION)))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(true)
}

/// The row id, tier and account id of a key; `NotFound` if there is none.
async fn key_row(conn: &mut SqliteConnection, key: &KeyPrefix) -> StoreResult<(i64, String, i64)> {
    let r = sqlx::query_as::<_, (i64, String, i64)>("SELECT id, tier, account_id FROM api_keys WHERE prefix = ?")
        .bind(key.as_str())
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    r.ok_or_else(|| rows::no_key(key))
}

/// A key's stored counts for the months `from..=to`, oldest first.
pub(super) async fn usage(
    pool: &SqlitePool,
    key: &KeyPrefix,
    from: BillingMonth,
    to: BillingMonth,
) -> StoreResult<Vec<(BillingMonth, u64)>> {
    // One read transaction, so the key check and the counts agree.
    let mut tx = pool.begin().await.map_err(db)?;
    let (id, _, _) = key_row(&mut tx, key).await?;
    let rs = sqlx::query(
        "SELECT month, requests FROM usage_counts WHERE key_id = ? AND month BETWEEN ? AND ? ORDER BY month",
    )
    .bind(id)
    .bind(from.key())
    .bind(to.key())
    .fetch_all(&mut *tx)
    .await
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    rs.iter().map(rows::usage_count).collect()
}

/// One tier's quota changes, oldest first.
async fn tier_quotas(conn: &mut SqliteConnection, tier: &str) -> StoreResult<Vec<(DateTime<Utc>, u64)>> {
    let rs = sqlx::query("SELECT effective_from, monthly_quota FROM tier_history WHERE tier = ? ORDER BY id")
        .bind(tier)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    Ok(rows::oldest_first(rs.iter().map(rows::tier_change).collect::<StoreResult<_>>()?))
}

/// The quota history of a key, revoked or not.
pub(super) async fn quota_history(pool: &SqlitePool, key: &KeyPrefix) -> StoreResult<QuotaHistory> {
    let mut tx = pool.begin().await.map_err(db)?;
    let (_, tier, account_id) = key_row(&mut tx, key).await?;
    let plan_tier = tier_quotas(&mut tx, &tier).await?;
    let evaluation = tier_quotas(&mut tx, TierName::evaluation().as_str()).await?;
    let rs = sqlx::query("SELECT effective_from, entitled FROM entitlement_history WHERE account_id = ? ORDER BY id")
        .bind(account_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    let entitled = rows::oldest_first(rs.iter().map(rows::entitlement_change).collect::<StoreResult<_>>()?);
    Ok(QuotaHistory { plan_tier, evaluation, entitled })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_counts_sql_adds_to_what_is_there() {
        assert_eq!(
            add_counts_sql(2),
            "INSERT INTO usage_counts (key_id, month, requests) VALUES (?, ?, ?), (?, ?, ?) \
             ON CONFLICT (key_id, month) DO UPDATE SET requests = usage_counts.requests + excluded.requests"
        );
    }
}
