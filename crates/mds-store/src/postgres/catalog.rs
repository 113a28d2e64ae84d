//! Companies and articles on PostgreSQL.
//!
//! An upsert is one transaction, however many rows: it applies every row or
//! none. It first locks the table against other writers (`SHARE ROW
//! EXCLUSIVE`: readers go on), so two imports cannot deadlock on each other's
//! rows and the insert/update counts are exact. Rows then go in runs (see
//! `rows::chunks_by_key`): per run, one `SELECT COUNT(*) … = ANY($1)` tells
//! how many keys exist already (the updates), then one `INSERT … SELECT FROM
//! UNNEST($1, …) ON CONFLICT DO UPDATE` writes the run, one array per column.
//! The SQL text does not depend on the run's length, so one prepared
//! statement serves every run, and a million rows take a few hundred round
//! trips.

use futures_util::TryStreamExt;
use mds_domain::{Article, Company, Slug};
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgConnection, PgPool, Postgres};

use super::error::db;
use super::{PgStore, bump_generation};
use crate::rows::{self, ARTICLE_COLUMNS, COMPANY_COLUMNS, META_GENERATION_COMPANIES, META_GENERATION_NEWS};
use crate::{StoreResult, UpsertSummary};

/// A query being bound.
type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

/// Rows per statement: large enough to amortise the round trip, small enough
/// to keep each statement's arrays a few megabytes.
const RUN: usize = 5_000;

/// Column types of `companies`, in the order of [`COMPANY_COLUMNS`].
const COMPANY_TYPES: &[&str] = &["text", "text", "text", "text", "text", "boolean", "boolean", "text", "text"];

/// Column types of `articles`, in the order of [`ARTICLE_COLUMNS`].
const ARTICLE_TYPES: &[&str] = &["text"; 15];

/// `INSERT INTO table (cols) SELECT * FROM UNNEST($1::type[], …) ON CONFLICT
/// (key) DO UPDATE SET col = excluded.col, …`; the key is the first column.
fn upsert_sql(table: &str, cols: &[&str], types: &[&str]) -> String {
    let arrays = types.iter().enumerate().map(|(i, t)| format!("${}::{t}[]", i + 1)).collect::<Vec<_>>().join(", ");
    let set = cols[1..].iter().map(|c| format!("{c} = excluded.{c}")).collect::<Vec<_>>().join(", ");
    format!(
        "INSERT INTO {table} ({}) SELECT * FROM UNNEST({arrays}) ON CONFLICT ({}) DO UPDATE SET {set}",
        cols.join(", "),
        cols[0]
    )
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

/// Runs the upsert of `rows` in runs, binding each run's columns with
/// `bind`; bumps the change counter `counter`; commits. No rows: nothing
/// changes.
async fn upsert<'r, T: Sync>(
    store: &PgStore,
    table: &str,
    (cols, types): (&[&str], &[&str]),
    counter: &str,
    rows: &'r [T],
    key: impl Fn(&'r T) -> &'r str,
    bind: for<'q> fn(PgQuery<'q>, &'q [T]) -> PgQuery<'q>,
) -> StoreResult<UpsertSummary> {
    let mut summary = UpsertSummary::default();
    if rows.is_empty() {
        return Ok(summary);
    }
    let mut tx = store.begin_write().await?;
    sqlx::query(&format!("LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")).execute(&mut *tx).await.map_err(db)?;
    let sql = upsert_sql(table, cols, types);
    for run in rows::chunks_by_key(rows, RUN, &key) {
        let keys: Vec<&str> = run.iter().map(&key).collect();
        let existing = count_existing(&mut tx, table, cols[0], &keys).await?;
        bind(sqlx::query(&sql), run).execute(&mut *tx).await.map_err(db)?;
        summary.updated += existing;
        summary.inserted += run.len() as u64 - existing;
    }
    bump_generation(&mut tx, counter).await?;
    tx.commit().await.map_err(db)?;
    Ok(summary)
}

/// One column of `rows` as a vector (bound as one array).
fn col<'a, T, V>(rows: &'a [T], f: impl Fn(&'a T) -> V) -> Vec<V> {
    rows.iter().map(f).collect()
}

fn bind_companies<'q>(q: PgQuery<'q>, cs: &'q [Company]) -> PgQuery<'q> {
    q.bind(col(cs, |c| c.isin.as_str()))
        .bind(col(cs, |c| c.ticker.as_str()))
        .bind(col(cs, |c| c.name.as_str()))
        .bind(col(cs, |c| c.industry.as_deref()))
        .bind(col(cs, |c| c.sector.as_deref()))
        .bind(col(cs, |c| c.is_bse))
        .bind(col(cs, |c| c.is_nse))
        .bind(col(cs, |c| c.market_cap_band.map(|b| b.as_str())))
        .bind(col(cs, |c| c.logo_url.as_deref()))
}

fn bind_articles<'q>(q: PgQuery<'q>, articles: &'q [Article]) -> PgQuery<'q> {
    q.bind(col(articles, |a| a.slug.as_str()))
        .bind(col(articles, |a| a.headline.as_str()))
        .bind(col(articles, |a| a.subheadline.as_deref()))
        .bind(col(articles, |a| a.excerpt.as_deref()))
        .bind(col(articles, |a| a.body.as_deref()))
        .bind(col(articles, |a| a.category.as_deref()))
        .bind(col(articles, |a| rows::tags_json(&a.tags)))
        .bind(col(articles, |a| a.isin.as_ref().map(|i| i.as_str())))
        .bind(col(articles, |a| a.ticker.as_deref()))
        .bind(col(articles, |a| a.company_name.as_deref()))
        .bind(col(articles, |a| a.author_name.as_deref()))
        .bind(col(articles, |a| a.hero_image.as_deref()))
        .bind(col(articles, |a| a.url.as_deref()))
        .bind(col(articles, |a| rows::ts_opt(&a.published_at)))
        .bind(col(articles, |a| rows::ts_opt(&a.updated_at)))
}

/// Inserts or replaces companies by ISIN.
pub(super) async fn upsert_companies(store: &PgStore, rows: &[Company]) -> StoreResult<UpsertSummary> {
    let shape = (COMPANY_COLUMNS, COMPANY_TYPES);
    upsert(store, "companies", shape, META_GENERATION_COMPANIES, rows, |c| c.isin.as_str(), bind_companies).await
}

/// Inserts or replaces articles by slug.
pub(super) async fn upsert_articles(store: &PgStore, rows: &[Article]) -> StoreResult<UpsertSummary> {
    let shape = (ARTICLE_COLUMNS, ARTICLE_TYPES);
    upsert(store, "articles", shape, META_GENERATION_NEWS, rows, |a| a.slug.as_str(), bind_articles).await
}

/// Every company, by ticker then ISIN in byte order, whatever the
/// database's default collation: the columns are `COLLATE "C"` already, and
/// saying so here keeps the order if a column's collation ever changes. A
/// walk of the index `companies_ticker_isin` (whose columns are `"C"`), no
/// sort.
fn companies_in_order_sql() -> String {
    format!("SELECT {} FROM companies ORDER BY ticker COLLATE \"C\", isin COLLATE \"C\"", COMPANY_COLUMNS.join(", "))
}

/// Every company, by ticker then ISIN.
pub(super) async fn companies(pool: &PgPool) -> StoreResult<Vec<Company>> {
    let rs = sqlx::query(&companies_in_order_sql()).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(rows::company).collect()
}

/// Every company, by ticker then ISIN, handed to `each` as it arrives. One
/// statement, so one consistent read; the server sends rows as the
/// connection takes them, so only the socket's buffers are ahead of `each`.
pub(super) async fn companies_sorted(pool: &PgPool, each: &mut (dyn FnMut(Company) + Send)) -> StoreResult<()> {
    let sql = companies_in_order_sql();
    let mut stream = sqlx::query(&sql).fetch(pool);
    while let Some(r) = stream.try_next().await.map_err(db)? {
        each(rows::company(&r)?);
    }
    Ok(())
}

/// How many companies there are.
pub(super) async fn company_count(pool: &PgPool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM companies").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

/// One article by slug.
pub(super) async fn article(pool: &PgPool, slug: &Slug) -> StoreResult<Option<Article>> {
    let sql = format!("SELECT {} FROM articles WHERE slug = $1", ARTICLE_COLUMNS.join(", "));
    let r = sqlx::query(&sql).bind(slug.as_str()).fetch_optional(pool).await.map_err(db)?;
    r.as_ref().map(rows::article).transpose()
}

/// How many articles there are.
pub(super) async fn article_count(pool: &PgPool) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM articles").fetch_one(pool).await.map_err(db)?;
    Ok(n.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_sql_lists_every_column() {
        assert_eq!(
            upsert_sql("t", &["k", "a", "b"], &["text", "boolean", "text"]),
            "INSERT INTO t (k, a, b) SELECT * FROM UNNEST($1::text[], $2::boolean[], $3::text[]) \
             ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b"
        );
    }

    #[test]
    fn every_column_has_a_type() {
        assert_eq!(COMPANY_TYPES.len(), COMPANY_COLUMNS.len());
        assert_eq!(ARTICLE_TYPES.len(), ARTICLE_COLUMNS.len());
        assert_eq!(COMPANY_COLUMNS[5..7], ["is_bse", "is_nse"]);
    }
}
