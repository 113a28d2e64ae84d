//! The router: the route table's rows mounted, and around them compression
//! and the envelope (see [`crate::middleware`] for the order and why).

use std::sync::Arc;

use axum::Router;
use mds_node::Node;
use mds_node::metrics::Metrics;
use mds_store::{Store, StoreResult};

use crate::config::HttpConfig;
use crate::error::ApiError;
use crate::middleware::envelope::Envelope;
use crate::routes::{self, ROUTES};
use crate::state::AppState;

impl AppState {
    /// Loads the node from the store, its metrics labelled by the route
    /// table, with the HTTP layer around it.
    pub async fn load(store: Arc<dyn Store>, config: HttpConfig) -> StoreResult<Self> {
        let node =
            Node::load(store, config.node.clone(), Metrics::new(routes::labels(), config.node.clock.clone())).await?;
        Ok(Self::new(node, config, routes::data_routes()))
    }
}

/// The whole application as a service (`axum::serve` it with
/// `into_make_service`, or call it with `tower::ServiceExt::oneshot`).
///
/// The envelope (with compression) wraps the router from outside rather
/// than through `Router::layer`, which would wrap every route separately
/// and clone each wrapped stack on every request. The keyed routes are
/// guarded by the envelope (it finds them in the route table).
pub fn router(state: AppState) -> Envelope {
    public_router(state, true)
}

/// [`router`], with `/metrics` or without it (when the admin listener
/// serves it: a request for it here is then `404`).
pub fn public_router(state: AppState, metrics: bool) -> Envelope {
    let routes = ROUTES
        .iter()
        .filter(|r| metrics || r.path != "/metrics")
        .fold(Router::new(), |router, r| router.route(r.path, (r.handler)()))
        .fallback(|| async { ApiError::not_found("no such route; see the API reference for the routes") })
        .with_state(state.clone());
    Envelope::new(state, routes)
}
