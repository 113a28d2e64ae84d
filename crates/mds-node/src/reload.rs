//! The background tasks that keep a node's cached views in step with the
//! store: each polls the store's generations and reloads its view when its
//! generation moves, so a key revoked (or a tier, entitlement or import
//! changed) by any process is seen within one interval. Keys and catalog
//! follow the store in tasks of their own, so a key change is never held
//! up by a catalog being built or loaded. A store outage is logged once when
//! it starts and once when it ends; the node keeps serving what it has.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::metrics::Event;
use crate::node::Node;

/// A view of the store a node keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Keys, tiers, accounts (and served news).
    Keys,
    /// The company catalog.
    Catalog,
    /// The news index ([`crate::news_index`]).
    News,
}

impl View {
    /// Its name, for logs and task names.
    pub fn as_str(self) -> &'static str {
        match self {
            View::Keys => "keys",
            View::Catalog => "catalog",
            View::News => "news index",
        }
    }
}

/// Spawns the reloader of `view`; it runs until aborted.
pub fn spawn(node: Arc<Node>, view: View) -> JoinHandle<()> {
    let period = node.config().reload_interval;
    crate::tasks::spawn_every(period, false, move |failing| {
        let node = Arc::clone(&node);
        async move {
            let result = match view {
                View::Keys => node.refresh_keys().await,
                View::Catalog => node.refresh_catalog().await,
                View::News => node.refresh_news_index().await,
            };
            match result {
                Ok(_) if failing => {
                    tracing::info!(view = view.as_str(), "store reachable again; reload resumed");
                    false
                }
                Ok(_) => false,
                Err(e) if !failing => {
                    node.metrics().event(Event::ReloadFailure);
                    tracing::warn!(view = view.as_str(), error = %e, "reload failed; serving the last loaded data");
                    true
                }
                Err(_) => {
                    node.metrics().event(Event::ReloadFailure);
                    true
                }
            }
        }
    })
}
