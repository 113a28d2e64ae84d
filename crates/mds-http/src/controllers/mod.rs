//! One module per endpoint, plus the JSON response helper they share.

pub mod changes;
pub mod companies;
pub mod company;
pub mod health;
pub mod news;
pub mod news_list;
pub mod usage;
pub mod usage_daily;

use axum::body::{Body, Bytes};
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use mds_node::Tagged;

use crate::error::ApiError;
use crate::params::Params;

/// A `200 application/json` response with the body's `ETag`.
pub fn tagged(t: Tagged) -> Response {
    let mut resp = json(t.body);
    resp.headers_mut().insert(header::ETAG, t.etag);
    resp
}

/// `value` as JSON, tagged with its digest ([`Tagged::hashed`]).
pub fn hashed_json<T: serde::Serialize>(value: &T) -> Result<Tagged, ApiError> {
    Ok(Tagged::hashed(serde_json::to_vec(value).map_err(|e| ApiError::internal(&e))?))
}

/// A `200 application/json` response. Its `Cache-Control` is its route's
/// ([`crate::routes::Caching`]), added by the envelope.
pub fn json(body: impl Into<Bytes>) -> Response {
    let mut resp = Response::new(Body::from(body.into()));
    // Room for the 11 headers of a keyed response (Content-Type,
    // Cache-Control, ETag, five rate-limit headers, Content-Length, Vary,
    // X-Request-Id), so the map is allocated once, not grown on the way out.
    let h = resp.headers_mut();
    *h = HeaderMap::with_capacity(12);
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// The one path parameter of a `GET …/{id}` route that takes no query
/// parameters, parsed by `parse`. A malformed one is answered as an unknown
/// one would be: `404 not_found` with `detail`.
pub fn path_param<T, E>(
    path: Result<Path<String>, PathRejection>,
    raw: Option<&str>,
    parse: impl FnOnce(&str) -> Result<T, E>,
    detail: &'static str,
) -> Result<T, ApiError> {
    Params::parse(raw, &[])?;
    let Ok(Path(s)) = path else { return Err(ApiError::not_found(detail)) };
    parse(&s).map_err(|_| ApiError::not_found(detail))
}

/// What the controllers' query-parsing tests share.
#[cfg(test)]
pub(crate) mod testing {
    use mds_domain::{ErrorCode, Problem};

    use crate::error::ApiError;

    /// The code and `param` of the problem `e` answers with.
    pub(crate) fn problem(e: ApiError) -> (ErrorCode, Option<String>) {
        let r = axum::response::IntoResponse::into_response(e);
        let p = r.extensions().get::<Problem>().expect("a problem response");
        (ErrorCode::parse(&p.code).expect("a known code"), p.param.clone())
    }

    /// Asserts that `parse` refuses each query of `bad` with `400
    /// invalid_parameter` naming its parameter, and each query of `unknown`
    /// (one `name=value`) with `unknown_parameter` naming `name`.
    pub(crate) fn assert_refused<T: std::fmt::Debug>(
        parse: impl Fn(Option<&str>) -> Result<T, ApiError>,
        bad: &[(&str, &str)],
        unknown: &[&str],
    ) {
        for (q, param) in bad {
            let e = parse(Some(q)).expect_err(q);
            assert_eq!(problem(e), (ErrorCode::InvalidParameter, Some((*param).to_owned())), "{q}");
        }
        for q in unknown {
            let name = q.split('=').next().unwrap_or_default();
            let e = parse(Some(q)).expect_err(q);
            assert_eq!(problem(e), (ErrorCode::UnknownParameter, Some(name.to_owned())), "{q}");
        }
    }
}
