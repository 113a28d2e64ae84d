//! The embedded SQLite backend, the default store.
//!
//! One database file is shared by the server and by `mds` operator commands
//! running in other processes, so the file is opened in WAL mode (readers do
//! not block the writer) with a busy timeout: a writer waits up to
//! [`BUSY_TIMEOUT`] for another process's write to finish before the call
//! fails as [`StoreError::Unavailable`].
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, which takes the write
//! lock up front: a deferred transaction that reads first and writes later
//! could find its snapshot stale and fail at once instead of waiting.
//!
//! # Layout
//! - [`SqliteStore`]: the pool and the [`Store`] implementation.
//! - `migrate`: the schema migrations and the seed rows.
//! - `catalog`: companies and articles.
//! - `snapshot`: catalog snapshots.
//! - `access`: tiers, accounts, keys and the auth snapshot.
//! - `usage`: usage counts and quota history.
//! - `error`: mapping of `sqlx` errors to [`StoreError`].

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{Account, AccountName, Article, Company, KeyPrefix, Slug, Tier};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Sqlite, SqliteConnection, Transaction};

use crate::rows::{self, META_CURSOR_SECRET, META_GENERATIONS};
use crate::{
    AuthSnapshot, DatabaseUrl, Generations, KeyRecord, NewKey, Store, StoreError, StoreResult, UpsertSummary,
    UsageBatch,
};

mod access;
mod catalog;
mod error;
mod migrate;
mod snapshot;
mod usage;

use error::db;

/// How long a statement waits for another connection's (or process's) write
/// lock before it fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How many connections the pool holds at most. WAL lets readers run beside
/// the one writer; more connections than cores buys nothing.
const MAX_CONNECTIONS: u32 = 4;

/// How long a call waits for a free connection of the pool.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// The SQLite store: a small pool of connections to one database file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database a `sqlite:` URL names.
    /// Does not migrate: call [`Store::migrate`] before anything else.
    ///
    /// `sqlite::memory:` gives a private in-memory database that lives as
    /// long as this store (for tests).
    pub async fn connect(url: &DatabaseUrl) -> StoreResult<Self> {
        let options = SqliteConnectOptions::from_str(url.expose())
            .map_err(|e| StoreError::Invalid(format!("not a usable SQLite database URL ({e}): {url}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: a commit (a revoked key, a new account) survives power loss.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true)
            .log_slow_statements(log::LevelFilter::Info, crate::SLOW_STATEMENT);
        let expose = url.expose();
        let in_memory = expose.contains(":memory:") || expose.contains("mode=memory");
        let pool_options = if in_memory {
            // An in-memory database lives while one connection to it is open:
            // keep exactly one, forever.
            SqlitePoolOptions::new().max_connections(1).min_connections(1).idle_timeout(None).max_lifetime(None)
        } else {
            SqlitePoolOptions::new().max_connections(MAX_CONNECTIONS)
        };
        let pool = pool_options.acquire_timeout(ACQUIRE_TIMEOUT).connect_with(options).await.map_err(error::connect)?;
        Ok(SqliteStore { pool })
    }

    /// Closes every connection (checkpointing the WAL); later calls fail as
    /// [`StoreError::Unavailable`].
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Begins a write transaction, taking the write lock at once.
    async fn begin_write(&self) -> StoreResult<Transaction<'static, Sqlite>> {
        begin_write(&self.pool).await
    }
}

/// Begins a write transaction, taking the write lock at once.
async fn begin_write(pool: &SqlitePool) -> StoreResult<Transaction<'static, Sqlite>> {
    pool.begin_with("BEGIN IMMEDIATE").await.map_err(db)
}

/// Bumps the change counter under `meta` key `counter` (one of
/// `rows::META_GENERATION_*`); call inside the transaction of the change.
async fn bump_generation(conn: &mut SqliteConnection, counter: &str) -> StoreResult<()> {
    let done = sqlx::query("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = ?")
        .bind(counter)
        .execute(conn)
        .await
        .map_err(db)?;
    if done.rows_affected() == 1 { Ok(()) } else { Err(rows::not_migrated()) }
}

/// One `meta` value; `not_migrated` when it is missing.
async fn meta(pool: &SqlitePool, key: &str) -> StoreResult<String> {
    let value: Option<String> =
        sqlx::query_scalar("SELECT value FROM meta WHERE key = ?").bind(key).fetch_optional(pool).await.map_err(db)?;
    value.ok_or_else(rows::not_migrated)
}

#[async_trait]
impl Store for SqliteStore {
    async fn migrate(&self) -> StoreResult<()> {
        migrate::run(&self.pool).await
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(db)?;
        Ok(())
    }

    async fn generations(&self) -> StoreResult<Generations> {
        let [a, b, c] = META_GENERATIONS;
        let pairs: Vec<(String, String)> = sqlx::query_as("SELECT key, value FROM meta WHERE key IN (?, ?, ?)")
            .bind(a)
            .bind(b)
            .bind(c)
            .fetch_all(&self.pool)
            .await
            .map_err(db)?;
        rows::generations(&pairs)
    }

    async fn cursor_secret(&self) -> StoreResult<Vec<u8>> {
        rows::cursor_secret(&meta(&self.pool, META_CURSOR_SECRET).await?)
    }

    async fn upsert_companies(&self, rows: &[Company]) -> StoreResult<UpsertSummary> {
        catalog::upsert_companies(self, rows).await
    }

    async fn companies(&self) -> StoreResult<Vec<Company>> {
        catalog::companies(&self.pool).await
    }

    async fn company_count(&self) -> StoreResult<u64> {
        catalog::company_count(&self.pool).await
    }

    async fn companies_sorted(&self, each: &mut (dyn FnMut(Company) + Send)) -> StoreResult<()> {
        catalog::companies_sorted(&self.pool, each).await
    }

    async fn save_catalog_snapshot(&self, generation: i64, bytes: &[u8]) -> StoreResult<()> {
        snapshot::save(self, generation, bytes).await
    }

    async fn catalog_snapshot(&self, generation: i64) -> StoreResult<Option<Vec<u8>>> {
        snapshot::load(&self.pool, generation).await
    }

    async fn upsert_articles(&self, rows: &[Article]) -> StoreResult<UpsertSummary> {
        catalog::upsert_articles(self, rows).await
    }

    async fn article(&self, slug: &Slug) -> StoreResult<Option<Article>> {
        catalog::article(&self.pool, slug).await
    }

    async fn article_count(&self) -> StoreResult<u64> {
        catalog::article_count(&self.pool).await
    }

    async fn tiers(&self) -> StoreResult<Vec<Tier>> {
        access::tiers(&self.pool).await
    }

    async fn set_tier(&self, tier: &Tier, now: DateTime<Utc>) -> StoreResult<bool> {
        access::set_tier(self, tier, now).await
    }

    async fn create_account(&self, name: &AccountName, now: DateTime<Utc>) -> StoreResult<Account> {
        access::create_account(self, name, now).await
    }

    async fn set_account_entitled(
        &self,
        name: &AccountName,
        entitled: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Account> {
        access::set_account_entitled(self, name, entitled, now).await
    }

    async fn accounts(&self) -> StoreResult<Vec<Account>> {
        access::accounts(&self.pool).await
    }

    async fn create_key(&self, key: &NewKey) -> StoreResult<KeyRecord> {
        access::create_key(self, key).await
    }

    async fn revoke_key(&self, prefix: &KeyPrefix, now: DateTime<Utc>) -> StoreResult<KeyRecord> {
        access::revoke_key(self, prefix, now).await
    }

    async fn keys(&self, account: Option<&AccountName>) -> StoreResult<Vec<KeyRecord>> {
        access::keys(&self.pool, account).await
    }

    async fn auth_snapshot(&self) -> StoreResult<AuthSnapshot> {
        access::auth_snapshot(&self.pool).await
    }

    async fn apply_usage(&self, batch: &UsageBatch) -> StoreResult<bool> {
        usage::apply_usage(self, batch, Utc::now()).await
    }

    async fn usage(
        &self,
        key: &KeyPrefix,
        from: BillingMonth,
        to: BillingMonth,
    ) -> StoreResult<Vec<(BillingMonth, u64)>> {
        usage::usage(&self.pool, key, from, to).await
    }

    async fn quota_history(&self, key: &KeyPrefix) -> StoreResult<QuotaHistory> {
        usage::quota_history(&self.pool, key).await
    }
}
