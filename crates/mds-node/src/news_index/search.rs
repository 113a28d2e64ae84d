//! The full-text index of `GET /v1/news?q=` ([`NewsSearch`]): SQLite FTS5
//! in an in-memory database, beside the news index and of the same
//! generation, so that a row number of one is the row number of the other
//! (FTS5's `rowid`).
//!
//! Why FTS5 (docs/API-DESIGN.md, "News search"): it is already in the
//! build (sqlx's bundled SQLite compiles it), its `unicode61` tokenizer
//! with `remove_diacritics 2` folds case and accents, its query language
//! has phrases and prefixes, and `bm25()` ranks; nothing is hand-written
//! but the query's quoting ([`mds_domain::news_search::NewsText::fts5`]).
//!
//! The table is contentless (`content=''`): it holds the index (terms,
//! positions, document sizes), never the text, which the store keeps. Its
//! columns are weighted for `bm25()`: headline 4, sub-headline 2, excerpt
//! 2, body 1; the weights are the table's `rank`, so a snapshot carries
//! them. After a build the index is merged into one segment
//! (`optimize`): smaller, and a query reads one b-tree per term.
//!
//! A snapshot is the database's bytes (`sqlite3_serialize`, through sqlx),
//! framed after the news index's own (see [`frame`]).

use std::str::FromStr;

use mds_store::{Cause, Store, StoreError, StoreResult};
use sqlx::sqlite::{SqliteConnectOptions, SqliteOwnedBuf};
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use tokio::sync::Mutex;

use super::NewsIndex;
use super::snapshot::NewsSnapshotError;

/// Articles read from the store (with their bodies) at a time.
const BATCH: usize = 2_000;

/// The table: contentless, case and accents folded.
const CREATE: &str = "CREATE VIRTUAL TABLE news_text USING fts5(\
    headline, subheadline, excerpt, body, content='', tokenize='unicode61 remove_diacritics 2')";

/// The rank function: BM25 with the columns' weights.
const RANK: &str = "bm25(4.0, 2.0, 2.0, 1.0)";

/// The last bytes of a framed snapshot: a name and the format version.
const TRAILER_MAGIC: &[u8; 8] = b"MDSFTS\x00\x01";

/// The trailer's length: the search part's length (u64), its crc32, the
/// magic.
const TRAILER: usize = 8 + 4 + 8;

/// Where a search starts and what it keeps; see [`NewsSearch::rows`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Order {
    /// Every match, unordered, with its score.
    All,
    /// The first `n` matches in row order (the list order).
    Rows(usize),
    /// The first `n` matches by score (most relevant first, then row),
    /// after the position (score, row) when given: a greater score, or
    /// the same and a greater row.
    Ranked(usize, Option<(f64, i64)>),
}

/// The full-text index of one news generation; see the [module](self).
pub struct NewsSearch {
    /// One connection: FTS5 queries of one database run one at a time.
    db: Mutex<SqliteConnection>,
    /// How many articles it holds (rows `0..len`).
    len: usize,
}

impl std::fmt::Debug for NewsSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewsSearch").field("len", &self.len).finish_non_exhaustive()
    }
}

/// An engine failure, as the store's (it is a database all the same).
fn engine(e: sqlx::Error) -> StoreError {
    StoreError::Database(Cause::new(e))
}

/// A new, empty in-memory database.
async fn open() -> Result<SqliteConnection, sqlx::Error> {
    SqliteConnectOptions::from_str("sqlite::memory:")?.disable_statement_logging().connect().await
}

impl NewsSearch {
    /// Builds the index of `index`'s articles: their text read from the
    /// store in list order, each row checked to be `index`'s row of the
    /// same number (its slug). `None` when they differ (the news moved
    /// while the two were read: the caller reads again later).
    pub async fn build(store: &dyn Store, index: &NewsIndex) -> StoreResult<Option<NewsSearch>> {
        let mut db = open().await.map_err(engine)?;
        sqlx::query(CREATE).execute(&mut db).await.map_err(engine)?;
        sqlx::query("INSERT INTO news_text(news_text, rank) VALUES ('rank', ?1)")
            .bind(RANK)
            .execute(&mut db)
            .await
            .map_err(engine)?;
        let mut tx = db.begin().await.map_err(engine)?;
        let (mut row, mut slug) = (0usize, Vec::new());
        loop {
            let after = row.checked_sub(1).map(|r| index.row_key(r as u32));
            let batch = store.news_texts(after.as_ref(), BATCH).await?;
            for t in &batch {
                if row >= index.len() {
                    return Ok(None);
                }
                index.rows.slug_into(row, &mut slug);
                if slug != t.slug.as_str().as_bytes() {
                    return Ok(None);
                }
                sqlx::query(
                    "INSERT INTO news_text(rowid, headline, subheadline, excerpt, body) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .bind(row as i64)
                .bind(&t.headline)
                .bind(&t.subheadline)
                .bind(&t.excerpt)
                .bind(&t.body)
                .execute(&mut *tx)
                .await
                .map_err(engine)?;
                row += 1;
            }
            if batch.len() < BATCH {
                break;
            }
        }
        if row != index.len() {
            return Ok(None);
        }
        tx.commit().await.map_err(engine)?;
        sqlx::query("INSERT INTO news_text(news_text) VALUES ('optimize')").execute(&mut db).await.map_err(engine)?;
        Ok(Some(NewsSearch { db: Mutex::new(db), len: row }))
    }

    /// How many articles it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no article.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The database as bytes (its file's image).
    pub async fn to_bytes(&self) -> StoreResult<Vec<u8>> {
        let mut db = self.db.lock().await;
        let buf = db.serialize(None).await.map_err(engine)?;
        Ok(buf.to_vec())
    }

    /// The index `bytes` hold (a database image made by
    /// [`NewsSearch::to_bytes`]), checked to hold `len` articles, rows
    /// `0..len`; else why it is refused.
    pub async fn from_bytes(bytes: &[u8], len: usize) -> Result<NewsSearch, NewsSnapshotError> {
        let refuse = |why: String| NewsSnapshotError::new(format!("its search index: {why}"));
        let buf = SqliteOwnedBuf::try_from(bytes).map_err(|e| refuse(e.to_string()))?;
        let mut db = open().await.map_err(|e| refuse(e.to_string()))?;
        db.deserialize(None, buf, false).await.map_err(|e| refuse(e.to_string()))?;
        let (count, max): (i64, Option<i64>) = sqlx::query_as("SELECT count(*), max(id) FROM news_text_docsize")
            .fetch_one(&mut db)
            .await
            .map_err(|e| refuse(e.to_string()))?;
        if count as usize != len || max.is_some_and(|m| m as usize + 1 != len) {
            return Err(refuse(format!("it holds {count} articles, the list {len}")));
        }
        Ok(NewsSearch { db: Mutex::new(db), len })
    }

    /// The rows in `[start, end)` that match `fts` (an FTS5 query, from
    /// [`NewsText::fts5`](mds_domain::news_search::NewsText::fts5)), with
    /// their score (BM25 as FTS5 gives it: lower is more relevant), as
    /// `order` says.
    pub(crate) async fn rows(&self, fts: &str, start: usize, end: usize, order: Order) -> StoreResult<Vec<(u32, f64)>> {
        let base = "SELECT rowid, rank FROM news_text WHERE news_text MATCH ?1 AND rowid >= ?2 AND rowid < ?3";
        let (sql, limit, after) = match order {
            Order::All => (base.to_owned(), None, None),
            Order::Rows(n) => (format!("{base} ORDER BY rowid LIMIT ?4"), Some(n), None),
            Order::Ranked(n, None) => (format!("{base} ORDER BY rank, rowid LIMIT ?4"), Some(n), None),
            Order::Ranked(n, Some(after)) => (
                format!("{base} AND (rank > ?5 OR (rank = ?5 AND rowid > ?6)) ORDER BY rank, rowid LIMIT ?4"),
                Some(n),
                Some(after),
            ),
        };
        let mut query = sqlx::query_as::<_, (i64, f64)>(&sql).bind(fts).bind(start as i64).bind(end as i64);
        if let Some(n) = limit {
            query = query.bind(i64::try_from(n).unwrap_or(i64::MAX));
        }
        if let Some((score, row)) = after {
            query = query.bind(score).bind(row);
        }
        let mut db = self.db.lock().await;
        let found = query.fetch_all(&mut *db).await.map_err(engine)?;
        Ok(found.into_iter().map(|(r, s)| (r as u32, s)).collect())
    }
}

/// A snapshot of both indexes: the news index's bytes, the search
/// index's, then a trailer (the search part's length as a u64, its crc32,
/// [`TRAILER_MAGIC`]; little-endian), so each part is checked on its own.
pub fn frame(mut news: Vec<u8>, search: &[u8]) -> Vec<u8> {
    news.reserve(search.len() + TRAILER);
    news.extend_from_slice(search);
    news.extend_from_slice(&(search.len() as u64).to_le_bytes());
    news.extend_from_slice(&crc32fast::hash(search).to_le_bytes());
    news.extend_from_slice(TRAILER_MAGIC);
    news
}

/// Splits a [`frame`]d snapshot: `bytes` keeps the news index's part, the
/// search index's is returned; why not, for a snapshot of another format
/// (an older one, made before the search index) or damaged.
pub fn unframe(bytes: &mut Vec<u8>) -> Result<Vec<u8>, NewsSnapshotError> {
    let refuse = |why: &str| Err(NewsSnapshotError::new(why));
    let n = bytes.len();
    if n < TRAILER || bytes[n - 8..] != TRAILER_MAGIC[..] {
        return refuse("it holds no search index (written by an older format)");
    }
    let len = u64::from_le_bytes(bytes[n - TRAILER..n - 12].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().expect("4 bytes"));
    let Some(at) = usize::try_from(len).ok().and_then(|len| (n - TRAILER).checked_sub(len)) else {
        return refuse("its search index is longer than the snapshot");
    };
    let search = bytes[at..n - TRAILER].to_vec();
    if crc32fast::hash(&search) != crc {
        return refuse("checksum mismatch (damaged), in its search index");
    }
    bytes.truncate(at);
    Ok(search)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_back_and_refuse_damage() {
        let mut framed = frame(b"news".to_vec(), b"search");
        let mut copy = framed.clone();
        assert_eq!(unframe(&mut copy).unwrap(), b"search");
        assert_eq!(copy, b"news");
        let at = framed.len() - TRAILER - 1;
        framed[at] ^= 1;
        assert!(unframe(&mut framed).is_err());
        assert!(unframe(&mut b"MDSNEWS\x01 old".to_vec()).is_err());
        let mut long = frame(Vec::new(), b"x");
        let n = long.len();
        long[n - TRAILER] = 200;
        assert!(unframe(&mut long).is_err());
    }
}
