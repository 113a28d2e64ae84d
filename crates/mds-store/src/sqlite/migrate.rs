//! Schema migrations of the SQLite backend, and the rows a new store starts
//! with.
//!
//! Migrations are the `.sql` files under `migrations/sqlite/`, embedded in the
//! binary and numbered. `schema_migrations` records which ones were applied;
//! each is applied with its record in one `BEGIN IMMEDIATE` transaction, so
//! two processes migrating at once apply it exactly once. A schema ahead of
//! this build is used while it says this build may use it (migrations are
//! expand-only; see `crate::schema`), else refused.
//!
//! After the migrations, the seed: the default tiers that are absent, the
//! three change counters and a 32-byte random cursor secret, each only if
//! missing. A store that has all of them is not written to at all, so an
//! operator command does not wait behind a long import just to start. A
//! default tier seeded gets its first `tier_history` row, effective from the
//! seeding, and bumps the `auth` counter; nothing else the seed does bumps a
//! counter.

use mds_domain::clock::Clock;
use sqlx::{SqliteConnection, SqlitePool};

use super::dialect::{SCHEMA_MIGRATIONS_EXISTS, SCHEMA_MIGRATIONS_TABLE};
use super::portable::meta::{self, Migration};
use super::{begin_write, db};
use crate::StoreResult;

/// Every migration, in order.
pub(super) const MIGRATIONS: &[Migration] = meta::migrations!("sqlite");

/// Applies the missing migrations, then seeds what is missing.
pub(super) async fn run(pool: &SqlitePool, clock: &dyn Clock) -> StoreResult<()> {
    let pending = meta::pending(&mut *pool.acquire().await.map_err(db)?, SCHEMA_MIGRATIONS_TABLE, MIGRATIONS).await?;
    for m in pending {
        let mut tx = begin_write(pool).await?;
        // Another process may have applied it since we looked.
        if applied(&mut tx, m).await? {
            continue;
        }
        meta::apply(&mut tx, m, clock).await?;
        tx.commit().await.map_err(db)?;
        meta::log_applied(m);
    }
    if !meta::needs_seed(&mut *pool.acquire().await.map_err(db)?).await? {
        return Ok(());
    }
    let mut tx = begin_write(pool).await?;
    let seeded = meta::seed(&mut tx, clock).await?;
    tx.commit().await.map_err(db)?;
    meta::log_seeded(seeded);
    Ok(())
}

/// Where the schema stands against [`MIGRATIONS`], read only.
pub(super) async fn state(pool: &SqlitePool) -> StoreResult<crate::SchemaState> {
    meta::state(&mut *pool.acquire().await.map_err(db)?, SCHEMA_MIGRATIONS_EXISTS, MIGRATIONS).await
}

/// Whether `m` is recorded as applied (another process may have applied it
/// since `meta::pending` looked).
async fn applied(conn: &mut SqliteConnection, m: &Migration) -> StoreResult<bool> {
    let done: Option<i64> = sqlx::query_scalar("SELECT version FROM schema_migrations WHERE version = $1")
        .bind(m.version)
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    Ok(done.is_some())
}
