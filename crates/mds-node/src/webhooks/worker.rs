//! The delivery task: it claims the endpoints with a delivery due, each
//! under a lease in the store (one node at a time attempts it) and with a
//! run of its next events, and starts each run as a task of its own as it
//! is claimed: one run in flight per endpoint (its events sent one at a
//! time, in id order, stopping at the first failure or when the run's time
//! is up), at most [`WebhookConfig::max_in_flight`] runs at once on the
//! node, and no run waiting for another: a receiver that hangs until the
//! timeout holds its own place only (contract 11.5). A run records its
//! attempts and outcomes (which move the endpoint's cursor on or schedule a
//! retry) in one write while the lease holds. The task claims again at
//! once while a claim comes back full or a run ends with more to send,
//! else after a poll interval. A node that dies mid-run leaves the endpoint
//! to another once its lease lapses; the events of the run it sent but had
//! not recorded are sent again (at least once).
//!
//! The deliveries run on a thread of their own, with a runtime of its own,
//! at a lower OS priority ([`NICE`]): on a node whose cores are busy with
//! requests they take what CPU the requests leave (BENCHMARKS.md, "Webhook
//! delivery"). On a SQLite file their store calls go to a pool of their
//! own, opened on that thread, so that SQLite's connection threads run at
//! the same lower priority; otherwise to the node's store on the node's
//! runtime, which owns its connections ([`Stores`]).

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use mds_domain::webhook;
use mds_store::url::Backend;
use mds_store::{DatabaseUrl, DeliveryOutcome, Store, StoreResult, WebhookAttempt, WebhookDelivery};
use rand::RngCore;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::runtime::Handle;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use super::{WebhookConfig, schedule, signing, ssrf};
use crate::metrics::Event;
use crate::node::Node;

/// The most endpoints one claim takes (fewer when fewer places are free).
const CLAIM: usize = 64;

/// Events claimed per endpoint: sent one after another, recorded in one
/// write. With one event per claim and one write per attempt, two nodes
/// took 4 times as long over the same backlog (BENCHMARKS.md, "Webhook
/// delivery").
const RUN: usize = 50;

/// How long a run may go on starting sends: what a disable, a delete or a
/// new URL waits for at most (besides the send in flight).
const RUN_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// The longest error kept with an attempt.
const MAX_ERROR: usize = 300;

/// How much lower than the node's the delivery thread's OS priority is (a
/// nice value, 0 to 19: higher is lower). On a saturated node data
/// requests during deliveries went from 0.67 of idle to 0.83-0.88 with the
/// thread at this priority, and to 0.90-1.09 once the SQLite connection
/// threads of the deliveries' own pool took it too; 19 did no better than
/// 10, and would leave deliveries only what a busy node never has
/// (BENCHMARKS.md, "Webhook delivery").
pub const NICE: i32 = 10;

/// Spawns the delivery task; it runs until aborted, and its thread with it
/// (a panic there is the task's). A node configured not to deliver gets a
/// task that only waits.
pub fn spawn(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        if !node.config().webhooks.deliver {
            return std::future::pending().await;
        }
        let on_node = Handle::current();
        // Dropped when this task is aborted: the thread's loop then ends.
        let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ended, thread_ended) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new().name("mds-webhooks".into()).spawn(move || {
            lower_priority();
            let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
                let rt = rt.expect("the webhook delivery runtime builds");
                rt.block_on(async move {
                    let stores = Stores::open(&node, on_node).await;
                    tokio::select! {
                        () = deliveries(node, stores) => {}
                        _ = stopped => {}
                    }
                });
            }));
            let _ = ended.send(run);
        });
        if let Err(e) = thread {
            panic!("cannot start the webhook delivery thread: {e}");
        }
        if let Ok(Err(panic)) = thread_ended.await {
            std::panic::resume_unwind(panic);
        }
    })
}

/// Lowers the calling thread's OS priority by [`NICE`] (Linux: a thread's
/// own nice value; threads it starts inherit it). A refusal is logged: the
/// deliveries then compete with requests as equals.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let tid = rustix::thread::gettid();
        let now = rustix::process::getpriority_process(Some(tid)).unwrap_or(0);
        if let Err(e) = rustix::process::setpriority_process(Some(tid), now.saturating_add(NICE).min(19)) {
            tracing::warn!(error = %e, "cannot lower the webhook delivery thread's priority");
        }
    }
}

/// Where the deliveries' store calls run.
#[derive(Clone)]
enum Stores {
    /// A pool of their own, opened on the delivery thread.
    Own(Arc<dyn Store>),
    /// The node's store, called on the node's runtime (this handle).
    Node(Arc<dyn Store>, Handle),
}

impl Stores {
    /// A pool of their own on the configured database when it is a SQLite
    /// file (called on the delivery thread, whose priority SQLite's
    /// connection threads then take), else the node's store on `on_node`.
    /// On PostgreSQL the database's work is the server's, and a second
    /// pool per node would take connections the server may not have.
    async fn open(node: &Node, on_node: Handle) -> Self {
        let own = |u: &&DatabaseUrl| u.backend() == Backend::Sqlite && !u.is_in_memory();
        if let Some(url) = node.config().webhooks.database.as_ref().filter(own) {
            match mds_store::open_with_clock(url, node.config().clock.clone()).await {
                Ok(store) => return Stores::Own(store),
                Err(e) => tracing::warn!(error = %e, "webhook deliveries use the node's store: cannot open their own"),
            }
        }
        Stores::Node(node.shared_store(), on_node)
    }

    /// Runs `call` on the store; on the node's runtime when it is the
    /// node's (a panic there is the caller's).
    async fn call<T, F>(&self, call: impl FnOnce(Arc<dyn Store>) -> F) -> T
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        match self {
            Stores::Own(store) => call(store.clone()).await,
            Stores::Node(store, on_node) => match on_node.spawn(call(store.clone())).await {
                Ok(v) => v,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                // Cancelled: the node's runtime is shutting down.
                Err(_) => std::future::pending().await,
            },
        }
    }
}

/// The delivery loop, on the delivery thread's runtime.
async fn deliveries(node: Arc<Node>, stores: Stores) {
    let config = node.config().webhooks.clone();
    let client = client(&config);
    let owner: Arc<str> = owner().into();
    let places = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
    let mut runs = Runs {
        sending: Sending { node: node.clone(), stores: stores.clone(), client, owner: owner.clone() },
        tasks: JoinSet::new(),
        endpoints: HashMap::new(),
        queued: HashMap::new(),
    };
    let mut counted: Option<Instant> = None;
    loop {
        // Runs that ended are forgotten before a claim may take their
        // endpoints again.
        runs.reap();
        let free = places.available_permits().min(CLAIM);
        // Whether more may be due than this claim took.
        let mut backlog = false;
        if free > 0 {
            match claim(&node, &stores, &owner, free).await {
                Ok(claimed) => {
                    backlog = claimed.len() == free;
                    for d in claimed {
                        let place = places.clone().try_acquire_owned().expect("no more claimed than places free");
                        runs.start(d, place);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot claim webhook deliveries; trying again at the next poll"),
            }
        }
        if backlog && places.available_permits() > 0 {
            continue;
        }
        if !backlog && counted.is_none_or(|c| c.elapsed() >= config.poll_interval) {
            counted = Some(Instant::now());
            match stores.call(|s| async move { s.webhooks_pending().await }).await {
                Ok(n) => node.metrics().set_webhooks_pending(n),
                Err(e) => tracing::warn!(error = %e, "cannot count pending webhook deliveries"),
            }
        }
        // Until the poll, or a run that ends with more to send, or (with a
        // backlog) a place set free.
        let poll = tokio::time::sleep(config.poll_interval);
        tokio::pin!(poll);
        loop {
            tokio::select! {
                () = &mut poll => break,
                more = runs.next(), if !runs.is_empty() => if more || backlog { break },
            }
        }
    }
}

/// What a run sends with.
#[derive(Clone)]
struct Sending {
    node: Arc<Node>,
    stores: Stores,
    client: reqwest::Client,
    owner: Arc<str>,
}

/// The runs in flight on this node: one per endpoint.
struct Runs {
    sending: Sending,
    tasks: JoinSet<bool>,
    /// The endpoint of each task.
    endpoints: HashMap<tokio::task::Id, String>,
    /// Runs claimed while a run of their endpoint was still in flight
    /// here, started when it ends.
    queued: HashMap<String, (WebhookDelivery, OwnedSemaphorePermit)>,
}

impl Runs {
    fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Starts `d`'s run, holding `place` until it is recorded; once the
    /// run of that endpoint in flight here ends, if there is one (its
    /// task has recorded and given the lease back, so a claim took the
    /// endpoint again, but has not returned yet; or the clock moved past
    /// its lease): one in flight per endpoint.
    fn start(&mut self, d: WebhookDelivery, place: OwnedSemaphorePermit) {
        if self.endpoints.values().any(|e| *e == d.endpoint.id) {
            self.queued.insert(d.endpoint.id.clone(), (d, place));
            return;
        }
        let endpoint = d.endpoint.id.clone();
        let Sending { node, stores, client, owner } = self.sending.clone();
        let task = self.tasks.spawn(async move {
            let _place = place;
            match deliver(&node, &stores, &client, &owner, d).await {
                Ok(more) => more,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot record a webhook attempt; it will be made again");
                    false
                }
            }
        });
        self.endpoints.insert(task.id(), endpoint);
    }

    /// Waits for a run to end: whether its endpoint may have more to send
    /// now.
    async fn next(&mut self) -> bool {
        match self.tasks.join_next_with_id().await {
            Some(done) => self.ended(done),
            None => false,
        }
    }

    /// Takes the runs that have ended, without waiting.
    fn reap(&mut self) {
        while let Some(done) = self.tasks.try_join_next_with_id() {
            self.ended(done);
        }
    }

    /// Forgets a run that ended, and starts its endpoint's queued run if
    /// there is one: whether its endpoint may have more to send.
    fn ended(&mut self, done: Result<(tokio::task::Id, bool), tokio::task::JoinError>) -> bool {
        let (id, more) = match done {
            Ok((id, more)) => (id, more),
            Err(e) => {
                tracing::error!(error = %e, "a webhook delivery panicked");
                (e.id(), false)
            }
        };
        if let Some(endpoint) = self.endpoints.remove(&id) {
            if let Some((d, place)) = self.queued.remove(&endpoint) {
                self.start(d, place);
            }
        }
        more
    }
}

/// Claims up to `n` endpoints with a delivery due, each with its run.
async fn claim(node: &Node, stores: &Stores, owner: &Arc<str>, n: usize) -> StoreResult<Vec<WebhookDelivery>> {
    let now = node.config().clock.now();
    let lease = chrono::Duration::from_std(node.config().webhooks.lease).unwrap_or(chrono::Duration::seconds(30));
    let o = owner.clone();
    stores.call(|s| async move { s.claim_webhook_deliveries(&o, now, now + lease, n, RUN).await }).await
}

/// This node's name in leases: random, so a restarted node is another
/// owner.
fn owner() -> String {
    let mut b = [0u8; 8];
    rand::thread_rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The HTTP client of deliveries: no redirects, no proxy (the address
/// checks must apply to the connection made), the attempt's timeout, and
/// (unless private addresses are allowed) `https` only and the guarded
/// resolver.
pub fn client(config: &WebhookConfig) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(config.timeout)
        .user_agent(concat!("mds-webhooks/", env!("CARGO_PKG_VERSION")));
    if !config.allow_private {
        b = b.https_only(true).dns_resolver(Arc::new(ssrf::GuardedResolver));
    }
    b.build().expect("the webhook client builds")
}

/// The secrets that sign at `now`: the current one, and the old one until
/// it expires.
fn secrets(d: &WebhookDelivery, now: DateTime<Utc>) -> Vec<&str> {
    let mut s = vec![d.endpoint.secret.as_str()];
    match &d.endpoint.old_secret {
        Some((old, until)) if *until > now => s.push(old.as_str()),
        _ => {}
    }
    s
}

/// Sends `d`'s run, one event at a time, until one fails or the run's time
/// is up, and records the attempts made: whether the endpoint may have
/// more to send now (every event sent was delivered, and the run was cut
/// short by its time or was as long as a claim makes it).
async fn deliver(
    node: &Arc<Node>,
    stores: &Stores,
    client: &reqwest::Client,
    owner: &Arc<str>,
    d: WebhookDelivery,
) -> StoreResult<bool> {
    let config = &node.config().webhooks;
    // A send may start while it would end (at its timeout) within the lease
    // and the run's time; the first always starts.
    let budget = RUN_TIME.min(config.lease.saturating_sub(config.timeout));
    let started = Instant::now();
    let (mut attempt, mut failing_since) = (d.endpoint.attempt, d.endpoint.failing_since);
    let mut done = Vec::with_capacity(d.events.len());
    for event in &d.events {
        if !done.is_empty() && started.elapsed() >= budget {
            break;
        }
        attempt = attempt.saturating_add(1);
        let (record, outcome) = attempt_once(node, client, &d, event, attempt, failing_since).await;
        let delivered = outcome == DeliveryOutcome::Delivered;
        failing_since = if delivered { None } else { failing_since.or(Some(record.attempted_at)) };
        attempt = 0;
        done.push((record, outcome));
        if !delivered {
            break;
        }
    }
    let all_delivered = done.iter().all(|(_, o)| *o == DeliveryOutcome::Delivered);
    let more = all_delivered && (done.len() < d.events.len() || d.events.len() == RUN);
    let (o, id) = (owner.clone(), d.endpoint.id.clone());
    stores.call(|s| async move { s.finish_webhook_deliveries(&o, &id, &done).await }).await?;
    Ok(more)
}

/// Sends `event` to `d`'s endpoint once, as attempt number `attempt`: the
/// attempt and what it leads to (counted in the metrics).
async fn attempt_once(
    node: &Node,
    client: &reqwest::Client,
    d: &WebhookDelivery,
    event: &mds_domain::Event,
    attempt: u32,
    failing_since: Option<DateTime<Utc>>,
) -> (WebhookAttempt, DeliveryOutcome) {
    let config = &node.config().webhooks;
    let now = node.config().clock.now();
    let body = serde_json::to_vec(event).expect("an event always serialises");
    let id = event.id.to_string();
    let timestamp = now.timestamp();
    let signature = signing::header(&secrets(d, now), &id, timestamp, &body);
    let started = Instant::now();
    let result = send(client, config, &d.endpoint.url, &id, timestamp, &signature, body).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, error) = match result {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.chars().take(MAX_ERROR).collect())),
    };
    let after = node.config().clock.now();
    let outcome = schedule::outcome(status, attempt, failing_since, after);
    let metrics = node.metrics();
    match &outcome {
        DeliveryOutcome::Delivered => metrics.event(Event::WebhookDelivered),
        DeliveryOutcome::Retry(_) => {
            metrics.event(Event::WebhookFailed);
            metrics.event(Event::WebhookRetry);
        }
        DeliveryOutcome::GiveUp => {
            metrics.event(Event::WebhookFailed);
            metrics.event(Event::WebhookGivenUp);
        }
        DeliveryOutcome::Disable(reason) => {
            metrics.event(Event::WebhookFailed);
            metrics.event(Event::WebhookDisabled);
            tracing::info!(endpoint = %d.endpoint.id, reason, "webhook endpoint disabled");
        }
    }
    (WebhookAttempt { event_id: event.id, attempt, attempted_at: now, status, error, duration_ms }, outcome)
}

/// One `POST`: the answer's status, or why there is none.
async fn send(
    client: &reqwest::Client,
    config: &WebhookConfig,
    url: &str,
    id: &str,
    timestamp: i64,
    signature: &str,
    body: Vec<u8>,
) -> Result<u16, String> {
    // Checked again at every attempt: the URL's own rules, then (for a
    // name) the resolver at connect time.
    let url = ssrf::check_url(url, config.allow_private)?;
    let resp = client
        .post(url)
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(webhook::ID_HEADER, id)
        .header(webhook::TIMESTAMP_HEADER, timestamp.to_string())
        .header(webhook::SIGNATURE_HEADER, signature)
        .body(body)
        .send()
        .await
        .map_err(|e| describe(&e))?;
    Ok(resp.status().as_u16())
}

/// An error of sending, with its causes (the resolver's refusal among
/// them).
fn describe(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() { "timed out".to_owned() } else { e.to_string() };
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}
