//! Mapping of `sqlx` errors on PostgreSQL to [`StoreError`].
//!
//! "Cannot reach the store" (I/O, a pool that timed out or closed, a lost
//! connection, a server that is shutting down or starting up, one out of
//! connection slots) becomes [`StoreError::Unavailable`], which the service
//! answers with 503 and recovers from by itself. Unique-constraint violations
//! (SQLSTATE 23505) get their operator sentence where the caller knows what
//! was duplicated; any other unique violation is a plain `Conflict`. Text
//! with a NUL character, which SQLite stores and PostgreSQL cannot, is
//! `Invalid`.

use sqlx::error::ErrorKind;

use crate::{Cause, StoreError};

/// SQLSTATEs that mean the server cannot serve us right now.
const UNAVAILABLE_CODES: &[&str] = &[
    "53300", // too_many_connections
    "57P01", // admin_shutdown
    "57P02", // crash_shutdown
    "57P03", // cannot_connect_now (starting up, shutting down)
];

/// SQLSTATE of text PostgreSQL cannot store (a NUL character).
const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";

/// Maps any `sqlx` error.
pub(super) fn db(e: sqlx::Error) -> StoreError {
    match &e {
        _ if unavailable(&e) => StoreError::Unavailable(Cause::new(e)),
        // Only a race the caller did not foresee gets here; its sentence is
        // the server's ("duplicate key value violates unique constraint …").
        sqlx::Error::Database(d) if d.kind() == ErrorKind::UniqueViolation => StoreError::Conflict(d.message().into()),
        // SQLite stores a NUL character in text; PostgreSQL refuses it.
        sqlx::Error::Database(d) if d.code().as_deref() == Some(CHARACTER_NOT_IN_REPERTOIRE) => {
            StoreError::Invalid(format!("text cannot contain a NUL character on PostgreSQL ({})", d.message()))
        }
        _ => StoreError::Database(Cause::new(e)),
    }
}

fn unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| {
            // Class 08: connection exception.
            c.starts_with("08") || UNAVAILABLE_CODES.contains(&c.as_ref())
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_and_io_errors_are_unavailable() {
        assert!(matches!(db(sqlx::Error::PoolTimedOut), StoreError::Unavailable(_)));
        assert!(matches!(db(sqlx::Error::PoolClosed), StoreError::Unavailable(_)));
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(matches!(db(sqlx::Error::Io(io)), StoreError::Unavailable(_)));
        assert!(matches!(db(sqlx::Error::RowNotFound), StoreError::Database(_)));
        assert!(matches!(
            super::super::portable::connect(sqlx::Error::Configuration("bad".into())),
            StoreError::Invalid(_)
        ));
    }
}
