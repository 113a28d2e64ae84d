//! `GET /v1/news`: one keyset page of the filtered news list, newest first,
//! without bodies. Made from the store once per query and news generation
//! ([`Node::news_list_page`](mds_node::Node::news_list_page)), then served
//! from the generation's kept pages
//! ([`NewsPages`](mds_node::news_list::NewsPages)).

use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::news::{NewsFilter, NewsQueryParams};
use mds_domain::{ErrorCode, PageParams};
use mds_node::news_list::NewsListError;

use super::tagged;
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

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
    let req = parse_query::<NewsQueryParams>(raw.as_deref())?;
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
    use crate::controllers::testing::assert_refused;

    #[test]
    fn each_bad_value_names_its_parameter() {
        let bad = [
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
        ];
        assert_refused(parse_query::<NewsQueryParams>, &bad, &["tags=x", "letter=a"]);
    }

    #[test]
    fn good_values_parse() {
        let r = parse_query::<NewsQueryParams>(Some(
            "ticker=tcs&published_after=2026-01-01T00%3A00%3A00%2B05%3A30&limit=200",
        ))
        .unwrap();
        assert_eq!(r.page.limit.get(), 200);
        assert_eq!(r.filter.ticker.unwrap().as_str(), "TCS");
        assert_eq!(r.filter.published_after.unwrap().to_rfc3339(), "2025-12-31T18:30:00+00:00");
        assert_eq!(parse_query::<NewsQueryParams>(None).unwrap().page.limit.get(), 50);
    }
}
