//! Settings of the HTTP layer ([`HttpConfig`]), around the node's own
//! ([`NodeConfig`]), with the trace exporter ([`Tracer`]), and of the
//! server's connections ([`ServerConfig`]).

use std::time::Duration;

use mds_node::NodeConfig;

use crate::middleware::trace::otlp::Tracer;

/// How the HTTP layer behaves.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// A request that runs longer is answered `503 unavailable`.
    pub request_timeout: Duration,
    /// `max-age` of `Cache-Control` on the routes cached `private`
    /// ([`crate::route::Caching::Private`]).
    pub cache_max_age: Duration,
    /// What clients may hold: timeouts, the connection cap, the shutdown
    /// grace.
    pub server: ServerConfig,
    /// The node behind the API.
    pub node: NodeConfig,
    /// The `Origin`s `POST /mcp` accepts (`https://app.example`); a request
    /// with another is `403`, one without is accepted (contract 12.1).
    pub mcp_allowed_origins: Vec<String>,
    /// Where each request's span goes (`--otlp-endpoint`); `None`: no
    /// traces.
    pub traces: Option<Tracer>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(10),
            cache_max_age: Duration::from_secs(60),
            server: ServerConfig::default(),
            node: NodeConfig::default(),
            mcp_allowed_origins: Vec::new(),
            traces: None,
        }
    }
}

/// How the server treats connections.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// A request head not complete this long after its first byte closes
    /// its connection.
    pub header_read_timeout: Duration,
    /// A connection with no request in flight and no byte moved for this
    /// long is closed.
    pub idle_timeout: Duration,
    /// The most connections open at once (lowered to fit the open-file
    /// limit, see [`crate::server::max_connections`]).
    pub max_connections: usize,
    /// How long a shutdown waits for requests in flight before it closes
    /// their connections.
    pub shutdown_grace: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}
