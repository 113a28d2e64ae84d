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
use super::shared::catalog::{Stamp, Upserted, upsert_tail};
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

/// SQL's null-safe "differs": `a IS NOT b`.
pub(super) const DIFFERS: &str = "IS NOT";

/// The length in bytes of a blob.
pub(super) const BYTE_LENGTH: &str = "LENGTH";

/// Whether the article's tags (`tags_json`, a JSON array of strings) hold
/// the text bound at `param`.
pub(super) fn has_tag(param: &str) -> String {
    format!("EXISTS (SELECT 1 FROM json_each(tags_json) WHERE json_each.value = {param})")
}

/// The table of applied migrations.
pub(super) const SCHEMA_MIGRATIONS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)";

/// Key prefixes looked up per statement.
const PREFIX_RUN: usize = 500;
/// Counts written per statement (3 bound values each).
const COUNT_RUN: usize = 300;
/// Ledger entries written per statement (5 bound values each).
const DAY_RUN: usize = 200;

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
    /// 10 bound values each.
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
            .bind(rows::details_json(&self.details))
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
/// SET col = excluded.col, … WHERE <a column differs>` for `rows` rows; the
/// key is the first column. With a stamp, its columns follow, their values
/// written into the text (the same for every row).
fn upsert_sql(table: &str, cols: &[&str], kept: &[&str], rows: usize, stamp: Option<&Stamp>) -> String {
    let row = match stamp {
        None => format!("({})", placeholders(cols.len())),
        Some(s) => format!("({}, {})", placeholders(cols.len()), s.values()),
    };
    let values = vec![row; rows].join(", ");
    upsert_tail(table, cols, kept, stamp, &format!("VALUES {values}"))
}

/// Nothing to lock: the write transaction holds the file.
pub(super) async fn lock_for_upsert(_conn: &mut SqliteConnection, _table: &str) -> StoreResult<()> {
    Ok(())
}

/// Nothing to lock: the write transaction holds the file.
pub(super) async fn lock_snapshot_saves(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Writes one run of an upsert; returns how many rows it inserted or
/// changed (a row left as it was is not written).
pub(super) async fn upsert_run<T: Upsert>(
    conn: &mut SqliteConnection,
    run: &[T],
    stamp: Option<&Stamp>,
) -> StoreResult<u64> {
    let sql = upsert_sql(T::TABLE, T::COLUMNS, T::KEPT_WHEN_NULL, run.len(), stamp);
    let mut q = sqlx::query(&sql);
    for row in run {
        q = row.bind(q);
    }
    Ok(q.execute(conn).await.map_err(db)?.rows_affected())
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

/// `INSERT INTO usage_daily … ON CONFLICT DO UPDATE` adding `rows` entries.
fn add_days_sql(rows: usize) -> String {
    format!(
        "INSERT INTO usage_daily (key_id, day, route_id, requests, not_modified) VALUES {} \
         ON CONFLICT (key_id, day, route_id) DO UPDATE SET requests = usage_daily.requests + excluded.requests, \
         not_modified = usage_daily.not_modified + excluded.not_modified",
        value_rows(5, rows)
    )
}

/// Adds `[key id, day, route id, requests, not modified]` entries to the
/// daily ledger.
pub(super) async fn add_days(conn: &mut SqliteConnection, entries: &[[i64; 5]]) -> StoreResult<()> {
    for run in entries.chunks(DAY_RUN) {
        let sql = add_days_sql(run.len());
        let mut q = sqlx::query(&sql);
        for entry in run {
            for v in entry {
                q = q.bind(v);
            }
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
            upsert_sql("t", &["k", "a", "b"], &[], 2, None),
            "INSERT INTO t (k, a, b) VALUES (?, ?, ?), (?, ?, ?) ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b \
             WHERE t.a IS NOT excluded.a OR t.b IS NOT excluded.b"
        );
        let stamp = Stamp::new(chrono::DateTime::UNIX_EPOCH, 7);
        assert_eq!(
            upsert_sql("t", &["k", "a", "d"], &["d"], 1, Some(&stamp)),
            "INSERT INTO t (k, a, d, updated_at, change_seq) VALUES (?, ?, ?, '1970-01-01T00:00:00+00:00', 7) \
             ON CONFLICT (k) DO UPDATE SET a = excluded.a, d = COALESCE(excluded.d, t.d), \
             updated_at = excluded.updated_at, change_seq = excluded.change_seq \
             WHERE t.a IS NOT excluded.a OR (excluded.d IS NOT NULL AND t.d IS NOT excluded.d)"
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
