//! `GET /v1/news/facets`: the categories and tags of the news with how
//! many articles carry each ([`Node::news_facets`](mds_node::Node::news_facets):
//! from the news index, kept per news generation).

use axum::extract::State;
use axum::response::Response;
use mds_domain::facets::NewsFacets;

use super::tagged;
use crate::error::ApiError;
use crate::params::Query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "Every `category` and `tag` the articles carry, exactly as `GET /v1/news` filters by them, \
each with the number of articles carrying it; ordered by count descending, then name.",
    responses(
        (status = 200, description = "The news facets.", body = NewsFacets, content_type = "application/json"),
    )
)]
pub async fn show(State(state): State<AppState>, _: Query<()>) -> Result<Response, ApiError> {
    Ok(tagged(state.node().news_facets().await?))
}
