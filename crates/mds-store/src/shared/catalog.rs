//! Companies and articles.
//!
//! An upsert is one write transaction, however many rows (given at once, or
//! a chunk at a time): it applies every row or none. Rows go in runs (see `rows::chunks_by_key`) of the backend's
//! length: per run, one statement tells how many keys exist already (the
//! updates), then one multi-row `INSERT … ON CONFLICT DO UPDATE` writes the
//! run (`dialect::upsert_run`). A company upsert bumps the `companies`
//! change counter, an article upsert the `news` one, in its transaction; an
//! upsert of no rows bumps nothing.
//!
//! Compiled once per backend (see `shared/mod.rs`).

use futures_util::TryStreamExt;
use mds_domain::{Article, Company, Slug};

use super::dialect::{self, COMPANY_ORDER, Upsert};
use super::meta::bump_generation;
use super::{Pool, begin_write, db};
use crate::rows::{self, ARTICLE_COLUMNS, COMPANY_COLUMNS, META_GENERATION_COMPANIES, META_GENERATION_NEWS};
use crate::{StoreResult, UpsertSummary};

/// A kind of row upserted by its key, the first of its columns.
pub(crate) trait Upserted: Sync {
    /// Its table.
    const TABLE: &'static str;
    /// Its columns, key first, in the order the backends bind them.
    const COLUMNS: &'static [&'static str];
    /// The change counter an upsert bumps.
    const COUNTER: &'static str;
    /// Its key.
    fn key(&self) -> &str;
}

impl Upserted for Company {
    const TABLE: &'static str = "companies";
    const COLUMNS: &'static [&'static str] = COMPANY_COLUMNS;
    const COUNTER: &'static str = META_GENERATION_COMPANIES;
    fn key(&self) -> &str {
        self.isin.as_str()
    }
}

impl Upserted for Article {
    const TABLE: &'static str = "articles";
    const COLUMNS: &'static [&'static str] = ARTICLE_COLUMNS;
    const COUNTER: &'static str = META_GENERATION_NEWS;
    fn key(&self) -> &str {
        self.slug.as_str()
    }
}

/// Inserts or replaces `rows` by key, in runs; bumps their change counter;
/// commits. No rows: nothing changes.
pub(crate) async fn upsert<T: Upsert>(pool: &Pool, rows: &[T]) -> StoreResult<UpsertSummary> {
    if rows.is_empty() {
        return Ok(UpsertSummary::default());
    }
    upsert_chunks(pool, &mut std::iter::once(rows)).await
}

/// [`upsert`] of rows handed over a chunk at a time, all in one
/// transaction, so the caller need not hold them all (an import of a
/// million rows holds one chunk). No rows in any chunk: nothing changes.
pub(crate) async fn upsert_chunks<'a, T: Upsert + 'a, C: AsRef<[T]>>(
    pool: &Pool,
    chunks: &mut (dyn Iterator<Item = C> + Send + 'a),
) -> StoreResult<UpsertSummary> {
    let mut summary = UpsertSummary::default();
    let mut tx = begin_write(pool).await?;
    dialect::lock_for_upsert(&mut tx, T::TABLE).await?;
    for chunk in &mut *chunks {
        for run in rows::chunks_by_key(chunk.as_ref(), T::RUN, T::key) {
            let keys: Vec<&str> = run.iter().map(T::key).collect();
            let existing = dialect::count_existing(&mut tx, T::TABLE, T::COLUMNS[0], &keys).await?;
            dialect::upsert_run(&mut tx, run).await?;
            summary.updated += existing;
            summary.inserted += run.len() as u64 - existing;
        }
    }
    if summary.inserted + summary.updated == 0 {
        // Nothing written: the transaction ends without a change.
        return Ok(summary);
    }
    bump_generation(&mut tx, T::COUNTER).await?;
    tx.commit().await.map_err(db)?;
    Ok(summary)
}

/// Every company, by ticker then ISIN in byte order: a walk of the index
/// `companies_ticker_isin`, no sort.
fn companies_in_order_sql() -> String {
    format!("SELECT {} FROM companies ORDER BY {COMPANY_ORDER}", COMPANY_COLUMNS.join(", "))
}

/// Every company, by ticker then ISIN.
pub(crate) async fn companies(pool: &Pool) -> StoreResult<Vec<Company>> {
    let rs = sqlx::query(&companies_in_order_sql()).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(rows::company).collect()
}

/// Every company, by ticker then ISIN, handed to `each` as it is read. One
/// statement, so one consistent read; only the driver's buffers are ahead
/// of `each`.
pub(crate) async fn companies_sorted(pool: &Pool, each: &mut (dyn FnMut(Company) + Send)) -> StoreResult<()> {
    let sql = companies_in_order_sql();
    let mut stream = sqlx::query(&sql).fetch(pool);
    while let Some(r) = stream.try_next().await.map_err(db)? {
        each(rows::company(&r)?);
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
