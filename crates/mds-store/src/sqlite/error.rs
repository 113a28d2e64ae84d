//! Mapping of `sqlx` errors on SQLite to [`StoreError`].
//!
//! "Cannot reach the store" (I/O, a pool that timed out or closed, a file that
//! cannot be opened, a lock still held by another process when the busy
//! timeout ran out) becomes [`StoreError::Unavailable`], which the service
//! answers with 503 and recovers from by itself. Unique-constraint violations
//! get their operator sentence where the caller knows what was duplicated.

use crate::{Cause, StoreError};

// Primary SQLite result codes (the low byte of an extended code).
const SQLITE_BUSY: i32 = 5;
const SQLITE_LOCKED: i32 = 6;
const SQLITE_IOERR: i32 = 10;
const SQLITE_CANTOPEN: i32 = 14;

/// Maps any `sqlx` error.
pub(super) fn db(e: sqlx::Error) -> StoreError {
    if unavailable(&e) { StoreError::Unavailable(Cause::new(e)) } else { StoreError::Database(Cause::new(e)) }
}

fn unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(d) => {
            let primary = d.code().and_then(|c| c.parse::<i32>().ok()).map(|c| c & 0xff);
            matches!(primary, Some(SQLITE_BUSY | SQLITE_LOCKED | SQLITE_IOERR | SQLITE_CANTOPEN))
        }
        _ => false,
    }
}
