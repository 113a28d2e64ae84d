//! The background task that gives back the Redis leases of keys that went
//! quiet (with `--redis`), and keeps this node's lease records from looking
//! like a dead node's (Redis reclaims those after a lease TTL), and takes
//! over the usage mirrors of nodes that stopped pushing them (their
//! unflushed counts to the store), and the giving back of every lease at
//! shutdown. See `mds_limits::shared` for
//! what a lease is.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::node::Node;

/// Spawns the sweeper (every eighth of a lease TTL); it runs until aborted. A node
/// without Redis gets a task that only waits.
pub fn spawn(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Some(shared) = node.shared() else {
            return std::future::pending().await;
        };
        let mut tick = tokio::time::interval(shared.sweep_interval());
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            shared.sweep(node.store()).await;
            shared.take_over(node.store()).await;
        }
    })
}

/// Gives every lease back (at shutdown, before the final flush), so other
/// nodes need not wait for them to end.
pub async fn give_back(node: &Node) {
    if let Some(shared) = node.shared() {
        shared.give_back(node.store()).await;
    }
}
