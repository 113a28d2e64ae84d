//! The node's background tasks ([`crate::reload`] of keys and of the
//! catalog, [`crate::flush`] with the spill's fsync and the usage mirror,
//! [`crate::leases`], the event feed of [`crate::events`], the store probe
//! of [`crate::health`]), started
//! together and watched: a task that panics or ends by itself leaves the
//! node not ready ([`Node::stopped_task`]), logged and counted, rather than
//! serving stale keys or holding counts it no longer writes.

use std::sync::Arc;

use tokio::task::{AbortHandle, JoinHandle};

use crate::metrics::Event;
use crate::node::Node;
use crate::reload::View;
use crate::{events, flush, health, leases, reload, webhooks};

/// Spawns a task that runs `step` every `period` (a late tick delays the
/// next rather than bursting to catch up), until aborted; each run is
/// handed what the one before returned (starting with `state`), such as
/// whether it failed, so that a change is logged once.
pub(crate) fn spawn_every<S, F>(
    period: std::time::Duration,
    state: S,
    mut step: impl FnMut(S) -> F + Send + 'static,
) -> JoinHandle<()>
where
    S: Send + 'static,
    F: Future<Output = S> + Send,
{
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut state = state;
        loop {
            tick.tick().await;
            state = step(state).await;
        }
    })
}

/// The running tasks; [`Background::stop`] ends them.
pub struct Background {
    tasks: Vec<AbortHandle>,
}

impl Background {
    /// Starts the reload, flush and lease sweep tasks of `node`, each with a watcher.
    pub fn start(node: &Arc<Node>) -> Self {
        let tasks = [
            ("keys reload", reload::spawn(node.clone(), View::Keys)),
            ("catalog reload", reload::spawn(node.clone(), View::Catalog)),
            ("news index reload", reload::spawn(node.clone(), View::News)),
            ("flush", flush::spawn(node.clone())),
            ("spill sync", flush::spawn_spill_sync(node.clone())),
            ("usage mirror", flush::spawn_mirror(node.clone())),
            ("lease sweep", leases::spawn(node.clone())),
            ("event feed", events::spawn_feed(node.clone())),
            ("webhook delivery", webhooks::worker::spawn(node.clone())),
            ("store probe", health::spawn_store_probe(node.clone())),
        ]
        .into_iter()
        .map(|(name, task)| {
            let abort = task.abort_handle();
            tokio::spawn(watch(node.clone(), name, task));
            abort
        })
        .collect();
        Background { tasks }
    }

    /// Ends the tasks (at shutdown; their watchers see a cancellation, not a
    /// failure).
    pub fn stop(self) {
        for t in self.tasks {
            t.abort();
        }
    }
}

/// Waits for `task` to end; anything but a cancellation is a failure.
async fn watch(node: Arc<Node>, name: &'static str, task: JoinHandle<()>) {
    let why = match task.await {
        Err(e) if e.is_cancelled() => return,
        Err(e) => match e.into_panic().downcast::<String>() {
            Ok(msg) => format!("the {name} task panicked: {msg}"),
            Err(p) => match p.downcast::<&str>() {
                Ok(msg) => format!("the {name} task panicked: {msg}"),
                Err(_) => format!("the {name} task panicked"),
            },
        },
        Ok(()) => format!("the {name} task ended"),
    };
    tracing::error!(task = name, "{why}; this node is not ready from now on and needs a restart");
    node.metrics().event(Event::TaskStopped);
    node.task_stopped(why);
}
