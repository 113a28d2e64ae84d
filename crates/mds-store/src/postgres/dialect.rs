//! The SQL of PostgreSQL that differs from SQLite's.
//!
//! Multi-row statements bind one array per column: an upsert of a run is one
//! `INSERT … SELECT FROM UNNEST($1, …) ON CONFLICT DO UPDATE`, a lookup one
//! `… = ANY($1)`. The SQL text does not depend on the run's length, so one
//! prepared statement serves every run, and a million rows take a few
//! hundred round trips.
//!
//! Where SQLite's single writer makes a check and its write one step,
//! PostgreSQL takes a lock: an upsert locks its table against other writers
//! (`SHARE ROW EXCLUSIVE`: readers go on), so two imports cannot deadlock on
//! each other's rows and the insert/update counts are exact; a revocation
//! locks the key's row (`FOR UPDATE`); a snapshot save (catalog or news)
//! takes a transaction-scoped advisory lock ([`SNAPSHOT_LOCK`]) that queues saves
//! from several nodes: each runs whole after the one before has committed,
//! so its `DELETE` (a new statement, so a new snapshot under `READ
//! COMMITTED`) sees and removes every chunk the other wrote, and no insert
//! can meet a chunk of the same key. Without it, two saves of one generation
//! would both insert `(generation, 0)`, and the second would fail on the
//! primary key. Only saves take that lock; loads never wait for it.

use mds_domain::clock::Clock;
use mds_domain::{Article, Company};
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgConnection, PgPool, Postgres};

use super::portable::catalog::{UpsertStamp, Upserted, begin_upsert, end_upsert, upsert_tail};
use super::portable::events::{BEFORE, before_select};
use super::{begin_write, db};
use crate::rows::{self, Value, Values};
use crate::{StoreResult, UpsertSummary};

/// The backend's name, for sentences.
pub(super) const NAME: &str = "PostgreSQL";

/// The backend as OpenTelemetry's `db.system` names it (a store call's
/// span in a request's trace).
pub(super) const SYSTEM: &str = "postgresql";

/// A query being bound.
type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

/// Locks the key's row until the end of the transaction.
pub(super) const KEY_LOCK: &str = " FOR UPDATE OF k";

/// `ticker, isin` in byte order, whatever the database's default collation:
/// the columns are `COLLATE "C"` already, and saying so here keeps the order
/// if a column's collation ever changes (the index `companies_ticker_isin`
/// is `"C"` too, so this is a walk of it, no sort).
pub(super) const COMPANY_ORDER: &str = "ticker COLLATE \"C\", isin COLLATE \"C\"";

/// SQL's null-safe "differs".
pub(super) const DIFFERS: &str = "IS DISTINCT FROM";

/// The length in bytes of a `bytea`.
pub(super) const BYTE_LENGTH: &str = "octet_length";

/// Whether the article's tags (`tags_json`, a JSON array of strings) hold
/// the text bound at `param`.
pub(super) fn has_tag(param: &str) -> String {
    format!("tags_json::jsonb @> jsonb_build_array({param}::text)")
}

/// The table of applied migrations.
/// Counts the `schema_migrations` tables (0 on a store never migrated).
pub(super) const SCHEMA_MIGRATIONS_EXISTS: &str =
    "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE tablename = 'schema_migrations' AND schemaname = current_schema()";

pub(super) const SCHEMA_MIGRATIONS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT COLLATE \"C\" NOT NULL)";

/// The key of the advisory lock that serialises snapshot saves ("mds_snap").
const SNAPSHOT_LOCK: i64 = 0x6d64_735f_736e_6170;

/// Rows per statement: large enough to amortise the round trip, small enough
/// to keep each statement's arrays a few megabytes.
const RUN: usize = 5_000;

/// Counts written per statement (three arrays of this length).
const COUNT_RUN: usize = 5_000;

/// Adds one run of counts, given as parallel arrays.
const ADD_COUNTS_SQL: &str = "INSERT INTO usage_counts (key_id, month, requests) \
                              SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[]) \
                              ON CONFLICT (key_id, month) DO UPDATE SET requests = usage_counts.requests + excluded.requests";

/// Adds one run of ledger entries, given as parallel arrays.
const ADD_DAYS_SQL: &str = "INSERT INTO usage_daily (key_id, day, route_id, requests, not_modified) \
                            SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) \
                            ON CONFLICT (key_id, day, route_id) DO UPDATE \
                            SET requests = usage_daily.requests + excluded.requests, \
                            not_modified = usage_daily.not_modified + excluded.not_modified";

/// One column of a run, bound as one array.
enum Column<'a> {
    Text(Vec<Option<&'a str>>),
    Made(Vec<Option<String>>),
    Bool(Vec<bool>),
}

impl<'a> Column<'a> {
    /// An empty column of `v`'s kind, with room for `n` values.
    fn of(v: &Value<'_>, n: usize) -> Self {
        match v {
            Value::Text(_) => Column::Text(Vec::with_capacity(n)),
            Value::Made(_) => Column::Made(Vec::with_capacity(n)),
            Value::Bool(_) => Column::Bool(Vec::with_capacity(n)),
        }
    }

    /// Adds `v`, of the column's kind (a row kind's values are).
    fn push(&mut self, v: Value<'a>) {
        match (self, v) {
            (Column::Text(c), Value::Text(t)) => c.push(t),
            (Column::Made(c), Value::Made(t)) => c.push(t),
            (Column::Bool(c), Value::Bool(b)) => c.push(b),
            (_, v) => unreachable!("a column's values are of one kind, not {v:?}"),
        }
    }
}

/// A row kind as PostgreSQL upserts it: a run at a time, one array per
/// column.
pub(super) trait Upsert: Upserted + Values + Sized {
    /// Rows per statement.
    const RUN: usize = RUN;
    /// Column types, in the order of `COLUMNS`.
    const TYPES: &'static [&'static str];
    /// Its key (its first column's value).
    fn key(&self) -> &str;
    /// Binds a run's columns, in the order of `COLUMNS`.
    fn bind<'q>(rows: &'q [Self], q: PgQuery<'q>) -> PgQuery<'q> {
        let mut columns: Vec<Column<'q>> = Vec::new();
        for row in rows {
            for (i, v) in row.values().into_iter().enumerate() {
                if i == columns.len() {
                    columns.push(Column::of(&v, rows.len()));
                }
                columns[i].push(v);
            }
        }
        columns.into_iter().fold(q, |q, c| match c {
            Column::Text(v) => q.bind(v),
            Column::Made(v) => q.bind(v),
            Column::Bool(v) => q.bind(v),
        })
    }
}

impl Upsert for Company {
    const TYPES: &'static [&'static str] =
        &["text", "text", "text", "text", "text", "boolean", "boolean", "text", "text", "text"];
    fn key(&self) -> &str {
        self.isin.as_str()
    }
}

impl Upsert for Article {
    const TYPES: &'static [&'static str] = &["text"; 15];
    fn key(&self) -> &str {
        self.slug.as_str()
    }
}

/// `INSERT INTO table (cols) SELECT * FROM UNNEST($1::type[], …) ON CONFLICT
/// (key) DO UPDATE SET col = excluded.col, … WHERE <a column differs>`; the
/// key is the first column. With a stamp, its columns follow, their values
/// written into the text (the same for every row).
fn upsert_sql(table: &str, cols: &[&str], kept: &[&str], types: &[&str], stamp: Option<&UpsertStamp>) -> String {
    let arrays = types.iter().enumerate().map(|(i, t)| format!("${}::{t}[]", i + 1)).collect::<Vec<_>>().join(", ");
    let select = match stamp {
        None => "*".to_owned(),
        Some(s) => format!("*, {}", s.values()),
    };
    upsert_tail(table, cols, kept, stamp, &format!("SELECT {select} FROM UNNEST({arrays})"))
}

/// Upserts the rows of `chunks` in one write transaction that locks their
/// table against other writers (readers, and writers of other tables, go
/// on). Rows go in runs (`rows::chunks_by_key`: no key twice in a run, as
/// `ON CONFLICT DO UPDATE` cannot touch a row twice in one statement); per
/// run, one statement tells how many keys exist already, then one writes
/// the run ([`upsert_run`]).
pub(super) async fn upsert_chunks<'a, T: Upsert + 'a, C: AsRef<[T]>>(
    pool: &PgPool,
    chunks: &mut (dyn Iterator<Item = StoreResult<C>> + Send + 'a),
    clock: &dyn Clock,
) -> StoreResult<UpsertSummary> {
    let mut summary = UpsertSummary::default();
    let mut tx = begin_write(pool).await?;
    lock_for_upsert(&mut tx, T::TABLE).await?;
    let at = clock.now();
    let stamp = begin_upsert::<T>(&mut tx, at).await?;
    create_before::<T>(&mut tx).await?;
    for chunk in &mut *chunks {
        let chunk = chunk?;
        for run in rows::chunks_by_key(chunk.as_ref(), T::RUN, T::key) {
            let keys: Vec<&str> = run.iter().map(T::key).collect();
            let existing = count_existing(&mut tx, T::TABLE, T::COLUMNS[0], &keys).await?;
            keep_before::<T>(&mut tx, &keys).await?;
            let written = upsert_run(&mut tx, run, stamp.as_ref()).await?;
            let inserted = run.len() as u64 - existing;
            summary.inserted += inserted;
            summary.updated += written - inserted;
            summary.unchanged += existing - (written - inserted);
        }
    }
    if end_upsert::<T>(&mut tx, &summary, at, false).await? {
        tx.commit().await.map_err(db)?;
    }
    Ok(summary)
}

/// Creates the empty TEMP table of the stored rows an upsert is given the
/// keys of (`events::BEFORE`), dropped at the end of the transaction.
async fn create_before<T: Upsert>(conn: &mut PgConnection) -> StoreResult<()> {
    let none = "(SELECT NULL::text AS k) AS g";
    let sql = format!("CREATE TEMP TABLE {BEFORE} ON COMMIT DROP AS {} WITH NO DATA", before_select::<T>(none));
    sqlx::query(&sql).execute(&mut *conn).await.map_err(db)?;
    let sql = format!("CREATE UNIQUE INDEX ON {BEFORE} ({})", T::COLUMNS[0]);
    sqlx::query(&sql).execute(conn).await.map_err(db)?;
    Ok(())
}

/// Copies the stored rows of `keys` (distinct) into `events::BEFORE`, but
/// for keys an earlier run of the upsert copied (whose rows it may have
/// written since).
async fn keep_before<T: Upsert>(conn: &mut PgConnection, keys: &[&str]) -> StoreResult<()> {
    let sql =
        format!("INSERT INTO {BEFORE} {} ON CONFLICT DO NOTHING", before_select::<T>("UNNEST($1::text[]) AS g(k)"));
    sqlx::query(&sql).bind(keys).execute(conn).await.map_err(db)?;
    Ok(())
}

/// Locks `table` against other writers until the end of the transaction.
async fn lock_for_upsert(conn: &mut PgConnection, table: &str) -> StoreResult<()> {
    sqlx::query(&format!("LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")).execute(conn).await.map_err(db)?;
    Ok(())
}

/// Locks what an identity import writes against other writers until the
/// end of the transaction: the snapshot days (so two imports run one after
/// the other, each seeing the other's runs) and the companies (as an upsert
/// does).
pub(super) async fn lock_identity(conn: &mut PgConnection) -> StoreResult<()> {
    sqlx::query("LOCK TABLE identity_snapshots IN EXCLUSIVE MODE").execute(&mut *conn).await.map_err(db)?;
    lock_for_upsert(conn, Company::TABLE).await
}

/// Writes `companies` (distinct ISINs, whole: no details is no details)
/// in the caller's write transaction, each stamped with `stamp` where it
/// differs from the stored row, in runs. How many rows were inserted or
/// changed.
pub(super) async fn write_companies(
    conn: &mut PgConnection,
    companies: &[Company],
    stamp: &UpsertStamp,
) -> StoreResult<u64> {
    let sql = upsert_sql(Company::TABLE, Company::COLUMNS, &[], Company::TYPES, Some(stamp));
    let mut written = 0;
    for run in companies.chunks(<Company as Upsert>::RUN) {
        written += Company::bind(run, sqlx::query(&sql)).execute(&mut *conn).await.map_err(db)?.rows_affected();
    }
    Ok(written)
}

/// The key of the advisory lock that orders event ids by commit
/// ("mds_evts").
const EVENTS_LOCK: i64 = 0x6d64_735f_6576_7473;

/// Takes the lock that makes event ids commit in order, until the end of
/// the transaction: a transaction appending events waits for the one before
/// to commit, so no reader sees a higher id before a lower one.
pub(super) async fn lock_events(conn: &mut PgConnection) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(EVENTS_LOCK).execute(conn).await.map_err(db)?;
    Ok(())
}

/// Takes the lock on `key`'s event streams until the end of the
/// transaction, so two nodes opening streams of one key count one after the
/// other.
pub(super) async fn lock_key_streams(conn: &mut PgConnection, key: &str) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
        .bind(format!("mds_streams:{key}"))
        .execute(conn)
        .await
        .map_err(db)?;
    Ok(())
}

/// Takes the lock that queues snapshot saves (of either kind), until the
/// end of the transaction.
pub(super) async fn lock_snapshot_saves(conn: &mut PgConnection) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(SNAPSHOT_LOCK).execute(conn).await.map_err(db)?;
    Ok(())
}

/// Writes one run of an upsert; returns how many rows it inserted or
/// changed (a row left as it was is not written).
async fn upsert_run<T: Upsert>(conn: &mut PgConnection, run: &[T], stamp: Option<&UpsertStamp>) -> StoreResult<u64> {
    let sql = upsert_sql(T::TABLE, T::COLUMNS, T::KEPT_WHEN_NULL, T::TYPES, stamp);
    Ok(T::bind(run, sqlx::query(&sql)).execute(conn).await.map_err(db)?.rows_affected())
}

/// How many of `keys` (distinct) exist in `table.col`.
async fn count_existing(conn: &mut PgConnection, table: &str, col: &str, keys: &[&str]) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE {col} = ANY($1)"))
        .bind(keys)
        .fetch_one(conn)
        .await
        .map_err(db)?;
    Ok(n.unsigned_abs())
}

/// The `(prefix, id)` of those of `prefixes` that are keys.
pub(super) async fn key_ids(conn: &mut PgConnection, prefixes: &[&str]) -> StoreResult<Vec<(String, i64)>> {
    sqlx::query_as::<_, (String, i64)>("SELECT prefix, id FROM api_keys WHERE prefix = ANY($1)")
        .bind(prefixes)
        .fetch_all(conn)
        .await
        .map_err(db)
}

/// Adds `(key id, month, requests)` counts.
pub(super) async fn add_counts(conn: &mut PgConnection, counts: &[(i64, i64, i64)]) -> StoreResult<()> {
    for run in counts.chunks(COUNT_RUN) {
        sqlx::query(ADD_COUNTS_SQL)
            .bind(run.iter().map(|c| c.0).collect::<Vec<_>>())
            .bind(run.iter().map(|c| c.1).collect::<Vec<_>>())
            .bind(run.iter().map(|c| c.2).collect::<Vec<_>>())
            .execute(&mut *conn)
            .await
            .map_err(db)?;
    }
    Ok(())
}

/// Adds `[key id, day, route id, requests, not modified]` entries to the
/// daily ledger.
pub(super) async fn add_days(conn: &mut PgConnection, entries: &[[i64; 5]]) -> StoreResult<()> {
    for run in entries.chunks(COUNT_RUN) {
        let mut q = sqlx::query(ADD_DAYS_SQL);
        for i in 0..5 {
            q = q.bind(run.iter().map(|e| e[i]).collect::<Vec<i64>>());
        }
        q.execute(&mut *conn).await.map_err(db)?;
    }
    Ok(())
}

/// What a claim's `SELECT` of webhook endpoints adds to lock the rows it
/// takes: each is locked, and rows another node's claim holds are passed
/// over rather than waited for.
pub(super) const SKIP_LOCKED: &str = " FOR UPDATE SKIP LOCKED";

/// The key of the advisory lock that queues prices imports ("mds_bars"):
/// each runs whole after the one before has committed, so two imports of
/// one day cannot both insert its rows, and a year's partition is made
/// once.
const PRICES_LOCK: i64 = 0x6d64_735f_6261_7273;

/// Queues this prices import behind any other, until the end of the
/// transaction.
pub(super) async fn lock_prices(conn: &mut PgConnection) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(PRICES_LOCK).execute(&mut *conn).await.map_err(db)?;
    Ok(())
}

/// Makes the partition of `bars` for the year of `day` (a `YYYYMMDD`
/// number) if there is none: a table like `bars`, then attached, which
/// locks `bars` against other attaches and schema changes only (`SHARE
/// UPDATE EXCLUSIVE`), not against reads and writes, as `CREATE TABLE …
/// PARTITION OF` would (`ACCESS EXCLUSIVE`, until the import commits).
/// Called under [`lock_prices`].
async fn ensure_partition(conn: &mut PgConnection, day: i64) -> StoreResult<()> {
    let year = day / 10_000;
    let name = format!("bars_y{year}");
    let exists: bool =
        sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL").bind(&name).fetch_one(&mut *conn).await.map_err(db)?;
    if exists {
        return Ok(());
    }
    sqlx::query(&format!("CREATE TABLE {name} (LIKE bars INCLUDING ALL)")).execute(&mut *conn).await.map_err(db)?;
    sqlx::query(&format!(
        "ALTER TABLE bars ATTACH PARTITION {name} FOR VALUES FROM ({}) TO ({})",
        year * 10_000,
        (year + 1) * 10_000
    ))
    .execute(&mut *conn)
    .await
    .map_err(db)?;
    Ok(())
}

/// Appends `text` to a `COPY … FROM STDIN` text-format line, escaped.
fn copy_text(line: &mut Vec<u8>, text: &str) {
    for b in text.bytes() {
        match b {
            b'\\' => line.extend_from_slice(b"\\\\"),
            b'\t' => line.extend_from_slice(b"\\t"),
            b'\n' => line.extend_from_slice(b"\\n"),
            b'\r' => line.extend_from_slice(b"\\r"),
            b => line.push(b),
        }
    }
}

/// Writes the bars of the day `day` (a `YYYYMMDD` number; the day holds
/// none when called) with one `COPY`, making its year's partition first if
/// needed.
pub(super) async fn insert_bars(conn: &mut PgConnection, day: i64, bars: &[crate::StoredBar]) -> StoreResult<()> {
    use std::io::Write;

    use crate::prices::{BAR_COLUMNS, Cell, cells};
    if bars.is_empty() {
        return Ok(());
    }
    ensure_partition(conn, day).await?;
    let mut data = Vec::with_capacity(bars.len() * 128);
    for b in bars {
        for (i, c) in cells(day, b)?.into_iter().enumerate() {
            if i > 0 {
                data.push(b'\t');
            }
            match c {
                Cell::Int(v) => write!(data, "{v}").expect("writing to a Vec"),
                Cell::Text(t) => copy_text(&mut data, t),
                Cell::Null => data.extend_from_slice(b"\\N"),
            }
        }
        data.push(b'\n');
    }
    let mut copy = conn.copy_in_raw(&format!("COPY bars ({BAR_COLUMNS}) FROM STDIN")).await.map_err(db)?;
    if let Err(e) = copy.send(data).await {
        // The connection is to leave COPY mode before the rollback.
        let _ = copy.abort("the data could not be sent").await;
        return Err(db(e));
    }
    copy.finish().await.map_err(db)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{ARTICLE_COLUMNS, COMPANY_COLUMNS};

    #[test]
    fn upsert_sql_lists_every_column() {
        assert_eq!(
            upsert_sql("t", &["k", "a", "b"], &[], &["text", "boolean", "text"], None),
            "INSERT INTO t (k, a, b) SELECT * FROM UNNEST($1::text[], $2::boolean[], $3::text[]) \
             ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b \
             WHERE t.a IS DISTINCT FROM excluded.a OR t.b IS DISTINCT FROM excluded.b"
        );
    }

    #[test]
    fn every_column_has_a_type() {
        assert_eq!(<Company as Upsert>::TYPES.len(), COMPANY_COLUMNS.len());
        assert_eq!(<Article as Upsert>::TYPES.len(), ARTICLE_COLUMNS.len());
        assert_eq!(COMPANY_COLUMNS[5..7], ["is_bse", "is_nse"]);
    }
}
