//! Settings of a node: how it follows the store, meters and limits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mds_limits::{Clock, SharedConfig, SystemClock};

use crate::keys::KeyCacheConfig;
use crate::webhooks::WebhookConfig;

/// How a node keeps its state.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// How often a node asks the store whether cached data changed
    /// (revocations, tiers, entitlement, imports are seen within this).
    pub reload_interval: Duration,
    /// How often counted requests are written to the store.
    pub flush_interval: Duration,
    /// How often the node pings the store for `mds_store_up`
    /// ([`crate::health::spawn_store_probe`]).
    pub store_probe_interval: Duration,
    /// The most bytes of company pages a node keeps per catalog version, to
    /// serve a query again without making its page ([`crate::pages`]), and
    /// of news list pages per news generation ([`crate::news_list`]), and
    /// of the price routes' answers per prices and actions generation
    /// ([`crate::prices`]); `0`: none.
    pub page_cache_bytes: usize,
    /// The most bytes of securities' whole series (their lineage's bars
    /// and the factors of their actions) a node keeps per prices and
    /// actions generation, so that a series asked with other bounds or
    /// another adjustment is cut and adjusted in memory, not read from the
    /// store again ([`crate::prices`]); the same again of the market's
    /// days, each read whole once; `0`: none.
    pub price_series_bytes: usize,
    /// Rate limits, quotas and metering. Off only to measure their cost.
    pub limits: bool,
    /// Where limits and billing months read the time.
    pub clock: Arc<dyn Clock>,
    /// Redis shared by all nodes for limits and month counters; `None`: this
    /// node limits alone.
    pub shared: Option<SharedConfig>,
    /// Bounds of the key cache and the budget of key lookups.
    pub key_cache: KeyCacheConfig,
    /// Where the node spills the counts it has not flushed
    /// ([`mds_limits::spill`]), so a crash and restart on the same
    /// directory loses none; `None`: no spill (a crash loses up to one
    /// flush interval).
    pub spill_dir: Option<PathBuf>,
    /// How long the event log keeps events (`--events-retention-days`,
    /// contract 11.1); older ones are pruned and a position among them has
    /// expired.
    pub events_retention: chrono::TimeDelta,
    /// How the node delivers webhooks.
    pub webhooks: WebhookConfig,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            reload_interval: Duration::from_millis(250),
            flush_interval: Duration::from_secs(1),
            store_probe_interval: Duration::from_secs(5),
            page_cache_bytes: 8 << 20,
            price_series_bytes: 64 << 20,
            limits: true,
            clock: Arc::new(SystemClock),
            shared: None,
            key_cache: KeyCacheConfig::default(),
            spill_dir: None,
            events_retention: chrono::TimeDelta::days(30),
            webhooks: WebhookConfig::default(),
        }
    }
}
