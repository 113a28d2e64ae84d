//! `GET /v1/industries`: the four-level classification with the number
//! of active companies at each node, from the node's catalog
//! ([`Node::industries`](mds_node::Node::industries): kept per catalog
//! version).

use axum::extract::State;
use axum::response::Response;
use mds_domain::facets::Industries;

use super::tagged;
use crate::params::Query;
use crate::state::AppState;

/// Handler.
#[utoipa::path(
    get,
    path = crate::components::PATH_IN_TABLE,
    description = "Every value the classification of the active companies takes, as a tree: macro-economic \
sector, sector, industry (the value `GET /v1/companies?industry=` takes), basic industry, each node with the number \
of active companies in it. Every active company is in one path; a level it lacks is a node named `null`, so \
children's counts add up to their parent's. Siblings are ordered by count descending, then name (`null` last).",
    responses(
        (status = 200, description = "The classification tree.", body = Industries, content_type = "application/json"),
    )
)]
pub async fn show(State(state): State<AppState>, _: Query<()>) -> Response {
    tagged(state.node().industries())
}
