//! `GET /v1/usage`: the calling key's consumption this month and in the
//! months before it since the key was created (at most twelve): the
//! node's usage report ([`mds_node::usage`]).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use mds_domain::usage::V1Usage;
use mds_node::KeyContext;

use super::{hashed_json, tagged};
use crate::error::ApiError;
use crate::params::Params;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = "/v1/usage",
    description = "The calling key's tier, limits, requests this billing month (calendar month, UTC) and in up to \
12 preceding months since the key was created, most recent first.",
    responses(
        (status = 200, description = "The usage record.", body = V1Usage, content_type = "application/json"),
        (status = 400, response = crate::openapi::BadRequest),
    )
)]
pub async fn show(
    State(state): State<AppState>,
    Extension(ctx): Extension<Arc<KeyContext>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Params::parse(raw.as_deref(), &[])?;
    Ok(tagged(hashed_json(&state.usage_report(&ctx).await?)?))
}
