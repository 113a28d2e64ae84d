//! `GET /v1/news/{slug}`: one article with its body
//! ([`Node::article`](mds_node::Node::article): kept by the node once read
//! from the store).

use axum::extract::State;
use axum::response::Response;
use mds_domain::Slug;

use super::{Id, Identifier, tagged};
use crate::error::ApiError;
use crate::state::AppState;

/// Handler. A slug that cannot exist (not `[a-z0-9-]`, over 200 characters)
/// is answered `404` like an unknown one, without a store lookup.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "One article with its `body`. Takes no query parameters.",
    params(crate::components::SlugPath),
    responses(
        (status = 200, description = "The article.", body = mds_domain::Article, content_type = "application/json"),
    )
)]
pub async fn show(State(state): State<AppState>, Id(slug): Id<Slug>) -> Result<Response, ApiError> {
    // The body's tag, made once with the body.
    state.node().article(&slug).await?.map(tagged).ok_or_else(|| ApiError::not_found(Slug::NOT_FOUND))
}
