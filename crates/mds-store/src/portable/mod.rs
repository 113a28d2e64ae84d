//! The code both backends share, written once and compiled once per backend:
//! `src/sqlite.rs` and `src/postgres.rs` each load this module
//! (`#[path = "portable/mod.rs"] mod portable;`), so `super` here is the backend
//! module, which supplies:
//!
//! | name | SQLite | PostgreSQL |
//! | --- | --- | --- |
//! | `Backend` | `SqliteStore` | `PgStore` |
//! | `Pool`, `Conn` | `SqlitePool`, `SqliteConnection` | `PgPool`, `PgConnection` |
//! | `begin_write` | `BEGIN IMMEDIATE` | `READ COMMITTED` |
//! | `begin_read` | a deferred read transaction (WAL snapshot) | `REPEATABLE READ, READ ONLY` |
//! | `db` | SQLite result codes | SQLSTATEs |
//! | `dialect` | multi-row `VALUES` lists, upserts staged in a TEMP table then applied (or written in the caller's transaction: `write_companies`), no locks, `json_each` | `UNNEST` arrays, table, row and advisory locks (`lock_identity`), `jsonb` |
//! | `lock_events` | nothing (the write transaction holds the file) | an advisory lock to commit, so ids commit in order |
//! | `migrate` | one transaction per migration, seed only when needed | everything in one transaction under an advisory lock |
//!
//! The SQL here uses `$1`-style placeholders, which both drivers accept.
//! This is plain Rust type-checked twice rather than code generic over
//! `sqlx::Database`, whose higher-ranked executor bounds do not carry
//! through `async_trait`'s `Send` futures.
//!
//! # Layout
//! - `meta`: the `meta` table and the steps of migrating and seeding.
//! - `access`, `catalog`, `snapshot`, `usage`, `admin` (with
//!   `idempotency`): one module per role;
//!   `auth`, what a serving node reads of `access` (directory, keys by
//!   prefix, the change log);
//!   `news`, the pages of the news list (the articles themselves are
//!   upserted and read by `catalog`).
//! - `actions`: corporate actions and the rows resolved to no ISIN.
//! - `prices`: end-of-day bars, a whole day at a time.
//! - `events`: the event log, appended in the transactions of the changes
//!   that make its events (an upsert announces what it changed), read and
//!   pruned.
//! - `identity`: exchange snapshots (days and runs), NSE's change rows and
//!   the identity events derived from them, each import one transaction.
//! - `roles`: the role traits implemented for `Backend`.
//! - Here: the store's constructor, clock and closing, and the error
//!   mappings that do not depend on the backend.

use std::sync::Arc;

use mds_domain::clock::{Clock, SystemClock};
use sqlx::error::ErrorKind;

use super::{Backend, Conn, Pool, begin_read, begin_write, db, dialect, migrate};
use crate::{StoreError, StoreResult};

pub(crate) mod access;
mod actions;
mod admin;
pub(crate) mod auth;
pub(crate) mod catalog;
pub(crate) mod events;
mod idempotency;
mod identity;
pub(crate) mod meta;
pub(crate) mod news;
mod prices;
mod roles;
mod snapshot;
mod usage;
mod webhooks;

impl Backend {
    /// The store on `pool`, what it writes dated by the system clock.
    pub(super) fn on(pool: Pool) -> Self {
        Backend { pool, clock: Arc::new(SystemClock) }
    }

    /// The same store, the times it writes (events, migrations, imports,
    /// usage) read from `clock`, not the system's: a node's own clock
    /// ([`crate::open_with_clock`]).
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> Self {
        Backend { clock, ..self }
    }

    /// Closes every connection (SQLite's checkpointing the WAL); later
    /// calls fail as [`StoreError::Unavailable`].
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// The backend's `sqlx` database.
type Db = <Conn as sqlx::Connection>::Database;
/// A row as the backend returns it.
pub(crate) type DbRow = <Db as sqlx::Database>::Row;
/// A statement being bound.
pub(crate) type Statement<'q> = sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments<'q>>;

/// Runs `statement` on `conn`: how many rows it changed (its error mapped
/// by `db`).
pub(crate) async fn execute(conn: &mut Conn, statement: Statement<'_>) -> StoreResult<u64> {
    Ok(statement.execute(conn).await.map_err(db)?.rows_affected())
}

/// The rows `statement` returns on `conn` (its error mapped by `db`).
pub(crate) async fn fetch_all(conn: &mut Conn, statement: Statement<'_>) -> StoreResult<Vec<DbRow>> {
    statement.fetch_all(conn).await.map_err(db)
}

/// Maps an error of opening the pool: a URL the driver refuses is `Invalid`.
pub(crate) fn connect(e: sqlx::Error) -> StoreError {
    match e {
        sqlx::Error::Configuration(cause) => {
            StoreError::Invalid(format!("not a usable {} database URL: {cause}", dialect::NAME))
        }
        e => db(e),
    }
}

/// Maps a unique-constraint violation with `conflict` (given the name of the
/// violated constraint, which SQLite does not tell), anything else as `db`.
pub(crate) fn unique_or(e: sqlx::Error, conflict: impl FnOnce(Option<&str>) -> StoreError) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.kind() == ErrorKind::UniqueViolation => conflict(d.constraint()),
        _ => db(e),
    }
}
