//! The background task that keeps a node's cached views in step with the
//! store: it polls the store's generation and reloads on change, so a key
//! revoked (or a tier, entitlement or import changed) by any process is seen
//! within one interval; served news articles are dropped when the news
//! generation moves. A store outage is logged once when it starts and once
//! when it ends; the node keeps serving what it has.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::metrics::Event;
use crate::node::Node;

/// Spawns the reloader; it runs until aborted.
pub fn spawn(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(node.config.reload_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tick.tick().await;
            let result = node.refresh().await;
            if let Some(g) = node.generations() {
                node.news.follow(g.news);
            }
            match result {
                Ok(_) if failing => {
                    failing = false;
                    tracing::info!("store reachable again; cache reload resumed");
                }
                Ok(_) => {}
                Err(e) if !failing => {
                    node.metrics.event(Event::ReloadFailure);
                    failing = true;
                    tracing::warn!(error = %e, "cache reload failed; serving the last loaded data");
                }
                Err(_) => node.metrics.event(Event::ReloadFailure),
            }
        }
    })
}
