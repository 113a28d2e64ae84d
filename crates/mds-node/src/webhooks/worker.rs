//! The delivery task: it claims the endpoints with a delivery due (again at
//! once while there are any, else after a poll interval), each under a
//! lease in the store (one node at a time
//! attempts it), sends each its event in flight, all at once, and records
//! each outcome (which moves the endpoint's cursor on or schedules a
//! retry) while the lease holds. A node that dies mid-delivery leaves the
//! endpoint to another once its lease lapses.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use mds_domain::webhook;
use mds_store::{DeliveryOutcome, StoreResult, WebhookAttempt, WebhookDelivery};
use rand::RngCore;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::task::{JoinHandle, JoinSet};

use super::{WebhookConfig, schedule, signing, ssrf};
use crate::metrics::Event;
use crate::node::Node;

/// Deliveries a node claims per poll.
const CLAIM: usize = 64;

/// The longest error kept with an attempt.
const MAX_ERROR: usize = 300;

/// Spawns the delivery task; it runs until aborted. A node configured not
/// to deliver gets a task that only waits.
pub fn spawn(node: Arc<Node>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let config = node.config().webhooks.clone();
        if !config.deliver {
            return std::future::pending().await;
        }
        let client = client(&config);
        let owner = owner();
        loop {
            // While there is work, claim again at once (one event per
            // endpoint is in flight, so a backlog drains one claim at a
            // time); when idle, count what is pending and wait a poll.
            match round(&node, &client, &owner).await {
                Ok(0) => {
                    match node.store().webhooks_pending().await {
                        Ok(n) => node.metrics().set_webhooks_pending(n),
                        Err(e) => tracing::warn!(error = %e, "cannot count pending webhook deliveries"),
                    }
                    tokio::time::sleep(config.poll_interval).await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "webhook delivery round failed; retrying at the next poll");
                    tokio::time::sleep(config.poll_interval).await;
                }
            }
        }
    })
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

/// One poll: claim, deliver, record; how many were claimed.
async fn round(node: &Arc<Node>, client: &reqwest::Client, owner: &str) -> StoreResult<usize> {
    let now = node.config().clock.now();
    let lease = chrono::Duration::from_std(node.config().webhooks.lease).unwrap_or(chrono::Duration::seconds(30));
    let claimed = node.store().claim_webhook_deliveries(owner, now, now + lease, CLAIM).await?;
    let claimed_n = claimed.len();
    let mut set = JoinSet::new();
    for d in claimed {
        let (node, client, owner) = (node.clone(), client.clone(), owner.to_owned());
        set.spawn(async move { deliver(&node, &client, &owner, d).await });
    }
    while let Some(done) = set.join_next().await {
        match done {
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot record a webhook attempt; it will be made again"),
            Err(e) => tracing::error!(error = %e, "a webhook delivery panicked"),
            Ok(Ok(())) => {}
        }
    }
    Ok(claimed_n)
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

/// Sends `d`'s event once and records the attempt.
async fn deliver(node: &Node, client: &reqwest::Client, owner: &str, d: WebhookDelivery) -> StoreResult<()> {
    let config = &node.config().webhooks;
    let now = node.config().clock.now();
    let body = serde_json::to_vec(&d.event).expect("an event always serialises");
    let id = d.event.id.to_string();
    let timestamp = now.timestamp();
    let signature = signing::header(&secrets(&d, now), &id, timestamp, &body);
    let started = Instant::now();
    let result = send(client, config, &d.endpoint.url, &id, timestamp, &signature, body).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, error) = match result {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.chars().take(MAX_ERROR).collect())),
    };
    let attempt = d.endpoint.attempt.saturating_add(1);
    let after = node.config().clock.now();
    let outcome = schedule::outcome(status, attempt, d.endpoint.failing_since, after);
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
    let record = WebhookAttempt { event_id: d.event.id, attempt, attempted_at: now, status, error, duration_ms };
    node.store().finish_webhook_delivery(owner, &d.endpoint.id, &record, &outcome).await?;
    Ok(())
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
