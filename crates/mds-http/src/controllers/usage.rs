//! `GET /v1/usage`: the calling key's consumption this month and in the
//! months before it since the key was created (at most twelve): the
//! node's usage report ([`mds_node::usage`]).

use axum::extract::State;
use axum::response::Response;
use mds_domain::usage::V1Usage;

use super::{Caller, hashed_json, tagged};
use crate::error::ApiError;
use crate::params::Query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "The calling key's tier, limits, requests this billing month (calendar month, UTC) and in up to \
12 preceding months since the key was created, most recent first.",
    responses(
        (status = 200, description = "The usage record.", body = V1Usage, content_type = "application/json"),
    )
)]
pub async fn show(State(state): State<AppState>, Caller(ctx): Caller, _: Query<()>) -> Result<Response, ApiError> {
    Ok(tagged(hashed_json(&state.node().usage_report(&ctx).await?)?))
}
