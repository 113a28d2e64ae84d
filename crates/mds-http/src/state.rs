//! [`AppState`]: what every handler shares: the node ([`mds_node::Node`],
//! reached through `Deref`) and the HTTP layer's settings.

use std::sync::Arc;

use axum::http::HeaderValue;
use mds_node::metrics::Metrics;
use mds_node::{Node, NodeConfig};
use mds_store::{Store, StoreResult};

use crate::config::HttpConfig;
use crate::routes::{self, Caching};

/// The shared application.
pub struct App {
    /// The node: store, cached views, limiter, metrics.
    pub node: Arc<Node>,
    /// Settings of the HTTP layer.
    pub http: HttpConfig,
    /// `Cache-Control` of [`Caching::Private`] routes (`private, max-age=N`),
    /// made once.
    private_caching: HeaderValue,
}

/// Cheap-to-clone handle on the [`App`] (axum state).
#[derive(Clone)]
pub struct AppState(pub Arc<App>);

impl std::ops::Deref for AppState {
    type Target = App;
    fn deref(&self) -> &App {
        &self.0
    }
}

impl std::ops::Deref for App {
    type Target = Node;
    fn deref(&self) -> &Node {
        &self.node
    }
}

impl AppState {
    /// Loads the node from the store, its metrics labelled by the route
    /// table.
    pub async fn load(store: Arc<dyn Store>, config: HttpConfig) -> StoreResult<Self> {
        let node = Node::load(store, config.node.clone(), Metrics::new(routes::labels())).await?;
        Ok(Self::new(node, config))
    }

    /// The HTTP layer around a loaded `node`.
    pub fn new(node: Arc<Node>, http: HttpConfig) -> Self {
        let private_caching =
            HeaderValue::from_str(&format!("private, max-age={}", http.cache_max_age.as_secs())).expect("ASCII");
        AppState(Arc::new(App { node, http, private_caching }))
    }

    /// The node's settings.
    pub fn node_config(&self) -> &NodeConfig {
        &self.node.config
    }

    /// The `Cache-Control` value of `caching`.
    pub fn cache_control(&self, caching: Caching) -> HeaderValue {
        match caching {
            Caching::Private => self.private_caching.clone(),
            Caching::NoStore => HeaderValue::from_static("no-store"),
            Caching::Public(v) => HeaderValue::from_static(v),
        }
    }
}
