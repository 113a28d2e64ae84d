//! `GET /v1/news`: one keyset page of the filtered news list, newest first,
//! without bodies ([`Node::page`](mds_node::Node::page): made from
//! the store once per query and news generation, then kept).

use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::PageParams;
use mds_domain::news::{NewsFilter, NewsQueryParams};

use super::tagged;
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "One page of articles without `body`, newest first: by `published_at` descending, then `slug`; \
articles without `published_at` come last, by `slug` (and never pass a date bound). Pagination is keyset-based: pass \
`next_cursor` back as `cursor` with the same filters (`limit` may change); articles published while you page cause no \
duplicates or skips. With `q` the list is a full-text search over headline, subheadline, excerpt and body (words \
all required, `\"a phrase\"`, `prefix*`; case and accents folded), the most relevant first (BM25; ties newest first) \
unless `sort=published_at`, combined with the other filters; its cursor is bound to `q` and the order, and by \
relevance an import between two pages may move an article across them (scores follow the corpus); `sort=published_at` \
pages as the list does. A search counts as one list request. `GET /v1/news/{slug}` gives an article with its body.",
    params(NewsFilter, PageParams),
    responses(
        (status = 200, description = "A page of articles.", body = crate::components::NewsPage, content_type = "application/json"),
        (status = 400, response = crate::components::NewsBadRequest),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Ok(tagged(state.node().page(raw.as_deref(), parse_query::<NewsQueryParams>).await?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::testing::assert_refused;

    #[test]
    fn each_bad_value_names_its_parameter() {
        let long = format!("q={}", "a".repeat(201));
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
            ("q=", "q"),
            ("q=%20%20", "q"),
            ("q=%22open", "q"),
            ("q=%26", "q"),
            (long.as_str(), "q"),
            ("sort=relevance", "sort"),
            ("q=x&sort=newest", "sort"),
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
