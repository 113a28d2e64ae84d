//! The SQL of SQLite that differs from PostgreSQL's.
//!
//! Multi-row statements bind one value per placeholder, in runs of a few
//! hundred values (SQLite binds at most 32 766 per statement): an upsert of a
//! run is one `INSERT … VALUES (…), (…) … ON CONFLICT DO UPDATE`, a lookup
//! one `… IN (…)`. Full runs share one SQL text, so their prepared statement
//! is reused from the connection's cache; a million rows take ten thousand
//! round trips, not two million.
//!
//! No locks beyond the write transaction: `BEGIN IMMEDIATE` holds the whole
//! file, so a check and the write it guards cannot be split, saves of
//! catalog snapshots queue, and no row lock is needed.

use mds_domain::{Article, Company};
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Sqlite, SqliteConnection};

use super::db;
use super::shared::catalog::Upserted;
use crate::StoreResult;
use crate::rows;

/// The backend's name, for sentences.
pub(super) const NAME: &str = "SQLite";

/// A query being bound.
type SqliteQuery<'q> = Query<'q, Sqlite, SqliteArguments<'q>>;

/// What `FOR UPDATE` would be: nothing, the write transaction holds the file.
pub(super) const KEY_LOCK: &str = "";

/// `ticker, isin` in byte order: SQLite's BINARY collation.
pub(super) const COMPANY_ORDER: &str = "ticker, isin";

/// The length in bytes of a blob.
pub(super) const BYTE_LENGTH: &str = "LENGTH";

/// The table of applied migrations.
pub(super) const SCHEMA_MIGRATIONS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)";

/// Key prefixes looked up per statement.
const PREFIX_RUN: usize = 500;
/// Counts written per statement (3 bound values each).
const COUNT_RUN: usize = 300;

/// `n` placeholders: `?, ?, …`.
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// `n` rows of `width` placeholders each: `(?, ?), (?, ?), …`.
fn value_rows(width: usize, n: usize) -> String {
    vec![format!("({})", placeholders(width)); n].join(", ")
}

/// A row kind as SQLite upserts it: row by row, one value per placeholder.
pub(super) trait Upsert: Upserted {
    /// Rows per statement.
    const RUN: usize;
    /// Binds one row's columns, in the order of `COLUMNS`.
    fn bind<'q>(&'q self, q: SqliteQuery<'q>) -> SqliteQuery<'q>;
}

impl Upsert for Company {
    /// 9 bound values each.
    const RUN: usize = 100;
    fn bind<'q>(&'q self, q: SqliteQuery<'q>) -> SqliteQuery<'q> {
        q.bind(self.isin.as_str())
            .bind(self.ticker.as_str())
            .bind(self.name.as_str())
            .bind(self.industry.as_deref())
            .bind(self.sector.as_deref())
            .bind(self.is_bse)
            .bind(self.is_nse)
            .bind(self.market_cap_band.map(|b| b.as_str()))
            .bind(self.logo_url.as_deref())
    }
}

impl Upsert for Article {
    /// 15 bound values each.
    const RUN: usize = 50;
    fn bind<'q>(&'q self, q: SqliteQuery<'q>) -> SqliteQuery<'q> {
        q.bind(self.slug.as_str())
            .bind(self.headline.as_str())
            .bind(self.subheadline.as_deref())
            .bind(self.excerpt.as_deref())
            .bind(self.body.as_deref())
            .bind(self.category.as_deref())
            .bind(rows::tags_json(&self.tags))
            .bind(self.isin.as_ref().map(|i| i.as_str()))
            .bind(self.ticker.as_deref())
            .bind(self.company_name.as_deref())
            .bind(self.author_name.as_deref())
            .bind(self.hero_image.as_deref())
            .bind(self.url.as_deref())
            .bind(rows::ts_opt(&self.published_at))
            .bind(rows::ts_opt(&self.updated_at))
    }
}

/// `INSERT INTO table (cols) VALUES (?, …), … ON CONFLICT (key) DO UPDATE
/// SET col = excluded.col, …` for `rows` rows; the key is the first column.
fn upsert_sql(table: &str, cols: &[&str], rows: usize) -> String {
    let values = value_rows(cols.len(), rows);
    let set = cols[1..].iter().map(|c| format!("{c} = excluded.{c}")).collect::<Vec<_>>().join(", ");
    format!("INSERT INTO {table} ({}) VALUES {values} ON CONFLICT ({}) DO UPDATE SET {set}", cols.join(", "), cols[0])
}

/// Nothing to lock: the write transaction holds the file.
pub(super) async fn lock_for_upsert(_conn: &mut SqliteConnection, _table: &str) -> StoreResult<()> {
    Ok(())
}

/// Nothing to lock: the write transaction holds the file.
pub(super) async fn lock_snapshot_saves(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Writes one run of an upsert.
pub(super) async fn upsert_run<T: Upsert>(conn: &mut SqliteConnection, run: &[T]) -> StoreResult<()> {
    let sql = upsert_sql(T::TABLE, T::COLUMNS, run.len());
    let mut q = sqlx::query(&sql);
    for row in run {
        q = row.bind(q);
    }
    q.execute(conn).await.map_err(db)?;
    Ok(())
}

/// How many of `keys` (distinct) exist in `table.col`.
pub(super) async fn count_existing(
    conn: &mut SqliteConnection,
    table: &str,
    col: &str,
    keys: &[&str],
) -> StoreResult<u64> {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE {col} IN ({})", placeholders(keys.len()));
    let mut q = sqlx::query_scalar::<_, i64>(&sql);
    for k in keys {
        q = q.bind(*k);
    }
    let n = q.fetch_one(conn).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

/// The `(prefix, id)` of those of `prefixes` that are keys.
pub(super) async fn key_ids(conn: &mut SqliteConnection, prefixes: &[&str]) -> StoreResult<Vec<(String, i64)>> {
    let mut ids = Vec::with_capacity(prefixes.len());
    for run in prefixes.chunks(PREFIX_RUN) {
        let sql = format!("SELECT prefix, id FROM api_keys WHERE prefix IN ({})", placeholders(run.len()));
        let mut q = sqlx::query_as::<_, (String, i64)>(&sql);
        for k in run {
            q = q.bind(*k);
        }
        ids.extend(q.fetch_all(&mut *conn).await.map_err(db)?);
    }
    Ok(ids)
}

/// `INSERT INTO usage_counts … ON CONFLICT DO UPDATE` adding `rows` counts.
fn add_counts_sql(rows: usize) -> String {
    format!(
        "INSERT INTO usage_counts (key_id, month, requests) VALUES {} \
         ON CONFLICT (key_id, month) DO UPDATE SET requests = usage_counts.requests + excluded.requests",
        value_rows(3, rows)
    )
}

/// Adds `(key id, month, requests)` counts.
pub(super) async fn add_counts(conn: &mut SqliteConnection, counts: &[(i64, i64, i64)]) -> StoreResult<()> {
    for run in counts.chunks(COUNT_RUN) {
        let sql = add_counts_sql(run.len());
        let mut q = sqlx::query(&sql);
        for (key, month, requests) in run {
            q = q.bind(key).bind(month).bind(requests);
        }
        q.execute(&mut *conn).await.map_err(db)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_sql_lists_every_column() {
        assert_eq!(
            upsert_sql("t", &["k", "a", "b"], 2),
            "INSERT INTO t (k, a, b) VALUES (?, ?, ?), (?, ?, ?) ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b"
        );
    }

    #[test]
    fn add_counts_sql_adds_to_what_is_there() {
        assert_eq!(
            add_counts_sql(2),
            "INSERT INTO usage_counts (key_id, month, requests) VALUES (?, ?, ?), (?, ?, ?) \
             ON CONFLICT (key_id, month) DO UPDATE SET requests = usage_counts.requests + excluded.requests"
        );
    }
}
