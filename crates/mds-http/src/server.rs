//! The server: binds first (so callers learn the port, e.g. port 0 in
//! tests), then serves until a shutdown signal, draining in-flight requests.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use axum::ServiceExt as _;
use tokio::net::TcpListener;

use mds_node::{flush, reload};

use crate::router::router;
use crate::state::AppState;

/// A bound, not yet serving, server.
pub struct Server {
    listener: TcpListener,
    state: AppState,
}

impl Server {
    /// Binds `addr`.
    pub async fn bind(addr: SocketAddr, state: AppState) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        Ok(Server { listener, state })
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then stops accepting, lets
    /// in-flight requests finish and returns.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let reloader = reload::spawn(self.state.node.clone());
        let flusher = flush::spawn(self.state.node.clone());
        let app = router(self.state.clone());
        let result = axum::serve(self.listener, app.into_make_service()).with_graceful_shutdown(shutdown).await;
        reloader.abort();
        flusher.abort();
        // In-flight requests are drained: every count is in the meter now.
        flush::final_flush(&self.state).await;
        tracing::info!("server stopped");
        result
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
