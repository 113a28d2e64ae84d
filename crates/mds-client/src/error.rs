//! The one error type of the client.

use std::time::Duration;

use mds_domain::{ErrorCode, Problem};

/// Everything a call can fail with.
///
/// No variant holds the API key: it travels only in a request header marked
/// sensitive, so neither `Display` nor `Debug` of an error can show it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API answered with an error status and an RFC 9457 problem body
    /// (after any retries the client made for `429` and `503`).
    #[error("{} (HTTP {status}): {}", problem.code, problem.detail)]
    Api {
        /// The HTTP status.
        status: u16,
        /// The problem body, with its stable `code`, `detail`, `param` and
        /// `request_id` (boxed, to keep `Result`s small).
        problem: Box<Problem>,
    },
    /// An error status whose body was not a problem document (say, a proxy
    /// in between answered). `body` is its first 512 bytes, lossily decoded.
    #[error("unexpected HTTP {status} response: {body}")]
    UnexpectedResponse {
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// No complete response within the configured timeout.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The request could not be sent or its response not read (connection
    /// refused, reset, TLS, ...).
    #[error("cannot reach the API")]
    Transport(#[source] reqwest::Error),
    /// A success response whose body is not the expected JSON.
    #[error("cannot decode the response")]
    Decode(#[source] serde_json::Error),
    /// The client was built with an unusable setting (no key, a bad base URL).
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// An argument that cannot name what it should (an ISIN that is empty,
    /// `.` or `..`; a string that is not a slug); no request was sent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// The HTTP status, for [`Error::Api`] and [`Error::UnexpectedResponse`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api { status, .. } | Error::UnexpectedResponse { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The problem body, for [`Error::Api`].
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Api { problem, .. } => Some(problem),
            _ => None,
        }
    }

    /// The stable error code, for an [`Error::Api`] whose code this version
    /// of the client knows.
    pub fn code(&self) -> Option<ErrorCode> {
        self.problem().and_then(|p| ErrorCode::parse(&p.code))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
