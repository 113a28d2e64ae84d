//! [`ReadError`]: why a read of the API (a list page, the change feed, a
//! usage report) cannot be answered, for its interfaces to render.

use mds_domain::ParamError;
use mds_store::StoreError;

/// Why a read cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A parameter's value is refused (`400 invalid_parameter`).
    #[error("{}", .0.detail)]
    Param(ParamError),
    /// A cursor or sync token not issued by this service, altered, or
    /// issued for another query (`400 invalid_cursor`, naming `param`).
    #[error("{detail}")]
    InvalidCursor {
        /// The parameter that carried it (`cursor`, `since`).
        param: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A sync token older than the history the store keeps (`410
    /// sync_token_expired`).
    #[error("the store no longer holds the history this sync token needs; sync again without `since`")]
    SyncTokenExpired,
    /// An event position older than the log keeps (`410 events_expired`).
    #[error("the events after this position are past retention; read the log again without `since`")]
    EventsExpired,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ReadError {
    /// A refused `cursor`.
    pub(crate) fn cursor(detail: impl ToString) -> Self {
        ReadError::InvalidCursor { param: "cursor", detail: detail.to_string() }
    }
}

impl From<ParamError> for ReadError {
    fn from(e: ParamError) -> Self {
        ReadError::Param(e)
    }
}
