//! Authentication: refuses keys in query strings, then turns the
//! `Authorization: Bearer` key into a [`KeyContext`] that the rest of the
//! request path (limiter, meter, handlers) takes from request extensions.
//!
//! A key is parsed first (scheme, length, checksum): a malformed key is
//! refused without any lookup. A well-formed one is looked up in the node's
//! key cache ([`mds_node::keys`]), and in the store when the cache does not
//! hold it; a key that could not be checked (store down, the node's lookup
//! budget spent) is `503`, not `401`.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, Uri, header};
use mds_domain::key::looks_like_key;
use mds_domain::{ApiKey, ErrorCode};
use mds_node::{KeyContext, Unchecked};

use crate::error::ApiError;
use crate::state::AppState;

/// Query parameters that carry credentials in other APIs; refused here.
pub const KEY_PARAMETERS: &[&str] = &["api_key", "apikey", "api-key", "key", "token", "access_token"];

/// `400 api_key_in_query` for a key-like value or a credential parameter in
/// the query string of `uri`, whatever else the request carries. The value
/// is never logged or echoed.
pub fn refuse_key_in_query(uri: &Uri) -> Result<(), ApiError> {
    let Some(q) = uri.query() else { return Ok(()) };
    for (k, v) in form_urlencoded::parse(q.as_bytes()) {
        let named = KEY_PARAMETERS.iter().any(|p| k.eq_ignore_ascii_case(p));
        if named || looks_like_key(&v) || looks_like_key(&k) {
            let param = if looks_like_key(&k) { None } else { Some(k.into_owned()) };
            let e = ApiError::new(
                ErrorCode::ApiKeyInQuery,
                "API keys are accepted only in the Authorization header (Authorization: Bearer <key>); \
                 a key sent in a URL may be logged along the way, so consider rotating it",
            );
            return Err(match param {
                Some(p) => e.with_param(&p),
                None => e,
            });
        }
    }
    Ok(())
}

/// Authenticates the bearer key of a request with `headers`: its
/// [`KeyContext`], or `401`.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Arc<KeyContext>, ApiError> {
    let value = headers.get(header::AUTHORIZATION).ok_or_else(missing)?;
    // Not text: whatever was meant, it is no key of ours.
    let value = value.to_str().map_err(|_| invalid())?;
    let token = bearer_token(value).ok_or_else(missing)?;
    let key = ApiKey::parse(token).map_err(|_| invalid())?;
    match state.node().authenticate(&key).await {
        Ok(found) => found.ok_or_else(invalid),
        Err(Unchecked::Throttled) => Err(ApiError::key_lookups_spent()),
        Err(Unchecked::Store(e)) => Err(e.into()),
    }
}

/// The token of an `Authorization: Bearer <token>` header value (scheme
/// case-insensitive), if there is a non-empty one.
pub fn bearer_token(value: &str) -> Option<&str> {
    let v = value.trim();
    let (scheme, token) = v.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn missing() -> ApiError {
    ApiError::new(
        ErrorCode::MissingApiKey,
        "send your API key in the Authorization header: Authorization: Bearer <key>",
    )
    .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mds\""))
}

fn invalid() -> ApiError {
    ApiError::new(ErrorCode::InvalidApiKey, "the API key is not valid; check it, or ask for a new one").with_header(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mds\", error=\"invalid_token\""),
    )
}
