//! The admin API's problems: [`ApiError`]s of the admin codes of
//! [`ErrorCode`] (those [`ErrorCode::admin_only`] says the public
//! document does not list), and an operation's [`AdminError`] as a problem.

use axum::http::{HeaderValue, header};
use mds_domain::ErrorCode;
use mds_node::admin::AdminError;

use crate::error::ApiError;

/// `401 missing_admin_token`: no `Authorization: Bearer` header.
pub fn missing_token() -> ApiError {
    ApiError::new(
        ErrorCode::MissingAdminToken,
        "send an admin token in the Authorization header: Authorization: Bearer <admin token>",
    )
    .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mds-admin\""))
}

/// `401 invalid_admin_token`: malformed, unknown or revoked token, or an
/// API key (the same answer for all).
pub fn invalid_token() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidAdminToken,
        "the admin token is not valid (API keys are not admin tokens); make one with `mds admin-tokens create NAME`",
    )
    .with_header(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mds-admin\", error=\"invalid_token\""),
    )
}

/// `400 unknown_field` naming the field.
pub fn unknown_field(field: &str, allowed: &[&str]) -> ApiError {
    let detail = format!("the body has a field this route does not define: {field:?}; allowed: {}", allowed.join(", "));
    ApiError::new(ErrorCode::UnknownField, detail).with_param(field)
}

/// `400 invalid_field` naming the field.
pub fn invalid_field(field: &str, detail: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidField, detail).with_param(field)
}

/// An operation's error as a problem: `Invalid` names the field, a missing
/// path resource is `404`, an existing one `409 conflict`, a list's bad
/// cursor `400 invalid_cursor` naming `cursor`.
pub fn from_admin(e: AdminError) -> ApiError {
    match e {
        AdminError::Invalid { param, detail } => invalid_field(param, detail),
        AdminError::NotFound(m) => ApiError::not_found(m),
        AdminError::Conflict(m) => ApiError::new(ErrorCode::Conflict, m),
        AdminError::InvalidCursor(m) => ApiError::new(ErrorCode::InvalidCursor, m).with_param("cursor"),
        AdminError::Store(e) => e.into(),
    }
}
