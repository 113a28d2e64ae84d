//! Usage counts and quota history.
//!
//! A usage batch is applied in one write transaction: first its id goes into
//! `usage_batches` with `INSERT … ON CONFLICT DO NOTHING` (no row inserted:
//! the batch was applied before, and nothing else happens; a writer applying
//! the same batch at the same moment waits for the first and then finds the
//! id), then every key prefix is resolved (an unknown one aborts the whole
//! batch, its id included) and every route template (a new one is added to
//! `usage_routes`), then the batch's days are added to the daily ledger
//! (`usage_daily`) and their sums per key and month to `usage_counts`,
//! each with the backend's multi-row upsert (`dialect::add_counts`,
//! `dialect::add_days`: `requests = requests + excluded.requests`), and
//! ids older than [`USAGE_BATCH_RETENTION`] are pruned. A month's count is
//! therefore always the sum of its days. Routes, counts and days go in in
//! one order each (template; key and month; key, day and route), so writers
//! adding to the same rows at once lock them in one order and never
//! deadlock. Last, the batch bumps the `usage` change counter (the
//! `generation_usage` row of `meta`, every writer's last lock), which a node
//! follows to know when the counts it keeps from the store are out of date.
//!
//! Reads run in one read transaction each (`begin_read`): the key, then its
//! monthly counts, its days, or its plan tier's and the evaluation tier's
//! `tier_history` and its account's `entitlement_history`.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::clock::Clock;
use mds_domain::daily::DailyUsage;
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{KeyPrefix, TierName};

use super::dialect;
use super::meta::{bump_generation, read_generation};
use super::{Conn, Pool, begin_read, begin_write, db, execute, fetch_all};
use crate::rows::{self, META_GENERATION_USAGE, USAGE_BATCH_RETENTION};
use crate::{AppliedBatch, StoreError, StoreResult, UsageBatch};

/// Applies a usage batch unless its id was applied before; `applied_at` is
/// the bookkeeping instant of the id (and the clock of the pruning). The
/// generation is the one the batch's bump made, or for a batch applied
/// before, the one read in the transaction that found its id.
pub(crate) async fn apply_usage(pool: &Pool, batch: &UsageBatch, clock: &dyn Clock) -> StoreResult<AppliedBatch> {
    let applied_at = clock.now();
    rows::check_usage_batch_id(&batch.id)?;
    let (deltas, days) = rows::merge_usage(&batch.deltas)?;

    let mut tx = begin_write(pool).await?;
    let insert = sqlx::query("INSERT INTO usage_batches (id, applied_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING");
    let fresh = execute(&mut tx, insert.bind(&batch.id).bind(rows::ts(&applied_at))).await? == 1;
    if !fresh {
        let generation = match batch_generation(&mut tx, &batch.id).await? {
            Some(g) => g,
            None => read_generation(&mut tx, META_GENERATION_USAGE).await?,
        };
        // Dropping the transaction rolls it back: nothing was written.
        return Ok(AppliedBatch { fresh: false, generation });
    }

    let keys = rows::distinct_keys(&deltas);
    let prefixes: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    let ids: HashMap<String, i64> = dialect::key_ids(&mut tx, &prefixes).await?.into_iter().collect();
    if let Some(unknown) = keys.iter().find(|k| !ids.contains_key(k.as_str())) {
        return Err(rows::no_key(unknown));
    }
    let routes = route_ids(&mut tx, &rows::distinct_routes(&days)).await?;
    let mut counts: Vec<(i64, i64, i64)> =
        deltas.iter().map(|d| (ids[d.key.as_str()], i64::from(d.month), d.requests)).collect();
    counts.sort_unstable();
    dialect::add_counts(&mut tx, &counts).await?;
    let mut entries: Vec<[i64; 5]> = days
        .iter()
        .map(|d| [ids[d.key.as_str()], i64::from(d.day), routes[d.route], d.requests, d.not_modified])
        .collect();
    entries.sort_unstable();
    dialect::add_days(&mut tx, &entries).await?;

    // Cheap on the index when there is nothing to prune (nearly always).
    sqlx::query("DELETE FROM usage_batches WHERE applied_at < $1")
        .bind(rows::ts(&(applied_at - USAGE_BATCH_RETENTION)))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    let generation = bump_generation(&mut tx, META_GENERATION_USAGE).await?;
    sqlx::query("UPDATE usage_batches SET generation = $1 WHERE id = $2")
        .bind(generation)
        .bind(&batch.id)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(AppliedBatch { fresh: true, generation })
}

/// The `usage` generation usage batch `id` was applied at, on `conn`; `None`
/// when it was not applied, was pruned, or was applied before the store
/// recorded generations.
async fn batch_generation(conn: &mut Conn, id: &str) -> StoreResult<Option<i64>> {
    let g: Option<Option<i64>> = sqlx::query_scalar("SELECT generation FROM usage_batches WHERE id = $1")
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    Ok(g.flatten())
}

/// [`crate::UsageStore::usage_batch_applied`].
pub(crate) async fn usage_batch_applied(pool: &Pool, id: &str) -> StoreResult<Option<i64>> {
    let mut tx = begin_read(pool).await?;
    let g = batch_generation(&mut tx, id).await?;
    tx.commit().await.map_err(db)?;
    Ok(g)
}

/// The ids of `routes` (distinct, sorted) in `usage_routes`, adding those
/// that are not there. The table holds a handful of rows: it is read whole,
/// and only a route never seen before costs an insert (`ON CONFLICT DO
/// NOTHING`: a writer adding the same route at once waits for the first,
/// then reads its id).
async fn route_ids<'a>(conn: &mut Conn, routes: &[&'a str]) -> StoreResult<HashMap<&'a str, i64>> {
    let known: HashMap<String, i64> = sqlx::query_as::<_, (String, i64)>("SELECT template, id FROM usage_routes")
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?
        .into_iter()
        .collect();
    let mut ids = HashMap::with_capacity(routes.len());
    for &route in routes {
        let id = match known.get(route) {
            Some(&id) => id,
            None => {
                sqlx::query("INSERT INTO usage_routes (template) VALUES ($1) ON CONFLICT (template) DO NOTHING")
                    .bind(route)
                    .execute(&mut *conn)
                    .await
                    .map_err(db)?;
                sqlx::query_scalar("SELECT id FROM usage_routes WHERE template = $1")
                    .bind(route)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(db)?
            }
        };
        ids.insert(route, id);
    }
    Ok(ids)
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

/// A key's stored count for `month` (0 when it has none) and the `usage`
/// generation, in one read transaction (one snapshot): a batch is in the
/// count exactly when its generation is at most this one.
pub(crate) async fn usage_as_of(pool: &Pool, key: &KeyPrefix, month: BillingMonth) -> StoreResult<(u64, i64)> {
    let mut tx = begin_read(pool).await?;
    let (id, _, _) = key_row(&mut tx, key).await?;
    let rs = sqlx::query("SELECT month, requests FROM usage_counts WHERE key_id = $1 AND month = $2")
        .bind(id)
        .bind(i64::from(month.key()))
        .fetch_all(&mut *tx)
        .await
        .map_err(db)?;
    let generation = read_generation(&mut tx, META_GENERATION_USAGE).await?;
    tx.commit().await.map_err(db)?;
    let count = rs.iter().map(rows::usage_count).map(|r| r.map(|(_, n)| n)).sum::<StoreResult<u64>>()?;
    Ok((count, generation))
}

/// A key's daily ledger for the days `from..=to`, by day then route.
pub(crate) async fn usage_days(
    pool: &Pool,
    key: &KeyPrefix,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<DailyUsage>> {
    let (Ok(first), Ok(last)) = (rows::day_key(from), rows::day_key(to)) else {
        return Err(StoreError::Invalid(format!("usage days must be in the years 1 to 9999 (got {from} to {to})")));
    };
    let mut tx = begin_read(pool).await?;
    let (id, _, _) = key_row(&mut tx, key).await?;
    let rs = sqlx::query(
        "SELECT d.day, r.template, d.requests, d.not_modified FROM usage_daily d \
         JOIN usage_routes r ON r.id = d.route_id WHERE d.key_id = $1 AND d.day BETWEEN $2 AND $3",
    )
    .bind(id)
    .bind(i64::from(first))
    .bind(i64::from(last))
    .fetch_all(&mut *tx)
    .await
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    let mut days = rs.iter().map(rows::daily_usage).collect::<StoreResult<Vec<_>>>()?;
    // Sorted here, not in SQL: the order of the route text then does not
    // depend on the database's collation.
    days.sort_unstable_by(|a, b| (a.day, &a.route).cmp(&(b.day, &b.route)));
    Ok(days)
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
    let select =
        sqlx::query("SELECT effective_from, entitled FROM entitlement_history WHERE account_id = $1 ORDER BY id");
    let rs = fetch_all(&mut tx, select.bind(account_id)).await?;
    tx.commit().await.map_err(db)?;
    let entitled = rows::oldest_first(rs.iter().map(rows::entitlement_change).collect::<StoreResult<_>>()?);
    Ok(QuotaHistory { plan_tier, evaluation, entitled })
}
