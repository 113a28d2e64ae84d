//! Raw access to a backend's database, for the suite functions that change
//! it behind the store's back ([`crate::store::raw`]), and the closing of a
//! store, which is each backend's own method.

use async_trait::async_trait;
use mds_store::postgres::PgStore;
use mds_store::sqlite::SqliteStore;
use sqlx::{Executor, PgConnection, SqliteConnection};

/// Which backend a raw connection talks to, where the SQL must differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// A raw connection to the database of the store under test. Every method
/// panics on an error: it is test set-up.
#[async_trait]
pub trait Raw: Send {
    /// The backend.
    fn dialect(&self) -> Dialect;
    /// Runs `sql`: one statement or several, without parameters.
    async fn execute(&mut self, sql: &str);
    /// The one integer `sql` returns.
    async fn int(&mut self, sql: &str) -> i64;
    /// The first column, as text, of every row `sql` returns.
    async fn texts(&mut self, sql: &str) -> Vec<String>;
}

/// Implements [`Raw`] for a connection type of sqlx.
macro_rules! raw {
    ($conn:ty, $dialect:expr) => {
        #[async_trait]
        impl Raw for $conn {
            fn dialect(&self) -> Dialect {
                $dialect
            }
            async fn execute(&mut self, sql: &str) {
                Executor::execute(&mut *self, sqlx::raw_sql(sql)).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            async fn int(&mut self, sql: &str) -> i64 {
                sqlx::query_scalar(sql).fetch_one(&mut *self).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
            }
            async fn texts(&mut self, sql: &str) -> Vec<String> {
                sqlx::query_scalar(sql).fetch_all(&mut *self).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
            }
        }
    };
}

raw!(SqliteConnection, Dialect::Sqlite);
raw!(PgConnection, Dialect::Postgres);

/// A store that can be closed (later calls fail as unavailable).
#[async_trait]
pub trait Closable {
    /// Closes every connection.
    async fn close(&self);
}

/// Implements [`Closable`] with the store's own `close`.
macro_rules! closable {
    ($store:ty) => {
        #[async_trait]
        impl Closable for $store {
            async fn close(&self) {
                <$store>::close(self).await;
            }
        }
    };
}

closable!(SqliteStore);
closable!(PgStore);
