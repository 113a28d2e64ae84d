//! [`AppState`]: what every handler shares: the node ([`mds_node::Node`],
//! [`AppState::node`]) and the HTTP layer's settings ([`AppState::http`]).
//! It is loaded with what the route table says of the node (metrics
//! labels, data routes) by [`AppState::load`] (in [`mod@crate::router`]).

use std::sync::Arc;

use axum::http::HeaderValue;
use mds_node::Node;

use crate::config::HttpConfig;

/// Cheap-to-clone handle on the node and the HTTP settings (axum state).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// What an [`AppState`] shares.
struct Shared {
    node: Arc<Node>,
    http: HttpConfig,
    /// `Cache-Control` of the routes cached `private` (`private,
    /// max-age=N`), made once.
    private_caching: HeaderValue,
    /// The templates of the routes whose requests count against the quota.
    data_routes: &'static [&'static str],
}

impl AppState {
    /// The HTTP layer around a loaded `node`, whose data routes (those
    /// counted against the quota) are `data_routes`.
    pub fn new(node: Arc<Node>, http: HttpConfig, data_routes: &'static [&'static str]) -> Self {
        let private_caching =
            HeaderValue::from_str(&format!("private, max-age={}", http.cache_max_age.as_secs())).expect("ASCII");
        AppState(Arc::new(Shared { node, http, private_caching, data_routes }))
    }

    /// The node: store, cached views, limiter, metrics, and the operations
    /// the routes call.
    pub fn node(&self) -> &Node {
        &self.0.node
    }

    /// The node, to share with what outlives a request (the background
    /// tasks).
    pub fn shared_node(&self) -> &Arc<Node> {
        &self.0.node
    }

    /// Settings of the HTTP layer.
    pub fn http(&self) -> &HttpConfig {
        &self.0.http
    }

    /// The templates of the routes whose requests count against the quota
    /// (the daily usage report has each in every day).
    pub fn data_routes(&self) -> &'static [&'static str] {
        self.0.data_routes
    }

    /// The `Cache-Control` of the routes cached `private`.
    pub fn private_caching(&self) -> &HeaderValue {
        &self.0.private_caching
    }
}
