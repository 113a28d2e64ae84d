//! The threads that serve connections: one a core, each with a
//! current-thread runtime of its own, as nginx runs a worker process a core.
//!
//! On the process's multi-thread runtime, connections were tasks of a
//! shared scheduler: one thread at a time polls the I/O driver, a thread
//! that finds work wakes a sleeping one to share it, and a connection's
//! task moves between threads. Here each connection, once accepted, lives
//! on one worker for its life: its socket is registered with that
//! worker's own `epoll`, and a worker with nothing to do waits in
//! `epoll_wait` alone. Measured, a made page gained about a tenth of its
//! throughput and its threads half their involuntary context switches
//! (BENCHMARKS.md, "Connections served a core a runtime").
//!
//! The accept loop stays on the process's runtime (it holds the cap, the
//! eviction registry and the shutdown) and hands each connection to the
//! next worker in turn. What a request starts on the way (an event
//! stream's task, a store or Redis connection opened for a pool) is
//! started on its worker and registered with its worker's driver, and a
//! pool outlives the server that filled it (the store is the caller's).
//! So the workers are the process's ([`shared`]), started with the first
//! server and never stopped: a server's shutdown ends its own connections
//! (the server's abort, `mod.rs`), not the runtimes that drive what its
//! requests opened. A runtime shut down under a pooled connection made the
//! next use of that connection fail ("a Tokio 1.x context was found, but
//! it is being shutdown"): the store of a restarted node, in tests.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

/// What a worker is handed: a connection's whole service, which takes its
/// socket out of the blocking form it travels in
/// ([`tokio::net::TcpStream::from_std`]) when the worker first polls it.
pub(crate) type ConnectionTask = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The connection-serving threads.
pub(crate) struct Workers {
    queues: Vec<mpsc::UnboundedSender<ConnectionTask>>,
    next: AtomicUsize,
}

/// The process's workers, [`count`] of them, started on first use.
pub(crate) fn shared() -> io::Result<&'static Workers> {
    static SHARED: OnceLock<Workers> = OnceLock::new();
    if let Some(w) = SHARED.get() {
        return Ok(w);
    }
    let started = Workers::start(count())?;
    // Two servers starting at once: one set is kept, the other's threads
    // end as its queues are dropped.
    Ok(SHARED.get_or_init(|| started))
}

/// How many workers: `TOKIO_WORKER_THREADS` when set (as for the process's
/// runtime), else one for each core this process may run on.
fn count() -> usize {
    let configured = std::env::var("TOKIO_WORKER_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok());
    configured.filter(|&n| n > 0).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Workers {
    /// Starts `n` workers (at least one); each runs until its queue is
    /// dropped.
    fn start(n: usize) -> io::Result<Workers> {
        let mut workers = Workers { queues: Vec::new(), next: AtomicUsize::new(0) };
        for i in 0..n.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let (tx, rx) = mpsc::unbounded_channel();
            std::thread::Builder::new().name(format!("mds-worker-{i}")).spawn(move || rt.block_on(run(rx)))?;
            workers.queues.push(tx);
        }
        Ok(workers)
    }

    /// Hands a connection's service to the next worker.
    pub(crate) fn hand(&self, task: ConnectionTask) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.queues.len();
        // A worker's queue closes only when `self` is dropped.
        let _ = self.queues[i].send(task);
    }
}

/// A worker's loop: serves what it is handed until its queue closes.
async fn run(mut queue: mpsc::UnboundedReceiver<ConnectionTask>) {
    while let Some(task) = queue.recv().await {
        drop(tokio::spawn(task));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections go to the workers in turn, each served on its worker's
    /// thread.
    #[tokio::test]
    async fn connections_go_round_the_workers() {
        let workers = Workers::start(2).unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        for _ in 0..4 {
            let tx = tx.clone();
            workers.hand(Box::pin(async move {
                let _ = tx.send(std::thread::current().name().map(str::to_owned));
            }));
        }
        let mut names = Vec::new();
        for _ in 0..4 {
            names.push(rx.recv().await.unwrap().unwrap());
        }
        names.sort();
        assert_eq!(names, ["mds-worker-0", "mds-worker-0", "mds-worker-1", "mds-worker-1"]);
    }

    /// The process has one set of workers, and a socket a connection's
    /// task opened on one (as a pool opens a store connection) still works
    /// from another runtime once that task has ended.
    #[tokio::test]
    async fn what_a_worker_opened_outlives_the_task_that_opened_it() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let workers = shared().unwrap();
        assert!(std::ptr::eq(workers, shared().unwrap()), "one set");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        workers.hand(Box::pin(async move {
            let _ = tx.send(tokio::net::TcpStream::connect(addr).await.unwrap());
        }));
        let (mut peer, _) = listener.accept().await.unwrap();
        let mut opened = rx.recv().await.unwrap();
        opened.write_all(b"ping").await.unwrap();
        let mut got = [0; 4];
        peer.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        peer.write_all(b"pong").await.unwrap();
        opened.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong");
    }
}
