//! The server: binds first (so callers learn the port, e.g. port 0 in
//! tests), then accepts and serves connections until a shutdown signal.
//!
//! What a client may hold is bounded ([`ServerConfig`](crate::config::ServerConfig)): a request head
//! must be complete within `header_read_timeout` of its first byte, an idle
//! connection is closed after `idle_timeout` ([`conn`]), and at most
//! `max_connections` are open at once (fewer when the process's open-file
//! limit is lower). At the cap, the connection that has waited longest
//! between requests is closed to make room, so a crowd of half-sent
//! requests cannot keep `/healthz` or real callers out; only when every
//! connection is serving a request is a new one refused.
//!
//! Each connection, once accepted, is served on one of the [`workers`]
//! (a thread a core, each with a current-thread runtime of its own) for its
//! whole life; the accept loop, the cap and the shutdown stay here.
//!
//! Connections are hyper's, but one that opens with a whole `GET
//! /v1/events/stream` head, which [`direct`] serves without hyper's
//! per-connection buffers (an open stream costs that much less).
//!
//! With an admin listener ([`Server::with_admin`]), the same loop accepts
//! on both: the admin API and `/metrics` there ([`crate::admin`]), the
//! public API (without `/metrics`) on the other; the connection cap and
//! the shutdown cover both.
//!
//! Shutdown: stop accepting, let requests in flight finish and close
//! connections between requests, for at most `shutdown_grace`; then close
//! what is left (a client that never reads cannot hold the process), and
//! always run the final usage flush: every request admitted was counted in
//! the meter before its response was written.

mod conn;
mod direct;
pub(crate) mod refusal;
mod unread;
mod workers;

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mds_node::metrics::Event;
use mds_node::tasks::Background;
use mds_node::{flush, leases};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::middleware::envelope::Envelope;
use crate::router::public_router;
use crate::state::AppState;
use conn::Watch;

/// File descriptors kept for everything but client connections (the
/// listener, the store's pool, Redis, logs, the SQLite file and journal).
const RESERVED_FDS: usize = 64;

/// The connection cap in force: `configured`, lowered to the open-file
/// limit less [`RESERVED_FDS`] (at least 16), so that accepting never fails
/// for want of a descriptor.
pub fn max_connections(configured: usize) -> usize {
    match open_file_limit() {
        Some(limit) => configured.min(limit.saturating_sub(RESERVED_FDS).max(16)),
        None => configured,
    }
}

/// The soft open-file limit of this process (Linux: `/proc/self/limits`).
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..].split_whitespace().next()?.parse().ok()
}

/// The open connections, for eviction at the cap.
#[derive(Default)]
struct Registry {
    next: u64,
    open: HashMap<u64, Arc<Watch>>,
}

impl Registry {
    fn add(&mut self, watch: Arc<Watch>) -> u64 {
        self.next += 1;
        self.open.insert(self.next, watch);
        self.next
    }

    /// Asks the connection that has waited longest between requests to
    /// close; false when every connection is serving a request.
    fn evict_one(&self) -> bool {
        let oldest = self.open.values().filter_map(|w| Some((w.waiting_since()?, w))).min_by_key(|(t, _)| *t);
        match oldest {
            Some((_, w)) => {
                w.evict();
                true
            }
            None => false,
        }
    }
}

/// What a connection is served by: the envelope of the public listener's
/// router, or of the admin one's.
#[derive(Clone)]
pub(crate) enum Served {
    /// The public API.
    Public(Envelope),
    /// The admin API ([`crate::admin::router`]).
    Admin(Envelope),
}

impl Served {
    /// Serves one request.
    pub(crate) async fn call(
        &mut self,
        req: axum::extract::Request,
    ) -> Result<axum::response::Response, std::convert::Infallible> {
        use tower::Service;
        match self {
            Served::Public(e) | Served::Admin(e) => e.call(req).await,
        }
    }
}

/// A bound, not yet serving, server.
pub struct Server {
    listener: TcpListener,
    admin: Option<TcpListener>,
    state: AppState,
}

impl Server {
    /// Binds `addr`.
    pub async fn bind(addr: SocketAddr, state: AppState) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        Ok(Server { listener, admin: None, state })
    }

    /// Binds the admin listener on `addr` as well: the admin API and
    /// `/metrics` are served there (and `/metrics` no longer on the public
    /// listener).
    pub async fn with_admin(mut self, addr: SocketAddr) -> io::Result<Self> {
        self.admin = Some(TcpListener::bind(addr).await?);
        Ok(self)
    }

    /// The admin listener's bound address, if there is one.
    pub fn admin_addr(&self) -> Option<io::Result<SocketAddr>> {
        self.admin.as_ref().map(TcpListener::local_addr)
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then shuts down as the
    /// [module](self) says and returns.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let Server { listener, admin, state } = self;
        let node = state.shared_node().clone();
        let workers = workers::shared()?;
        let background = Background::start(&node);
        let cfg = state.http().server.clone();
        let cap = max_connections(cfg.max_connections);
        tracing::debug!(max_connections = cap, "accepting connections");
        let app = Served::Public(public_router(state.clone(), admin.is_none()));
        let admin_app = Served::Admin(crate::admin::router(state.clone()));
        let accept_admin = || async {
            match &admin {
                Some(l) => l.accept().await,
                None => std::future::pending().await,
            }
        };
        let permits = Arc::new(Semaphore::new(cap));
        let registry = Arc::new(Mutex::new(Registry::default()));
        let (stop, stopping) = watch::channel(false);
        // Set when the shutdown's grace is over: this server's connections
        // end (the workers are the process's and go on).
        let (abort, aborted) = watch::channel(false);
        let mut shutdown = pin!(shutdown);
        let started = tokio::time::Instant::now();
        loop {
            let (stream, app) = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => (stream, app.clone()),
                    Err(e) => {
                        // Out of descriptors or similar: the cap should
                        // prevent it; back off rather than spin.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                accepted = accept_admin() => match accepted {
                    Ok((stream, _)) => (stream, admin_app.clone()),
                    Err(e) => {
                        // Out of descriptors or similar: the cap should
                        // prevent it; back off rather than spin.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let permit = match permits.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => {
                    let evicted = registry.lock().unwrap_or_else(PoisonError::into_inner).evict_one();
                    let freed = if evicted {
                        tokio::time::timeout(Duration::from_millis(200), permits.clone().acquire_owned()).await.ok()
                    } else {
                        None
                    };
                    match freed.and_then(Result::ok) {
                        Some(p) => p,
                        None => {
                            node.metrics().event(Event::ConnectionRefused);
                            drop(stream);
                            continue;
                        }
                    }
                }
            };
            // Off this runtime's driver, onto its worker's (workers.rs).
            let stream = match stream.into_std() {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "a connection could not be handed to a worker");
                    continue;
                }
            };
            let watch = Arc::new(Watch::new(started));
            let id = registry.lock().unwrap_or_else(PoisonError::into_inner).add(watch.clone());
            let (cfg, stopping, registry, node) = (cfg.clone(), stopping.clone(), registry.clone(), node.clone());
            let mut aborted = aborted.clone();
            node.metrics().connection_opened();
            workers.hand(Box::pin(async move {
                let closed = match tokio::net::TcpStream::from_std(stream) {
                    Ok(stream) => tokio::select! {
                        closed = conn::serve(stream, app, cfg, watch, stopping) => closed,
                        // The abort, or the server gone without one.
                        _ = aborted.wait_for(|&a| a) => None,
                    },
                    Err(e) => {
                        tracing::warn!(error = %e, "a worker could not take a connection");
                        None
                    }
                };
                registry.lock().unwrap_or_else(PoisonError::into_inner).open.remove(&id);
                node.metrics().connection_closed();
                if let Some(reason) = closed {
                    node.metrics().event(match reason {
                        conn::Expiry::HeaderTimeout => Event::ConnectionHeaderTimeout,
                        conn::Expiry::Idle => Event::ConnectionIdleClosed,
                        conn::Expiry::Evicted => Event::ConnectionEvicted,
                    });
                    tracing::debug!(reason = reason.as_str(), "connection closed");
                }
                drop(permit);
            }));
        }
        drop(listener);
        drop(admin);
        let _ = stop.send(true);
        // Open event streams end now, so their connections drain.
        node.events().close_all();
        // Each open connection holds one of the cap's permits to its end.
        let all = u32::try_from(cap).unwrap_or(u32::MAX);
        let closed = || permits.acquire_many(all);
        let drained = tokio::time::timeout(cfg.shutdown_grace, closed()).await;
        if drained.is_err() {
            tracing::warn!(
                connections = cap - permits.available_permits(),
                grace_ms = cfg.shutdown_grace.as_millis() as u64,
                "closing connections still open after the shutdown grace"
            );
            let _ = abort.send(true);
            let _ = closed().await;
        } else {
            // Each phase of a shutdown says it is done, so a slow one shows
            // in the log as the step it stopped at.
            tracing::info!("connections drained; returning leases and flushing usage");
        }
        background.stop();
        leases::give_back(&node).await;
        // Every admitted request was counted before its response was written.
        flush::final_flush(&node).await;
        tracing::info!("server stopped");
        Ok(())
    }
}

/// Completes on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutdown signal received; draining in-flight requests");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_fits_the_open_file_limit() {
        let limit = open_file_limit().expect("Linux");
        assert_eq!(max_connections(usize::MAX), limit.saturating_sub(RESERVED_FDS).max(16));
        assert_eq!(max_connections(3), 3);
    }
}
