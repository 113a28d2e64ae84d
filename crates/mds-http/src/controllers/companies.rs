//! `GET /v1/companies`: one keyset page of the filtered company list
//! ([`Node::page`](mds_node::Node::page): kept per query
//! and catalog version).

use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::CompanyFilter;
use mds_domain::params::CompaniesQueryParams;

use super::tagged;
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "One page of companies, ordered by `ticker` then `isin`. Pagination is keyset-based: pass \
`next_cursor` back as `cursor` with the same filters (`limit` may change).",
    params(CompanyFilter, mds_domain::PageParams),
    responses(
        (status = 200, description = "A page of companies.", body = crate::components::CompanyPage, content_type = "application/json"),
        (status = 400, response = crate::components::CompaniesBadRequest),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Ok(tagged(state.node().page(raw.as_deref(), parse_query::<CompaniesQueryParams>).await?))
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
