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
//! schema ahead of this build is used while it says this build may use it
//! (migrations are expand-only; see `crate::schema`), else refused.
//!
//! In the same transaction, the seed: the default tiers that are absent, the
//! three change counters and a 32-byte random cursor secret, each only if
//! missing. A default tier seeded gets its first `tier_history` row, effective
//! from the seeding, and bumps the `auth` counter; nothing else the seed does
//! bumps a counter. A store that has all of them gets no write but the lock,
//! which no other operation takes.

use mds_domain::clock::Clock;
use sqlx::PgPool;

use super::db;
use super::dialect::{SCHEMA_MIGRATIONS_EXISTS, SCHEMA_MIGRATIONS_TABLE};
use super::portable::meta::{self, Migration};
use crate::StoreResult;

/// Every migration, in order.
pub(super) const MIGRATIONS: &[Migration] = meta::migrations!("postgres");

/// The key of the advisory lock that serialises migrations ("mds_migr").
const MIGRATION_LOCK: i64 = 0x6d64_735f_6d69_6772;

/// Applies the missing migrations and seeds what is missing, in one
/// transaction under the migration lock.
pub(super) async fn run(pool: &PgPool, clock: &dyn Clock) -> StoreResult<()> {
    let mut tx = pool.begin().await.map_err(db)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(MIGRATION_LOCK).execute(&mut *tx).await.map_err(db)?;
    let pending = meta::pending(&mut tx, SCHEMA_MIGRATIONS_TABLE, MIGRATIONS).await?;
    for m in &pending {
        meta::apply(&mut tx, m, clock).await?;
    }
    let seeded = if meta::needs_seed(&mut tx).await? { meta::seed(&mut tx, clock).await? } else { 0 };
    tx.commit().await.map_err(db)?;
    for m in pending {
        meta::log_applied(m);
    }
    meta::log_seeded(seeded);
    Ok(())
}

/// Where the schema stands against [`MIGRATIONS`], read only.
pub(super) async fn state(pool: &PgPool) -> StoreResult<crate::SchemaState> {
    meta::state(&mut *pool.acquire().await.map_err(db)?, SCHEMA_MIGRATIONS_EXISTS, MIGRATIONS).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables (with their columns, in order) and indexes a migration
    /// creates, read off its SQL; a table made `LIKE` another as
    /// `table NAME: like OTHER` (see [`resolve_like`]).
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
                let words: Vec<&str> = rest.split_whitespace().collect();
                if let [name, like, other, ..] = words[..]
                    && like == "(LIKE"
                {
                    out.push(format!("table {name}: like {other}"));
                    continue;
                }
                table = Some(format!("table {}:", words.first().copied().unwrap_or_default()));
            } else if let Some(rest) = line.strip_prefix("ALTER TABLE ") {
                let words: Vec<&str> = rest.split_whitespace().collect();
                if let [t, "ADD", "COLUMN", col, ..] = words[..] {
                    out.push(format!("alter {t}: add {col}"));
                }
            } else if let Some(rest) = line.strip_prefix("CREATE INDEX ") {
                out.push(format!("index {rest}"));
            }
        }
        out
    }

    /// `shape`s with each `table NAME: like OTHER` given OTHER's columns, as
    /// made by the shapes before it (`made`, which gains every table).
    fn resolve_like(shape: Vec<String>, made: &mut std::collections::HashMap<String, String>) -> Vec<String> {
        let mut out = Vec::new();
        for entry in shape {
            let entry = match entry.strip_prefix("table ").and_then(|t| t.split_once(": like ")) {
                Some((name, other)) => {
                    let columns = made.get(other).unwrap_or_else(|| panic!("{name} is LIKE {other}, made before it"));
                    format!("table {name}:{columns}")
                }
                None => entry,
            };
            if let Some((name, columns)) = entry.strip_prefix("table ").and_then(|t| t.split_once(':')) {
                made.insert(name.to_owned(), columns.to_owned());
            }
            out.push(entry);
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
            include_str!("../../migrations/sqlite/0004_news_list.sql"),
            include_str!("../../migrations/sqlite/0005_usage_daily.sql"),
            include_str!("../../migrations/sqlite/0006_company_detail.sql"),
            include_str!("../../migrations/sqlite/0007_auth_changes.sql"),
            include_str!("../../migrations/sqlite/0008_key_expiry.sql"),
            include_str!("../../migrations/sqlite/0009_generation_nonces.sql"),
            include_str!("../../migrations/sqlite/0010_admin.sql"),
            include_str!("../../migrations/sqlite/0011_admin_lists.sql"),
            include_str!("../../migrations/sqlite/0012_identity.sql"),
            include_str!("../../migrations/sqlite/0013_events.sql"),
            include_str!("../../migrations/sqlite/0014_usage_batch_generation.sql"),
            include_str!("../../migrations/sqlite/0015_news_snapshot.sql"),
            include_str!("../../migrations/sqlite/0016_corporate_actions.sql"),
            include_str!("../../migrations/sqlite/0017_prices.sql"),
            include_str!("../../migrations/sqlite/0018_daily_identity.sql"),
            include_str!("../../migrations/sqlite/0019_action_rows.sql"),
            include_str!("../../migrations/sqlite/0020_unresolved_facts.sql"),
        ];
        assert_eq!(sqlite.len(), MIGRATIONS.len());
        let mut made = std::collections::HashMap::new();
        for (lite, pg) in sqlite.iter().zip(MIGRATIONS) {
            assert!(!shape(pg.sql).is_empty());
            assert_eq!(shape(lite), resolve_like(shape(pg.sql), &mut made), "migration {}", pg.version);
        }
        assert!(shape(MIGRATIONS[0].sql).contains(&"table meta: key value".to_owned()));
    }
}
