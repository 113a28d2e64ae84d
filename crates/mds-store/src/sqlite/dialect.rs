//! The SQL of SQLite that differs from PostgreSQL's.
//!
//! Multi-row statements bind one value per placeholder, in runs of a few
//! hundred values (SQLite binds at most 32 766 per statement): a run of an
//! upsert's rows is staged by one `INSERT … VALUES (…), (…) …`, a lookup is
//! one `… IN (…)`. Full runs share one SQL text, so their prepared statement
//! is reused from the connection's cache; a million rows take ten thousand
//! round trips, not two million.
//!
//! No locks beyond the write transaction: `BEGIN IMMEDIATE` holds the whole
//! file, so a check and the write it guards cannot be split, saves of
//! snapshots queue, and no row lock is needed. As that lock is the
//! only one of the whole file, every process's writes queue behind it (each
//! waits at most `BUSY_TIMEOUT`): an upsert takes it only to apply rows it
//! has staged before, outside it ([`upsert_chunks`]).

use std::time::Instant;

use mds_domain::clock::Clock;
use mds_domain::{Article, Company};
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Connection, Sqlite, SqliteConnection, SqlitePool};

use super::portable::catalog::{UpsertStamp, Upserted, begin_upsert, differs, end_upsert, upsert_tail};
use super::portable::events::{AFTER, BEFORE, STAGED, Sink, announce, before_select};
use super::portable::meta::read_generation;
use super::{INDEX_REBUILD_MIN_ROWS, db};
use crate::rows::{Value, Values};
use crate::{StoreResult, UpsertSummary};

/// The backend's name, for sentences.
pub(super) const NAME: &str = "SQLite";

/// The backend as OpenTelemetry's `db.system` names it (a store call's
/// span in a request's trace).
pub(super) const SYSTEM: &str = "sqlite";

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
/// Counts the `schema_migrations` tables (0 on a store never migrated).
pub(super) const SCHEMA_MIGRATIONS_EXISTS: &str =
    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'";

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
pub(super) trait Upsert: Upserted + Values {
    /// Rows per statement.
    const RUN: usize;
    /// Binds one row's columns, in the order of `COLUMNS`.
    fn bind<'q>(&'q self, q: SqliteQuery<'q>) -> SqliteQuery<'q> {
        self.values().into_iter().fold(q, |q, v| match v {
            Value::Text(t) => q.bind(t),
            Value::Made(t) => q.bind(t),
            Value::Bool(b) => q.bind(b),
        })
    }
}

impl Upsert for Company {
    /// 10 bound values each.
    const RUN: usize = 100;
}

impl Upsert for Article {
    /// 15 bound values each.
    const RUN: usize = 50;
}

/// The TEMP table an upsert's rows are written to as they come: on the
/// upsert's own connection, in SQLite's temporary files (see `PRAGMA
/// temp_store`), never in the database file.
const GIVEN: &str = "temp.mds_upsert_given";

/// The TEMP table of an upsert's rows in key order, which the apply reads.
const STAGING: &str = "temp.mds_upsert_staging";

/// `CREATE TABLE temp… (cols)`: columns without a type (no affinity), so a
/// staged value is exactly the value bound, converted only when applied.
fn create_given_sql(cols: &[&str]) -> String {
    format!("CREATE TABLE {GIVEN} ({})", cols.join(", "))
}

/// `INSERT INTO temp… (cols) VALUES (?, …), …` for `rows` rows.
fn stage_sql(cols: &[&str], rows: usize) -> String {
    format!("INSERT INTO {GIVEN} ({}) VALUES {}", cols.join(", "), value_rows(cols.len(), rows))
}

/// The rows as given, copied in key order (a key given twice: in the order
/// given) by one sort, so that the apply walks the table's key index in
/// order rather than at random.
fn sort_staged_sql(cols: &[&str]) -> String {
    format!("CREATE TABLE {STAGING} AS SELECT {} FROM {GIVEN} ORDER BY {}, rowid", cols.join(", "), cols[0])
}

/// The upsert of every staged row, in key order (a key given twice: the
/// later row is applied after the earlier, as its update): `INSERT INTO
/// table (cols) SELECT cols FROM temp… ORDER BY rowid ON CONFLICT (key) DO
/// UPDATE SET … WHERE <a column differs>`. With a stamp, its columns
/// follow, their values written into the text. (The `WHERE true` tells
/// SQLite's parser that `ON CONFLICT` is not a join's.)
fn apply_sql(table: &str, cols: &[&str], kept: &[&str], stamp: Option<&UpsertStamp>) -> String {
    let select = match stamp {
        None => cols.join(", "),
        Some(s) => format!("{}, {}", cols.join(", "), s.values()),
    };
    upsert_tail(table, cols, kept, stamp, &format!("SELECT {select} FROM {STAGING} WHERE true ORDER BY rowid"))
}

/// How many staged rows are not in `table` yet or differ from it (a key
/// staged twice counts twice): the rows the apply will write, but for
/// another writer's changes meanwhile, and so only a guide.
fn to_write_sql(table: &str, cols: &[&str], kept: &[&str]) -> String {
    let key = cols[0];
    format!(
        "SELECT COUNT(*) FROM {STAGING} AS s LEFT JOIN {table} AS t ON t.{key} = s.{key} WHERE t.{key} IS NULL OR {}",
        differs("t", "s", cols, kept)
    )
}

/// Upserts the rows of `chunks` in two steps on one connection of `pool`:
/// 1. stages them in TEMP tables, which live in the connection's temporary
///    database, so take no lock of the database file: other processes
///    write meanwhile, however long the chunks take to come. The rows are
///    written as they come ([`GIVEN`], one transaction), then sorted by key
///    ([`STAGING`]);
/// 2. applies them in one write transaction (`BEGIN IMMEDIATE`): the change
///    counter, then one `INSERT … SELECT … ON CONFLICT DO UPDATE`
///    ([`apply_sql`]). The write lock is held for this step only: its
///    length grows with the rows inserted or changed, not with the time the
///    rows took to come. When they are many ([`INDEX_REBUILD_MIN_ROWS`],
///    counted before the lock, [`to_write_sql`]), the table's other indexes
///    are dropped before the write and built again after it, in the same
///    transaction.
///
/// All or nothing: until the apply commits, the database file is as it
/// was. On the way out, whatever happened, the staging tables are dropped
/// (and before staging too, in case an upsert cancelled mid-way left them
/// on this connection).
///
/// The counts: the statement reports how many rows it inserted or changed
/// (`written`); how many were inserted is how much the table grew (only an
/// insert adds a row); the rest of the staged rows were given as stored.
pub(super) async fn upsert_chunks<'a, T: Upsert + 'a, C: AsRef<[T]>>(
    pool: &SqlitePool,
    chunks: &mut (dyn Iterator<Item = StoreResult<C>> + Send + 'a),
    clock: &dyn Clock,
) -> StoreResult<UpsertSummary> {
    let mut conn = pool.acquire().await.map_err(db)?;
    let result = stage_and_apply(&mut conn, chunks, clock).await;
    if let Err(e) = drop_staging(&mut conn).await {
        // Harmless beyond the space it takes: the next upsert on this
        // connection drops the tables first.
        tracing::warn!(table = T::TABLE, error = %e, "the staging tables of an upsert were not dropped");
    }
    result
}

/// Copies the stored rows of the staged keys into `events::BEFORE`.
async fn copy_before<T: Upsert>(conn: &mut SqliteConnection) -> StoreResult<()> {
    let keys = format!("(SELECT DISTINCT {} AS k FROM {STAGING}) AS g", T::COLUMNS[0]);
    let before = format!("CREATE TEMP TABLE {BEFORE} AS {}", before_select::<T>(&keys));
    sqlx::query(&before).execute(&mut *conn).await.map_err(db)?;
    let index = format!("CREATE UNIQUE INDEX temp.{BEFORE}_key ON {BEFORE} ({})", T::COLUMNS[0]);
    sqlx::query(&index).execute(&mut *conn).await.map_err(db)?;
    Ok(())
}

/// Drops the staging tables, if there are any.
async fn drop_staging(conn: &mut SqliteConnection) -> StoreResult<()> {
    for table in [GIVEN, STAGING, BEFORE, AFTER, STAGED] {
        sqlx::query(&format!("DROP TABLE IF EXISTS {table}")).execute(&mut *conn).await.map_err(db)?;
    }
    Ok(())
}

/// The two steps of [`upsert_chunks`].
async fn stage_and_apply<'a, T: Upsert + 'a, C: AsRef<[T]>>(
    conn: &mut SqliteConnection,
    chunks: &mut (dyn Iterator<Item = StoreResult<C>> + Send + 'a),
    clock: &dyn Clock,
) -> StoreResult<UpsertSummary> {
    let started = Instant::now();
    drop_staging(conn).await?;
    sqlx::query(&create_given_sql(T::COLUMNS)).execute(&mut *conn).await.map_err(db)?;
    let mut staging = conn.begin().await.map_err(db)?;
    let mut staged = 0u64;
    for chunk in &mut *chunks {
        let chunk = chunk?;
        for run in chunk.as_ref().chunks(T::RUN) {
            let sql = stage_sql(T::COLUMNS, run.len());
            let mut q = sqlx::query(&sql);
            for row in run {
                q = row.bind(q);
            }
            q.execute(&mut *staging).await.map_err(db)?;
            staged += run.len() as u64;
        }
    }
    staging.commit().await.map_err(db)?;
    if staged == 0 {
        return Ok(UpsertSummary::default());
    }
    sqlx::query(&sort_staged_sql(T::COLUMNS)).execute(&mut *conn).await.map_err(db)?;
    sqlx::query(&format!("DROP TABLE {GIVEN}")).execute(&mut *conn).await.map_err(db)?;
    let to_write: i64 = sqlx::query_scalar(&to_write_sql(T::TABLE, T::COLUMNS, T::KEPT_WHEN_NULL))
        .fetch_one(&mut *conn)
        .await
        .map_err(db)?;
    let to_write = to_write.unsigned_abs();

    // The events, made before the lock (see `portable/events.rs`).
    let at = clock.now();
    let counter = read_generation(conn, T::COUNTER).await?;
    let predicted = T::STAMPED.then(|| UpsertStamp::new(at, counter + 1));
    copy_before::<T>(conn).await?;
    let key = T::COLUMNS[0];
    let after =
        format!("CREATE TEMP TABLE {AFTER} AS SELECT * FROM {} WHERE {key} IN (SELECT {key} FROM {STAGING})", T::TABLE);
    sqlx::query(&after).execute(&mut *conn).await.map_err(db)?;
    let index = format!("CREATE UNIQUE INDEX temp.{AFTER}_key ON {AFTER} ({key})");
    sqlx::query(&index).execute(&mut *conn).await.map_err(db)?;
    let simulated = apply_sql(AFTER, T::COLUMNS, T::KEPT_WHEN_NULL, predicted.as_ref());
    sqlx::query(&simulated).execute(&mut *conn).await.map_err(db)?;
    announce::<T>(conn, AFTER, at, Sink::Staged).await?;

    let locked = Instant::now();
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
    // Another upsert of the table committed meanwhile: the staged events
    // may be wrong; make them again under the lock.
    let fresh = read_generation(&mut tx, T::COUNTER).await? == counter;
    if !fresh {
        sqlx::query(&format!("DROP TABLE {BEFORE}")).execute(&mut *tx).await.map_err(db)?;
        copy_before::<T>(&mut tx).await?;
    }
    let stamp = begin_upsert::<T>(&mut tx, at).await?;
    let before = count(&mut tx, T::TABLE).await?;
    let rebuilt = match to_write >= INDEX_REBUILD_MIN_ROWS && to_write.saturating_mul(4) >= before {
        true => drop_other_indexes(&mut tx, T::TABLE).await?,
        false => Vec::new(),
    };
    let sql = apply_sql(T::TABLE, T::COLUMNS, T::KEPT_WHEN_NULL, stamp.as_ref());
    let written = sqlx::query(&sql).execute(&mut *tx).await.map_err(db)?.rows_affected();
    for index in &rebuilt {
        sqlx::query(index).execute(&mut *tx).await.map_err(db)?;
    }
    let inserted = count(&mut tx, T::TABLE).await?.saturating_sub(before);
    let summary = UpsertSummary {
        inserted,
        updated: written.saturating_sub(inserted),
        unchanged: staged.saturating_sub(written),
    };
    if end_upsert::<T>(&mut tx, &summary, at, fresh).await? {
        tx.commit().await.map_err(db)?;
    }
    tracing::debug!(
        table = T::TABLE,
        rows = staged,
        to_write,
        indexes_rebuilt = rebuilt.len(),
        staged_ms = (locked - started).as_millis() as u64,
        locked_ms = locked.elapsed().as_millis() as u64,
        "upsert staged, then applied under the write lock"
    );
    Ok(summary)
}

/// Nothing to lock for an identity import: the write transaction holds the
/// file.
pub(super) async fn lock_identity(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Writes `companies` (distinct ISINs, whole: no details is no details) in
/// the caller's write transaction,
/// each stamped with `stamp` where it differs from the stored row: runs of
/// `INSERT … VALUES (…), … ON CONFLICT DO UPDATE … WHERE <a column differs>`.
/// How many rows were inserted or changed.
pub(super) async fn write_companies(
    conn: &mut SqliteConnection,
    companies: &[Company],
    stamp: &UpsertStamp,
) -> StoreResult<u64> {
    let mut written = 0;
    for run in companies.chunks(<Company as Upsert>::RUN) {
        let row = format!("({}, {})", placeholders(Company::COLUMNS.len()), stamp.values());
        let source = format!("VALUES {}", vec![row; run.len()].join(", "));
        let sql = upsert_tail(Company::TABLE, Company::COLUMNS, &[], Some(stamp), &source);
        let mut q = sqlx::query(&sql);
        for c in run {
            q = c.bind(q);
        }
        written += q.execute(&mut *conn).await.map_err(db)?.rows_affected();
    }
    Ok(written)
}

/// Nothing to lock for event ids: the write transaction holds the file, so
/// they commit in order.
pub(super) async fn lock_events(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Nothing to lock for a key's streams: the write transaction holds the
/// file.
pub(super) async fn lock_key_streams(_conn: &mut SqliteConnection, _key: &str) -> StoreResult<()> {
    Ok(())
}

/// Nothing to lock: the write transaction holds the file.
pub(super) async fn lock_snapshot_saves(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Drops the indexes of `table` that a migration made (not the one of its
/// key, which SQLite made); returns the statements that make them again,
/// as stored, so they come back exactly as they were.
async fn drop_other_indexes(conn: &mut SqliteConnection, table: &str) -> StoreResult<Vec<String>> {
    let indexes: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = $1 AND sql IS NOT NULL ORDER BY name",
    )
    .bind(table)
    .fetch_all(&mut *conn)
    .await
    .map_err(db)?;
    for (name, _) in &indexes {
        sqlx::query(&format!("DROP INDEX \"{name}\"")).execute(&mut *conn).await.map_err(db)?;
    }
    Ok(indexes.into_iter().map(|(_, sql)| sql).collect())
}

/// How many rows `table` has.
async fn count(conn: &mut SqliteConnection, table: &str) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(conn).await.map_err(db)?;
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

/// What a claim's `SELECT` of webhook endpoints adds to lock the rows it
/// takes: nothing (the write transaction holds the file).
pub(super) const SKIP_LOCKED: &str = "";

/// Nothing to lock for a prices import: the write transaction holds the
/// file.
pub(super) async fn lock_prices(_conn: &mut SqliteConnection) -> StoreResult<()> {
    Ok(())
}

/// Bars written per statement: 16 values each, well under SQLite's 32 766.
const BAR_RUN: usize = 1_000;

/// Writes the bars of the day `day` (a `YYYYMMDD` number; the day holds
/// none when called), in runs of [`BAR_RUN`] rows.
pub(super) async fn insert_bars(conn: &mut SqliteConnection, day: i64, bars: &[crate::StoredBar]) -> StoreResult<()> {
    use crate::prices::{BAR_COLUMN_COUNT, BAR_COLUMNS, Cell, cells};
    for run in bars.chunks(BAR_RUN) {
        let sql = format!("INSERT INTO bars ({BAR_COLUMNS}) VALUES {}", value_rows(BAR_COLUMN_COUNT, run.len()));
        let mut q = sqlx::query(&sql);
        for b in run {
            for c in cells(day, b)? {
                q = match c {
                    Cell::Int(v) => q.bind(v),
                    Cell::Text(t) => q.bind(t),
                    Cell::Null => q.bind(None::<i64>),
                };
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
    fn staging_sql_lists_every_column() {
        assert_eq!(create_given_sql(&["k", "a", "b"]), "CREATE TABLE temp.mds_upsert_given (k, a, b)");
        assert_eq!(stage_sql(&["k", "a"], 2), "INSERT INTO temp.mds_upsert_given (k, a) VALUES (?, ?), (?, ?)");
        assert_eq!(
            sort_staged_sql(&["k", "a"]),
            "CREATE TABLE temp.mds_upsert_staging AS SELECT k, a FROM temp.mds_upsert_given ORDER BY k, rowid"
        );
    }

    #[test]
    fn apply_sql_upserts_the_staged_rows_in_order() {
        assert_eq!(
            apply_sql("t", &["k", "a", "b"], &[], None),
            "INSERT INTO t (k, a, b) SELECT k, a, b FROM temp.mds_upsert_staging WHERE true ORDER BY rowid \
             ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b \
             WHERE t.a IS NOT excluded.a OR t.b IS NOT excluded.b"
        );
        let stamp = UpsertStamp::new(chrono::DateTime::UNIX_EPOCH, 7);
        assert_eq!(
            apply_sql("t", &["k", "a", "d"], &["d"], Some(&stamp)),
            "INSERT INTO t (k, a, d, updated_at, change_seq) \
             SELECT k, a, d, '1970-01-01T00:00:00+00:00', 7 FROM temp.mds_upsert_staging WHERE true ORDER BY rowid \
             ON CONFLICT (k) DO UPDATE SET a = excluded.a, d = COALESCE(excluded.d, t.d), \
             updated_at = excluded.updated_at, change_seq = excluded.change_seq \
             WHERE t.a IS NOT excluded.a OR (excluded.d IS NOT NULL AND t.d IS NOT excluded.d)"
        );
    }

    #[test]
    fn to_write_sql_counts_new_and_differing_rows() {
        assert_eq!(
            to_write_sql("t", &["k", "a", "d"], &["d"]),
            "SELECT COUNT(*) FROM temp.mds_upsert_staging AS s LEFT JOIN t AS t ON t.k = s.k \
             WHERE t.k IS NULL OR t.a IS NOT s.a OR (s.d IS NOT NULL AND t.d IS NOT s.d)"
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
