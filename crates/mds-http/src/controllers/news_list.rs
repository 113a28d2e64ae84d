//! `GET /v1/news`: one keyset page of the filtered news list, newest first,
//! without bodies. Made from the store once per query and news generation
//! ([`Node::news_list_page`](mds_node::Node::news_list_page)), then served
//! from the generation's kept pages
//! ([`NewsPages`](mds_node::news_list::NewsPages)).

use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::news::{NEWS_PARAMETERS, NewsFilter, NewsQueryParams};
use mds_domain::{ErrorCode, PageParams};
use mds_node::news_list::NewsListError;

use super::tagged;
use crate::error::ApiError;
use crate::params::Params;
use crate::state::AppState;

/// The query parameters the endpoint defines (defined in
/// [`mds_domain::news`]).
pub const PARAMETERS: &[&str] = NEWS_PARAMETERS;

/// Parses and validates the query string: names with [`Params`] (unknown
/// or repeated ones are refused), values with [`NewsQueryParams`].
pub fn parse(raw: Option<&str>) -> Result<NewsQueryParams, ApiError> {
    let p = Params::parse(raw, PARAMETERS)?;
    NewsQueryParams::parse(|name| p.get(name)).map_err(|e| ApiError::invalid_parameter(e.param, e.detail))
}

/// Handler.
#[utoipa::path(
    get,
    path = "/v1/news",
    description = "One page of articles without `body`, newest first: by `published_at` descending, then `slug`; \
articles without `published_at` come last, by `slug` (and never pass a date bound). Pagination is keyset-based: pass \
`next_cursor` back as `cursor` with the same filters (`limit` may change); articles published while you page cause no \
duplicates or skips. `GET /v1/news/{slug}` gives an article with its body.",
    params(NewsFilter, PageParams),
    responses(
        (status = 200, description = "A page of articles.", body = crate::openapi::NewsPage, content_type = "application/json"),
        (status = 400, response = crate::openapi::NewsBadRequest),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let query = raw.as_deref().unwrap_or("");
    // Taken before the store is read: see `NewsPages::current`.
    let pages = state.news_pages.current();
    if let Some(served) = pages.get(query) {
        return Ok(tagged(served));
    }
    let req = parse(raw.as_deref())?;
    let served = state.news_list_page(&req).await.map_err(|e| match e {
        NewsListError::Cursor(e) => ApiError::new(ErrorCode::InvalidCursor, e.to_string()).with_param("cursor"),
        NewsListError::Store(e) => e.into(),
    })?;
    pages.put(query, served.clone());
    Ok(tagged(served))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(q: &str) -> (ErrorCode, Option<String>) {
        let e = parse(Some(q)).unwrap_err();
        let r = axum::response::IntoResponse::into_response(e);
        let p = r.extensions().get::<mds_domain::Problem>().unwrap();
        (ErrorCode::parse(&p.code).unwrap(), p.param.clone())
    }

    #[test]
    fn each_bad_value_names_its_parameter() {
        for (q, param) in [
            ("isin=INE002A01019", "isin"),
            ("isin=x", "isin"),
            ("ticker=", "ticker"),
            ("category=", "category"),
            ("tag=", "tag"),
            ("published_after=2026-01-01", "published_after"),
            ("published_before=2026-13-01T00:00:00Z", "published_before"),
            ("published_after=2026-01-02T00:00:00Z&published_before=2026-01-01T00:00:00Z", "published_before"),
            ("limit=0", "limit"),
            ("tag=a&tag=b", "tag"),
        ] {
            assert_eq!(err(q), (ErrorCode::InvalidParameter, Some(param.to_owned())), "{q}");
        }
        assert_eq!(err("tags=x"), (ErrorCode::UnknownParameter, Some("tags".to_owned())));
        assert_eq!(err("letter=a"), (ErrorCode::UnknownParameter, Some("letter".to_owned())));
    }

    #[test]
    fn good_values_parse() {
        let r = parse(Some("ticker=tcs&published_after=2026-01-01T00%3A00%3A00%2B05%3A30&limit=200")).unwrap();
        assert_eq!(r.page.limit.get(), 200);
        assert_eq!(r.filter.ticker.unwrap().as_str(), "TCS");
        assert_eq!(r.filter.published_after.unwrap().to_rfc3339(), "2025-12-31T18:30:00+00:00");
        assert_eq!(parse(None).unwrap().page.limit.get(), 50);
    }
}
