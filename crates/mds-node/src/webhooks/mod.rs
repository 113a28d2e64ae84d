//! Webhooks (contract section 11.2): an account's endpoints, managed with
//! its API key, and their delivery by every node.
//!
//! # Layout
//! - `endpoints`: the operations of the routes (create, list, update,
//!   delete, rotate, test, attempts, replay) as methods on `Node`, with
//!   the validation of their input.
//! - `signing`: a delivery's signature header (the scheme itself is
//!   `mds_domain::webhook`'s).
//! - `ssrf`: which addresses a delivery may reach, checked on the URL at
//!   creation and at connect time on every attempt.
//! - `schedule`: what a failed attempt leads to (the retry schedule, the
//!   3-day rule, `410`).
//! - `worker`: the background task that claims due deliveries from the
//!   store, sends them and records the outcome.
//!
//! Delivery state lives in the store (`mds_store::webhooks`): a cursor per
//! endpoint, so a node holds nothing that is lost if it dies.

use std::time::Duration;

mod endpoints;
pub mod schedule;
pub mod signing;
pub mod ssrf;
pub mod worker;

pub use endpoints::{EndpointInput, MAX_ENDPOINTS, MAX_EXPIRES_IN, Owned, WebhookError};

/// How a node delivers webhooks.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Lift the SSRF rules (`http` URLs and private, loopback and
    /// link-local addresses allowed): development and tests only
    /// (`mds serve --webhooks-allow-private`).
    pub allow_private: bool,
    /// How often the node looks for due deliveries.
    pub poll_interval: Duration,
    /// How long a claimed delivery is this node's alone.
    pub lease: Duration,
    /// The most time one attempt may take.
    pub timeout: Duration,
    /// The most endpoints a node sends to at once (one in flight each):
    /// so many receivers hanging until the timeout take every place, and
    /// the others wait. 256 leaves 156 places to the rest with 100 of them
    /// hanging (BENCHMARKS.md, "One endpoint never delays another").
    pub max_in_flight: usize,
    /// Whether this node delivers at all (a node serving only reads may
    /// leave delivery to others).
    pub deliver: bool,
    /// The node's database: when it is a SQLite file, the deliveries open
    /// a pool of their own on it, on their thread, so that SQLite's
    /// connection threads run at that thread's lower priority; otherwise
    /// (`None`, in memory, PostgreSQL) they use the node's store.
    pub database: Option<mds_store::DatabaseUrl>,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            allow_private: false,
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(30),
            timeout: Duration::from_secs(10),
            max_in_flight: 256,
            deliver: true,
            database: None,
        }
    }
}
