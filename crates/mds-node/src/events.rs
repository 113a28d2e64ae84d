//! The event log (`GET /v1/events`, contract 11.1) and the stream (`GET
//! /v1/events/stream`, 11.3).
//!
//! - [`Node::events_page`]: a page of the log after a position: `since`
//!   (an event id) or `cursor` (the last id of the previous page sealed
//!   with the filters, [`Node::events_cursor`]). A position beyond the
//!   latest id issued was not issued here (`400 invalid_cursor`); one below
//!   what retention removed has expired (`410 events_expired`).
//! - [`EventHub`]: what feeds a node's streams. The feed task
//!   ([`spawn_feed`]) reads the events committed after the last one it saw
//!   every [`FEED_INTERVAL`] (by any node: the store is the one log) and
//!   broadcasts them; it renews the leases of the node's open streams and
//!   prunes the log past retention.
//! - [`Node::open_stream`]: a stream's frames ([`Frames`]), made by a task
//!   of its own: the log from its position (read from the store as the
//!   reader takes frames), then the broadcast, each event once and in id
//!   order; a comment every [`HEARTBEAT`]; closed within [`KEY_CHECK`] of
//!   its key being revoked or expiring, and when the node shuts down, also
//!   while its reader has stopped taking frames; closed when there has
//!   been no room for a frame for [`STALLED`] (so a reader that stopped
//!   reading does not hold one of its key's streams). What a stream holds
//!   for its reader is at most [`PENDING`] bytes of frames, whatever its
//!   position (contract 11.5): a frame that does not fit is left in the
//!   log, and read from there once the reader has taken enough. Open
//!   streams count per key across nodes in the store (at most
//!   [`MAX_STREAMS_PER_KEY`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use chrono::TimeDelta;
use mds_domain::{ApiKey, EventFilter, EventId, EventsLogQuery, EventsQuery, Page, StoredEvent};
use mds_store::StreamLease;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast, mpsc, watch};
use tokio::time::Instant;

use crate::error::ReadError;
use crate::keys::KeyContext;
use crate::node::Node;
use crate::tagged::Tagged;

/// How often the feed reads the log for new events.
pub const FEED_INTERVAL: Duration = Duration::from_millis(200);
/// How often an open stream sends a comment, so proxies keep it open.
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// How often an open stream checks that its key still works.
pub const KEY_CHECK: Duration = Duration::from_millis(250);
/// The most streams a key may hold open, across nodes.
pub const MAX_STREAMS_PER_KEY: usize = 2;
/// How long a stream's lease in the store lasts unless renewed (a node
/// that dies leaves its streams counted this long at most).
pub const STREAM_LEASE: Duration = Duration::from_secs(15);
/// How often the feed renews its streams' leases.
const LEASE_RENEWAL: Duration = Duration::from_secs(5);
/// How often the feed prunes the log past retention.
const PRUNE_INTERVAL: Duration = Duration::from_secs(600);
/// Events the feed reads per store read.
const READ: usize = 500;
/// Events a stream reads per store read while it catches up with the log:
/// a page is held only while its frames are handed over (what does not
/// fit is read again later).
const PAGE: usize = 32;
/// Events the broadcast holds for a slow stream before it falls behind
/// (and catches up from the store).
const BROADCAST: usize = 4096;
/// The most bytes of frames a stream holds for its reader (contract 11.5:
/// 64 KiB). A frame larger than this is sent alone.
pub const PENDING: usize = 64 * 1024;
/// How much room a stream that is behind waits for before it reads the
/// log again (not a page read per frame taken).
const ROOM: usize = 16 * 1024;
/// How long a stream waits for room for a frame before it is closed
/// (twice the heartbeat: a reader that is there takes a heartbeat).
pub const STALLED: Duration = Duration::from_secs(30);

/// A node's feed of committed events to its open streams.
#[derive(Debug)]
pub struct EventHub {
    tx: broadcast::Sender<Arc<Fed>>,
    /// The last id broadcast (`-1` before the first read).
    last: AtomicI64,
    /// Set once the node shuts down: every stream ends.
    closing: watch::Sender<bool>,
    /// This node's name in the stream leases.
    node: String,
    /// Events sent by this node's streams.
    frames: AtomicU64,
    /// Bytes of frames this node's streams hold for their readers.
    pending: Arc<AtomicU64>,
}

impl Default for EventHub {
    fn default() -> Self {
        EventHub {
            tx: broadcast::channel(BROADCAST).0,
            last: AtomicI64::new(-1),
            closing: watch::channel(false).0,
            node: format!("node-{:016x}", rand::random::<u64>()),
            frames: AtomicU64::new(0),
            pending: Arc::default(),
        }
    }
}

impl EventHub {
    /// Ends every open stream (at shutdown, so connections can drain).
    pub fn close_all(&self) {
        self.closing.send_replace(true);
    }

    /// How many streams this node has open.
    pub fn open_streams(&self) -> usize {
        self.tx.receiver_count()
    }

    /// How many events this node's streams have sent.
    pub fn frames_sent(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }

    /// How many bytes of frames this node's streams hold for their readers
    /// (at most [`PENDING`] each).
    pub fn pending_bytes(&self) -> u64 {
        self.pending.load(Ordering::Relaxed)
    }
}

/// A frame handed to a stream's connection, holding its bytes' place in
/// the stream's [`PENDING`] until taken.
struct Pending {
    frame: Bytes,
    place: OwnedSemaphorePermit,
    /// The node's count of pending bytes, given back on drop.
    gauge: Arc<AtomicU64>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.gauge.fetch_sub(self.place.num_permits() as u64, Ordering::Relaxed);
    }
}

/// An open stream's frames, as its connection takes them.
pub struct Frames {
    rx: mpsc::UnboundedReceiver<Pending>,
}

impl Frames {
    /// The next frame (`None` once the stream has ended); taking it frees
    /// its place.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        self.rx.poll_recv(cx).map(|p| p.map(|p| p.frame.clone()))
    }

    /// The next frame, as [`Frames::poll_recv`].
    pub async fn recv(&mut self) -> Option<Bytes> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

/// An event as the feed broadcasts it: with its frame, written once for
/// every stream that sends it.
#[derive(Debug)]
struct Fed {
    event: StoredEvent,
    frame: Bytes,
}

/// The `text/event-stream` frame of `e`.
fn frame(e: &StoredEvent) -> Bytes {
    let data = serde_json::to_string(&e.event).expect("an event serialises");
    Bytes::from(format!("id: {}\nevent: {}\ndata: {data}\n\n", e.event.id, e.event.kind))
}

/// Why a stream cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Its position or filters are refused, or the store failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The key has [`MAX_STREAMS_PER_KEY`] open already.
    #[error("this key has {MAX_STREAMS_PER_KEY} event streams open already; close one first")]
    TooMany,
}

/// The scope a log cursor is sealed in: the list's name and the filters.
fn scope(query: &EventsQuery) -> Vec<u8> {
    let mut s = b"events\0".to_vec();
    s.extend_from_slice(query.canonical().as_bytes());
    s
}

impl Node {
    /// The cursor that resumes the log under `query`'s filters after `id`.
    pub fn events_cursor(&self, query: &EventsQuery, id: EventId) -> String {
        self.cursors().seal(&scope(query), &id.number().to_be_bytes())
    }

    /// Where a read of the log starts: after the `cursor` (ours, for these
    /// filters), else after `since` (an event id), else from the start.
    fn events_position(&self, query: &EventsQuery, cursor: Option<&str>) -> Result<EventId, ReadError> {
        if let Some(c) = cursor {
            let bytes = self.cursors().open(&scope(query), c).map_err(ReadError::cursor)?;
            let n: [u8; 8] = bytes.try_into().map_err(|_| ReadError::cursor("not a cursor of the event log"))?;
            return Ok(EventId(i64::from_be_bytes(n)));
        }
        match &query.since {
            None => Ok(EventId(0)),
            Some(s) => s.parse().map_err(|e: mds_domain::event::EventIdError| ReadError::InvalidCursor {
                param: "since",
                detail: format!("since: {e}"),
            }),
        }
    }

    /// Refuses a position beyond the latest id (not issued here) or below
    /// what retention removed (expired). `param` names where it came from.
    fn check_position(after: EventId, latest: EventId, pruned: EventId, param: &'static str) -> Result<(), ReadError> {
        if after > latest {
            return Err(ReadError::InvalidCursor { param, detail: format!("{param} was not issued by this service") });
        }
        if after.number() > 0 && after < pruned {
            return Err(ReadError::EventsExpired);
        }
        Ok(())
    }

    /// A page of the event log (`GET /v1/events`): a [`Page`] of events,
    /// oldest first, tagged with its digest.
    pub async fn events_page(&self, query: &EventsLogQuery) -> Result<Tagged, ReadError> {
        let q = &query.filter;
        let after = self.events_position(q, query.page.cursor.as_deref())?;
        let limit = query.page.limit.get();
        let read = self.store().event_page(after, &q.filter(), limit + 1).await?;
        let param = if query.page.cursor.is_some() { "cursor" } else { "since" };
        Self::check_position(after, read.latest, read.pruned_through, param)?;
        let mut data: Vec<_> = read.events.into_iter().map(|e| e.event).collect();
        let has_more = data.len() > limit;
        data.truncate(limit);
        let next_cursor = match data.last() {
            Some(last) if has_more => Some(self.events_cursor(q, last.id)),
            _ => None,
        };
        let json = serde_json::to_vec(&Page::new(data, next_cursor, has_more)).expect("a page of events serialises");
        Ok(Tagged::hashed(json))
    }

    /// Opens a stream of the events passing `query` after its position
    /// (`last_event_id`, else `since`) for the caller `ctx` with `key`: the
    /// frames of `text/event-stream`, ending when the connection goes, the
    /// key stops working or the node shuts down. Counted against the key's
    /// [`MAX_STREAMS_PER_KEY`] until it ends.
    pub async fn open_stream(
        self: &Arc<Self>,
        ctx: &KeyContext,
        key: ApiKey,
        mut query: EventsQuery,
        last_event_id: Option<String>,
    ) -> Result<Frames, StreamError> {
        let param = if last_event_id.is_some() { "Last-Event-ID" } else { "since" };
        if let Some(id) = last_event_id {
            query.since = Some(id);
        }
        let after = self.events_position(&query, None).map_err(|e| match e {
            ReadError::InvalidCursor { detail, .. } => ReadError::InvalidCursor { param, detail },
            e => e,
        })?;
        let filter = query.filter();
        let head = self.store().event_page(after, &filter, 0).await.map_err(ReadError::from)?;
        Self::check_position(after, head.latest, head.pruned_through, param)?;
        // Without a position, the stream starts at what is committed now.
        let after = if query.since.is_none() { head.latest } else { after };
        let hub = self.events();
        let id = format!("str_{:016x}{:016x}", rand::random::<u64>(), rand::random::<u64>());
        let now = self.config().clock.now();
        let until = now + TimeDelta::from_std(STREAM_LEASE).expect("a short lease");
        let lease = StreamLease {
            id: id.clone(),
            key: ctx.prefix.clone(),
            node: hub.node.clone(),
            now,
            until,
            max: MAX_STREAMS_PER_KEY,
        };
        let opened = self.store().open_stream(&lease).await.map_err(ReadError::from)?;
        if !opened {
            return Err(StreamError::TooMany);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let live = hub.tx.subscribe();
        let closing = hub.closing.subscribe();
        let node = self.clone();
        let gauge = hub.pending.clone();
        tokio::spawn(async move {
            let stream = Stream {
                node: node.clone(),
                key,
                filter,
                sent: after,
                tx,
                places: Arc::new(Semaphore::new(PENDING)),
                gauge,
                behind: true,
                blocked: None,
                closing,
            };
            stream.run(live).await;
            if let Err(e) = node.store().close_stream(&id).await {
                tracing::warn!(error = %e, "an event stream's lease was not given back; it lapses by itself");
            }
        });
        Ok(Frames { rx })
    }
}

/// One open stream's producer.
struct Stream {
    node: Arc<Node>,
    key: ApiKey,
    filter: EventFilter,
    /// The last id sent (or the position it started after).
    sent: EventId,
    /// Bounded by `places`, not by count.
    tx: mpsc::UnboundedSender<Pending>,
    /// [`PENDING`] bytes of room for frames, taken by a frame until its
    /// connection takes it.
    places: Arc<Semaphore>,
    /// The node's count of pending bytes.
    gauge: Arc<AtomicU64>,
    /// Whether the log holds events after `sent` that it has not handed
    /// over (not read yet, or no room for them): read from the store,
    /// not taken from the broadcast, until it has caught up.
    behind: bool,
    /// Since when a frame found no room, and how much it needs.
    blocked: Option<(Instant, usize)>,
    closing: watch::Receiver<bool>,
}

/// Why a stream stops; logged at debug level when it does.
#[derive(Debug)]
enum Stop {
    /// The connection went (the reader closed it, or its writer ended).
    Gone,
    /// The key was revoked or expired.
    KeyEnded,
    /// The store failed while reading the log.
    Store,
    /// The node shuts down, or the broadcast ended with it.
    Closing,
    /// No room for a frame for [`STALLED`].
    Stalled,
}

impl Stream {
    /// Catches up with the log, then follows the broadcast (catching up
    /// again whenever it falls behind) until it stops.
    async fn run(mut self, mut live: broadcast::Receiver<Arc<Fed>>) {
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.reset();
        let mut check = tokio::time::interval(KEY_CHECK);
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        loop {
            let places = self.places.clone();
            // Room for the frame that did not fit, or to read the log again.
            let (stall_at, need) = match self.blocked {
                Some((since, need)) => (since + STALLED, need.clamp(ROOM, PENDING)),
                None => (far, 1),
            };
            let waiting = self.behind || self.blocked.is_some();
            let step = tokio::select! {
                () = self.tx.closed() => Err(Stop::Gone),
                _ = self.closing.changed() => Err(Stop::Closing),
                _ = check.tick() => self.check_key().await,
                _ = heartbeat.tick() => {
                    self.push(Bytes::from_static(b": keep-alive\n\n"));
                    Ok(())
                }
                room = places.acquire_many(u32::try_from(need).unwrap_or(u32::MAX)), if waiting => {
                    drop(room);
                    self.blocked = None;
                    if self.behind { self.catch_up().await } else { Ok(()) }
                }
                () = tokio::time::sleep_until(stall_at), if self.blocked.is_some() => Err(Stop::Stalled),
                got = live.recv() => match got {
                    Ok(fed) if !self.behind => {
                        self.offer(&fed.event, Some(&fed.frame));
                        Ok(())
                    }
                    // Behind: the log has it, and is read in order.
                    Ok(_) => Ok(()),
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.behind = true;
                        Ok(())
                    }
                    Err(broadcast::error::RecvError::Closed) => Err(Stop::Closing),
                },
            };
            if let Err(stop) = step {
                return stopped(stop);
            }
        }
    }

    /// Hands over what the log holds after the last id sent, a page at a
    /// time, until a frame finds no room (still behind: the rest is read
    /// again once there is) or the log is read to its end (caught up).
    async fn catch_up(&mut self) -> Result<(), Stop> {
        loop {
            let page = self.node.store().event_page(self.sent, &self.filter, PAGE).await.map_err(|_| Stop::Store)?;
            for e in &page.events {
                if !self.offer(e, None) {
                    return Ok(());
                }
            }
            if page.events.len() < PAGE {
                self.behind = false;
                return Ok(());
            }
        }
    }

    /// Hands over `e` (its `frame` when the feed made it) if it is after
    /// the last sent and passes the filter: whether it went (else there
    /// was no room, and the stream is behind).
    fn offer(&mut self, e: &StoredEvent, made: Option<&Bytes>) -> bool {
        if e.event.id <= self.sent {
            return true;
        }
        if self.filter.admits(e.event.kind, &e.subject) {
            if !self.push(made.cloned().unwrap_or_else(|| frame(e))) {
                self.behind = true;
                return false;
            }
            self.node.events().frames.fetch_add(1, Ordering::Relaxed);
        }
        self.sent = e.event.id;
        true
    }

    /// Hands `frame` to the connection if there is room for it: whether
    /// it went (else the stream is blocked, from now if it was not).
    fn push(&mut self, frame: Bytes) -> bool {
        let size = frame.len().clamp(1, PENDING);
        let Ok(place) = self.places.clone().try_acquire_many_owned(u32::try_from(size).unwrap_or(u32::MAX)) else {
            let since = self.blocked.map_or_else(Instant::now, |(since, _)| since);
            self.blocked = Some((since, size));
            return false;
        };
        self.gauge.fetch_add(size as u64, Ordering::Relaxed);
        // Gone: dropped with the error, giving its bytes back; the loop
        // hears the connection closed.
        let _ = self.tx.send(Pending { frame, place, gauge: self.gauge.clone() });
        self.blocked = None;
        true
    }

    /// Stops when the key no longer works (revoked, expired); a key that
    /// cannot be checked now (the store down) keeps the stream.
    async fn check_key(&self) -> Result<(), Stop> {
        match self.node.authenticate(&self.key).await {
            Ok(None) => Err(Stop::KeyEnded),
            _ => Ok(()),
        }
    }
}

/// Notes why a stream stopped (its connection closes with it).
fn stopped(stop: Stop) {
    tracing::debug!(reason = ?stop, "event stream stopped");
}

/// Starts the feed task of `node`: see the [module](self).
pub fn spawn_feed(node: Arc<Node>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let hub = node.events();
        let mut tick = tokio::time::interval(FEED_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut renewed = tokio::time::Instant::now();
        let mut pruned: Option<tokio::time::Instant> = None;
        loop {
            tick.tick().await;
            if let Err(e) = feed_once(&node).await {
                tracing::debug!(error = %e, "the event feed could not read the log; trying again");
            }
            if renewed.elapsed() >= LEASE_RENEWAL {
                renewed = tokio::time::Instant::now();
                let until = node.config().clock.now() + TimeDelta::from_std(STREAM_LEASE).expect("a short lease");
                if hub.open_streams() > 0 {
                    if let Err(e) = node.store().renew_streams(&hub.node, until).await {
                        tracing::warn!(error = %e, "the event streams' leases were not renewed");
                    }
                }
            }
            if pruned.is_none_or(|p| p.elapsed() >= PRUNE_INTERVAL) {
                pruned = Some(tokio::time::Instant::now());
                let before = node.config().clock.now() - node.config().events_retention;
                match node.store().prune_events(before).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(events = n, "pruned events past retention"),
                    Err(e) => tracing::warn!(error = %e, "events past retention were not pruned"),
                }
            }
        }
    })
}

/// Reads the events committed after the last broadcast and broadcasts
/// them (the first read only learns where the log ends).
async fn feed_once(node: &Node) -> Result<(), mds_store::StoreError> {
    let hub = node.events();
    let last = hub.last.load(Ordering::Acquire);
    if last < 0 {
        let head = node.store().event_page(EventId(i64::MAX), &EventFilter::default(), 0).await?;
        hub.last.store(head.latest.number(), Ordering::Release);
        return Ok(());
    }
    loop {
        let from = EventId(hub.last.load(Ordering::Acquire));
        let events = node.store().events_after(from, READ).await?;
        let n = events.len();
        for e in events {
            hub.last.store(e.event.id.number(), Ordering::Release);
            // No receiver (nobody streams on this node now): nothing to make.
            if hub.tx.receiver_count() > 0 {
                let frame = frame(&e);
                let _ = hub.tx.send(Arc::new(Fed { event: e, frame }));
            }
        }
        if n < READ {
            return Ok(());
        }
    }
}
