//! The background task that writes counted requests to the store at least
//! once per flush interval, and the final flush of a graceful shutdown.
//!
//! What a crash (SIGKILL) can lose is what was counted since the last
//! successful flush: at most one flush interval of requests (plus, while the
//! store is unreachable, what waits for it); with a spill
//! ([`crate::NodeConfig::spill_dir`], fsynced by [`spawn_spill_sync`]) a node
//! restarted on it loses nothing; with `--redis`, the counts are mirrored
//! there every 50 ms ([`spawn_mirror`], `mds_limits::mirror`) and another
//! node gives them to the store if this one never returns. They are not billed; with
//! `--redis` they stop counting against their keys once Redis reclaims the
//! dead node's leases (within a lease TTL, see `mds_limits::shared`). A graceful shutdown loses
//! nothing: the server stops accepting, drains in-flight requests, then
//! flushes until the store has everything or the store stays unreachable
//! past [`FINAL_FLUSH_DEADLINE`].

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::metrics::Event;
use crate::node::Node;

/// How long a shutdown keeps retrying the final flush.
pub const FINAL_FLUSH_DEADLINE: Duration = Duration::from_secs(15);

/// Spawns the flusher; it runs until aborted.
pub fn spawn(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(node.config().flush_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        let mut ticks: u64 = 0;
        loop {
            tick.tick().await;
            ticks += 1;
            let result = flush_once(&node).await;
            match &result {
                Ok(n) if *n > 0 => node.metrics().event(Event::Flush),
                Ok(_) => {}
                Err(_) => node.metrics().event(Event::FlushFailure),
            }
            match result {
                Ok(_) if failing => {
                    failing = false;
                    tracing::info!("usage flush recovered");
                }
                Ok(_) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(error = %e, backlog = node.limiter().meter().backlog(), "usage flush failed; counts wait in memory and are retried");
                }
                Err(_) => {}
            }
            if ticks % 60 == 0 {
                node.limiter().prune();
            }
        }
    })
}

/// One flush: through the shared limiter's mirror with `--redis`.
async fn flush_once(node: &Node) -> mds_store::StoreResult<u64> {
    match node.shared() {
        Some(shared) => shared.flush(node.store()).await,
        None => node.limiter().meter().flush(node.store()).await,
    }
}

/// Spawns the task that mirrors unflushed counts to Redis every
/// [`mds_limits::mirror::MIRROR_INTERVAL`] (with `--redis`; without, or
/// with the mirror off, it waits forever). A failed push is sent again
/// with the next tick; one warning while it fails.
pub fn spawn_mirror(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Some(shared) = node.shared().filter(|s| s.mirrors()) else {
            return std::future::pending().await;
        };
        let failed = "cannot push the usage mirror to Redis; a death now loses up to a flush interval of counts";
        every(mds_limits::mirror::MIRROR_INTERVAL, failed, Some("usage mirror pushes again"), || shared.mirror_tick())
            .await
    })
}

/// Spawns the task that fsyncs the spill ([`mds_limits::spill`]) every
/// [`mds_limits::spill::SYNC_INTERVAL`]; without a spill it waits forever.
pub fn spawn_spill_sync(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Some(spill) = node.limiter().meter().spill().cloned() else {
            return std::future::pending().await;
        };
        every(mds_limits::spill::SYNC_INTERVAL, "cannot fsync the usage spill", None, || {
            let spill = spill.clone();
            async move { tokio::task::spawn_blocking(move || spill.sync()).await.expect("fsync does not panic") }
        })
        .await
    })
}

/// Runs `step` every `period` (a late tick delays the next), forever,
/// logging its first failure (`failed`, an error) and, if `recovered` is
/// given, the first success after failures, once each.
async fn every<E: std::fmt::Display, F: std::future::Future<Output = Result<(), E>>>(
    period: Duration,
    failed: &str,
    recovered: Option<&str>,
    mut step: impl FnMut() -> F,
) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tick.tick().await;
        match step().await {
            Ok(()) => {
                if std::mem::take(&mut failing) {
                    if let Some(msg) = recovered {
                        tracing::info!("{msg}");
                    }
                }
            }
            Err(e) if !failing => {
                failing = true;
                tracing::error!(error = %e, "{failed}");
            }
            Err(_) => {}
        }
    }
}

/// Flushes everything, retrying until [`FINAL_FLUSH_DEADLINE`]: after a
/// failure, and after a flush that wrote nothing yet left counts behind (a
/// batch held until Redis says whether another node took it over, while
/// Redis is away), each a pause apart. Past the deadline what is left is
/// logged as not written.
pub async fn final_flush(node: &Node) {
    let deadline = tokio::time::Instant::now() + FINAL_FLUSH_DEADLINE;
    let mut total = 0;
    loop {
        let why = match flush_once(node).await {
            Ok(n) if node.limiter().meter().is_drained() => {
                node.limiter().meter().clear_spill();
                if let Some(shared) = node.shared() {
                    shared.end_mirror().await;
                }
                tracing::info!(requests = total + n, "final usage flush done");
                return;
            }
            // Progress: straight on with what came in meanwhile.
            Ok(n) if n > 0 => {
                total += n;
                continue;
            }
            Ok(_) => "a batch waits for Redis to say whether another node wrote it".to_owned(),
            Err(e) => e.to_string(),
        };
        if tokio::time::Instant::now() >= deadline {
            tracing::error!(error = %why, lost = node.limiter().meter().backlog(), "final usage flush failed; these counts are lost");
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
