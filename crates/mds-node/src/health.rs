//! What a node says of itself: whether it is ready to serve
//! ([`Node::readiness`], `GET /readyz`), its metrics in the Prometheus
//! text format ([`Node::metrics_text`], `GET /metrics`), and the task that
//! probes the store for `mds_store_up` ([`spawn_store_probe`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::node::Node;
use crate::process::ProcessStats;

/// Why a node is not ready.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    /// A background task stopped (why): the node follows the store no
    /// more, or writes no counts; it needs a restart.
    #[error("{0}; this node needs a restart")]
    TaskStopped(String),
    /// The store answered the ping with an error.
    #[error("the store is unreachable")]
    StoreDown(#[source] mds_store::StoreError),
    /// The store did not answer within [`Node::READY_WITHIN`].
    #[error("the store did not answer within 1 s")]
    StoreSlow,
}

impl Node {
    /// How long the store may take to answer the readiness ping.
    pub const READY_WITHIN: Duration = Duration::from_secs(1);

    /// Whether the node can serve: its background tasks run and the store
    /// answers within [`Node::READY_WITHIN`]. `Ok` with how many companies
    /// it serves.
    pub async fn readiness(&self) -> Result<usize, NotReady> {
        if let Some(why) = self.stopped_task() {
            return Err(NotReady::TaskStopped(why));
        }
        match tokio::time::timeout(Self::READY_WITHIN, self.store().ping()).await {
            Ok(Ok(())) => Ok(self.catalog().len()),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "readiness check failed");
                Err(NotReady::StoreDown(e))
            }
            Err(_) => Err(NotReady::StoreSlow),
        }
    }

    /// Whether the store answers a ping within [`Node::READY_WITHIN`].
    pub async fn store_answers(&self) -> bool {
        matches!(tokio::time::timeout(Self::READY_WITHIN, self.store().ping()).await, Ok(Ok(())))
    }

    /// The node's metrics in the Prometheus text format, with the
    /// process's ([`crate::process`]) and the shared limiter's counters
    /// when limits are shared through Redis.
    pub fn metrics_text(&self) -> String {
        let degraded = self.shared().is_some_and(|s| s.is_degraded());
        let mut body = self.metrics().render(self.backlog(), degraded);
        if let Some(p) = ProcessStats::read() {
            p.render(&mut body);
        }
        let hub = self.events();
        body.push_str(&format!(
            "# HELP mds_event_streams_open Event streams (GET /v1/events/stream) open on this node.\n\
             # TYPE mds_event_streams_open gauge\nmds_event_streams_open {}\n\
             # HELP mds_event_stream_frames_total Events this node's streams sent.\n\
             # TYPE mds_event_stream_frames_total counter\nmds_event_stream_frames_total {}\n\
             # HELP mds_event_stream_pending_bytes Bytes of frames this node's streams hold for their readers.\n\
             # TYPE mds_event_stream_pending_bytes gauge\nmds_event_stream_pending_bytes {}\n",
            hub.open_streams(),
            hub.frames_sent(),
            hub.pending_bytes()
        ));
        if let Some(shared) = self.shared() {
            let s = shared.stats();
            for (name, help, value) in [
                ("mds_redis_errors_total", "Redis calls that failed.", s.redis_errors),
                ("mds_redis_fallbacks_total", "Times this node fell back to limiting alone.", s.fallbacks),
                ("mds_redis_seeds_total", "Month counters seeded into Redis from the store.", s.seeds),
                ("mds_redis_admitted_total", "Requests admitted from Redis leases.", s.redis_admitted),
                (
                    "mds_redis_lease_calls_total",
                    "Lease scripts sent to Redis (a lease taken or given back).",
                    s.lease_calls,
                ),
                (
                    "mds_redis_reclaimed_total",
                    "Lease records of other nodes this node found neither renewed nor given back within a lease TTL, and reclaimed.",
                    s.reclaimed,
                ),
                (
                    "mds_redis_taken_over_requests_total",
                    "Counted requests this node gave the store from the usage mirrors of nodes that stopped pushing them.",
                    s.taken_over,
                ),
                (
                    "mds_usage_mirror_push_failures_total",
                    "Pushes of the usage mirror to Redis that failed (retried at the next tick, every 50 ms).",
                    s.mirror_push_failures,
                ),
                (
                    "mds_local_admitted_total",
                    "Requests admitted by this node alone while Redis was unreachable.",
                    s.local_admitted,
                ),
            ] {
                body.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"));
            }
        }
        body
    }
}

/// Spawns the task that pings the store every
/// [`crate::config::NodeConfig::store_probe_interval`] and sets
/// `mds_store_up` to whether it answered within [`Node::READY_WITHIN`],
/// whatever the traffic; a change is logged once (WARN down, INFO up).
pub fn spawn_store_probe(node: Arc<Node>) -> JoinHandle<()> {
    let period = node.config().store_probe_interval;
    crate::tasks::spawn_every(period, true, move |up| {
        let node = Arc::clone(&node);
        async move {
            let now = node.store_answers().await;
            if now != up {
                if now {
                    tracing::info!("store probe: the store answers again");
                } else {
                    tracing::warn!("store probe: the store did not answer within 1 s (mds_store_up 0)");
                }
            }
            node.metrics().set_store_up(now);
            now
        }
    })
}
