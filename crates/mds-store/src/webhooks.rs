//! What the store keeps of webhook endpoints (contract section 11.2): an
//! endpoint with its delivery cursor, an update to one, a delivery a node
//! claimed, how an attempt ended and what follows from it.
//!
//! The delivery state of an endpoint is a cursor: every event its filter
//! admits with an id up to [`WebhookEndpoint::delivered_through`] is
//! delivered or given up; the next one (or a `ping` for the endpoint) is in
//! flight, tried for the [`WebhookEndpoint::attempt`]-th time so far, due
//! at [`WebhookEndpoint::next_attempt_at`] (`None`: now).

use chrono::{DateTime, Utc};
use mds_domain::{AccountName, Event, EventFilter, EventId};

/// A webhook endpoint as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookEndpoint {
    /// Its id, `we_…`.
    pub id: String,
    /// The account it belongs to.
    pub account: AccountName,
    /// Where events are sent.
    pub url: String,
    /// The owner's note.
    pub description: Option<String>,
    /// Which events it receives.
    pub filter: EventFilter,
    /// The signing secret, `whsec_…`.
    pub secret: String,
    /// The secret before the last rotation and until when it still signs.
    pub old_secret: Option<(String, DateTime<Utc>)>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was last changed by its owner.
    pub updated_at: DateTime<Utc>,
    /// When and why it was disabled, if it is.
    pub disabled: Option<(DateTime<Utc>, String)>,
    /// Every admitted event up to this id is delivered or given up.
    pub delivered_through: EventId,
    /// Attempts made at the event in flight.
    pub attempt: u32,
    /// When the next attempt is due (`None`: as soon as there is an event).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The first failure since the last success.
    pub failing_since: Option<DateTime<Utc>>,
}

/// A new endpoint, for [`crate::WebhookStore::create_webhook`].
#[derive(Debug, Clone)]
pub struct NewWebhook {
    /// Its id, `we_…`.
    pub id: String,
    /// The owning account.
    pub account: AccountName,
    /// Where events are sent.
    pub url: String,
    /// The owner's note.
    pub description: Option<String>,
    /// Which events it receives.
    pub filter: EventFilter,
    /// The signing secret.
    pub secret: String,
    /// When.
    pub now: DateTime<Utc>,
}

/// A change to an endpoint by its owner: each field `Some` is set.
#[derive(Debug, Clone, Default)]
pub struct WebhookPatch {
    /// A new URL.
    pub url: Option<String>,
    /// A new description (`Some(None)` removes it).
    pub description: Option<Option<String>>,
    /// A new filter.
    pub filter: Option<EventFilter>,
    /// `true` enables (resets the failure state), `false` disables.
    pub enabled: Option<bool>,
}

/// One delivery attempt, as kept for `GET /v1/webhooks/{id}/attempts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookAttempt {
    /// The event delivered.
    pub event_id: EventId,
    /// Its number for this event, from 1.
    pub attempt: u32,
    /// When it started.
    pub attempted_at: DateTime<Utc>,
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Why there is no status (timeout, refused address…).
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: u64,
}

/// A delivery a node claimed: the endpoint (as claimed) and its run: the
/// event in flight and the next ones its filter admits, in id order, to be
/// sent one after another (one in flight) while the lease holds.
#[derive(Debug, Clone)]
pub struct WebhookDelivery {
    /// The endpoint.
    pub endpoint: WebhookEndpoint,
    /// The events to send, in id order; never empty.
    pub events: Vec<Event>,
}

/// What an attempt leads to, decided by the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// Delivered: the cursor moves past the event; the failure state ends.
    Delivered,
    /// Failed: tried again at the instant given.
    Retry(DateTime<Utc>),
    /// Failed for the last time: the cursor moves past the event.
    GiveUp,
    /// The endpoint is disabled for the reason given; the event stays in
    /// flight (re-enabling tries it again).
    Disable(String),
}

/// The most attempts kept per endpoint.
pub const ATTEMPTS_KEPT: usize = 100;
