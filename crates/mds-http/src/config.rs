//! Settings of the HTTP layer.

use std::time::Duration;

/// How the HTTP layer behaves.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// A request that runs longer is answered `503 unavailable`.
    pub request_timeout: Duration,
    /// How often a node asks the store whether cached data changed
    /// (revocations, tiers, entitlement, imports are seen within this).
    pub reload_interval: Duration,
    /// `max-age` of `Cache-Control` on company and news responses.
    pub cache_max_age: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(10),
            reload_interval: Duration::from_millis(250),
            cache_max_age: Duration::from_secs(60),
        }
    }
}
