//! The embedded SQLite backend, the default store.
//!
//! One database file is shared by the server and by `mds` operator commands
//! running in other processes, so the file is opened in WAL mode (readers do
//! not block the writer) with a busy timeout: a writer waits up to
//! [`BUSY_TIMEOUT`] for another process's write to finish before the call
//! fails as [`StoreError::Unavailable`](crate::StoreError::Unavailable).
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, which takes the write
//! lock up front: a deferred transaction that reads first and writes later
//! could find its snapshot stale and fail at once instead of waiting.
//! As that lock is the file's only one, a write holds it as briefly as it
//! can: an upsert (an import of a million companies) stages its rows in a
//! TEMP table of its connection first, outside the lock, and takes the lock
//! only to apply them (`dialect::upsert_chunks`), so a key revoked meanwhile
//! by another process waits for that step at most.
//!
//! # Layout
//! - [`SqliteStore`]: the pool and the clock that dates what it writes; it
//!   implements every role of [`Store`](crate::Store).
//! - `dialect`: the SQL that differs from PostgreSQL's (multi-row `VALUES`
//!   lists, upserts staged then applied, no locks beyond the write
//!   transaction).
//! - `migrate`: the embedded migrations and how they are applied.
//! - `error`: mapping of `sqlx` errors to [`StoreError`](crate::StoreError).
//! - `portable`: the code both backends share (`src/portable/`), compiled against
//!   this module's `Pool`, `Conn`, `begin_write`, `begin_read` and
//!   `dialect`.

use std::time::Duration;

use mds_domain::clock::Clock;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqliteConnection, Transaction};

use crate::{DatabaseUrl, StoreResult};

mod dialect;
mod error;
mod migrate;

#[allow(clippy::duplicate_mod, reason = "compiled once per backend, on purpose")]
#[path = "portable/mod.rs"]
mod portable;

use error::db;

/// The store the portable modules implement the roles for.
type Backend = SqliteStore;
/// The pool the portable modules run on.
type Pool = SqlitePool;
/// A connection (or a transaction, by `&mut *tx`) of the portable modules.
type Conn = SqliteConnection;

/// How long a statement waits for another connection's (or process's) write
/// lock before it fails: three times the longest an import of a million
/// companies was measured to hold it (5.4 s, on a loaded machine), so a key
/// revoked during such an import waits for it rather than failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// From how many rows to write on, an upsert that writes at least a quarter
/// as many rows as its table holds drops the table's other indexes (not its
/// key's) before writing and builds them again after, in its transaction:
/// one sort per index instead of a change at a random place of it per row,
/// which roughly halves how long a first import of a million companies, or
/// one that changes every ticker, holds the write lock.
pub const INDEX_REBUILD_MIN_ROWS: u64 = 100_000;

/// How many connections the pool holds at most. WAL lets readers run beside
/// the one writer; more connections than cores buys nothing.
const MAX_CONNECTIONS: u32 = 4;

/// How long a call waits for a free connection of the pool.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// The SQLite store: a small pool of connections to one database file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// What dates the rows and events it writes ([`SqliteStore::with_clock`]).
    clock: std::sync::Arc<dyn Clock>,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database a `sqlite:` URL names.
    /// Does not migrate: call [`MetaStore::migrate`](crate::MetaStore::migrate) before anything else.
    ///
    /// `sqlite::memory:` gives a private in-memory database that lives as
    /// long as this store (for tests).
    pub async fn connect(url: &DatabaseUrl) -> StoreResult<Self> {
        let options = url
            .connect_options::<SqliteConnectOptions>(dialect::NAME)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: a commit (a revoked key, a new account) survives power loss.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool_options = if url.is_in_memory() {
            // An in-memory database lives while one connection to it is open:
            // keep exactly one, forever.
            SqlitePoolOptions::new().max_connections(1).min_connections(1).idle_timeout(None).max_lifetime(None)
        } else {
            SqlitePoolOptions::new().max_connections(MAX_CONNECTIONS)
        };
        let pool =
            pool_options.acquire_timeout(ACQUIRE_TIMEOUT).connect_with(options).await.map_err(portable::connect)?;
        Ok(SqliteStore::on(pool))
    }
}

/// Begins a write transaction, taking the write lock at once.
async fn begin_write(pool: &SqlitePool) -> StoreResult<Transaction<'static, Sqlite>> {
    pool.begin_with("BEGIN IMMEDIATE").await.map_err(db)
}

/// Begins a read transaction: in WAL mode it sees one snapshot of the file
/// from its first read on.
async fn begin_read(pool: &SqlitePool) -> StoreResult<Transaction<'static, Sqlite>> {
    pool.begin().await.map_err(db)
}

#[cfg(test)]
mod tests {
    use mds_domain::news::{Exact, NewsKey};
    use mds_domain::{Isin, NewsFilter, Slug, Ticker};

    use super::*;
    use crate::MetaStore;

    /// What SQLite plans for a page of the news list: one line per step.
    async fn plan(store: &SqliteStore, filter: &NewsFilter, after: Option<&NewsKey>) -> Vec<String> {
        let mut q = portable::news::Select::default();
        let sql = format!("EXPLAIN QUERY PLAN {}", portable::news::page_sql(filter, after, &mut q));
        let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&sql).bind(51i64);
        for v in &q.values {
            query = query.bind(v.as_str());
        }
        query.fetch_all(&store.pool).await.unwrap().into_iter().map(|r| r.3).collect()
    }

    /// A page walks an index in the list's order, from the position: no
    /// sort, whatever the filter and wherever the page starts.
    #[tokio::test]
    async fn news_pages_walk_the_indexes() {
        let store = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.unwrap();
        store.migrate().await.unwrap();
        let dated = NewsKey {
            published_at: Some(mds_domain::time::parse_rfc3339("2026-01-01T00:00:00Z").unwrap()),
            slug: Slug::parse("a").unwrap(),
        };
        let undated = NewsKey { published_at: None, slug: Slug::parse("a").unwrap() };
        let by = |f: fn(&mut NewsFilter)| {
            let mut filter = NewsFilter::default();
            f(&mut filter);
            filter
        };
        for (filter, index) in [
            (NewsFilter::default(), "articles_list"),
            (by(|f| f.isin = Some(Isin::parse("INE002A01018").unwrap())), "articles_isin_list"),
            (by(|f| f.ticker = Some(Ticker::parse("tcs").unwrap())), "articles_ticker_list"),
            (by(|f| f.category = Some(Exact::category("earnings").unwrap())), "articles_category_list"),
            (by(|f| f.tag = Some(Exact::tag("q2").unwrap())), "articles_list"),
            (
                by(|f| f.published_after = Some(mds_domain::time::parse_rfc3339("2026-01-01T00:00:00Z").unwrap())),
                "articles_list",
            ),
        ] {
            for after in [None, Some(&dated), Some(&undated)] {
                let steps = plan(&store, &filter, after).await;
                let text = steps.join(" | ");
                let on_articles: Vec<&String> = steps.iter().filter(|s| s.contains(" articles")).collect();
                assert!(!on_articles.is_empty(), "{text}");
                for s in on_articles {
                    assert!(
                        s.contains(&format!("USING INDEX {index} ")) || s.ends_with(index),
                        "{filter:?} {after:?}: {text}"
                    );
                }
                assert!(!text.contains("TEMP B-TREE"), "no sort: {text}");
            }
        }
    }

    /// Pruning finds what to remove in the `created_at` index: with
    /// nothing old enough, the walk back over every event (see
    /// `portable::events::LAST_BEFORE`) is not in the plan.
    #[tokio::test]
    async fn pruning_finds_its_range_in_the_created_at_index() {
        let store = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.unwrap();
        store.migrate().await.unwrap();
        let sql = format!("EXPLAIN QUERY PLAN {}", portable::events::LAST_BEFORE);
        let steps: Vec<String> = sqlx::query_as::<_, (i64, i64, i64, String)>(&sql)
            .bind("2026-01-01T00:00:00Z")
            .fetch_all(&store.pool)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.3)
            .collect();
        assert_eq!(steps, ["SEARCH events USING COVERING INDEX events_created_at (created_at<?)"], "{steps:?}");
    }
}
