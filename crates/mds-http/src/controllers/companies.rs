//! `GET /v1/companies`: one keyset page of the filtered company list, made
//! once per query and catalog version, then served from the version's
//! [`PageCache`](mds_node::pages::PageCache).

use axum::extract::{RawQuery, State};
use axum::http::HeaderValue;
use axum::response::Response;
use mds_catalog::SortKey;
use mds_domain::params::CompaniesQueryParams;
use mds_domain::{CompanyFilter, ErrorCode, page as envelope};
use sha2::Digest;

use mds_node::catalog::CatalogVersion;
use mds_node::metrics::Event;
use mds_node::tagged::Tagged;

use super::tagged;
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = "/v1/companies",
    description = "One page of companies, ordered by `ticker` then `isin`. Pagination is keyset-based: pass \
`next_cursor` back as `cursor` with the same filters (`limit` may change).",
    params(CompanyFilter, mds_domain::PageParams),
    responses(
        (status = 200, description = "A page of companies.", body = crate::openapi::CompanyPage, content_type = "application/json"),
        (status = 400, response = crate::openapi::CompaniesBadRequest),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let catalog = state.catalog();
    let query = raw.as_deref().unwrap_or("");
    let served = match catalog.pages().get(query) {
        Some(served) => {
            state.metrics.event(Event::PageCacheHit);
            served
        }
        None => {
            let served = make_page(&state, &catalog, raw.as_deref())?;
            state.metrics.event(Event::PageCacheMiss);
            catalog.pages().put(query, served.clone());
            served
        }
    };
    Ok(tagged(served))
}

/// The page for the query string `raw` of `catalog`, made.
fn make_page(state: &AppState, catalog: &CatalogVersion, raw: Option<&str>) -> Result<Tagged, ApiError> {
    let req = parse_query::<CompaniesQueryParams>(raw)?;
    let after = match &req.page.cursor {
        Some(c) => Some(
            state
                .cursors
                .decode(&req.filter, c)
                .map_err(|e| ApiError::new(ErrorCode::InvalidCursor, e.to_string()).with_param("cursor"))?,
        ),
        None => None,
    };
    let page = catalog.page(&req.filter, after.as_ref(), req.page.limit.get());
    let next_cursor = page.next.as_ref().map(|k| state.cursors.encode(&req.filter, k));
    let mut body = Vec::with_capacity(256);
    envelope::write_json(&mut body, |b| page.write_rows(b), next_cursor.as_deref(), page.has_more());
    // Exactly as long as the page (the spare capacity is given back), so
    // that what the page cache counts is what it holds.
    Ok(Tagged { body: body.into_boxed_slice().into(), etag: page_tag(catalog, &req, after.as_ref()) })
}

/// The strong `ETag` of a page, without hashing the page: what a page holds
/// is a function of the catalog version, the filters, the position and the
/// limit (and of the cursor secret and this build, which a catalog
/// version's id outlives on no node), so the tag is 16 bytes of a SHA-256
/// of those. A new catalog (an import, or a restart) gives every page a new
/// tag, whether or not its rows changed.
fn page_tag(catalog: &CatalogVersion, req: &CompaniesQueryParams, after: Option<&SortKey>) -> HeaderValue {
    let filter = req.filter.canonical();
    catalog.derived_tag(b"mds companies page\0", |h| {
        h.update((filter.len() as u64).to_le_bytes());
        h.update(filter.as_bytes());
        match after {
            Some(k) => {
                h.update([1]);
                h.update((k.ticker.len() as u64).to_le_bytes());
                h.update(k.ticker.as_bytes());
                h.update(k.isin.as_bytes());
            }
            None => h.update([0]),
        }
        h.update((req.page.limit.get() as u64).to_le_bytes());
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::testing::assert_refused;

    #[test]
    fn each_bad_value_names_its_parameter() {
        let bad = [
            ("limit=0", "limit"),
            ("limit=201", "limit"),
            ("limit=x", "limit"),
            ("letter=ab", "letter"),
            ("exchange=lse", "exchange"),
            ("market_cap=huge", "market_cap"),
            ("search=a", "search"),
            ("search=%20a%20", "search"),
            ("ticker=", "ticker"),
            ("industry=", "industry"),
            ("limit=5&limit=6", "limit"),
        ];
        assert_refused(parse_query::<CompaniesQueryParams>, &bad, &["industy=x"]);
    }

    #[test]
    fn good_values_parse() {
        let r =
            parse_query::<CompaniesQueryParams>(Some("letter=a&exchange=nse&market_cap=mid_cap&limit=200&ticker=abb"))
                .unwrap();
        assert_eq!(r.page.limit.get(), 200);
        assert_eq!(r.filter.letter.unwrap().as_char(), 'A');
        assert_eq!(r.filter.ticker.unwrap().as_str(), "ABB");
        assert_eq!(parse_query::<CompaniesQueryParams>(None).unwrap().page.limit.get(), 50);
    }
}
