//! `GET /v1/companies/{isin}`: one company with everything the service
//! knows about it (`V1CompanyDetail`, contract section 7.1), written from
//! the node's catalog ([`Node::company`](mds_node::Node::company)): no
//! store read on the request path.

use axum::extract::State;
use axum::response::Response;
use mds_domain::{DetailParams, Isin};

use super::{PathId, found};
use crate::error::ApiError;
use crate::state::AppState;

/// Handler. A malformed ISIN is answered `404` like an unknown one.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "One company with everything the service knows about it: every `V1Company` field with the \
same value as in the list, its exchange listings, the four classification levels, the market capitalisation \
its band was ranked on, its status (`active`, `superseded`, `delisted`) with the ISIN that replaced it and \
those it replaced, and when its record last changed. Every ISIN the service has known is answered, superseded \
and delisted ones included.\n\nWith `as_of`, the company as it stood at the end of that day (`404` when it \
was not listed then): the ticker and name of that day, `status` `active`, `superseded_by` and `supersedes` by \
the changes up to that day. Listings, classification, market cap, industry, sector, band, logo and the \
exchange flags are not tracked over time: they are today's.",
    params(crate::components::IsinPath, DetailParams),
    responses(
        (status = 200, description = "The company.", body = mds_domain::CompanyDetail, content_type = "application/json"),
        (status = 400, response = crate::components::AsOfBadRequest),
    )
)]
pub async fn show(State(state): State<AppState>, at: PathId<Isin, DetailParams>) -> Result<Response, ApiError> {
    let PathId(isin, params) = at;
    found::<Isin>(state.node().company(&isin, &params)?)
}

#[cfg(test)]
mod tests {
    use crate::controllers::testing::assert_refused;
    use crate::params::parse_query;

    #[test]
    fn as_of_is_a_day_from_1990() {
        let bad = [("as_of=2024-1-31", "as_of"), ("as_of=1989-12-31", "as_of"), ("as_of=x", "as_of")];
        assert_refused(parse_query::<mds_domain::DetailParams>, &bad, &["asof=2024-01-01"]);
        let ok = parse_query::<mds_domain::DetailParams>(Some("as_of=2024-01-31")).unwrap();
        assert_eq!(ok.as_of.unwrap().to_string(), "2024-01-31");
    }
}
