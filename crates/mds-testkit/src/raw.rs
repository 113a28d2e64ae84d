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

#[async_trait]
impl Raw for SqliteConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
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

#[async_trait]
impl Raw for PgConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
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

/// A store that can be closed (later calls fail as unavailable).
#[async_trait]
pub trait Closable {
    /// Closes every connection.
    async fn close(&self);
}

#[async_trait]
impl Closable for SqliteStore {
    async fn close(&self) {
        SqliteStore::close(self).await;
    }
}

#[async_trait]
impl Closable for PgStore {
    async fn close(&self) {
        PgStore::close(self).await;
    }
}
