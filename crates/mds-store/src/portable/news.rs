//! One page of the news list (`GET /v1/news`): the articles that pass a
//! filter, in list order, after a keyset position.
//!
//! The order is `published_at` descending, then `slug` ascending, undated
//! articles last by `slug` ([`mds_domain::news::list_order`]), which is the
//! order of one sort key, [`KEY`] (`published_at` as stored, text in time
//! order, or `''` for an undated article, which sorts below every instant),
//! descending, then `slug`. A page is one statement, so one consistent read:
//! a walk of an index on that key (see `migrations/*/0004_news_list.sql`)
//! from the position, a range condition on the key, for at most `limit`
//! rows; no sort, and the same cost wherever the page starts. The SQL and
//! the indexes are the same text on both backends; only the tag test, over
//! the JSON array `tags_json`, is the dialect's. `body` is never read.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use mds_domain::news::NewsKey;
use mds_domain::news_search::ArticleText;
use mds_domain::{ArticleSummary, NewsFilter};

use super::{Pool, db, dialect};
use crate::rows::{self, ARTICLE_SUMMARY_COLUMNS};
use crate::{StoreError, StoreResult};

/// The placeholder of a page's length, the first value bound.
const LIMIT: &str = "$1";

/// The text values a page's SQL binds after its length: `$2`, `$3`, … in
/// order.
#[derive(Debug, Default)]
pub(crate) struct Select {
    /// The values, in placeholder order.
    pub(crate) values: Vec<String>,
}

impl Select {
    /// A placeholder for `value`.
    fn bind(&mut self, value: impl Into<String>) -> String {
        self.values.push(value.into());
        format!("${}", self.values.len() + 1)
    }
}

/// The sort key of the list, as the indexes hold it.
pub(crate) const KEY: &str = "COALESCE(published_at, '')";

/// The conditions of `filter` (AND), as SQL over `articles`.
fn filter_conditions(filter: &NewsFilter, q: &mut Select) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(isin) = &filter.isin {
        w.push(format!("isin = {}", q.bind(isin.as_str())));
    }
    if let Some(ticker) = &filter.ticker {
        // Ticker is upper case already; the index is on UPPER(ticker).
        w.push(format!("UPPER(ticker) = {}", q.bind(ticker.as_str())));
    }
    if let Some(category) = &filter.category {
        w.push(format!("category = {}", q.bind(category.as_str())));
    }
    if let Some(tag) = &filter.tag {
        w.push(dialect::has_tag(&q.bind(tag.as_str())));
    }
    // On the key, so the walk starts and stops in the index; an undated
    // article (key '') passes neither bound.
    if let Some(t) = &filter.published_after {
        w.push(format!("{KEY} > {}", q.bind(rows::ts(t))));
    }
    if let Some(t) = &filter.published_before {
        w.push(format!("{KEY} < {} AND {KEY} > ''", q.bind(rows::ts(t))));
    }
    w
}

/// The statement of a page: the articles passing `filter` after `after`,
/// at most [`LIMIT`].
pub(crate) fn page_sql(filter: &NewsFilter, after: Option<&NewsKey>, q: &mut Select) -> String {
    let mut w = filter_conditions(filter, q);
    if let Some(NewsKey { published_at, slug }) = after {
        let k = q.bind(published_at.as_ref().map(rows::ts).unwrap_or_default());
        let s = q.bind(slug.as_str());
        w.push(format!("{KEY} <= {k} AND ({KEY} < {k} OR slug > {s})"));
    }
    let cols = ARTICLE_SUMMARY_COLUMNS.join(", ");
    let filter = if w.is_empty() { String::new() } else { format!(" WHERE {}", w.join(" AND ")) };
    format!("SELECT {cols} FROM articles{filter} ORDER BY {KEY} DESC, slug LIMIT {LIMIT}")
}

/// At most `limit` articles (without body) passing `filter`, in list
/// order, after the article whose key is `after` (from the start without
/// one).
pub(crate) async fn news_page(
    pool: &Pool,
    filter: &NewsFilter,
    after: Option<&NewsKey>,
    limit: usize,
) -> StoreResult<Vec<ArticleSummary>> {
    let limit = i64::try_from(limit).map_err(|_| StoreError::Invalid(format!("a page of {limit} rows")))?;
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut q = Select::default();
    let sql = page_sql(filter, after, &mut q);
    let mut query = sqlx::query(&sql).bind(limit);
    for v in &q.values {
        query = query.bind(v.as_str());
    }
    let rs = query.fetch_all(pool).await.map_err(db)?;
    rs.iter().map(rows::article_summary).collect()
}

/// The statement of a batch of the search index's text: the articles
/// after `after`, in list order, at most [`LIMIT`].
fn texts_sql(after: Option<&NewsKey>, q: &mut Select) -> String {
    let mut w = String::new();
    if let Some(NewsKey { published_at, slug }) = after {
        let k = q.bind(published_at.as_ref().map(rows::ts).unwrap_or_default());
        let s = q.bind(slug.as_str());
        w = format!(" WHERE {KEY} <= {k} AND ({KEY} < {k} OR slug > {s})");
    }
    format!(
        "SELECT slug, headline, subheadline, excerpt, body FROM articles{w} ORDER BY {KEY} DESC, slug LIMIT {LIMIT}"
    )
}

/// At most `limit` articles' searchable text, in list order, after the
/// article whose key is `after`: a walk of the list's index, as a page.
pub(crate) async fn news_texts(pool: &Pool, after: Option<&NewsKey>, limit: usize) -> StoreResult<Vec<ArticleText>> {
    let limit = i64::try_from(limit).map_err(|_| StoreError::Invalid(format!("a batch of {limit} rows")))?;
    let mut q = Select::default();
    let sql = texts_sql(after, &mut q);
    let mut query = sqlx::query(&sql).bind(limit);
    for v in &q.values {
        query = query.bind(v.as_str());
    }
    let rs = query.fetch_all(pool).await.map_err(db)?;
    rs.iter().map(rows::article_text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mds_domain::{Isin, Slug};

    #[test]
    fn a_position_in_the_undated_tail_is_the_empty_key() {
        let after = NewsKey { published_at: None, slug: Slug::parse("m").unwrap() };
        let mut q = Select::default();
        let sql = page_sql(&NewsFilter::default(), Some(&after), &mut q);
        assert!(sql.contains(&format!("{KEY} <= $2 AND ({KEY} < $2 OR slug > $3)")), "{sql}");
        assert!(sql.ends_with(&format!("ORDER BY {KEY} DESC, slug LIMIT $1")), "{sql}");
        assert_eq!(q.values, ["", "m"]);
    }

    #[test]
    fn date_bounds_leave_undated_articles_out() {
        let filter = NewsFilter {
            isin: Some(Isin::parse("INE002A01018").unwrap()),
            published_before: Some(mds_domain::time::parse_rfc3339("2026-01-01T00:00:00Z").unwrap()),
            ..NewsFilter::default()
        };
        let mut q = Select::default();
        let sql = page_sql(&filter, None, &mut q);
        assert!(sql.contains(&format!("isin = $2 AND {KEY} < $3 AND {KEY} > ''")), "{sql}");
        assert_eq!(q.values, ["INE002A01018", "2026-01-01T00:00:00+00:00"]);
    }
}
