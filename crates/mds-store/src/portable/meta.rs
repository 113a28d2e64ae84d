//! The `meta` table (change counters, cursor secret) and the parts of
//! migrating that both backends share: which migrations are pending, applying
//! one, and the seed rows.
//!
//! Compiled once per backend (see `portable/mod.rs`): `super` is the backend
//! module, which supplies `Conn`, `Pool`, `db` and the rest.

use mds_domain::Tier;
use mds_domain::clock::Clock;
use rand::RngCore;
use sqlx::Executor;

use super::access::{insert_tier, record_tier};
use super::{Conn, Pool, db};
use crate::rows::{self, CURSOR_SECRET_LEN, META_CURSOR_SECRET, META_GENERATIONS};
use crate::schema::{CONTRACT_MARKER, META_SCHEMA_OLDEST_CODE};
use crate::{Generations, SchemaState, StoreResult};

/// One embedded migration.
pub(crate) struct Migration {
    /// Its number; `schema_migrations` records it once applied.
    pub(crate) version: i64,
    /// Its name, for the log.
    pub(crate) name: &'static str,
    /// Its statements.
    pub(crate) sql: &'static str,
}

impl Migration {
    /// Whether code older than this migration may no longer use the
    /// schema once it is applied (its file holds [`CONTRACT_MARKER`]).
    pub(crate) fn contracts(&self) -> bool {
        self.sql.lines().any(|l| l.trim() == CONTRACT_MARKER)
    }
}

/// Every migration of a backend, whose files are under `migrations/$dir/`,
/// in order: the one list of versions and names both backends number their
/// files by. Append only; never edit one that shipped. Used from
/// `<backend>/migrate.rs` (the paths are relative to it).
macro_rules! migrations {
    ($dir:literal) => {
        &[
            Migration {
                version: 1,
                name: "initial",
                sql: include_str!(concat!("../../migrations/", $dir, "/0001_initial.sql")),
            },
            Migration {
                version: 2,
                name: "usage",
                sql: include_str!(concat!("../../migrations/", $dir, "/0002_usage.sql")),
            },
            Migration {
                version: 3,
                name: "catalog_snapshot",
                sql: include_str!(concat!("../../migrations/", $dir, "/0003_catalog_snapshot.sql")),
            },
            Migration {
                version: 4,
                name: "news_list",
                sql: include_str!(concat!("../../migrations/", $dir, "/0004_news_list.sql")),
            },
            Migration {
                version: 5,
                name: "usage_daily",
                sql: include_str!(concat!("../../migrations/", $dir, "/0005_usage_daily.sql")),
            },
            Migration {
                version: 6,
                name: "company_detail",
                sql: include_str!(concat!("../../migrations/", $dir, "/0006_company_detail.sql")),
            },
            Migration {
                version: 7,
                name: "auth_changes",
                sql: include_str!(concat!("../../migrations/", $dir, "/0007_auth_changes.sql")),
            },
            Migration {
                version: 8,
                name: "key_expiry",
                sql: include_str!(concat!("../../migrations/", $dir, "/0008_key_expiry.sql")),
            },
            Migration {
                version: 9,
                name: "generation_nonces",
                sql: include_str!(concat!("../../migrations/", $dir, "/0009_generation_nonces.sql")),
            },
            Migration {
                version: 10,
                name: "admin",
                sql: include_str!(concat!("../../migrations/", $dir, "/0010_admin.sql")),
            },
            Migration {
                version: 11,
                name: "admin_lists",
                sql: include_str!(concat!("../../migrations/", $dir, "/0011_admin_lists.sql")),
            },
            Migration {
                version: 12,
                name: "identity",
                sql: include_str!(concat!("../../migrations/", $dir, "/0012_identity.sql")),
            },
            Migration {
                version: 13,
                name: "events",
                sql: include_str!(concat!("../../migrations/", $dir, "/0013_events.sql")),
            },
            Migration {
                version: 14,
                name: "usage_batch_generation",
                sql: include_str!(concat!("../../migrations/", $dir, "/0014_usage_batch_generation.sql")),
            },
            Migration {
                version: 15,
                name: "news_snapshot",
                sql: include_str!(concat!("../../migrations/", $dir, "/0015_news_snapshot.sql")),
            },
            Migration {
                version: 16,
                name: "corporate_actions",
                sql: include_str!(concat!("../../migrations/", $dir, "/0016_corporate_actions.sql")),
            },
            Migration {
                version: 17,
                name: "prices",
                sql: include_str!(concat!("../../migrations/", $dir, "/0017_prices.sql")),
            },
            Migration {
                version: 18,
                name: "daily_identity",
                sql: include_str!(concat!("../../migrations/", $dir, "/0018_daily_identity.sql")),
            },
            Migration {
                version: 19,
                name: "action_rows",
                sql: include_str!(concat!("../../migrations/", $dir, "/0019_action_rows.sql")),
            },
            Migration {
                version: 20,
                name: "unresolved_facts",
                sql: include_str!(concat!("../../migrations/", $dir, "/0020_unresolved_facts.sql")),
            },
        ]
    };
}
pub(crate) use migrations;

/// Creates `schema_migrations` with `create_sql` if missing, and returns the
/// migrations not applied yet, in order; refuses a schema ahead of this
/// build that says this build may not use it ([`SchemaState::usable`]).
pub(crate) async fn pending<'m>(
    conn: &mut Conn,
    create_sql: &str,
    migrations: &'m [Migration],
) -> StoreResult<Vec<&'m Migration>> {
    sqlx::query(create_sql).execute(&mut *conn).await.map_err(db)?;
    let state = read_state(conn, migrations).await?;
    state.usable()?;
    Ok(migrations.iter().filter(|m| state.missing.contains(&m.version)).collect())
}

/// Where the schema stands, read only: `exists_sql` counts the
/// `schema_migrations` tables (0 on a store never migrated).
pub(crate) async fn state(conn: &mut Conn, exists_sql: &str, migrations: &[Migration]) -> StoreResult<SchemaState> {
    let tables: i64 = sqlx::query_scalar(exists_sql).fetch_one(&mut *conn).await.map_err(db)?;
    if tables == 0 {
        let missing = migrations.iter().map(|m| m.version).collect();
        let known = migrations.last().map_or(0, |m| m.version);
        return Ok(SchemaState { applied: Vec::new(), known, missing, oldest_code: 0 });
    }
    read_state(conn, migrations).await
}

/// [`state`], once `schema_migrations` exists.
async fn read_state(conn: &mut Conn, migrations: &[Migration]) -> StoreResult<SchemaState> {
    let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?;
    let oldest_code = match applied.is_empty() {
        true => 0,
        false => {
            let v: Option<String> = sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
                .bind(META_SCHEMA_OLDEST_CODE)
                .fetch_optional(&mut *conn)
                .await
                .map_err(db)?;
            v.and_then(|v| v.parse().ok()).unwrap_or(0)
        }
    };
    Ok(SchemaState {
        known: migrations.last().map_or(0, |m| m.version),
        missing: migrations.iter().map(|m| m.version).filter(|v| !applied.contains(v)).collect(),
        applied,
        oldest_code,
    })
}

/// Runs a migration's statements and records it, inside the caller's
/// transaction.
pub(crate) async fn apply(conn: &mut Conn, m: &Migration, clock: &dyn Clock) -> StoreResult<()> {
    // Several statements: the simple-query protocol, through `Executor`,
    // whose future is `Send` (that of `RawSql::execute` is not).
    (&mut *conn).execute(sqlx::raw_sql(m.sql)).await.map_err(db)?;
    sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)")
        .bind(m.version)
        .bind(rows::ts(&clock.now()))
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    if m.contracts() {
        sqlx::query("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2")
            .bind(META_SCHEMA_OLDEST_CODE)
            .bind(m.version.to_string())
            .execute(&mut *conn)
            .await
            .map_err(db)?;
    }
    Ok(())
}

/// Logs a migration applied (after its commit).
pub(crate) fn log_applied(m: &Migration) {
    tracing::info!(version = m.version, name = m.name, "applied schema migration");
}

/// Whether any seed row is missing (read only).
pub(crate) async fn needs_seed(conn: &mut Conn) -> StoreResult<bool> {
    let [a, b, c, d] = META_GENERATIONS;
    let meta: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM meta WHERE key IN ($1, $2, $3, $4, $5)")
        .bind(a)
        .bind(b)
        .bind(c)
        .bind(d)
        .bind(META_CURSOR_SECRET)
        .fetch_one(&mut *conn)
        .await
        .map_err(db)?;
    if meta != META_GENERATIONS.len() as i64 + 1 {
        return Ok(true);
    }
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM tiers").fetch_all(&mut *conn).await.map_err(db)?;
    Ok(Tier::defaults().iter().any(|t| !names.iter().any(|n| n == t.name.as_str())))
}

/// Adds the seed rows that are missing, in the caller's transaction; returns
/// how many tiers it added.
pub(crate) async fn seed(conn: &mut Conn, clock: &dyn Clock) -> StoreResult<u64> {
    let now = clock.now();
    let mut secret = [0u8; CURSOR_SECRET_LEN];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let counters = META_GENERATIONS.map(|key| (key, "0".to_owned()));
    for (key, value) in counters.into_iter().chain([(META_CURSOR_SECRET, mds_domain::hex::encode(&secret))]) {
        sqlx::query("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
            .bind(key)
            .bind(value)
            .execute(&mut *conn)
            .await
            .map_err(db)?;
    }
    let mut inserted = 0;
    for t in &Tier::defaults() {
        let quota = rows::to_bigint("monthly_quota", t.monthly_quota)?;
        if insert_tier(conn, t, quota).await? {
            record_tier(conn, &t.name, t.rate_limit_per_minute, quota, now).await?;
            inserted += 1;
        }
    }
    if inserted > 0 {
        super::auth::bump_auth(conn, None).await?;
    }
    Ok(inserted)
}

/// Logs the default tiers a seed added (after its commit).
pub(crate) fn log_seeded(tiers: u64) {
    if tiers > 0 {
        tracing::info!(tiers, "seeded default tiers");
    }
}

/// Bumps the change counter under `meta` key `counter` (one of
/// `rows::META_GENERATION_*`) and returns its new value; call inside the
/// transaction of the change.
pub(crate) async fn bump_generation(conn: &mut Conn, counter: &str) -> StoreResult<i64> {
    counter_value(
        conn,
        "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = $1 RETURNING value",
        counter,
    )
    .await
}

/// Bumps a counter that is not seeded (`rows::META_GENERATION_ACTIONS`,
/// `rows::META_GENERATION_PRICES`):
/// added at 1 when missing. Call inside the transaction of the change.
pub(crate) async fn bump_unseeded_generation(conn: &mut Conn, counter: &str) -> StoreResult<i64> {
    counter_value(
        conn,
        "INSERT INTO meta (key, value) VALUES ($1, '1') ON CONFLICT (key) \
         DO UPDATE SET value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT) RETURNING value",
        counter,
    )
    .await
}

/// The change counter under `meta` key `counter`, read on `conn` (inside a
/// read transaction, its value in that snapshot).
pub(crate) async fn read_generation(conn: &mut Conn, counter: &str) -> StoreResult<i64> {
    counter_value(conn, "SELECT value FROM meta WHERE key = $1", counter).await
}

/// The counter `counter` as the statement `sql` (binding its key) returns it.
async fn counter_value(conn: &mut Conn, sql: &str, counter: &str) -> StoreResult<i64> {
    let value: Option<String> = sqlx::query_scalar(sql).bind(counter).fetch_optional(conn).await.map_err(db)?;
    let value = value.ok_or_else(rows::not_migrated)?;
    value.parse().map_err(|_| rows::corrupt(format_args!("meta.{counter} is not a number: {value:?}")))
}

/// The change counters.
pub(crate) async fn generations(pool: &Pool) -> StoreResult<Generations> {
    let [a, b, c, d] = META_GENERATIONS;
    let pairs: Vec<(String, String)> =
        sqlx::query_as("SELECT key, value FROM meta WHERE key IN ($1, $2, $3, $4, $5, $6)")
            .bind(a)
            .bind(b)
            .bind(c)
            .bind(d)
            .bind(rows::META_GENERATION_ACTIONS)
            .bind(rows::META_GENERATION_PRICES)
            .fetch_all(pool)
            .await
            .map_err(db)?;
    rows::generations(&pairs)
}

/// The cursor secret; `not_migrated` when it is missing.
pub(crate) async fn cursor_secret(pool: &Pool) -> StoreResult<Vec<u8>> {
    let value: Option<String> = sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
        .bind(META_CURSOR_SECRET)
        .fetch_optional(pool)
        .await
        .map_err(db)?;
    rows::cursor_secret(&value.ok_or_else(rows::not_migrated)?)
}

/// A cheap round trip.
pub(crate) async fn ping(pool: &Pool) -> StoreResult<()> {
    sqlx::query("SELECT 1").execute(pool).await.map_err(db)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::migrate::MIGRATIONS;
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
        assert_eq!(MIGRATIONS[14].version, 15);
        assert!(MIGRATIONS[14].sql.contains("CREATE TABLE news_snapshot_chunks"));
    }

    /// The last migration made before migrations had to be expand-only.
    const EXPAND_ONLY_AFTER: i64 = 16;

    /// What an expand-only migration may not do (contract section 16):
    /// why, if `sql` does one of them.
    fn contracting(sql: &str) -> Option<String> {
        let text: String =
            sql.lines().map(|l| l.split("--").next().unwrap_or("")).collect::<Vec<_>>().join(" ").to_uppercase();
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for statement in words.split(';') {
            let s = statement.trim();
            for banned in
                ["DROP TABLE", "DROP COLUMN", "DROP VIEW", "RENAME", "ALTER COLUMN", "TRUNCATE", "DELETE FROM"]
            {
                if s.contains(banned) {
                    return Some(format!("{banned} in `{s}`"));
                }
            }
            if s.contains("ADD COLUMN") && s.contains("NOT NULL") && !s.contains("DEFAULT") {
                return Some(format!("a NOT NULL column without a DEFAULT in `{s}`"));
            }
        }
        None
    }

    #[test]
    fn migrations_after_the_rule_are_expand_only_unless_marked() {
        for m in MIGRATIONS.iter().filter(|m| m.version > EXPAND_ONLY_AFTER && !m.contracts()) {
            if let Some(why) = contracting(m.sql) {
                panic!(
                    "migration {} ({}) is not expand-only: {why}; a node one version older must keep working \
                     on the new schema (mark it `{CONTRACT_MARKER}` only if older code truly cannot)",
                    m.version, m.name
                );
            }
        }
        assert!(
            contracting("CREATE TABLE t (a TEXT);\nALTER TABLE t ADD COLUMN b INTEGER NOT NULL DEFAULT 0;").is_none()
        );
        assert!(contracting("-- DROP TABLE in a comment\nCREATE INDEX i ON t (a);").is_none());
        assert!(contracting("ALTER TABLE t DROP COLUMN b;").is_some());
        assert!(contracting("alter table t\n  rename to u;").is_some());
        assert!(contracting("ALTER TABLE t ADD COLUMN b INTEGER NOT NULL;").is_some());
        assert!(!MIGRATIONS.iter().any(Migration::contracts), "no migration contracts the schema yet");
        let marked = Migration { version: 99, name: "m", sql: "-- mds: contract\nALTER TABLE t DROP COLUMN b;" };
        assert!(marked.contracts());
    }
}
