//! The background task that keeps a node's cached views in step with the
//! store: it polls the store's generation and reloads on change, so a key
//! revoked (or a tier, entitlement or import changed) by any process is seen
//! within one interval; served news articles are dropped when the news
//! generation moves. A store outage is logged once when it starts and once
//! when it ends; the node keeps serving what it has.

use tokio::task::JoinHandle;

use crate::state::AppState;

/// Spawns the reloader; it runs until aborted.
pub fn spawn(state: AppState) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(state.config.reload_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tick.tick().await;
            let result = state.refresh().await;
            if let Some(g) = state.generations() {
                state.news.follow(g.news);
            }
            match result {
                Ok(_) if failing => {
                    failing = false;
                    tracing::info!("store reachable again; cache reload resumed");
                }
                Ok(_) => {}
                Err(e) if !failing => {
                    state.metrics.event(crate::metrics::Event::ReloadFailure);
                    failing = true;
                    tracing::warn!(error = %e, "cache reload failed; serving the last loaded data");
                }
                Err(_) => state.metrics.event(crate::metrics::Event::ReloadFailure),
            }
        }
    })
}
