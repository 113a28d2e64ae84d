//! Schema migrations of the PostgreSQL backend, and the rows a new store
//! starts with.
//!
//! Migrations are the `.sql` files under `migrations/postgres/`, embedded in
//! the binary and numbered like their SQLite twins (same versions, same
//! names, same tables). `schema_migrations` records which ones were applied.
//!
//! A migration is one transaction that first takes a transaction-scoped
//! advisory lock (`pg_advisory_xact_lock`), so nodes migrating at once queue
//! up: the first applies what is missing, the others find it applied. DDL is
//! transactional on PostgreSQL: a migration that fails leaves no trace. A
//! database migrated by a newer mds (a version this build does not know) is
//! refused rather than used with a schema this build does not understand.
//!
//! In the same transaction, the seed: the default tiers that are absent, the
//! three change counters and a 32-byte random cursor secret, each only if
//! missing. A default tier seeded gets its first `tier_history` row, effective
//! from the seeding, and bumps the `auth` counter; nothing else the seed does
//! bumps a counter. A store that has all of them gets no write but the lock,
//! which no other operation takes.

use chrono::Utc;
use mds_domain::Tier;
use rand::RngCore;
use sqlx::{Executor, PgConnection, PgPool};

use super::access::record_tier;
use super::bump_generation;
use super::error::db;
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
    Migration { version: 1, name: "initial", sql: include_str!("../../migrations/postgres/0001_initial.sql") },
    Migration { version: 2, name: "usage", sql: include_str!("../../migrations/postgres/0002_usage.sql") },
    Migration {
        version: 3,
        name: "catalog_snapshot",
        sql: include_str!("../../migrations/postgres/0003_catalog_snapshot.sql"),
    },
];

/// The key of the advisory lock that serialises migrations ("mds_migr").
const MIGRATION_LOCK: i64 = 0x6d64_735f_6d69_6772;

/// Applies the missing migrations and seeds what is missing, in one
/// transaction under the migration lock.
pub(super) async fn run(pool: &PgPool) -> StoreResult<()> {
    let mut tx = pool.begin().await.map_err(db)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(MIGRATION_LOCK).execute(&mut *tx).await.map_err(db)?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT COLLATE \"C\" NOT NULL)",
    )
    .execute(&mut *tx)
    .await
    .map_err(db)?;
    let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
        .fetch_all(&mut *tx)
        .await
        .map_err(db)?;
    check_known(&applied)?;
    let mut done = Vec::new();
    for m in MIGRATIONS.iter().filter(|m| !applied.contains(&m.version)) {
        apply(&mut tx, m).await?;
        done.push(m);
    }
    let seeded = seed(&mut tx).await?;
    tx.commit().await.map_err(db)?;
    for m in done {
        tracing::info!(version = m.version, name = m.name, "applied schema migration");
    }
    if seeded > 0 {
        tracing::info!(tiers = seeded, "seeded default tiers");
    }
    Ok(())
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

async fn apply(conn: &mut PgConnection, m: &Migration) -> StoreResult<()> {
    // Several statements: the simple-query protocol, through `Executor`,
    // whose future is `Send` (that of `RawSql::execute` is not).
    (&mut *conn).execute(sqlx::raw_sql(m.sql)).await.map_err(db)?;
    sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)")
        .bind(m.version)
        .bind(rows::ts(&Utc::now()))
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    Ok(())
}

/// Whether any seed row is missing (read only).
async fn needs_seed(conn: &mut PgConnection, defaults: &[Tier]) -> StoreResult<bool> {
    let keys: Vec<&str> = META_GENERATIONS.iter().copied().chain([META_CURSOR_SECRET]).collect();
    let meta: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM meta WHERE key = ANY($1)")
        .bind(&keys)
        .fetch_one(&mut *conn)
        .await
        .map_err(db)?;
    if meta != keys.len() as i64 {
        return Ok(true);
    }
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM tiers").fetch_all(&mut *conn).await.map_err(db)?;
    Ok(defaults.iter().any(|t| !names.iter().any(|n| n == t.name.as_str())))
}

/// Adds the seed rows that are missing; returns how many tiers it added.
async fn seed(conn: &mut PgConnection) -> StoreResult<u64> {
    let defaults = Tier::defaults();
    if !needs_seed(conn, &defaults).await? {
        return Ok(0);
    }
    let now = Utc::now();
    let mut secret = [0u8; CURSOR_SECRET_LEN];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let counters = META_GENERATIONS.map(|key| (key, "0".to_owned()));
    for (key, value) in counters.into_iter().chain([(META_CURSOR_SECRET, rows::hex_encode(&secret))]) {
        sqlx::query("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
            .bind(key)
            .bind(value)
            .execute(&mut *conn)
            .await
            .map_err(db)?;
    }
    let mut inserted = 0;
    for t in &defaults {
        let quota = rows::to_bigint("monthly_quota", t.monthly_quota)?;
        let added = sqlx::query(
            "INSERT INTO tiers (name, rate_limit_per_minute, monthly_quota) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(t.name.as_str())
        .bind(i64::from(t.rate_limit_per_minute))
        .bind(quota)
        .execute(&mut *conn)
        .await
        .map_err(db)?
        .rows_affected();
        if added > 0 {
            record_tier(conn, &t.name, t.rate_limit_per_minute, quota, now).await?;
            inserted += added;
        }
    }
    if inserted > 0 {
        bump_generation(conn, META_GENERATION_AUTH).await?;
    }
    Ok(inserted)
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

    /// The tables (with their columns, in order) and indexes a migration
    /// creates, read off its SQL.
    fn shape(sql: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut table: Option<String> = None;
        for line in sql.lines().map(str::trim) {
            if let Some(t) = table.as_mut() {
                if line.starts_with(')') {
                    out.push(table.take().unwrap_or_default());
                } else if let Some(col) = line.split_whitespace().next() {
                    if !col.starts_with("--") && !["PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].contains(&col) {
                        t.push(' ');
                        t.push_str(col);
                    }
                }
            } else if let Some(rest) = line.strip_prefix("CREATE TABLE ") {
                table = Some(format!("table {}:", rest.split_whitespace().next().unwrap_or_default()));
            } else if let Some(rest) = line.strip_prefix("CREATE INDEX ") {
                out.push(format!("index {rest}"));
            }
        }
        out
    }

    /// The PostgreSQL migrations mirror the SQLite ones one for one: same
    /// count, the same tables with the same columns in the same order, the
    /// same indexes.
    #[test]
    fn migrations_mirror_the_sqlite_ones() {
        let sqlite = [
            include_str!("../../migrations/sqlite/0001_initial.sql"),
            include_str!("../../migrations/sqlite/0002_usage.sql"),
            include_str!("../../migrations/sqlite/0003_catalog_snapshot.sql"),
        ];
        assert_eq!(sqlite.len(), MIGRATIONS.len());
        for (lite, pg) in sqlite.iter().zip(MIGRATIONS) {
            assert!(!shape(pg.sql).is_empty());
            assert_eq!(shape(lite), shape(pg.sql), "migration {}", pg.version);
        }
        assert!(shape(MIGRATIONS[0].sql).contains(&"table meta: key value".to_owned()));
    }
}
