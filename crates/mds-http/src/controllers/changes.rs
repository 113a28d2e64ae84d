//! `GET /v1/companies/changes`: the company master in change order, then
//! only what changed (contract section 7.2): the node's change feed
//! ([`mds_node::changes`], where sync tokens and cursors are sealed and
//! pages kept).

use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::params::ChangesQueryParams;

use super::tagged;
use crate::error::ApiError;
use crate::params::parse_query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "Without `since`: every company, as `V1CompanyDetail`, page by page in change order. With \
`since` (the `sync_token` of an earlier walk's last page): only the companies created or changed after it, \
each once in its latest form. The last page (`has_more: false`) carries the `sync_token` to pass next time. \
`410 sync_token_expired` means the token is older than the history the store keeps: sync from scratch.",
    params(mds_domain::params::SyncParams, mds_domain::PageParams),
    responses(
        (status = 200, description = "A page of changed companies.", body = mds_domain::ChangesPage, content_type = "application/json"),
        (status = 400, response = crate::components::ChangesBadRequest),
        (status = 410, response = crate::components::SyncTokenExpired),
    )
)]
pub async fn list(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Ok(tagged(state.node().page(raw.as_deref(), parse_query::<ChangesQueryParams>).await?))
}
