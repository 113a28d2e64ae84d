//! The admin API's own problem codes, beside those of section 1 it shares
//! (`not_found`, `method_not_allowed`, `invalid_parameter`,
//! `unknown_parameter`, `invalid_cursor`, `unavailable`, `internal`). They
//! are not codes of the public API, whose document does not list them.

use axum::http::{HeaderValue, StatusCode, header};
use mds_node::admin::AdminError;

use crate::error::ApiError;

/// `401 missing_admin_token`: no `Authorization: Bearer` header.
pub fn missing_token() -> ApiError {
    ApiError::other(
        StatusCode::UNAUTHORIZED,
        "missing_admin_token",
        "Missing admin token",
        "send an admin token in the Authorization header: Authorization: Bearer <admin token>",
    )
    .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mds-admin\""))
}

/// `401 invalid_admin_token`: malformed, unknown or revoked token, or an
/// API key (the same answer for all).
pub fn invalid_token() -> ApiError {
    ApiError::other(
        StatusCode::UNAUTHORIZED,
        "invalid_admin_token",
        "Invalid admin token",
        "the admin token is not valid (API keys are not admin tokens); make one with `mds admin-tokens create NAME`",
    )
    .with_header(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mds-admin\", error=\"invalid_token\""),
    )
}

/// `400 unknown_field` naming the field.
pub fn unknown_field(field: &str, allowed: &[&str]) -> ApiError {
    ApiError::other(
        StatusCode::BAD_REQUEST,
        "unknown_field",
        "Unknown field",
        format!("the body has a field this route does not define: {field:?}; allowed: {}", allowed.join(", ")),
    )
    .with_param(field)
}

/// `400 invalid_field` naming the field.
pub fn invalid_field(field: &str, detail: impl Into<String>) -> ApiError {
    ApiError::other(StatusCode::BAD_REQUEST, "invalid_field", "Invalid field", detail).with_param(field)
}

/// `400 invalid_body`: not a JSON object.
pub fn invalid_body(detail: impl Into<String>) -> ApiError {
    ApiError::other(StatusCode::BAD_REQUEST, "invalid_body", "Invalid body", detail)
}

/// `409 conflict`: it exists already.
pub fn conflict(detail: impl Into<String>) -> ApiError {
    ApiError::other(StatusCode::CONFLICT, "conflict", "Conflict", detail)
}

/// `409 idempotency_conflict`: an `Idempotency-Key` used before with
/// another request.
pub fn idempotency_conflict(detail: impl Into<String>) -> ApiError {
    ApiError::other(StatusCode::CONFLICT, "idempotency_conflict", "Idempotency conflict", detail)
}

/// An operation's error as a problem: `Invalid` names the field, a missing
/// path resource is `404`, an existing one `409`, a list's bad cursor
/// `400 invalid_cursor` naming `cursor`.
pub fn from_admin(e: AdminError) -> ApiError {
    match e {
        AdminError::Invalid { param, detail } => invalid_field(param, detail),
        AdminError::NotFound(m) => ApiError::not_found(m),
        AdminError::Conflict(m) => conflict(m),
        AdminError::InvalidCursor(m) => ApiError::new(mds_domain::ErrorCode::InvalidCursor, m).with_param("cursor"),
        AdminError::Store(e) => e.into(),
    }
}
