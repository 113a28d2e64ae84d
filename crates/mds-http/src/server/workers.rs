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
//! stream's task, a store connection opened from a pool) is started on
//! its worker. The workers run until [`Workers::finish`], which the server
//! calls last, after the final usage flush, so nothing opened on them is
//! cut while the server still needs it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;

use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// What a worker is handed: a connection's whole service, which takes its
/// socket out of the blocking form it travels in
/// ([`tokio::net::TcpStream::from_std`]) when the worker first polls it.
pub(crate) type ConnectionTask = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What a worker is told.
enum Message {
    /// Serve this connection.
    Connection(ConnectionTask),
    /// Drop every connection still served (the shutdown's grace is over).
    Abort,
}

/// The connection-serving threads.
pub(crate) struct Workers {
    queues: Vec<mpsc::UnboundedSender<Message>>,
    threads: Vec<JoinHandle<()>>,
    next: AtomicUsize,
}

/// How many workers: `TOKIO_WORKER_THREADS` when set (as for the process's
/// runtime), else one for each core this process may run on.
pub(crate) fn count() -> usize {
    let configured = std::env::var("TOKIO_WORKER_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok());
    configured.filter(|&n| n > 0).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Workers {
    /// Starts `n` workers (at least one).
    pub(crate) fn start(n: usize) -> io::Result<Workers> {
        let mut workers = Workers { queues: Vec::new(), threads: Vec::new(), next: AtomicUsize::new(0) };
        for i in 0..n.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let (tx, rx) = mpsc::unbounded_channel();
            let thread =
                std::thread::Builder::new().name(format!("mds-worker-{i}")).spawn(move || rt.block_on(run(rx)))?;
            workers.queues.push(tx);
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    /// Hands a connection's service to the next worker.
    pub(crate) fn hand(&self, task: ConnectionTask) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.queues.len();
        // A worker's queue closes only in `finish`, which consumes `self`.
        let _ = self.queues[i].send(Message::Connection(task));
    }

    /// Drops every connection the workers still serve.
    pub(crate) fn abort(&self) {
        for q in &self.queues {
            let _ = q.send(Message::Abort);
        }
    }

    /// Stops the workers (their connections dropped) and waits for their
    /// threads to end.
    pub(crate) async fn finish(self) {
        let Workers { queues, threads, .. } = self;
        drop(queues);
        let _ = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
    }
}

/// A worker's loop: serves what it is handed until its queue closes.
async fn run(mut queue: mpsc::UnboundedReceiver<Message>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            message = queue.recv() => match message {
                Some(Message::Connection(task)) => {
                    conns.spawn(task);
                }
                Some(Message::Abort) => conns.abort_all(),
                None => break,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections go to the workers in turn, each served on its worker's
    /// thread; an abort drops what a worker still serves; `finish` ends
    /// the threads.
    #[tokio::test]
    async fn connections_go_round_the_workers_and_abort_drops_them() {
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

        // A connection that never ends, until the abort drops it (and the
        // sender it holds).
        let (held, mut gone) = mpsc::unbounded_channel::<()>();
        workers.hand(Box::pin(async move {
            let _held = held;
            std::future::pending::<()>().await;
        }));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(gone.try_recv().is_err(), "still served");
        workers.abort();
        let dropped = tokio::time::timeout(std::time::Duration::from_secs(5), gone.recv()).await;
        assert_eq!(dropped, Ok(None), "dropped by the abort");
        workers.finish().await;
    }
}
