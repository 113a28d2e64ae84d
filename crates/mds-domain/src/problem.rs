//! RFC 9457 problem details and the stable error codes of the API.

use serde::{Deserialize, Serialize};

/// The stable, machine-readable error codes (`code` in a problem body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: a query parameter has a bad value.
    InvalidParameter,
    /// 400: a query parameter the endpoint does not define.
    UnknownParameter,
    /// 400: a cursor not issued by this service, altered, or for other filters.
    InvalidCursor,
    /// 400: a key-like value in the query string.
    ApiKeyInQuery,
    /// 401: no `Authorization: Bearer` header.
    MissingApiKey,
    /// 401: malformed, unknown or revoked key.
    InvalidApiKey,
    /// 404: unknown route or article.
    NotFound,
    /// 405: method not allowed on a known route.
    MethodNotAllowed,
    /// 410: a sync token older than the change history the store keeps.
    SyncTokenExpired,
    /// 410: an event position older than the log keeps.
    EventsExpired,
    /// 429: per-minute rate limit reached.
    RateLimited,
    /// 429: the key has as many event streams open as it may.
    TooManyStreams,
    /// 429: monthly quota used up.
    QuotaExceeded,
    /// 503: the store is unreachable (or the request ran out of time).
    Unavailable,
    /// 500: a bug.
    Internal,
    /// 401 (admin API): no `Authorization: Bearer` header.
    MissingAdminToken,
    /// 401 (admin API): a malformed, unknown or revoked admin token, or an
    /// API key; the same answer for all.
    InvalidAdminToken,
    /// 400 (admin API): a body field the route does not define (`param`
    /// names it).
    UnknownField,
    /// 400 (admin API): a body field with a wrong type or value, or naming
    /// something that does not exist (`param` names it).
    InvalidField,
    /// 400 (admin API): a body that is not a JSON object, or was cut short.
    InvalidBody,
    /// 409 (admin API): it exists already, or is in a state that refuses
    /// the change (a revoked key rolled).
    Conflict,
    /// 409 (admin API): an `Idempotency-Key` used with another request, or
    /// whose first request still runs.
    IdempotencyConflict,
    /// 413 (admin API): a body over the largest a route takes (1 MiB).
    PayloadTooLarge,
    /// 415 (admin API): a body not sent as `Content-Type: application/json`.
    UnsupportedMediaType,
    /// 414: a request target (path and query) too long to read.
    UriTooLong,
    /// 431: a request head (its header fields) too large to read.
    RequestHeaderFieldsTooLarge,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidParameter,
        ErrorCode::UnknownParameter,
        ErrorCode::InvalidCursor,
        ErrorCode::ApiKeyInQuery,
        ErrorCode::MissingApiKey,
        ErrorCode::InvalidApiKey,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::SyncTokenExpired,
        ErrorCode::EventsExpired,
        ErrorCode::RateLimited,
        ErrorCode::TooManyStreams,
        ErrorCode::QuotaExceeded,
        ErrorCode::Unavailable,
        ErrorCode::Internal,
        ErrorCode::MissingAdminToken,
        ErrorCode::InvalidAdminToken,
        ErrorCode::UnknownField,
        ErrorCode::InvalidField,
        ErrorCode::InvalidBody,
        ErrorCode::Conflict,
        ErrorCode::IdempotencyConflict,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::UriTooLong,
        ErrorCode::RequestHeaderFieldsTooLarge,
    ];

    /// Whether only the admin API answers the code (contract section 9):
    /// the public API's document does not list it.
    pub fn admin_only(self) -> bool {
        matches!(
            self,
            ErrorCode::MissingAdminToken
                | ErrorCode::InvalidAdminToken
                | ErrorCode::Conflict
                | ErrorCode::IdempotencyConflict
        )
    }

    /// The wire value of `code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParameter => "invalid_parameter",
            ErrorCode::UnknownParameter => "unknown_parameter",
            ErrorCode::InvalidCursor => "invalid_cursor",
            ErrorCode::ApiKeyInQuery => "api_key_in_query",
            ErrorCode::MissingApiKey => "missing_api_key",
            ErrorCode::InvalidApiKey => "invalid_api_key",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::SyncTokenExpired => "sync_token_expired",
            ErrorCode::EventsExpired => "events_expired",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::TooManyStreams => "too_many_streams",
            ErrorCode::QuotaExceeded => "quota_exceeded",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
            ErrorCode::MissingAdminToken => "missing_admin_token",
            ErrorCode::InvalidAdminToken => "invalid_admin_token",
            ErrorCode::UnknownField => "unknown_field",
            ErrorCode::InvalidField => "invalid_field",
            ErrorCode::InvalidBody => "invalid_body",
            ErrorCode::Conflict => "conflict",
            ErrorCode::IdempotencyConflict => "idempotency_conflict",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::UriTooLong => "uri_too_long",
            ErrorCode::RequestHeaderFieldsTooLarge => "request_header_fields_too_large",
        }
    }

    /// The HTTP status that goes with the code.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::InvalidParameter
            | ErrorCode::UnknownParameter
            | ErrorCode::InvalidCursor
            | ErrorCode::ApiKeyInQuery
            | ErrorCode::UnknownField
            | ErrorCode::InvalidField
            | ErrorCode::InvalidBody => 400,
            ErrorCode::MissingApiKey
            | ErrorCode::InvalidApiKey
            | ErrorCode::MissingAdminToken
            | ErrorCode::InvalidAdminToken => 401,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::Conflict | ErrorCode::IdempotencyConflict => 409,
            ErrorCode::SyncTokenExpired | ErrorCode::EventsExpired => 410,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UriTooLong => 414,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::RequestHeaderFieldsTooLarge => 431,
            ErrorCode::RateLimited | ErrorCode::QuotaExceeded | ErrorCode::TooManyStreams => 429,
            ErrorCode::Unavailable => 503,
            ErrorCode::Internal => 500,
        }
    }

    /// The short, human `title` of the problem type.
    pub fn title(self) -> &'static str {
        match self {
            ErrorCode::InvalidParameter => "Invalid parameter",
            ErrorCode::UnknownParameter => "Unknown parameter",
            ErrorCode::InvalidCursor => "Invalid cursor",
            ErrorCode::ApiKeyInQuery => "API key in query string",
            ErrorCode::MissingApiKey => "Missing API key",
            ErrorCode::InvalidApiKey => "Invalid API key",
            ErrorCode::NotFound => "Not found",
            ErrorCode::MethodNotAllowed => "Method not allowed",
            ErrorCode::SyncTokenExpired => "Sync token expired",
            ErrorCode::EventsExpired => "Events expired",
            ErrorCode::RateLimited => "Rate limit exceeded",
            ErrorCode::TooManyStreams => "Too many streams",
            ErrorCode::QuotaExceeded => "Monthly quota exceeded",
            ErrorCode::Unavailable => "Service unavailable",
            ErrorCode::Internal => "Internal error",
            ErrorCode::MissingAdminToken => "Missing admin token",
            ErrorCode::InvalidAdminToken => "Invalid admin token",
            ErrorCode::UnknownField => "Unknown field",
            ErrorCode::InvalidField => "Invalid field",
            ErrorCode::InvalidBody => "Invalid body",
            ErrorCode::Conflict => "Conflict",
            ErrorCode::IdempotencyConflict => "Idempotency conflict",
            ErrorCode::PayloadTooLarge => "Payload too large",
            ErrorCode::UnsupportedMediaType => "Unsupported media type",
            ErrorCode::UriTooLong => "URI too long",
            ErrorCode::RequestHeaderFieldsTooLarge => "Request header fields too large",
        }
    }

    /// The `type` URI reference: `/problems/<code>`.
    pub fn type_uri(self) -> String {
        format!("/problems/{}", self.as_str())
    }

    /// Parses a wire value.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

/// An RFC 9457 problem body, `application/problem+json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Problem {
    /// `/problems/<code>`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Short summary of the problem type.
    pub title: String,
    /// HTTP status.
    pub status: u16,
    /// A sentence a person can act on.
    pub detail: String,
    /// Stable machine-readable code: `invalid_parameter`, `unknown_parameter`,
    /// `invalid_cursor`, `api_key_in_query`, `missing_api_key`,
    /// `invalid_api_key`, `not_found`, `method_not_allowed`, `sync_token_expired`, `events_expired`, `rate_limited`,
    /// `too_many_streams`, `quota_exceeded`, `unavailable`, `internal`, and for the
    /// routes that take a body `invalid_body`, `unknown_field`, `invalid_field`,
    /// `payload_too_large` or `unsupported_media_type`; `uri_too_long` and
    /// `request_header_fields_too_large` for a request too large to read. A string, not an enum:
    /// codes may be added, so treat an unknown one by its `status`.
    pub code: String,
    /// The offending query parameter or body field, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The request's `X-Request-Id`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required))]
    pub request_id: Option<String>,
    /// On 429: which policies were violated (`minute`, `month`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violated_policies: Option<Vec<String>>,
}

impl Problem {
    /// A problem for `code` with a detail sentence.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Problem {
            type_: code.type_uri(),
            title: code.title().to_owned(),
            status: code.status(),
            detail: detail.into(),
            code: code.as_str().to_owned(),
            param: None,
            request_id: None,
            violated_policies: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_field_documents_every_public_code() {
        let src = include_str!("problem.rs");
        let doc: String = src
            [src.find("/// Stable machine-readable code").unwrap()..src.find("pub code: String").unwrap()]
            .replace("///", "");
        for c in ErrorCode::ALL.iter().filter(|c| !c.admin_only()) {
            assert!(doc.contains(&format!("`{}`", c.as_str())), "{c:?}");
        }
    }

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &c in ErrorCode::ALL {
            assert!(seen.insert(c.as_str()));
            assert_eq!(ErrorCode::parse(c.as_str()), Some(c));
        }
    }
}
