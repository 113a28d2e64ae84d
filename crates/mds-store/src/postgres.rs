//! The PostgreSQL backend: the same tables, encodings and results as the
//! SQLite one, for several serving nodes on one shared database.
//!
//! A pool of up to [`MAX_CONNECTIONS`] connections; a call waits at most
//! [`ACQUIRE_TIMEOUT`] for one (including connecting, so an unreachable server
//! fails the call as [`StoreError::Unavailable`](crate::StoreError::Unavailable) after that long, never a
//! hang).
//!
//! Writes run in `READ COMMITTED` transactions and take the locks their
//! checks need (a table lock for upserts, `FOR UPDATE` for revocation, an
//! advisory lock for snapshot saves), so a
//! check and the write it guards cannot be split by another node, and the
//! counts and sentences are those SQLite gives with its single writer.
//! Reads that must agree with each other (the auth snapshot, an account's
//! keys, a key's quota history) run in one `REPEATABLE READ` transaction.
//!
//! # Layout
//! - [`PgStore`]: the pool and the clock that dates what it writes; it
//!   implements every role of [`Store`](crate::Store).
//! - `dialect`: the SQL that differs from SQLite's (`UNNEST` arrays, table,
//!   row and advisory locks, `"C"` collation).
//! - `migrate`: the embedded migrations and how they are applied.
//! - `error`: mapping of `sqlx` errors to [`StoreError`](crate::StoreError).
//! - `portable`: the code both backends share (`src/portable/`), compiled against
//!   this module's `Pool`, `Conn`, `begin_write`, `begin_read` and
//!   `dialect`.

use std::time::Duration;

use mds_domain::clock::Clock;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{PgConnection, Postgres, Transaction};

use crate::{DatabaseUrl, StoreResult};

mod dialect;
mod error;
mod migrate;

#[allow(clippy::duplicate_mod, reason = "compiled once per backend, on purpose")]
#[path = "portable/mod.rs"]
mod portable;

use error::db;

/// The store the portable modules implement the roles for.
type Backend = PgStore;
/// The pool the portable modules run on.
type Pool = PgPool;
/// A connection (or a transaction, by `&mut *tx`) of the portable modules.
type Conn = PgConnection;

/// How many connections the pool holds at most: enough for a busy node
/// (requests, the usage flusher, reloads) without exhausting the server's
/// `max_connections` (100 by default) when several nodes share it.
pub const MAX_CONNECTIONS: u32 = 16;

/// How long a call waits for a connection, connecting included, before it
/// fails as [`StoreError::Unavailable`](crate::StoreError::Unavailable).
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL store: a pool of connections to one database.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
    /// What dates the rows and events it writes ([`PgStore::with_clock`]).
    clock: std::sync::Arc<dyn Clock>,
}

impl PgStore {
    /// Connects to the database a `postgres://` (or `postgresql://`) URL
    /// names, which must exist. Does not migrate: call
    /// [`MetaStore::migrate`](crate::MetaStore::migrate) before anything else.
    ///
    /// A URL the driver refuses is [`StoreError::Invalid`](crate::StoreError::Invalid); a server that
    /// cannot be reached within [`ACQUIRE_TIMEOUT`] is
    /// [`StoreError::Unavailable`](crate::StoreError::Unavailable).
    pub async fn connect(url: &DatabaseUrl) -> StoreResult<Self> {
        let options = url.connect_options::<PgConnectOptions>(dialect::NAME)?.application_name("mds");
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(portable::connect)?;
        Ok(PgStore::on(pool))
    }
}

/// Begins a write transaction (`READ COMMITTED`).
async fn begin_write(pool: &PgPool) -> StoreResult<Transaction<'static, Postgres>> {
    pool.begin().await.map_err(db)
}

/// Begins a read-only transaction that sees one snapshot of the database
/// from its first statement on.
async fn begin_read(pool: &PgPool) -> StoreResult<Transaction<'static, Postgres>> {
    pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY").await.map_err(db)
}
