//! Companies and articles on SQLite.
//!
//! An upsert is one transaction, however many rows: it applies every row or
//! none. Rows go in runs (see `rows::chunks_by_key`): per run, one `SELECT
//! COUNT(*) … IN (…)` tells how many keys exist already (the updates), then one
//! multi-row `INSERT … ON CONFLICT DO UPDATE` writes the run. Full runs share
//! one SQL text, so their prepared statement is reused from the connection's
//! cache; a million rows take ten thousand round trips, not two million.
//!
//! A company upsert bumps the `companies` change counter, an article upsert
//! the `news` one, in its transaction; an upsert of no rows bumps nothing.

use futures_util::TryStreamExt;
use mds_domain::{Article, Company, Slug};
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Sqlite, SqliteConnection, SqlitePool};

use super::error::db;
use super::{SqliteStore, bump_generation};
use crate::rows::{self, ARTICLE_COLUMNS, COMPANY_COLUMNS, META_GENERATION_COMPANIES, META_GENERATION_NEWS};
use crate::{StoreResult, UpsertSummary};

/// Companies per statement (9 bound values each).
const COMPANY_RUN: usize = 100;
/// Articles per statement (15 bound values each).
const ARTICLE_RUN: usize = 50;

/// `INSERT INTO table (cols) VALUES (?, …), … ON CONFLICT (key) DO UPDATE SET
/// col = excluded.col, …` for `rows` rows; the key is the first column.
fn upsert_sql(table: &str, cols: &[&str], rows: usize) -> String {
    let one = format!("({})", vec!["?"; cols.len()].join(", "));
    let values = vec![one.as_str(); rows].join(", ");
    let set = cols[1..].iter().map(|c| format!("{c} = excluded.{c}")).collect::<Vec<_>>().join(", ");
    format!("INSERT INTO {table} ({}) VALUES {values} ON CONFLICT ({}) DO UPDATE SET {set}", cols.join(", "), cols[0])
}

/// How many of `keys` (distinct) exist in `table.col`.
async fn count_existing(conn: &mut SqliteConnection, table: &str, col: &str, keys: &[&str]) -> StoreResult<u64> {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE {col} IN ({})", vec!["?"; keys.len()].join(", "));
    let mut q = sqlx::query_scalar::<_, i64>(&sql);
    for k in keys {
        q = q.bind(*k);
    }
    let n = q.fetch_one(conn).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

/// Runs the upsert of `rows` in runs, binding each row with `bind`; bumps the
/// change counter `counter`; commits. No rows: nothing changes.
#[allow(clippy::too_many_arguments)]
async fn upsert<'r, T: Sync>(
    store: &SqliteStore,
    counter: &str,
    table: &str,
    cols: &[&str],
    run: usize,
    rows: &'r [T],
    key: impl Fn(&'r T) -> &'r str,
    bind: for<'q> fn(Query<'q, Sqlite, SqliteArguments<'q>>, &'q T) -> Query<'q, Sqlite, SqliteArguments<'q>>,
) -> StoreResult<UpsertSummary> {
    let mut summary = UpsertSummary::default();
    if rows.is_empty() {
        return Ok(summary);
    }
    let mut tx = store.begin_write().await?;
    let full_sql = upsert_sql(table, cols, run);
    for chunk in rows::chunks_by_key(rows, run, &key) {
        let keys: Vec<&str> = chunk.iter().map(&key).collect();
        let existing = count_existing(&mut tx, table, cols[0], &keys).await?;
        let sql = if chunk.len() == run { full_sql.clone() } else { upsert_sql(table, cols, chunk.len()) };
        let mut q = sqlx::query(&sql);
        for row in chunk {
            q = bind(q, row);
        }
        q.execute(&mut *tx).await.map_err(db)?;
        summary.updated += existing;
        summary.inserted += chunk.len() as u64 - existing;
    }
    bump_generation(&mut tx, counter).await?;
    tx.commit().await.map_err(db)?;
    Ok(summary)
}

fn bind_company<'q>(
    q: Query<'q, Sqlite, SqliteArguments<'q>>,
    c: &'q Company,
) -> Query<'q, Sqlite, SqliteArguments<'q>> {
    q.bind(c.isin.as_str())
        .bind(c.ticker.as_str())
        .bind(c.name.as_str())
        .bind(c.industry.as_deref())
        .bind(c.sector.as_deref())
        .bind(c.is_bse)
        .bind(c.is_nse)
        .bind(c.market_cap_band.map(|b| b.as_str()))
        .bind(c.logo_url.as_deref())
}

fn bind_article<'q>(
    q: Query<'q, Sqlite, SqliteArguments<'q>>,
    a: &'q Article,
) -> Query<'q, Sqlite, SqliteArguments<'q>> {
    q.bind(a.slug.as_str())
        .bind(a.headline.as_str())
        .bind(a.subheadline.as_deref())
        .bind(a.excerpt.as_deref())
        .bind(a.body.as_deref())
        .bind(a.category.as_deref())
        .bind(rows::tags_json(&a.tags))
        .bind(a.isin.as_ref().map(|i| i.as_str()))
        .bind(a.ticker.as_deref())
        .bind(a.company_name.as_deref())
        .bind(a.author_name.as_deref())
        .bind(a.hero_image.as_deref())
        .bind(a.url.as_deref())
        .bind(rows::ts_opt(&a.published_at))
        .bind(rows::ts_opt(&a.updated_at))
}

/// Inserts or replaces companies by ISIN.
pub(super) async fn upsert_companies(store: &SqliteStore, rows: &[Company]) -> StoreResult<UpsertSummary> {
    upsert(
        store,
        META_GENERATION_COMPANIES,
        "companies",
        COMPANY_COLUMNS,
        COMPANY_RUN,
        rows,
        |c| c.isin.as_str(),
        bind_company,
    )
    .await
}

/// Inserts or replaces articles by slug.
pub(super) async fn upsert_articles(store: &SqliteStore, rows: &[Article]) -> StoreResult<UpsertSummary> {
    upsert(
        store,
        META_GENERATION_NEWS,
        "articles",
        ARTICLE_COLUMNS,
        ARTICLE_RUN,
        rows,
        |a| a.slug.as_str(),
        bind_article,
    )
    .await
}

/// Every company, by ticker then ISIN in byte order (SQLite's BINARY
/// collation): a walk of the index `companies_ticker_isin`, no sort.
fn companies_in_order_sql() -> String {
    format!("SELECT {} FROM companies ORDER BY ticker, isin", COMPANY_COLUMNS.join(", "))
}

/// Every company, by ticker then ISIN.
pub(super) async fn companies(pool: &SqlitePool) -> StoreResult<Vec<Company>> {
    let rs = sqlx::query(&companies_in_order_sql()).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(rows::company).collect()
}

/// Every company, by ticker then ISIN, handed to `each` as it is read. One
/// statement, so one consistent read.
pub(super) async fn companies_sorted(pool: &SqlitePool, each: &mut (dyn FnMut(Company) + Send)) -> StoreResult<()> {
    let sql = companies_in_order_sql();
    let mut stream = sqlx::query(&sql).fetch(pool);
    while let Some(r) = stream.try_next().await.map_err(db)? {
        each(rows::company(&r)?);
    }
    Ok(())
}

/// How many companies there are.
pub(super) async fn company_count(pool: &SqlitePool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM companies").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

/// One article by slug.
pub(super) async fn article(pool: &SqlitePool, slug: &Slug) -> StoreResult<Option<Article>> {
    let sql = format!("SELECT {} FROM articles WHERE slug = ?", ARTICLE_COLUMNS.join(", "));
    let r = sqlx::query(&sql).bind(slug.as_str()).fetch_optional(pool).await.map_err(db)?;
    r.as_ref().map(rows::article).transpose()
}

/// How many articles there are.
pub(super) async fn article_count(pool: &SqlitePool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM articles").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
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
}
