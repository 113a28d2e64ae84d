//! Settings of the HTTP layer, around the node's own ([`NodeConfig`]).

use std::time::Duration;

use mds_node::NodeConfig;

use crate::server::ServerConfig;

/// How the HTTP layer behaves.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// A request that runs longer is answered `503 unavailable`.
    pub request_timeout: Duration,
    /// `max-age` of `Cache-Control` on the routes cached `private`
    /// ([`crate::routes::Caching::Private`]).
    pub cache_max_age: Duration,
    /// What clients may hold: timeouts, the connection cap, the shutdown
    /// grace.
    pub server: ServerConfig,
    /// The node behind the API.
    pub node: NodeConfig,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(10),
            cache_max_age: Duration::from_secs(60),
            server: ServerConfig::default(),
            node: NodeConfig::default(),
        }
    }
}
