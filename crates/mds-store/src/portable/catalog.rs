//! Companies and articles.
//!
//! An upsert applies every row or none, however many rows (given at once, or
//! a chunk at a time), as one write transaction: a row given exactly as
//! stored is not written (`ON CONFLICT DO UPDATE … WHERE <a column
//! differs>`, [`upsert_tail`]). How the rows get there is the backend's
//! (`dialect::upsert_chunks`):
//! - SQLite first stages them in a TEMP table of its connection, outside the
//!   database's write lock, then applies them in one short write
//!   transaction (`INSERT … SELECT`): its single write lock is held for the
//!   apply only, not for the reading of the rows, so another process (a key
//!   revoked during an import) does not wait for the whole import.
//! - PostgreSQL writes them in runs in one transaction that locks only the
//!   table it writes (key changes go on beside it).
//!
//! A company upsert bumps the `companies` change counter, an article upsert
//! the `news` one, in its transaction; an upsert that inserts or changes no
//! row bumps nothing (its transaction is rolled back).
//!
//! Companies carry change stamps (`updated_at`, `change_seq`): the counter
//! is bumped first, and every row the upsert inserts or changes is stamped
//! with the new generation and the time ([`UpsertStamp`]), so the change feed
//! (contract section 7.2) can serve "what changed after generation G".
//!
//! Compiled once per backend (see `portable/mod.rs`).

use futures_util::TryStreamExt;
use mds_domain::clock::Clock;
use mds_domain::{Article, Company, Slug};

use super::dialect::{self, COMPANY_ORDER, Upsert};
use super::events::{Announce, Sink, announce, append_staged};
use super::meta::bump_generation;
use super::{Conn, Pool, db};
use crate::rows::{
    self, ARTICLE_COLUMNS, COMPANY_COLUMNS, COMPANY_STAMP_COLUMNS, META_GENERATION_COMPANIES, META_GENERATION_NEWS,
};
use crate::{StoreResult, StoredCompany, UpsertSummary};

/// A kind of row upserted by its key, the first of its columns.
pub(crate) trait Upserted: Sync {
    /// Its table.
    const TABLE: &'static str;
    /// Its columns, key first, in the order the backends bind them.
    const COLUMNS: &'static [&'static str];
    /// The change counter an upsert bumps.
    const COUNTER: &'static str;
    /// Whether rows carry change stamps (`rows::COMPANY_STAMP_COLUMNS`).
    const STAMPED: bool;
    /// Columns that a row giving `NULL` leaves as stored (an import file
    /// without detail columns does not erase the details).
    const KEPT_WHEN_NULL: &'static [&'static str];
    /// The events an upsert that inserts or changes rows appends to the
    /// log (`events::announce`).
    const ANNOUNCE: Announce;
}

impl Upserted for Company {
    const TABLE: &'static str = "companies";
    const COLUMNS: &'static [&'static str] = COMPANY_COLUMNS;
    const COUNTER: &'static str = META_GENERATION_COMPANIES;
    const STAMPED: bool = true;
    const KEPT_WHEN_NULL: &'static [&'static str] = &["details_json"];
    const ANNOUNCE: Announce = Announce::Companies;
}

impl Upserted for Article {
    const TABLE: &'static str = "articles";
    const COLUMNS: &'static [&'static str] = ARTICLE_COLUMNS;
    const COUNTER: &'static str = META_GENERATION_NEWS;
    const STAMPED: bool = false;
    const KEPT_WHEN_NULL: &'static [&'static str] = &[];
    const ANNOUNCE: Announce = Announce::Articles;
}

/// The change stamp of one upsert: the time and the generation it writes
/// into every row it inserts or changes.
pub(crate) struct UpsertStamp {
    at: String,
    seq: i64,
}

impl UpsertStamp {
    /// The stamp of an upsert at `at` that makes generation `seq`.
    pub(crate) fn new(at: chrono::DateTime<chrono::Utc>, seq: i64) -> Self {
        UpsertStamp { at: rows::ts(&at), seq }
    }

    /// The generation it writes.
    pub(crate) fn seq(&self) -> i64 {
        self.seq
    }

    /// The time (as stored) and the generation it writes.
    pub(crate) fn parts(&self) -> (&str, i64) {
        (&self.at, self.seq)
    }

    /// The stamp's values as SQL literals, for the text of a statement (the
    /// same for every row, so not bound per row): safe, since the time is
    /// `format_utc`'s digits and punctuation and the generation a number.
    pub(crate) fn values(&self) -> String {
        debug_assert!(self.at.bytes().all(|b| b.is_ascii_alphanumeric() || b"-:.+".contains(&b)));
        format!("'{}', {}", self.at, self.seq)
    }
}

/// The end of an upsert statement whose rows come from `source` (`VALUES …`
/// or `SELECT …`): the column list, the stamp's columns, and `ON CONFLICT
/// (key) DO UPDATE SET …` only where a column of `cols` differs. A column of
/// `kept` given as `NULL` keeps its stored value (and differs from nothing).
pub(crate) fn upsert_tail(
    table: &str,
    cols: &[&str],
    kept: &[&str],
    stamp: Option<&UpsertStamp>,
    source: &str,
) -> String {
    let stamps: &[&str] = if stamp.is_some() { &rows::COMPANY_STAMP_COLUMNS } else { &[] };
    let all: Vec<&str> = cols.iter().chain(stamps).copied().collect();
    let set = all[1..]
        .iter()
        .map(|c| match kept.contains(c) {
            true => format!("{c} = COALESCE(excluded.{c}, {table}.{c})"),
            false => format!("{c} = excluded.{c}"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO {table} ({}) {source} ON CONFLICT ({}) DO UPDATE SET {set} WHERE {}",
        all.join(", "),
        cols[0],
        differs(table, "excluded", cols, kept)
    )
}

/// Whether row `given` differs from row `stored` in a column of `cols` (the
/// key, first, aside): `stored.c <differs> given.c OR …`, where a column of
/// `kept` given as `NULL` differs from nothing.
pub(crate) fn differs(stored: &str, given: &str, cols: &[&str], kept: &[&str]) -> String {
    cols[1..]
        .iter()
        .map(|c| match kept.contains(c) {
            true => format!("({given}.{c} IS NOT NULL AND {stored}.{c} {} {given}.{c})", dialect::DIFFERS),
            false => format!("{stored}.{c} {} {given}.{c}", dialect::DIFFERS),
        })
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Inserts or replaces `rows` by key; bumps their change counter; commits.
/// No rows: nothing changes.
pub(crate) async fn upsert<T: Upsert>(pool: &Pool, rows: &[T], clock: &dyn Clock) -> StoreResult<UpsertSummary> {
    if rows.is_empty() {
        return Ok(UpsertSummary::default());
    }
    upsert_chunks(pool, &mut std::iter::once(Ok(rows)), clock).await
}

/// [`upsert`] of rows handed over a chunk at a time, all or nothing, so the
/// caller need not hold them all (an import of a million rows holds one
/// chunk). A key given twice: the later row wins, and counts as an update
/// of the earlier (or unchanged), as row-by-row upserts would. No rows in
/// any chunk: nothing changes. A chunk that is an `Err` (the reader found
/// the file bad half-way) ends it: nothing is written, and that is the error.
pub(crate) async fn upsert_chunks<'a, T: Upsert + 'a, C: AsRef<[T]>>(
    pool: &Pool,
    chunks: &mut (dyn Iterator<Item = StoreResult<C>> + Send + 'a),
    clock: &dyn Clock,
) -> StoreResult<UpsertSummary> {
    dialect::upsert_chunks(pool, chunks, clock).await
}

/// [`upsert_chunks`] of infallible chunks (each handed over whole).
pub(crate) async fn upsert_whole_chunks<'a, T: Upsert + 'a, C: AsRef<[T]>>(
    pool: &Pool,
    chunks: &mut (dyn Iterator<Item = C> + Send + 'a),
    clock: &dyn Clock,
) -> StoreResult<UpsertSummary> {
    dialect::upsert_chunks(pool, &mut chunks.map(Ok), clock).await
}

/// The first step of an upsert's write transaction at `at`: for stamped
/// rows, bumps the change counter and returns the stamp to write (the bump
/// is undone with the rest if nothing changes).
pub(crate) async fn begin_upsert<T: Upserted>(
    conn: &mut Conn,
    at: chrono::DateTime<chrono::Utc>,
) -> StoreResult<Option<UpsertStamp>> {
    if !T::STAMPED {
        return Ok(None);
    }
    let generation = bump_generation(conn, T::COUNTER).await?;
    record_nonce(conn, generation).await?;
    Ok(Some(UpsertStamp::new(at, generation)))
}

/// The last step of an upsert's write transaction at `at`, before its
/// commit: whether to commit (something was inserted or changed; otherwise
/// the transaction ends without a change); when something changed, appends
/// its events to the log (`staged`: those of `events::STAGED`; else made
/// now from `events::BEFORE`, which the backend filled before writing, and
/// the table) and, for unstamped rows, bumps the change counter.
pub(crate) async fn end_upsert<T: Upserted>(
    conn: &mut Conn,
    summary: &UpsertSummary,
    at: chrono::DateTime<chrono::Utc>,
    staged: bool,
) -> StoreResult<bool> {
    if summary.inserted + summary.updated == 0 {
        return Ok(false);
    }
    match staged {
        true => append_staged(conn, at).await?,
        false => announce::<T>(conn, T::TABLE, at, Sink::Log).await?,
    }
    if !T::STAMPED {
        bump_generation(conn, T::COUNTER).await?;
    }
    Ok(true)
}

/// Gives the new `companies` generation `generation` its random nonce
/// (`generation_nonces`), in the upsert's transaction.
async fn record_nonce(conn: &mut Conn, generation: i64) -> StoreResult<()> {
    let nonce = (rand::random::<u64>() >> 1) as i64;
    sqlx::query("INSERT INTO generation_nonces (generation, nonce) VALUES ($1, $2)")
        .bind(generation)
        .bind(nonce)
        .execute(conn)
        .await
        .map_err(db)?;
    Ok(())
}

/// Every `companies` generation's nonce, oldest first.
pub(crate) async fn generation_nonces(pool: &Pool) -> StoreResult<Vec<(i64, i64)>> {
    sqlx::query_as("SELECT generation, nonce FROM generation_nonces ORDER BY generation")
        .fetch_all(pool)
        .await
        .map_err(db)
}

/// Every company with its stamps, by ticker then ISIN in byte order: a walk
/// of the index `companies_ticker_isin`, no sort.
fn companies_in_order_sql() -> String {
    let cols: Vec<&str> = COMPANY_COLUMNS.iter().chain(&COMPANY_STAMP_COLUMNS).copied().collect();
    format!("SELECT {} FROM companies ORDER BY {COMPANY_ORDER}", cols.join(", "))
}

/// Every company, by ticker then ISIN.
pub(crate) async fn companies(pool: &Pool) -> StoreResult<Vec<Company>> {
    let rs = sqlx::query(&companies_in_order_sql()).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(rows::company).collect()
}

/// Every company, by ticker then ISIN, handed to `each` as it is read. One
/// statement, so one consistent read; only the driver's buffers are ahead
/// of `each`.
pub(crate) async fn companies_sorted(pool: &Pool, each: &mut (dyn FnMut(StoredCompany) + Send)) -> StoreResult<()> {
    let sql = companies_in_order_sql();
    let mut stream = sqlx::query(&sql).fetch(pool);
    while let Some(r) = stream.try_next().await.map_err(db)? {
        each(rows::stored_company(&r)?);
    }
    Ok(())
}

/// How many companies there are.
pub(crate) async fn company_count(pool: &Pool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM companies").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

/// One article by slug.
pub(crate) async fn article(pool: &Pool, slug: &Slug) -> StoreResult<Option<Article>> {
    let sql = format!("SELECT {} FROM articles WHERE slug = $1", ARTICLE_COLUMNS.join(", "));
    let r = sqlx::query(&sql).bind(slug.as_str()).fetch_optional(pool).await.map_err(db)?;
    r.as_ref().map(rows::article).transpose()
}

/// How many articles there are.
pub(crate) async fn article_count(pool: &Pool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM articles").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
}
