//! The controllers: each parses its request, calls one operation of the
//! node ([`mds_node`]) and renders what it returns. One module per
//! resource (`health` holds the three unkeyed probes), plus the JSON
//! response helpers and the extractors they share.

pub mod actions;
pub mod article;
pub mod changes;
pub mod companies;
pub mod company;
pub mod company_history;
pub mod events;
pub mod health;
pub mod industries;
pub mod mcp;
pub mod news_facets;
pub mod news_list;
pub mod prices;
pub mod symbol;
pub mod usage;
pub mod usage_daily;
pub mod webhooks;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use mds_domain::{Isin, Slug, Ticker};
use mds_node::{KeyContext, Tagged};

use crate::error::ApiError;
use crate::params::parse_query;
use mds_domain::params::QueryParams;

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
/// ([`crate::route::Caching`]), added by the envelope.
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

/// What a `GET …/{id}` route names its resource by.
pub trait Identifier: Sized + Send {
    /// The `detail` of the `404` for an id that names nothing (or cannot).
    const NOT_FOUND: &'static str;
    /// The id in a path segment; `None` if it cannot name anything.
    fn from_segment(s: &str) -> Option<Self>;
}

impl Identifier for Isin {
    const NOT_FOUND: &'static str = "no company with this ISIN";
    fn from_segment(s: &str) -> Option<Self> {
        Isin::parse(s).ok()
    }
}

impl Identifier for Slug {
    const NOT_FOUND: &'static str = "no article with this slug";
    fn from_segment(s: &str) -> Option<Self> {
        Slug::parse(s).ok()
    }
}

impl Identifier for Ticker {
    const NOT_FOUND: &'static str = "no security has carried this symbol on this exchange";
    fn from_segment(s: &str) -> Option<Self> {
        Ticker::parse(s).ok()
    }
}

/// Extractor: the id and the query of a `GET …/{id}` route that takes
/// query parameters, read in that order: a bad query is `400` (as
/// [`crate::params::Query`] answers) before a malformed id, which is
/// answered as an unknown one would be: `404 not_found`.
#[derive(Debug)]
pub struct PathId<T, Q>(pub T, pub Q);

impl<T: Identifier, Q: QueryParams + Send, S: Send + Sync> FromRequestParts<S> for PathId<T, Q> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let query = parse_query::<Q>(parts.uri.query())?;
        let segment = Path::<String>::from_request_parts(parts, state).await.ok();
        let id = segment.and_then(|Path(s)| T::from_segment(&s)).ok_or_else(|| ApiError::not_found(T::NOT_FOUND))?;
        Ok(PathId(id, query))
    }
}

/// The answer of a lookup by `T`: the tagged body, or `404` for nothing.
pub fn found<T: Identifier>(body: Option<Tagged>) -> Result<Response, ApiError> {
    body.map(tagged).ok_or_else(|| ApiError::not_found(T::NOT_FOUND))
}

/// Extractor: the id of a `GET …/{id}` route that takes no query
/// parameters. A query parameter is `400 unknown_parameter`; a malformed id
/// is answered as an unknown one would be: `404 not_found`.
#[derive(Debug)]
pub struct Id<T>(pub T);

impl<T: Identifier, S: Send + Sync> FromRequestParts<S> for Id<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        parse_query::<()>(parts.uri.query())?;
        let segment = Path::<String>::from_request_parts(parts, state).await.ok();
        segment.and_then(|Path(s)| T::from_segment(&s)).map(Id).ok_or_else(|| ApiError::not_found(T::NOT_FOUND))
    }
}

/// Extractor: the calling key, as the guard found it (keyed routes only).
#[derive(Debug)]
pub struct Caller(pub Arc<KeyContext>);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let ctx = parts.extensions.get::<Arc<KeyContext>>().cloned();
        ctx.map(Caller).ok_or_else(|| ApiError::internal(&"no key on the request: the route is not keyed"))
    }
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
