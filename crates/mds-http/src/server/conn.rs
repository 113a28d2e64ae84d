//! One connection: served by hyper (HTTP/1.1 or HTTP/2), watched for the
//! two ways a client can hold a connection without using it, and closed when
//! the server stops.
//!
//! - A request whose head is not complete [`ServerConfig::header_read_timeout`]
//!   after its first byte (a half-sent request, "slowloris") is closed.
//! - A connection with no request in flight and no byte moved for
//!   [`ServerConfig::idle_timeout`] (an idle keep-alive, or a client that
//!   stopped reading its responses) is closed.
//!
//! A connection that opens with an event stream's head is served by
//! [`direct`] instead, under the same watch.
//!
//! A connection whose client may still be sending (a request body left
//! unread, as after a `413`, or a next request begun) is closed by
//! lingering ([`Watched`]'s shutdown): the write side is shut, then what
//! the client still sends is read and dropped until it closes, falls quiet
//! for `LINGER_QUIET` or `LINGER_FOR` has passed, so the client reads its
//! response rather than a reset.
//!
//! The watch ([`Watch`]) sees the bytes (its IO wrapper, [`Watched`]) and the
//! requests (the service marks each one in flight) in atomics alone; a
//! watchdog sleeps until the earlier deadline, but never longer than a
//! request head may take, so a head that starts meanwhile is seen by its
//! next wake, before its own deadline: nothing wakes the watchdog per
//! request (a wake and a timer re-armed per request cost a keyed request
//! several percent of its time). The server may also ask a connection that
//! is not serving a request to close ([`Watch::evict`]) to make room under
//! its cap.

use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::{Served, direct, refusal, unread};
use crate::config::ServerConfig;

/// What a connection is doing, as its watchdog and the server's eviction
/// see it. Times are milliseconds since `base`, the server's start (one
/// base for every connection, so their times compare).
#[derive(Debug)]
pub(crate) struct Watch {
    base: Instant,
    /// Requests being served.
    in_flight: AtomicUsize,
    /// When the connection last had no request in flight and moved no byte.
    quiet_since: AtomicU64,
    /// When the first byte of a request not yet handed to the service came,
    /// plus one (0: none).
    head_started: AtomicU64,
    /// A byte came while a request was in flight (a pipelined request).
    read_in_flight: AtomicBool,
    /// A request's body was left unread: the client may still be sending it.
    unread: AtomicBool,
    /// Set by [`Watch::evict`].
    evicted: Notify,
}

/// Why a connection was closed by its watchdog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// A request head took too long.
    HeaderTimeout,
    /// Nothing happened for too long.
    Idle,
    /// The server needed its place.
    Evicted,
}

impl Expiry {
    /// A word for logs.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Expiry::HeaderTimeout => "header_timeout",
            Expiry::Idle => "idle",
            Expiry::Evicted => "evicted",
        }
    }
}

impl Watch {
    pub(crate) fn new(base: Instant) -> Self {
        let opened = u64::try_from(base.elapsed().as_millis()).unwrap_or(u64::MAX);
        Watch {
            base,
            in_flight: AtomicUsize::new(0),
            quiet_since: AtomicU64::new(opened),
            head_started: AtomicU64::new(0),
            read_in_flight: AtomicBool::new(false),
            unread: AtomicBool::new(false),
            evicted: Notify::new(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn at(&self, ms: u64) -> Instant {
        self.base + Duration::from_millis(ms)
    }

    /// Bytes came from the client.
    pub(super) fn on_read(&self) {
        let now = self.now_ms();
        if self.in_flight.load(Ordering::Acquire) > 0 {
            self.read_in_flight.store(true, Ordering::Relaxed);
        } else {
            self.start_head(now);
        }
        self.quiet_since.store(now, Ordering::Relaxed);
    }

    /// The first byte of a request head came at `now` (unless one had).
    fn start_head(&self, now: u64) {
        let _ = self.head_started.compare_exchange(0, now + 1, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// Bytes went to the client.
    pub(super) fn on_write(&self) {
        self.quiet_since.store(self.now_ms(), Ordering::Relaxed);
    }

    /// A request's head is complete and it is being served, until the
    /// returned guard drops.
    pub(super) fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_started.store(0, Ordering::Release);
        InFlight(self.clone())
    }

    /// Whether the connection is between requests (nothing in flight), and
    /// since when (the earlier of the quiet and the started-head times):
    /// what eviction picks by.
    pub(crate) fn waiting_since(&self) -> Option<u64> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let head = self.head_started.load(Ordering::Acquire);
        let quiet = self.quiet_since.load(Ordering::Relaxed);
        Some(if head > 0 { quiet.min(head - 1) } else { quiet })
    }

    /// A request's body was left unread (its response closes the
    /// connection).
    pub(super) fn left_unread(&self) {
        self.unread.store(true, Ordering::Release);
    }

    /// Whether the client may still be sending when the connection closes:
    /// a body was left unread, or bytes of a request not yet served came (a
    /// head hyper refused, or a pipelined request). What a lingering close
    /// waits for; a connection between requests has nothing to read.
    fn may_send_more(&self) -> bool {
        self.unread.load(Ordering::Acquire) || self.head_started.load(Ordering::Acquire) != 0
    }

    /// Asks the connection to close now (it is between requests).
    pub(crate) fn evict(&self) {
        self.evicted.notify_one();
    }

    /// Completes when the connection has broken one of its timeouts, or is
    /// evicted, with the reason.
    pub(super) async fn expiry(&self, cfg: &ServerConfig) -> Expiry {
        loop {
            let deadline = if self.in_flight.load(Ordering::Acquire) > 0 {
                // Serving: look again within the shorter timeout.
                self.base.elapsed() + cfg.header_read_timeout.min(cfg.idle_timeout)
            } else {
                match self.head_started.load(Ordering::Acquire) {
                    0 => Duration::from_millis(self.quiet_since.load(Ordering::Relaxed)) + cfg.idle_timeout,
                    started => Duration::from_millis(started - 1) + cfg.header_read_timeout,
                }
            };
            let now = self.base.elapsed();
            if deadline <= now && self.in_flight.load(Ordering::Acquire) == 0 {
                let started = self.head_started.load(Ordering::Acquire);
                return if started > 0 { Expiry::HeaderTimeout } else { Expiry::Idle };
            }
            // A head that starts while this sleeps is seen at the next
            // wake, which is no later than that head's own deadline.
            let wake = deadline.min(now + cfg.header_read_timeout);
            tokio::select! {
                () = tokio::time::sleep_until(self.at(u64::try_from(wake.as_millis()).unwrap_or(u64::MAX))) => {}
                () = self.evicted.notified() => {
                    if self.in_flight.load(Ordering::Acquire) == 0 {
                        return Expiry::Evicted;
                    }
                }
            }
        }
    }
}

/// A request in flight on a watched connection; ends when dropped.
pub(super) struct InFlight(Arc<Watch>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let w = &self.0;
        if w.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            let now = w.now_ms();
            w.quiet_since.store(now, Ordering::Relaxed);
            if w.read_in_flight.swap(false, Ordering::Relaxed) {
                // Bytes of a next request came while this one was served.
                w.start_head(now);
            }
        }
    }
}

/// How long a closing connection goes on reading what its client still
/// sends, at most ([`Watched::poll_shutdown`]): nginx's `lingering_time`.
const LINGER_FOR: Duration = Duration::from_secs(30);
/// How long a closing connection waits for its client's next byte before it
/// closes: nginx's `lingering_timeout`.
const LINGER_QUIET: Duration = Duration::from_secs(5);

/// A stream whose reads and writes its [`Watch`] sees, which gives hyper's
/// bodiless `414`/`431` a problem+json body ([`refusal`]), and which closes
/// by lingering ([`Watched::poll_shutdown`]).
pub(crate) struct Watched {
    inner: TcpStream,
    watch: Arc<Watch>,
    /// A replacement being written, and how much of it is written.
    swap: Option<(Vec<u8>, usize)>,
    /// The client has closed its side (a read saw the end).
    read_end: bool,
    /// Closing: the write side is shut, and what the client still sends is
    /// read and dropped until this wakes (reset on each read) or the end.
    linger: Option<Linger>,
}

/// A lingering close's timer and its hard end.
struct Linger {
    until: Instant,
    wake: Pin<Box<tokio::time::Sleep>>,
}

impl Watched {
    fn new(inner: TcpStream, watch: Arc<Watch>) -> Self {
        Watched { inner, watch, swap: None, read_end: false, linger: None }
    }

    /// Reads and drops what the client still sends, until it closes its
    /// side, errs, or the linger's timer ends; `Pending` while it may send
    /// more.
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(linger) = self.linger.as_mut() else { return Poll::Ready(()) };
        let mut scratch = [0u8; 8192];
        loop {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                    let now = Instant::now();
                    if now >= linger.until {
                        return Poll::Ready(());
                    }
                    linger.wake.as_mut().reset((now + LINGER_QUIET).min(linger.until));
                }
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return linger.wake.as_mut().poll(cx),
            }
        }
    }
}

impl Watched {
    /// Writes the replacement of `buf` if it has one (reporting all of `buf`
    /// written once the replacement is), else `None`.
    fn poll_swap(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<io::Result<usize>>> {
        if self.swap.is_none() {
            self.swap = Some((refusal::problem_for(buf)?, 0));
        }
        let (bytes, at) = self.swap.as_mut()?;
        while *at < bytes.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*at..]) {
                Poll::Ready(Ok(0)) => return Some(Poll::Ready(Err(io::ErrorKind::WriteZero.into()))),
                Poll::Ready(Ok(n)) => *at += n,
                Poll::Ready(Err(e)) => return Some(Poll::Ready(Err(e))),
                Poll::Pending => return Some(Poll::Pending),
            }
        }
        self.swap = None;
        self.watch.on_write();
        Some(Poll::Ready(Ok(buf.len())))
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let (before, room) = (buf.filled().len(), buf.remaining());
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) {
            if buf.filled().len() > before {
                self.watch.on_read();
            } else if room > 0 {
                self.read_end = true;
            }
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Some(r) = self.poll_swap(cx, buf) {
            return r;
        }
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.watch.on_write();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // hyper writes a bodiless head as one slice.
        if let [head] = bufs
            && let Some(r) = self.poll_swap(cx, head)
        {
            return r;
        }
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.watch.on_write();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// Closes as nginx's `lingering_close` does. hyper closes a connection
    /// with a request body it has not read (one refused `413` by its
    /// declared length, say) without reading it; were the socket closed
    /// then, the kernel would answer the unread bytes with a reset, and a
    /// client still sending (one that reads only once it has sent all, as
    /// Python's `http.client` does) would see the reset, not the response.
    /// So this shuts the write side (the response is whole, and the client
    /// sees its end), then reads and drops what the client still sends until
    /// it closes its side, or sends nothing for [`LINGER_QUIET`], or for
    /// [`LINGER_FOR`] in all. A client that had closed its side already, or
    /// one with nothing left to send ([`Watch::may_send_more`]: a keep-alive
    /// between requests, closed by a stop), is closed at once.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.linger.is_none() {
            std::task::ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            if this.read_end || !this.watch.may_send_more() {
                return Poll::Ready(Ok(()));
            }
            let now = Instant::now();
            this.linger =
                Some(Linger { until: now + LINGER_FOR, wake: Box::pin(tokio::time::sleep_until(now + LINGER_QUIET)) });
        }
        this.poll_linger(cx).map(Ok)
    }
}

/// Serves one connection until the client closes it, a timeout closes it,
/// or the server stops (`stopping` turns true: requests in flight finish,
/// then it closes; the server bounds how long that may take).
pub(crate) async fn serve(
    stream: TcpStream,
    app: Served,
    cfg: ServerConfig,
    watch: Arc<Watch>,
    mut stopping: watch::Receiver<bool>,
) -> Option<Expiry> {
    let _ = stream.set_nodelay(true);
    if matches!(app, Served::Public(_)) {
        // An event stream's head is served without hyper (see `direct`).
        let sniffed = tokio::select! {
            sniffed = direct::sniff(&stream) => sniffed,
            reason = watch.expiry(&cfg) => return Some(reason),
            _ = stopping.changed() => return None,
        };
        match sniffed {
            Ok(Some(head)) => return direct::serve(stream, head, app, &cfg, &watch, stopping).await,
            Ok(None) => {}
            Err(_) => return None,
        }
    }
    let io = TokioIo::new(Watched::new(stream, watch.clone()));
    let marks = watch.clone();
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let in_flight = marks.begin();
        let mut app = app.clone();
        async move {
            let (req, ended) = unread::watch(req);
            let mut resp = app.call(req).await;
            if let Ok(resp) = resp.as_mut()
                && ended.close_if_unread(resp)
            {
                in_flight.0.left_unread();
            }
            drop(in_flight);
            resp
        }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let mut conn = pin!(builder.serve_connection(io, service));
    let expiry = watch.expiry(&cfg);
    let mut expiry = pin!(expiry);
    loop {
        tokio::select! {
            _ = conn.as_mut() => return None,
            reason = expiry.as_mut() => return Some(reason),
            changed = stopping.changed() => {
                if changed.is_err() || *stopping.borrow() {
                    conn.as_mut().graceful_shutdown();
                    // Served to the end (or dropped by the server after its grace).
                    let _ = conn.as_mut().await;
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head that starts while the watchdog sleeps toward the idle
    /// deadline (nothing wakes it) is closed at its own header deadline,
    /// not the idle one; a connection left quiet, at the idle one.
    #[tokio::test(start_paused = true)]
    async fn the_watchdog_meets_both_deadlines_with_no_wake_per_request() {
        let cfg = ServerConfig {
            header_read_timeout: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(60),
            ..ServerConfig::default()
        };
        let start = Instant::now();
        let watch = Arc::new(Watch::new(start));
        let (w, c) = (watch.clone(), cfg.clone());
        let expired = tokio::spawn(async move { (w.expiry(&c).await, Instant::now()) });
        // A request served, then quiet, then half a head.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        drop(watch.begin());
        tokio::time::sleep(Duration::from_millis(3500)).await;
        watch.on_read();
        let (reason, at) = expired.await.unwrap();
        assert_eq!((reason, at - start), (Expiry::HeaderTimeout, Duration::from_millis(6500)));

        let quiet = Arc::new(Watch::new(Instant::now()));
        let t = Instant::now();
        assert_eq!(quiet.expiry(&cfg).await, Expiry::Idle);
        assert_eq!(t.elapsed(), cfg.idle_timeout);
    }
}
