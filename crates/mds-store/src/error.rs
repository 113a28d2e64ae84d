//! The errors of the store: [`StoreError`], and [`Cause`], the opaque cause
//! an unavailable store or a database error carries for the log (the
//! driver's error, which is not part of the API).

use std::error::Error;
use std::fmt;

/// Errors of the store. The `Display` of `NotFound`, `Conflict` and `Invalid`
/// is a sentence fit for an operator; the others carry their cause for the log.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The named thing does not exist (`no account named "acme"`).
    #[error("{0}")]
    NotFound(String),
    /// The thing exists already (`an account named "acme" already exists`).
    #[error("{0}")]
    Conflict(String),
    /// The request cannot be applied as given.
    #[error("{0}")]
    Invalid(String),
    /// The store cannot be reached (connection refused, pool timed out, I/O).
    #[error("store unavailable: {0}")]
    Unavailable(#[source] Cause),
    /// Any other database error.
    #[error("store error: {0}")]
    Database(#[source] Cause),
}

/// Result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

/// Why the store is unavailable or failed: the underlying error, boxed. Its
/// `Display` is that of the underlying error, and so is its `source`.
pub struct Cause(Box<dyn Error + Send + Sync + 'static>);

impl Cause {
    /// Wraps any error (or a message: `Cause::new("injected")`).
    pub fn new(cause: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        Cause(cause.into())
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl Error for Cause {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_shows_what_it_wraps() {
        let e = StoreError::Unavailable(Cause::new(std::io::Error::other("refused")));
        assert_eq!(e.to_string(), "store unavailable: refused");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("refused"));
        assert_eq!(format!("{:?}", Cause::new("x")), "\"x\"");
    }
}
