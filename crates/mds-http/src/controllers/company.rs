//! `GET /v1/companies/{isin}`: one company with everything the service
//! knows about it (`V1CompanyDetail`, contract section 7.1), written from
//! the node's catalog ([`Node::company`](mds_node::Node::company)): no
//! store read on the request path.

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
    description = "One company with everything the service knows about it: every `V1Company` field with the \
same value as in the list, its exchange listings, the four classification levels, the market capitalisation \
its band was ranked on, and when its record last changed. Takes no query parameters.",
    params(crate::components::IsinPath),
    responses(
        (status = 200, description = "The company.", body = mds_domain::CompanyDetail, content_type = "application/json"),
    )
)]
pub async fn show(State(state): State<AppState>, Id(isin): Id<Isin>) -> Result<Response, ApiError> {
    state.node().company(&isin).map(tagged).ok_or_else(|| ApiError::not_found(Isin::NOT_FOUND))
}
