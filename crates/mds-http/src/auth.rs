//! Authentication: refuses keys in query strings, then turns the
//! `Authorization: Bearer` key into a [`KeyContext`] that the rest of the
//! request path (limiter, meter, handlers) takes from request extensions.
//!
//! A key is parsed first (scheme, length, checksum): a malformed key is
//! refused without any lookup. A well-formed one is looked up in the node's
//! key cache ([`mds_node::keys`]), and in the store when the cache does not
//! hold it; a key that could not be checked (store down, the node's lookup
//! budget spent) is `503`, not `401`.

use std::borrow::Cow;
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
    // Without `%` or `+` a query's pairs are its text as sent: read them
    // without decoding (every request's case), else decoded.
    let pairs: Box<dyn Iterator<Item = (Cow<'_, str>, Cow<'_, str>)>> = match q.contains(['%', '+']) {
        false => Box::new(plain_pairs(q).map(|(k, v)| (Cow::Borrowed(k), Cow::Borrowed(v)))),
        true => Box::new(form_urlencoded::parse(q.as_bytes())),
    };
    for (k, v) in pairs {
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

/// The name-value pairs of a query with no `%` or `+`, as
/// `form_urlencoded::parse` reads them: split at `&`, empty parts skipped,
/// each at its first `=` (none: an empty value).
fn plain_pairs(q: &str) -> impl Iterator<Item = (&str, &str)> {
    q.split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, "")))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Queries without `%` or `+` are read as `form_urlencoded` reads
    /// them, pair for pair.
    #[test]
    fn plain_queries_read_as_form_urlencoded_reads_them() {
        let parts = ["", "a", "a=", "=b", "a=b", "a=b=c", "key", "api_key=x", "mds_live_k=1", "é=ü", "&", "=="];
        for x in parts {
            for y in parts {
                for q in [format!("{x}&{y}"), format!("{x}{y}"), format!("&&{x}&&{y}&")] {
                    let plain: Vec<(String, String)> = plain_pairs(&q).map(|(k, v)| (k.into(), v.into())).collect();
                    let decoded: Vec<(String, String)> =
                        form_urlencoded::parse(q.as_bytes()).map(|(k, v)| (k.into(), v.into())).collect();
                    assert_eq!(plain, decoded, "{q:?}");
                }
            }
        }
    }

    /// A key is refused in a name or value, plain or escaped.
    #[test]
    fn keys_are_refused_plain_and_escaped() {
        for q in ["api_key=x", "a=1&token=2", "x=mds_live_abc", "mds_test_abc=1", "x=mds%5Flive_abc", "API%5FKEY=1"] {
            let uri: Uri = format!("/v1/companies?{q}").parse().unwrap();
            assert!(refuse_key_in_query(&uri).is_err(), "{q}");
        }
        for q in ["limit=5", "a=b+c", "q=mds", "date=2026-08-21&series=EQ"] {
            let uri: Uri = format!("/v1/companies?{q}").parse().unwrap();
            assert!(refuse_key_in_query(&uri).is_ok(), "{q}");
        }
    }
}
