//! Schema migrations of the SQLite backend, and the rows a new store starts
//! with.
//!
//! Migrations are the `.sql` files under `migrations/sqlite/`, embedded in the
//! binary and numbered. `schema_migrations` records which ones were applied;
//! each is applied with its record in one `BEGIN IMMEDIATE` transaction, so
//! two processes migrating at once apply it exactly once. A database migrated
//! by a newer mds (a version this build does not know) is refused rather than
//! used with a schema this build does not understand.
//!
//! After the migrations, the seed: the default tiers that are absent, the
//! three change counters and a 32-byte random cursor secret, each only if
//! missing. A store that has all of them is not written to at all, so an
//! operator command does not wait behind a long import just to start. A
//! default tier seeded gets its first `tier_history` row, effective from the
//! seeding, and bumps the `auth` counter; nothing else the seed does bumps a
//! counter.

use chrono::Utc;
use mds_domain::Tier;
use rand::RngCore;
use sqlx::{Executor, SqlitePool};

use super::access::record_tier;
use super::error::db;
use super::{begin_write, bump_generation};
use crate::rows::{self, CURSOR_SECRET_LEN, META_CURSOR_SECRET, META_GENERATION_AUTH, META_GENERATIONS};
use crate::{StoreError, StoreResult};

/// One embedded migration.
struct Migration {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

/// Every migration, in order. Append only; never edit one that shipped.
const MIGRATIONS: &[Migration] = &[
    Migration { version: 1, name: "initial", sql: include_str!("../../migrations/sqlite/0001_initial.sql") },
    Migration { version: 2, name: "usage", sql: include_str!("../../migrations/sqlite/0002_usage.sql") },
    Migration {
        version: 3,
        name: "catalog_snapshot",
        sql: include_str!("../../migrations/sqlite/0003_catalog_snapshot.sql"),
    },
];

/// Applies the missing migrations, then seeds what is missing.
pub(super) async fn run(pool: &SqlitePool) -> StoreResult<()> {
    sqlx::query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        .execute(pool)
        .await
        .map_err(db)?;
    let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
        .fetch_all(pool)
        .await
        .map_err(db)?;
    check_known(&applied)?;
    for m in MIGRATIONS {
        if !applied.contains(&m.version) {
            apply(pool, m).await?;
        }
    }
    seed(pool).await
}

/// Refuses a schema newer than this build.
fn check_known(applied: &[i64]) -> StoreResult<()> {
    let latest = MIGRATIONS.last().map_or(0, |m| m.version);
    match applied.iter().max() {
        Some(&v) if v > latest => Err(StoreError::Invalid(format!(
            "the database schema is at version {v}, newer than this mds build knows ({latest}); upgrade mds"
        ))),
        _ => Ok(()),
    }
}

async fn apply(pool: &SqlitePool, m: &Migration) -> StoreResult<()> {
    let mut tx = begin_write(pool).await?;
    // Another process may have applied it since we looked.
    let done: Option<i64> = sqlx::query_scalar("SELECT version FROM schema_migrations WHERE version = ?")
        .bind(m.version)
        .fetch_optional(&mut *tx)
        .await
        .map_err(db)?;
    if done.is_some() {
        return Ok(());
    }
    // Through `Executor`, whose future is `Send` (that of `RawSql::execute` is not).
    (&mut *tx).execute(sqlx::raw_sql(m.sql)).await.map_err(db)?;
    sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)")
        .bind(m.version)
        .bind(rows::ts(&Utc::now()))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    tracing::info!(version = m.version, name = m.name, "applied schema migration");
    Ok(())
}

/// Whether any seed row is missing (read only).
async fn needs_seed(pool: &SqlitePool, defaults: &[Tier]) -> StoreResult<bool> {
    let [a, b, c] = META_GENERATIONS;
    let meta: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM meta WHERE key IN (?, ?, ?, ?)")
        .bind(a)
        .bind(b)
        .bind(c)
        .bind(META_CURSOR_SECRET)
        .fetch_one(pool)
        .await
        .map_err(db)?;
    if meta != 4 {
        return Ok(true);
    }
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM tiers").fetch_all(pool).await.map_err(db)?;
    Ok(defaults.iter().any(|t| !names.iter().any(|n| n == t.name.as_str())))
}

async fn seed(pool: &SqlitePool) -> StoreResult<()> {
    let defaults = Tier::defaults();
    if !needs_seed(pool, &defaults).await? {
        return Ok(());
    }
    let mut tx = begin_write(pool).await?;
    let now = Utc::now();
    let mut secret = [0u8; CURSOR_SECRET_LEN];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let counters = META_GENERATIONS.map(|key| (key, "0".to_owned()));
    for (key, value) in counters.into_iter().chain([(META_CURSOR_SECRET, rows::hex_encode(&secret))]) {
        sqlx::query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING")
            .bind(key)
            .bind(value)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
    }
    let mut inserted = 0;
    for t in &defaults {
        let quota = rows::to_bigint("monthly_quota", t.monthly_quota)?;
        let added = sqlx::query(
            "INSERT INTO tiers (name, rate_limit_per_minute, monthly_quota) VALUES (?, ?, ?) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(t.name.as_str())
        .bind(i64::from(t.rate_limit_per_minute))
        .bind(quota)
        .execute(&mut *tx)
        .await
        .map_err(db)?
        .rows_affected();
        if added > 0 {
            record_tier(&mut tx, &t.name, t.rate_limit_per_minute, quota, now).await?;
            inserted += added;
        }
    }
    if inserted > 0 {
        bump_generation(&mut tx, META_GENERATION_AUTH).await?;
    }
    tx.commit().await.map_err(db)?;
    if inserted > 0 {
        tracing::info!(tiers = inserted, "seeded default tiers");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_increasing_and_named_like_their_files() {
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].version < pair[1].version);
        }
        assert_eq!(MIGRATIONS[0].version, 1);
        assert!(MIGRATIONS[0].sql.contains("CREATE TABLE companies"));
        assert_eq!(MIGRATIONS[1].version, 2);
        assert!(MIGRATIONS[1].sql.contains("CREATE TABLE usage_counts"));
        assert_eq!(MIGRATIONS[2].version, 3);
        assert!(MIGRATIONS[2].sql.contains("CREATE TABLE catalog_snapshot_chunks"));
    }

    #[test]
    fn newer_schemas_are_refused() {
        assert!(check_known(&[]).is_ok());
        assert!(check_known(&[1]).is_ok());
        assert!(check_known(&[1, 2]).is_ok());
        assert!(check_known(&[1, 2, 3]).is_ok());
        match check_known(&[1, 99]) {
            Err(StoreError::Invalid(m)) => assert!(m.contains("version 99"), "{m}"),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }
}
