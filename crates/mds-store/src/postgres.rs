//! The PostgreSQL backend: the same tables, encodings and results as the
//! SQLite one, for several serving nodes on one shared database.
//!
//! A pool of up to [`MAX_CONNECTIONS`] connections; a call waits at most
//! [`ACQUIRE_TIMEOUT`] for one (including connecting, so an unreachable server
//! fails the call as [`StoreError::Unavailable`] after that long, never a
//! hang).
//!
//! Writes run in `READ COMMITTED` transactions and take the locks their
//! checks need (a table lock for upserts, `FOR UPDATE` for revocation, an
//! advisory lock for catalog snapshot saves), so a
//! check and the write it guards cannot be split by another node, and the
//! counts and sentences are those SQLite gives with its single writer.
//! Reads that must agree with each other (the auth snapshot, an account's
//! keys, a key's quota history) run in one `REPEATABLE READ` transaction.
//!
//! # Layout
//! - [`PgStore`]: the pool and the [`Store`] implementation.
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
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, PgConnection, Postgres, Transaction};

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

/// How many connections the pool holds at most: enough for a busy node
/// (requests, the usage flusher, reloads) without exhausting the server's
/// `max_connections` (100 by default) when several nodes share it.
pub const MAX_CONNECTIONS: u32 = 16;

/// How long a call waits for a connection, connecting included, before it
/// fails as [`StoreError::Unavailable`].
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL store: a pool of connections to one database.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to the database a `postgres://` (or `postgresql://`) URL
    /// names, which must exist. Does not migrate: call [`Store::migrate`]
    /// before anything else.
    ///
    /// A URL the driver refuses is [`StoreError::Invalid`]; a server that
    /// cannot be reached within [`ACQUIRE_TIMEOUT`] is
    /// [`StoreError::Unavailable`].
    pub async fn connect(url: &DatabaseUrl) -> StoreResult<Self> {
        let options = PgConnectOptions::from_str(url.expose())
            .map_err(|e| StoreError::Invalid(format!("not a usable PostgreSQL database URL ({e}): {url}")))?
            .application_name("mds")
            .log_slow_statements(log::LevelFilter::Info, crate::SLOW_STATEMENT);
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(error::connect)?;
        Ok(PgStore { pool })
    }

    /// Closes every connection; later calls fail as
    /// [`StoreError::Unavailable`].
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Begins a write transaction (`READ COMMITTED`).
    async fn begin_write(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.pool.begin().await.map_err(db)
    }
}

/// Begins a read-only transaction that sees one snapshot of the database
/// from its first statement on.
async fn begin_snapshot(pool: &PgPool) -> StoreResult<Transaction<'static, Postgres>> {
    pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY").await.map_err(db)
}

/// Bumps the change counter under `meta` key `counter` (one of
/// `rows::META_GENERATION_*`); call inside the transaction of the change.
async fn bump_generation(conn: &mut PgConnection, counter: &str) -> StoreResult<()> {
    let done = sqlx::query("UPDATE meta SET value = (CAST(value AS BIGINT) + 1)::text WHERE key = $1")
        .bind(counter)
        .execute(conn)
        .await
        .map_err(db)?;
    if done.rows_affected() == 1 { Ok(()) } else { Err(rows::not_migrated()) }
}

/// One `meta` value; `not_migrated` when it is missing.
async fn meta(pool: &PgPool, key: &str) -> StoreResult<String> {
    let value: Option<String> =
        sqlx::query_scalar("SELECT value FROM meta WHERE key = $1").bind(key).fetch_optional(pool).await.map_err(db)?;
    value.ok_or_else(rows::not_migrated)
}

#[async_trait]
impl Store for PgStore {
    async fn migrate(&self) -> StoreResult<()> {
        migrate::run(&self.pool).await
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(db)?;
        Ok(())
    }

    async fn generations(&self) -> StoreResult<Generations> {
        let pairs: Vec<(String, String)> = sqlx::query_as("SELECT key, value FROM meta WHERE key = ANY($1)")
            .bind(&META_GENERATIONS[..])
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
