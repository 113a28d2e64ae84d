//! [`SharedConfig`]: how a [`SharedLimiter`](super::SharedLimiter) reaches
//! Redis and shares the limit without it, and the error of a URL that
//! cannot be used.

use std::time::Duration;

/// How a [`SharedLimiter`] reaches Redis and shares the limit without it:
/// [`SharedConfig::new`]'s defaults, fields changed with struct update
/// syntax (`SharedConfig { nodes: 3, ..SharedConfig::new(url) }`).
#[derive(Debug, Clone)]
pub struct SharedConfig {
    /// `redis://host:port[/db]` (or `rediss://`, `redis+unix://`).
    pub url: String,
    /// Serving nodes that share the limits (0 is taken as 1): while Redis
    /// is away each node allows `rate_limit_per_minute / nodes` per minute
    /// (at least 1); with Redis, the cap of one node's lease and its fair
    /// share.
    pub nodes: u32,
    /// Prefix of every Redis key (`mds`); tests use a random one.
    pub namespace: String,
    /// Longest wait for Redis (connect, or one script) before falling back.
    pub timeout: Duration,
    /// While degraded, how often Redis is tried again.
    pub probe_interval: Duration,
    /// Expiry of a month's counter and lease records, set when it is seeded
    /// (40 days, longer than any month, so it outlives its month and then
    /// goes).
    pub usage_ttl: Duration,
    /// How long a lease admits before what it did not use goes back (1 s;
    /// at least 1 ms is taken): the longest one node can hold tokens
    /// another node is refused for.
    pub lease_ttl: Duration,
    /// Whether the scripts take the time from the node's [`Clock`] instead
    /// of Redis's `TIME`. Only for tests that move time; in production the
    /// nodes' clocks may be skewed and Redis's is the one clock.
    pub caller_time: bool,
    /// Whether the node mirrors its unflushed counts to Redis every
    /// [`crate::mirror::MIRROR_INTERVAL`], so that a node that dies and
    /// never returns loses at most that much of its traffic (on by
    /// default).
    pub mirror: bool,
}

impl SharedConfig {
    /// Defaults for `url`: one node, namespace `mds`, 1 s timeout (a busy
    /// Redis is slow, not down), a probe every second, counters kept 40
    /// days, leases of 1 s, Redis's clock.
    pub fn new(url: impl Into<String>) -> Self {
        SharedConfig {
            url: url.into(),
            nodes: 1,
            namespace: "mds".to_owned(),
            timeout: Duration::from_secs(1),
            probe_interval: Duration::from_secs(1),
            usage_ttl: Duration::from_secs(40 * 24 * 3600),
            lease_ttl: Duration::from_secs(1),
            caller_time: false,
            mirror: true,
        }
    }
}

/// A Redis URL that cannot be used (a bad scheme, host or port).
#[derive(Debug)]
pub struct SharedConfigError(pub(super) String);

impl std::fmt::Display for SharedConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid Redis URL: {}", self.0)
    }
}

impl std::error::Error for SharedConfigError {}
