//! `GET /v1/companies/{isin}/history`: a company's identity events, oldest
//! first (`V1CompanyHistory`, contract 10.2), from the node's catalog
//! ([`Node::company_history`](mds_node::Node::company_history)).

use axum::extract::State;
use axum::response::Response;
use mds_domain::Isin;

use super::{Id, Identifier, tagged};
use crate::error::ApiError;
use crate::state::AppState;

/// Handler. A malformed ISIN is answered `404` like an unknown one.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The identity events of the company with this ISIN, oldest first: `listed`, `symbol_changed`, \
`name_changed`, `isin_changed` (standing under both ISINs; `from` and `to` name them) and `delisted`, each with \
its `date` and whether an exchange file dates it (`exact`) or it was first seen in a snapshot as of `date`. \
A company the service holds no history for (one loaded with `mds import companies`) has an empty list. \
Takes no query parameters.",
    params(crate::components::IsinPath),
    responses(
        (status = 200, description = "The company's history.", body = mds_domain::CompanyHistory, content_type = "application/json"),
    )
)]
pub async fn show(State(state): State<AppState>, Id(isin): Id<Isin>) -> Result<Response, ApiError> {
    state.node().company_history(&isin).map(tagged).ok_or_else(|| ApiError::not_found(Isin::NOT_FOUND))
}
